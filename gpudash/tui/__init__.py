"""The terminal dashboard: the only part of gpudash that imports Textual (every other path stays headless).

Import `gpudash.tui.app` only from the `tui` command; headless commands never reach this package.
"""
