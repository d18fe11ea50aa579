"""How fast gpudash starts and how little it costs when idle.

    python benchmarks/tui_startup.py [--runs 3] [--idle-seconds 20]

Measures, each in a fresh process:

- `gpudash --help` wall time (median of several runs). Goal: < 0.3 s.
- `python -c "import torch"` wall time, for comparison with the first frame.
- Time to first frame of the TUI: `python -m gpudash` runs in a pseudo-terminal (140x45); the clock
  starts at spawn and stops when the dense device table's first row appears in what the app writes to
  the terminal (live: the CPU's name; replayed: "H100 80GB HBM3"). This includes interpreter start-up,
  imports, device discovery and the first paint. In the same live run, "torch ready" is when the source
  line first shows the torch version, i.e. the background torch import and merge have finished.
  Goal: first frame < 0.5 s (issue 12) and before torch is ready.
- Idle CPU: the TUI replaying examples/snapshots/dgx-h100-8gpu.json (8 GPUs) at the default 1 Hz, 140x45,
  and dgx2-v100-16gpu.json (16 GPUs) at 160x48. After the first frame and a 3 s settle, user+system CPU
  time of the process (psutil) over the idle window, as % of one core. Goals: < 2% (8), < 3% (16).

No user config is read (XDG_CONFIG_HOME points at an empty directory).
"""

from __future__ import annotations

import argparse
import atexit
import fcntl
import os
import platform
import pty
import re
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
DGX = ROOT / "examples" / "snapshots" / "dgx-h100-8gpu.json"
DGX2 = ROOT / "examples" / "snapshots" / "dgx2-v100-16gpu.json"
H100 = ROOT / "examples" / "snapshots" / "h100-80gb.json"
ANSI = re.compile(rb"\x1b(\[[0-9;?<>=$ ]*[A-Za-z~]|\][^\x07\x1b]*(\x07|\x1b\\)|[PX^_][^\x1b]*\x1b\\|.)")
COLS, ROWS = 140, 45


def clean_env() -> dict[str, str]:
    # Without PYTHONDONTWRITEBYTECODE: gpudash runs from compiled bytecode, as after any install.
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPUDASH_") and k != "PYTHONDONTWRITEBYTECODE"}
    env.update(
        XDG_CONFIG_HOME=tempfile.mkdtemp(prefix="gpudash-bench-"),
        TERM="xterm-256color",
        COLORTERM="truecolor",
        PYTHONPATH=str(ROOT),
    )
    return env


def wall(cmd: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=clean_env(), check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


class TerminalRun:
    """gpudash in a pseudo-terminal; a reader thread drains the output and notes when markers appear."""

    def __init__(self, args: list[str], markers: list[bytes], size: tuple[int, int] = (COLS, ROWS)) -> None:
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", size[1], size[0], 0, 0))
        self.master = master
        self.markers = markers
        self.seen: dict[bytes, float] = {}
        self.start = time.perf_counter()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "gpudash", *args],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=clean_env(),
            close_fds=True,
            start_new_session=True,
        )
        os.close(slave)
        atexit.register(self._end)  # a script that dies never leaves a dashboard running
        self._text = b""
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self) -> None:
        while True:
            try:
                chunk = os.read(self.master, 65536)
            except OSError:
                return
            if not chunk:
                return
            now = time.perf_counter() - self.start
            # Keep only the visible text; escape sequences can split a marker across chunks otherwise.
            self._text = (self._text + ANSI.sub(b"", chunk))[-200_000:]
            for marker in self.markers:
                if marker not in self.seen and marker in self._text:
                    self.seen[marker] = now

    def wait_for(self, marker: bytes, timeout: float = 30.0) -> float:
        deadline = time.perf_counter() + timeout
        while marker not in self.seen:
            if time.perf_counter() > deadline or self.proc.poll() is not None:
                raise RuntimeError(f"{marker!r} did not appear; last output: {self._text[-500:]!r}")
            time.sleep(0.005)
        return self.seen[marker]

    def _end(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def quit(self) -> None:
        os.write(self.master, b"q")
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self.master)


def replay_marker(snapshot: Path) -> bytes:
    """What the dense table shows of a replayed snapshot's first GPU: its name without the vendor's prefix."""
    import json

    devices = json.loads(snapshot.read_text())["devices"]
    name = next((d["name"] for d in devices if d.get("vendor") != "cpu"), devices[0]["name"])
    for prefix in ("NVIDIA ", "AMD ", "Tesla "):
        name = name.removeprefix(prefix)
    return name.encode()[:14]


def cpu_name() -> bytes:
    """What the CPU's dense row shows first: its name as gpudash discovers it."""
    sys.path.insert(0, str(ROOT))
    from gpudash.devices.cpu import CpuBackend

    return next(d.name for d in CpuBackend().devices()).encode()[:20]


def first_frame_live(runs: int) -> tuple[float, float]:
    frames, torch_ready = [], []
    marker = cpu_name()
    for _ in range(runs):
        run = TerminalRun([], [marker, b"torch 2."])
        frames.append(run.wait_for(marker))
        torch_ready.append(run.wait_for(b"torch 2."))
        run.quit()
    return statistics.median(frames), statistics.median(torch_ready)


def first_frame_replay(runs: int) -> float:
    frames = []
    for _ in range(runs):
        run = TerminalRun(["--replay", str(H100)], [b"H100 80GB HBM3"])
        frames.append(run.wait_for(b"H100 80GB HBM3"))
        run.quit()
    return statistics.median(frames)


def idle_cpu(seconds: float, snapshot: Path = DGX, size: tuple[int, int] = (COLS, ROWS)) -> float:
    marker = b"H100 80GB HBM3" if snapshot == DGX else b"V100-SXM3-32GB"
    run = TerminalRun(["--replay", str(snapshot)], [marker], size)
    run.wait_for(marker)
    time.sleep(3.0)  # let start-up work (imports, first layout, first charts) finish
    proc = psutil.Process(run.proc.pid)
    before, start = proc.cpu_times(), time.perf_counter()
    time.sleep(seconds)
    after, elapsed = proc.cpu_times(), time.perf_counter() - start
    run.quit()
    used = (after.user - before.user) + (after.system - before.system)
    return 100.0 * used / elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="runs per start-up figure (median)")
    parser.add_argument("--help-runs", type=int, default=7, help="runs of `gpudash --help` (median)")
    parser.add_argument("--idle-seconds", type=float, default=20.0)
    args = parser.parse_args()

    help_s = wall([sys.executable, "-m", "gpudash", "--help"], args.help_runs)
    torch_s = wall([sys.executable, "-c", "import torch"], args.runs)
    frame_live_s, torch_ready_s = first_frame_live(args.runs)
    frame_replay_s = first_frame_replay(args.runs)
    idle_pct = idle_cpu(args.idle_seconds)
    idle16_pct = idle_cpu(args.idle_seconds, DGX2, (160, 48))

    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"gpudash TUI start-up and idle cost: {platform.machine()}, {psutil.cpu_count()} logical CPUs, "
        f"Python {platform.python_version()}, load average {load} at the end; "
        f"median of {args.runs} runs ({args.help_runs} for --help)"
    )
    rows = [
        ("gpudash --help (wall)", f"{help_s:.3f} s", "< 0.3 s", help_s < 0.3),
        ('python -c "import torch" (wall)', f"{torch_s:.3f} s", "", None),
        ("first frame, live (CPU row)", f"{frame_live_s:.3f} s", "< 0.5 s", frame_live_s < 0.5),
        (
            "torch view ready in the same run",
            f"{torch_ready_s:.3f} s",
            "after first frame",
            frame_live_s < torch_ready_s,
        ),
        ("first frame, --replay h100-80gb.json", f"{frame_replay_s:.3f} s", "< 0.5 s", frame_replay_s < 0.5),
        (
            f"idle CPU, dgx-h100-8gpu replay, 1 Hz, {args.idle_seconds:g} s",
            f"{idle_pct:.2f} % of a core",
            "< 2 %",
            idle_pct < 2.0,
        ),
        (
            f"idle CPU, dgx2-v100-16gpu replay, 1 Hz, 160x48, {args.idle_seconds:g} s",
            f"{idle16_pct:.2f} % of a core",
            "< 3 %",
            idle16_pct < 3.0,
        ),
    ]
    width = max(len(r[0]) for r in rows)
    print(f"{'measure'.ljust(width)}  {'result':>18}  {'goal':<18}  met")
    for name, value, goal, met in rows:
        print(f"{name.ljust(width)}  {value:>18}  {goal:<18}  {'' if met is None else 'yes' if met else 'NO'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
