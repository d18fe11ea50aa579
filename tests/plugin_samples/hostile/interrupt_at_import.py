"""Raises KeyboardInterrupt while it is imported: a failed plugin, never an interrupted gpudash."""

raise KeyboardInterrupt("raised by the plugin at import")
