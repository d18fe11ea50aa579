"""The terminal dashboard: the only part of gpudash that imports Textual (design rule 2).

Import `gpudash.tui.app` only from the `tui` command; headless commands never reach this package.
"""
