"""The real-app suite's tasks, written as a person would say what to do.

Each task is a list of intents over the elements a snapshot shows, by role
and accessible name — ("go", path), ("click", role, name),
("type", role, name, text[, submit]), ("select", role, name, option, native[, label]),
("slide", name, value, readout), ("pick", calendar, yyyy-mm-dd), ("expect", text),
("gone", text) — and ends
with the text the page must show (or no longer show) when the task is done.
`native` says whether the drop-down is a real <select> (what a model sees in
the snapshot: its options listed under it), and an optional last word the
label a person reads beside a drop-down whose name is its value (what the
plain-language steps given to `browser_act` call it); `readout` is the text before the
number where the page shows a slider's value. A name is matched with or
without a trailing colon (Django's labels end with one); `None` is the first
element of that role (a control the page leaves unnamed). The agent (agent.py) turns an intent into tool calls.
"""

ADMIN_PASSWORD = "shelf-keeper-42"

SIGN_IN = [
    ("go", "/admin/"),
    ("type", "textbox", "Username", "admin"),
    ("type", "textbox", "Password", ADMIN_PASSWORD),
    ("click", "button", "Log in"),
]

BOOKS = SIGN_IN + [("expect", "Site administration"), ("click", "link", "Books")]

TWO_TODOS = [
    ("go", "/"),
    ("type", "textbox", "What needs to be done?", "Buy milk", True),
    ("type", "textbox", "What needs to be done?", "Walk the dog", True),
]

# app -> task name -> (intents, ("shown" | "gone", text))
TASKS = {
    "library (Django admin)": {
        "sign in": (SIGN_IN, ("shown", "Site administration")),
        "add a book": (
            BOOKS
            + [
                ("click", "link", "Add book"),
                ("type", "textbox", "Title", "Solaris"),
                ("type", "textbox", "Author", "Stanisław Lem"),
                ("select", "combobox", "Genre", "Science fiction", True),
                ("type", "textbox", "Published", "1961-06-01"),
                ("click", "checkbox", "In stock"),
                ("click", "button", "Save"),
            ],
            ("shown", "was added successfully"),
        ),
        "find a book": (
            BOOKS + [("type", "textbox", "Search", "Tuchman", True)],
            ("shown", "The Guns of August"),
        ),
        "filter by genre": (
            BOOKS + [("click", "link", "Poetry")],
            ("shown", "Sylvia Plath"),
        ),
        "delete a book": (
            BOOKS
            + [
                ("click", "checkbox", "Select this object for an action - Dune"),
                ("select", "combobox", "Action", "Delete selected books", True),
                ("click", "button", "Go"),
                ("click", "button", "Yes, I’m sure"),
            ],
            ("shown", "Successfully deleted 1 book"),
        ),
    },
    "booking (NiceGUI)": {
        "choose a room": (
            [("go", "/"), ("select", "combobox", "Room", "Double", False)],
            ("shown", "Room: Double"),
        ),
        "set the nights": (
            [("go", "/"), ("slide", "Nights", 5, "Nights: ")],
            ("shown", "Nights: 5"),
        ),
        "pick a check-in date": (
            [("go", "/"), ("pick", "Check-in", "2027-02-14")],
            ("shown", "Check-in: 2027-02-14"),
        ),
        "book a room": (
            [
                ("go", "/"),
                ("type", "textbox", "Guest name", "Ada"),
                ("select", "combobox", "Room", "Suite", False),
                ("click", "checkbox", "Breakfast"),
                ("click", "button", "Book"),
            ],
            ("shown", "Booked Suite for Ada, 1 nights with breakfast"),
        ),
        "cancel in a dialog": (
            [("go", "/"), ("click", "button", "Cancel booking"), ("click", "button", "Yes, cancel")],
            ("shown", "Booking cancelled"),
        ),
    },
    "tips (Dash)": {
        "choose a currency": (
            [("go", "/"), ("select", "button", "USD", "EUR", False, "Currency")],
            ("shown", "Currency: EUR, Tip: 15%"),
        ),
        "set the tip": (
            [("go", "/"), ("slide", None, 20, "Tip: ")],
            ("shown", "Tip: 20%"),
        ),
        "compute a total": (
            [("go", "/"), ("type", "spinbutton", "Bill", "80"), ("click", "button", "Compute")],
            ("shown", "Total: 92.00 USD"),
        ),
        "split the bill": (
            [("go", "/"), ("click", "checkbox", "Split between two"), ("click", "button", "Compute")],
            ("shown", "Each pays 28.75 USD"),
        ),
    },
    "todos (TodoMVC, React)": {
        "add a todo": (
            [("go", "/"), ("type", "textbox", "What needs to be done?", "Buy milk", True)],
            ("shown", "1 item left"),
        ),
        "complete all": (
            TWO_TODOS + [("click", "checkbox", None)],
            ("shown", "0 items left"),
        ),
        "clear the completed": (
            TWO_TODOS + [("click", "checkbox", None), ("click", "button", "Clear completed (2)")],
            ("gone", "Walk the dog"),
        ),
        "show the active": (
            TWO_TODOS
            + [
                ("click", "checkbox", None),
                ("type", "textbox", "What needs to be done?", "Call mom", True),
                ("click", "link", "Active"),
            ],
            ("gone", "Buy milk"),
        ),
    },
}
