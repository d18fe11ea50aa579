"""The dashboard left running: its memory and CPU over a long window, to catch leaks and creeping cost.

    python benchmarks/soak.py [--seconds 3600] [--every 60] [--replay FILE | --live] [--write-doc]

gpudash runs in a pseudo-terminal of 140x45 (as in benchmarks/tui_startup.py), by default replaying
examples/snapshots/dgx-h100-8gpu.json (8 GPUs) at the default 1 Hz refresh and 600 s history. Every `--every`
seconds it records the process's resident memory (RSS), the CPU it used since the previous row (user + system,
as % of one core), its threads and open file descriptors, with the machine's load average (other work on the
machine raises the CPU figures). At the end it prints a table and the change of RSS over the window;
`--write-doc` also puts them into docs/performance.md under "Soak", replacing the previous soak table there.
The window that was actually run is printed, whatever was asked for (Ctrl-C ends it early and still reports).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tui_startup import DGX, ROOT, TerminalRun, cpu_name

DOC = ROOT / "docs" / "performance.md"
BEGIN, END = "<!-- soak table: benchmarks/soak.py --write-doc -->", "<!-- end of soak table -->"


def sample(proc: psutil.Process, previous: tuple[float, float] | None) -> tuple[dict, tuple[float, float]]:
    now = time.perf_counter()
    times = proc.cpu_times()
    used = times.user + times.system
    row = {
        "rss_mib": proc.memory_info().rss / 2**20,
        "threads": proc.num_threads(),
        "fds": proc.num_fds(),
        "load": os.getloadavg()[0],
        "cpu_pct": None if previous is None else 100.0 * (used - previous[1]) / (now - previous[0]),
    }
    return row, (now, used)


def first_row(args: argparse.Namespace) -> bytes:
    """What the dense device table shows first once drawn (as in benchmarks/tui_startup.py): the first device's
    name as the table shortens it, the CPU's when live."""
    if args.live:
        return cpu_name()
    from gpudash.render.monitor import short_name

    devices = json.loads(args.replay.read_text(encoding="utf-8")).get("devices") or [{}]
    return short_name(str(devices[0].get("name") or "")).encode()[:16] or b"GPU NAME"


def soak(args: argparse.Namespace) -> tuple[list[tuple[float, dict]], float]:
    run_args = [] if args.live else ["--replay", str(args.replay)]
    marker = first_row(args)
    run = TerminalRun(run_args, [marker])
    run.wait_for(marker)
    time.sleep(args.settle)  # start-up work (imports, first layout, the torch view) is not the steady state
    proc = psutil.Process(run.proc.pid)
    rows: list[tuple[float, dict]] = []
    start = time.perf_counter()
    previous = None
    try:
        while True:
            elapsed = time.perf_counter() - start
            if run.proc.poll() is not None:
                raise RuntimeError(f"gpudash exited with code {run.proc.returncode} after {elapsed:.0f} s")
            row, previous = sample(proc, previous)
            rows.append((elapsed, row))
            print(_line(elapsed, row), flush=True)
            if elapsed >= args.seconds:
                break
            time.sleep(min(args.every, max(0.0, args.seconds - elapsed)))
    except KeyboardInterrupt:
        print("interrupted: reporting the window run so far", flush=True)
    finally:
        window = time.perf_counter() - start
        run.quit()
    return rows, window


def _line(elapsed: float, row: dict) -> str:
    cpu = "" if row["cpu_pct"] is None else f"{row['cpu_pct']:.2f}"
    return (
        f"| {elapsed / 60:7.1f} | {row['rss_mib']:8.1f} | {cpu:>8} | {row['threads']:7d} | {row['fds']:3d} "
        f"| {row['load']:4.2f} |"
    )


def report(rows: list[tuple[float, dict]], window: float, what: str) -> list[str]:
    first, last = rows[0][1], rows[-1][1]
    cpus = [r["cpu_pct"] for _, r in rows if r["cpu_pct"] is not None]
    peak = max(r["rss_mib"] for _, r in rows)
    lines = [
        f"gpudash dashboard soak: {what}, 140x45, {platform.machine()}, {psutil.cpu_count()} logical CPUs, "
        f"Python {platform.python_version()}; window run: {window / 60:.1f} min ({len(rows)} rows)",
        "",
        "| minute | RSS MiB | CPU % | threads | fds | load |",
        "| ---: | ---: | ---: | ---: | ---: | ---: |",
        *(_line(t, r) for t, r in rows),
        "",
        f"RSS {first['rss_mib']:.1f} MiB at the start, {last['rss_mib']:.1f} MiB at the end "
        f"({last['rss_mib'] - first['rss_mib']:+.1f} MiB), peak {peak:.1f} MiB; "
        f"CPU mean {sum(cpus) / max(1, len(cpus)):.2f} % of a core, highest row {max(cpus, default=0.0):.2f} %; "
        f"threads {first['threads']} -> {last['threads']}, fds {first['fds']} -> {last['fds']}",
    ]
    return lines


def write_doc(lines: list[str]) -> None:
    text = DOC.read_text(encoding="utf-8")
    block = "\n".join([BEGIN, "", *lines, "", END])
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        text = head + block + rest.split(END, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n## Soak: the dashboard over time\n\n" + block + "\n"
    DOC.write_text(text, encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3600.0, help="the window (default: an hour)")
    parser.add_argument("--every", type=float, default=60.0, help="seconds between rows (default 60)")
    parser.add_argument("--settle", type=float, default=5.0, help="seconds after the first frame before row 0")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--replay", type=Path, default=DGX, help="snapshot to replay (default: the 8-GPU DGX)")
    source.add_argument("--live", action="store_true", help="this machine instead of a replay")
    parser.add_argument("--write-doc", action="store_true", help="put the table into docs/performance.md")
    args = parser.parse_args()
    what = "live machine" if args.live else f"replay of {args.replay.name}, 1 Hz"
    print("| minute | RSS MiB | CPU % | threads | fds | load |", flush=True)
    rows, window = soak(args)
    lines = report(rows, window, what)
    print("\n".join(lines))
    if args.write_doc:
        write_doc(lines)
        print(f"written to {DOC.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
