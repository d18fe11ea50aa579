"""Regenerate docs/screenshot-web.png for the README: `gpudash web` as headless Chromium shows it.

    python docs/screenshot_web.py

Needs Debian's chromium-headless-shell (or chromium). Starts `gpudash web` on a free 127.0.0.1 port,
replaying the 8-GPU example snapshot, opens it in a 1400x900 browser window and saves what the page shows at
the first busy sample (the dashboard's table of every GPU and process). The browser is driven by the test
suite's small DevTools client (tests/cdp.py, tests/web_helpers.py).
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

import aiohttp  # noqa: E402
from cdp import Chromium, find_chromium  # noqa: E402
from web_helpers import DGX, SCREEN, WebServer, open_dashboard  # noqa: E402

SIZE = (1400, 900)


async def shoot(browser: Chromium, url: str, png: Path) -> None:
    async with aiohttp.ClientSession() as http:
        page = await open_dashboard(browser, url, http)
        await page.wait_until(f"{SCREEN}.includes('H100')", timeout=30)
        # The replayed samples cycle from idle to busy: show the table at a busy one, as docs/screenshot.py does.
        await page.wait_until(f"/HBM3[^%\\n]* 9[0-9]%/.test({SCREEN})", timeout=60)
        png.write_bytes(await page.screenshot())


def main() -> None:
    binary = find_chromium()
    if binary is None:
        raise SystemExit("needs Debian's chromium-headless-shell (apt-get install chromium-headless-shell)")
    png = HERE / "screenshot-web.png"
    with tempfile.TemporaryDirectory() as scratch, WebServer("--replay", str(DGX)) as server:
        browser = Chromium(binary, Path(scratch) / "profile", size=SIZE)
        try:
            asyncio.run(shoot(browser, server.url, png))
        finally:
            browser.quit()
    print(f"wrote {png}")


if __name__ == "__main__":
    main()
