"""Regenerate docs/screenshot.svg, docs/screenshot-detail.svg and docs/screenshot-fleet.svg (and .png when
rsvg-convert is installed).

    python docs/screenshot.py

Replays the 8-GPU example snapshot with ten minutes of its (illustrative) samples already in the history,
so the charts are full, and saves what a 140x45 terminal shows: the dashboard (every GPU on a line, the
MIG devices, the processes) and the detail of GPU 4 (enter on its row: card, history chart, every field).
The Fleet tab is shot over three replayed hosts, each served on loopback by `gpudash serve`'s own endpoint,
and a fourth address where nothing listens. The PNG needs Debian's librsvg2-bin.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
from pathlib import Path

from gpudash.devices import discover
from gpudash.tui.app import create_app

HERE = Path(__file__).resolve().parent
SNAPSHOTS = HERE.parent / "examples" / "snapshots"
SNAPSHOT = SNAPSHOTS / "dgx-h100-8gpu.json"
FLEET = (("dgx-h100-8gpu.json", "gpu-node-01"), ("dgx-h100-8gpu.json", "gpu-node-02"), ("mi300x.json", "amd-node-01"))
SIZE = (140, 45)
POLLS_WHILE_SHOWN = 2  # the app samples twice in the pause below; land on a busy sample of the cycle


async def shoot(svg: Path, keys: tuple[str, ...] = ()) -> None:
    machine = discover(replay=str(SNAPSHOT), include_torch=False)
    app = create_app(machine)
    totals = {d.key: d.memory_total_bytes for d in machine.devices}
    # Replay cycles through the samples: after `fill` of them and the app's polls, the card shows sample
    # (fill + polls - 1) mod cycle. Pick the largest fill that makes that the busiest one.
    cycle, wanted = _cycle_length(), _busiest_sample() - POLLS_WHILE_SHOWN + 1
    fill = app.history.capacity - 1
    fill -= (fill - wanted) % cycle
    for _ in range(fill):
        app.history.record(machine.sample_all(), totals)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(1.5)
        for key in keys:
            await pilot.press(key)
        await pilot.pause(0.5)
        app.save_screenshot(str(svg))


async def shoot_fleet(svg: Path) -> None:
    import socket

    from gpudash.config import defaults
    from gpudash.exporter import registry_for
    from gpudash.exporter.http import MetricsApp, start

    servers, config = [], defaults()
    for snapshot, hostname in FLEET:
        machine = discover(replay=str(SNAPSHOTS / snapshot), include_torch=False)
        servers.append(start(MetricsApp(registry_for(machine, config, hostname=hostname)[1]), "127.0.0.1", 0))
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        down = unused.getsockname()[1]  # closed again before the round: nothing listens there
    config["fleet"]["hosts"] = [f"127.0.0.1:{s.server_address[1]}" for s in servers] + [f"127.0.0.1:{down}"]
    app = create_app(discover(replay=str(SNAPSHOT), include_torch=False), config)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause(1.0)  # the dashboard on screen first, as a user sees it before pressing f
            await pilot.press("f")
            await pilot.pause(3.0)  # the first round has every answer (the fourth: connection refused)
            app.save_screenshot(str(svg))
    finally:
        for server in servers:
            server.shutdown()


def _samples() -> list[dict]:
    import json

    return json.loads(SNAPSHOT.read_text())["devices"][0]["samples"]


def _cycle_length() -> int:
    return len(_samples())


def _busiest_sample() -> int:
    utils = [s.get("utilization_pct") or 0 for s in _samples()]
    return utils.index(max(utils))


def to_png(svg: Path, png: Path) -> bool:
    if shutil.which("rsvg-convert") is None:
        return False
    # rsvg drops runs of spaces without xml:space, and has no Fira Code: use a monospace font it has.
    text = svg.read_text().replace("<svg ", '<svg xml:space="preserve" ', 1)
    text = text.replace("font-family: Fira Code, monospace", "font-family: DejaVu Sans Mono, monospace")
    # Textual places cells 0.61 em apart and rsvg ignores textLength; DejaVu Sans Mono advances 0.602 em, so
    # long runs of one style drifted left by a character. A font size 0.61/0.602 larger keeps the columns.
    text = text.replace("font-size: 20px", "font-size: 20.27px")
    fixed = png.with_suffix(".tmp.svg")
    fixed.write_text(text)
    try:
        subprocess.run(["rsvg-convert", "-w", "1680", str(fixed), "-o", str(png)], check=True)
    finally:
        fixed.unlink()
    return True


SHOTS = {"screenshot": (), "screenshot-detail": ("down", "down", "down", "down", "enter")}

if __name__ == "__main__":
    for name, keys in [*SHOTS.items(), ("screenshot-fleet", None)]:
        svg, png = HERE / f"{name}.svg", HERE / f"{name}.png"
        asyncio.run(shoot(svg, keys) if keys is not None else shoot_fleet(svg))
        print(f"wrote {svg}" + (f" and {png}" if to_png(svg, png) else " (no rsvg-convert: PNG not updated)"))
