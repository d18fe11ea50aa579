"""Views (tab contents, registered in gpudash.tui.views) and modal screens."""
