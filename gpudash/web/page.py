"""What gpudash adds to textual-serve's page: the terminal takes the keyboard as soon as it is there.

textual-serve's page leaves the focus on the document, so every key was ignored until the user clicked the
terminal. xterm.js reads keys through its hidden helper textarea; focusing that (once the script has built it,
and again when the first bytes arrive and the start screen goes) gives the dashboard the keyboard at once.
The script stops when the textarea has the focus or the user clicked elsewhere, so it never takes focus back.
"""

from __future__ import annotations

FOCUS_SCRIPT = """<script>
(() => {
  let tries = 0;
  const timer = setInterval(() => {
    const keys = document.querySelector("#terminal .xterm-helper-textarea");
    tries += 1;
    if (keys && document.activeElement === keys && document.body.classList.contains("-first-byte")) {
      clearInterval(timer);
    } else if (keys && (document.activeElement === document.body || document.activeElement === null)) {
      keys.focus();
    } else if (tries > 600 || (document.activeElement && document.activeElement !== keys
                                && document.activeElement !== document.body)) {
      clearInterval(timer);  // 60 s without a terminal, or the user chose something else
    }
  }, 100);
})();
</script>
"""


def with_focus(html: str) -> str:
    """textual-serve's page with the focus script before </body> (unchanged when it has none)."""
    at = html.rfind("</body>")
    return html if at < 0 else html[:at] + FOCUS_SCRIPT + html[at:]
