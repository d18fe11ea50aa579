"""The dashboard left alone: CPU at the default 1 Hz with 8 and 16 GPUs, and memory over a long window.

    python benchmarks/tui_idle.py [--idle-seconds 120] [--memory-minutes 60] [--memory-snapshot dgx2-v100-16gpu.json]

Each run starts `python -m gpudash --replay SNAPSHOT` in a pseudo-terminal of 160x48 (benchmarks/tui_startup.py's
TerminalRun), waits for the first frame ("GPU 0") and 3 s more, then:

- idle CPU: user + system CPU time of the process (psutil) over --idle-seconds, as % of one core, for the
  8-GPU DGX H100 and the 16-GPU DGX-2 replays (goals: 2 % and 3 %);
- memory: the resident set size every --memory-interval seconds for --memory-minutes on one replay (default
  the 16-GPU one). The charts keep ui.history_seconds (600 s by default) of history, so memory may grow for
  the first ten minutes; the figures after that are the ones that say whether it stays flat.

No user config is read (XDG_CONFIG_HOME points at an empty directory). The replays' samples cycle, so the
dashboard redraws changing numbers all the time, as on a busy machine.

Diagnostic (instead of the above): --in-process SECONDS runs the 8-GPU replay inside this process under
Textual's headless test driver (no terminal output) at 140x45 and prints, over SECONDS after a 5 s warm-up,
the process's CPU, how often the screen was laid out whole, and the time in the steps that draw a reading.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
import tui_startup  # the pseudo-terminal runner is shared

SNAPSHOTS = tui_startup.ROOT / "examples" / "snapshots"


def start(snapshot: str) -> tuple[tui_startup.TerminalRun, psutil.Process, float]:
    tui_startup.COLS, tui_startup.ROWS = 160, 48
    marker = tui_startup.replay_marker(SNAPSHOTS / snapshot)
    run = tui_startup.TerminalRun(["--replay", str(SNAPSHOTS / snapshot)], [marker])
    first_frame = run.wait_for(marker)
    time.sleep(3.0)  # start-up work (imports, first layout, first charts) finishes
    return run, psutil.Process(run.proc.pid), first_frame


def idle_cpu(snapshot: str, seconds: float) -> tuple[float, float]:
    run, proc, first_frame = start(snapshot)
    before, began = proc.cpu_times(), time.perf_counter()
    time.sleep(seconds)
    after, elapsed = proc.cpu_times(), time.perf_counter() - began
    run.quit()
    used = (after.user - before.user) + (after.system - before.system)
    return 100.0 * used / elapsed, first_frame


def memory(snapshot: str, minutes: float, interval: float) -> list[tuple[float, int]]:
    run, proc, _ = start(snapshot)
    began = time.perf_counter()
    samples = [(0.0, proc.memory_info().rss)]
    while time.perf_counter() - began < minutes * 60:
        time.sleep(interval)
        samples.append((time.perf_counter() - began, proc.memory_info().rss))
        print(f"  {samples[-1][0]:7.0f} s  RSS {samples[-1][1] / 2**20:7.1f} MiB", flush=True)
    run.quit()
    return samples


def in_process(seconds: float) -> int:
    """Where the UI thread's idle time goes (see the module docstring)."""
    import asyncio
    from collections import defaultdict

    from textual._compositor import Compositor
    from textual.screen import Screen

    from gpudash.config import defaults
    from gpudash.devices import discover
    from gpudash.tui.app import create_app
    from gpudash.tui.screens.dashboard import DashboardView
    from gpudash.tui.widgets.device_table import DeviceTable
    from gpudash.tui.widgets.live_table import LiveTable

    spent: dict[str, float] = defaultdict(float)
    calls: dict[str, int] = defaultdict(int)
    on = [False]

    def timed(cls: type, name: str) -> None:
        original = getattr(cls, name)

        def wrapper(*args, **kwargs):
            if not on[0]:
                return original(*args, **kwargs)
            t0 = time.thread_time()
            try:
                return original(*args, **kwargs)
            finally:
                spent[f"{cls.__name__}.{name}"] += time.thread_time() - t0
                calls[f"{cls.__name__}.{name}"] += 1

        setattr(cls, name, wrapper)

    for cls, name in (
        (Screen, "_refresh_layout"),
        (Compositor, "render_update"),
        (DashboardView, "show_samples"),
        (DeviceTable, "redraw"),
        (LiveTable, "render_line"),
    ):
        timed(cls, name)

    async def run() -> float:
        app = create_app(
            discover(replay=str(SNAPSHOTS / "dgx-h100-8gpu.json")), defaults(), add_torch_view=lambda m: None
        )
        async with app.run_test(size=(140, 45)) as pilot:
            await pilot.pause(5.0)
            on[0] = True
            t0 = time.process_time()
            await pilot.pause(seconds)
            on[0] = False
            return time.process_time() - t0

    used = asyncio.run(run())
    print(f"in process, dgx-h100-8gpu.json, 140x45, 1 Hz, {seconds:g} s: {100 * used / seconds:.2f} % of a core")
    for key in sorted(spent, key=lambda k: -spent[k]):
        print(f"  {key}: {1000 * spent[key] / seconds:.1f} ms per second over {calls[key]} calls")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--idle-seconds", type=float, default=120.0)
    parser.add_argument("--memory-minutes", type=float, default=0.0, help="0: skip the memory run")
    parser.add_argument("--memory-interval", type=float, default=60.0)
    parser.add_argument("--memory-snapshot", default="dgx2-v100-16gpu.json")
    parser.add_argument("--in-process", type=float, default=0.0, metavar="SECONDS", help="only the diagnostic above")
    args = parser.parse_args()
    if args.in_process:
        return in_process(args.in_process)

    print(
        f"gpudash dashboard idle cost: {platform.machine()}, {psutil.cpu_count()} logical CPUs, "
        f"Python {platform.python_version()}, load average {os.getloadavg()[0]:.2f} at the start; 160x48, 1 Hz"
    )
    for snapshot, goal in (("dgx-h100-8gpu.json", 2.0), ("dgx2-v100-16gpu.json", 3.0)):
        pct, first_frame = idle_cpu(snapshot, args.idle_seconds)
        met = "met" if pct < goal else "NOT met"
        print(
            f"idle CPU, {snapshot}, {args.idle_seconds:g} s: {pct:.2f} % of a core (goal < {goal:g} %: {met}); "
            f"first frame {first_frame:.3f} s; load average {os.getloadavg()[0]:.2f} after"
        )
    if args.memory_minutes > 0:
        print(f"memory, {args.memory_snapshot}, {args.memory_minutes:g} min, RSS every {args.memory_interval:g} s:")
        samples = memory(args.memory_snapshot, args.memory_minutes, args.memory_interval)
        full = [rss for t, rss in samples if t >= 660]  # after the 600 s history window filled, and a minute more
        mib = [rss / 2**20 for _, rss in samples]
        print(f"RSS: start {mib[0]:.1f} MiB, end {mib[-1]:.1f} MiB, max {max(mib):.1f} MiB")
        if len(full) >= 2:
            span = (samples[-1][0] - 660) / 60
            growth = (full[-1] - full[0]) / 2**20
            print(f"after the history window filled (t >= 660 s): {growth:+.1f} MiB over {span:.0f} min")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
