"""The footer's row on the first frame: an empty bar in the footer's colours, with Textual's Footer (and its
import, its stylesheet and its styling: 3.5 ms of CPU off a 2-core VM's first frame) mounted inside it once the
first reading is drawn. The first frame's footer showed no keys before either (settled_footer.py says why); the
slot keeps the row, so nothing moves when the footer comes."""

from __future__ import annotations

from textual.containers import Container


class FooterSlot(Container):
    DEFAULT_CSS = """
    FooterSlot {
        dock: bottom;
        height: 1;
        background: $footer-background;
    }
    """

    def fill(self) -> None:
        """Textual's footer, in the slot, with its keys (once: later calls do nothing)."""
        if self.children:
            return
        from gpudash.tui.widgets.settled_footer import SettledFooter

        footer = SettledFooter()
        self.mount(footer)
        footer.settle()
