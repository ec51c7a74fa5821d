"""A tip calculator in Dash: its core components (a searchable drop-down that
is not a <select>, a slider, a checklist) and callbacks answered by the
server. The suite's third app.

    python tips.py PORT
"""
import sys

from dash import Dash, Input, Output, State, dcc, html

app = Dash(__name__, title="Tips")
app.layout = html.Div(
    [
        html.H1("Split the bill"),
        html.Label("Bill", htmlFor="bill"),
        dcc.Input(id="bill", type="number", value=50),
        html.Label("Currency", htmlFor="currency"),
        dcc.Dropdown(["USD", "EUR", "GBP"], "USD", id="currency", clearable=False),
        html.Label("Tip", htmlFor="tip"),
        dcc.Slider(0, 30, 1, value=15, id="tip", marks=None),
        dcc.Checklist(["Split between two"], [], id="split"),
        html.Button("Compute", id="compute"),
        html.Div(id="settings"),
        html.Div(id="total"),
    ]
)


@app.callback(Output("settings", "children"), Input("currency", "value"), Input("tip", "value"))
def settings(currency, tip):
    return f"Currency: {currency}, Tip: {tip}%"


@app.callback(
    Output("total", "children"),
    Input("compute", "n_clicks"),
    State("bill", "value"),
    State("currency", "value"),
    State("tip", "value"),
    State("split", "value"),
    prevent_initial_call=True,
)
def total(_, bill, currency, tip, split):
    amount = float(bill or 0) * (1 + tip / 100)
    if split:
        return f"Each pays {amount / 2:.2f} {currency}"
    return f"Total: {amount:.2f} {currency}"


app.run(host="127.0.0.1", port=int(sys.argv[1]), debug=False)
