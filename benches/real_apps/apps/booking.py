"""A hotel booking form in NiceGUI: Quasar widgets (a select drawn as an ARIA
combobox with a popup list, a slider, a date picker's calendar, a checkbox, a
dialog) that talk to the server over a websocket. The suite's second app.

    python booking.py PORT
"""
import sys

from nicegui import ui


@ui.page("/")
def index():
    ui.label("Book a room").classes("text-h5")
    name = ui.input("Guest name")
    room = ui.select(["Single", "Double", "Suite"], label="Room")
    ui.label().bind_text_from(room, "value", lambda v: f"Room: {v or 'none'}")
    ui.label("Nights")
    nights = ui.slider(min=1, max=14, value=1).props('aria-label="Nights"')
    ui.label().bind_text_from(nights, "value", lambda v: f"Nights: {v}")
    ui.label("Check-in")
    # Quasar's QDate, open on the page as a booking form draws it; it starts
    # on a fixed month (not today's) so that the tasks read the same each run.
    checkin = ui.date().props('default-year-month="2027/01" aria-label="Check-in"')
    ui.label().bind_text_from(checkin, "value", lambda v: f"Check-in: {v or 'none'}")
    breakfast = ui.checkbox("Breakfast")
    result = ui.label()

    def book():
        extra = " with breakfast" if breakfast.value else ""
        result.set_text(f"Booked {room.value} for {name.value}, {nights.value} nights{extra}")

    ui.button("Book", on_click=book)

    with ui.dialog() as dialog, ui.card():
        ui.label("Cancel the booking?")
        with ui.row():
            ui.button("Yes, cancel", on_click=lambda: (result.set_text("Booking cancelled"), dialog.close()))
            ui.button("Keep it", on_click=dialog.close)
    ui.button("Cancel booking", on_click=dialog.open)


ui.run(host="127.0.0.1", port=int(sys.argv[1]), show=False, reload=False, title="Booking")
