"""`gpudash web`: the dashboard in a browser, served by textual-serve.

Each browser tab gets its own `gpudash tui` process; this package only serves, checks who may connect and
how many at once, and makes sure every session's process ends. It never imports Textual itself.
"""
