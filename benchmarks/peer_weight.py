"""gpudash's weight against nvitop and a minimal Textual app, alternated in one run (issue 25 item 7).

    python3 -m venv /tmp/peers && /tmp/peers/bin/pip install nvitop
    python benchmarks/peer_weight.py --nvitop /tmp/peers/bin/nvitop [--runs 5] [--idle-seconds 20] [--idle-rounds 1]

Every program reads the same faked 8-GPU NVML (benchmarks/fake_nvml first on PYTHONPATH, the DGX H100
example), in a pseudo-terminal of 140x45, from compiled bytecode, with no user config (info_speed.py's
environment). Rounds alternate gpudash, nvitop, the minimal app, so a change of load hits each alike.

- first frame: spawn to the first whole screen, devices and processes: the pid of a GPU process (70410) on
  the screen (the minimal app: its one line of text), the median of --runs.
- RSS: resident memory 3 s after the first frame, of the program's process, and of its whole process tree
  (gpudash keeps NVML in a forked child with time limits; nvitop and the minimal app have none); PSS of the
  tree counts the pages the forked child shares with its parent once.
- idle CPU: user+system CPU time of the whole tree over --idle-seconds after that settle, each at 1 s
  (gpudash's default; nvitop `--interval 1`), as % of one core; in the last --idle-rounds rounds (so
  alternated), the median of them.
- `gpudash info` against `nvitop -1`: wall and CPU of whole processes to a pipe, alternated.

Goals (issue 25): first frame within 0.25 s and at most 1.4x the minimal app; RSS at most 45 MiB; `gpudash
info` no slower than `nvitop -1`; idle CPU no higher than nvitop's.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import platform
import pty
import statistics
import struct
import subprocess
import sys
import termios
import threading
import time
from pathlib import Path

import psutil

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from info_speed import environment, one_run  # noqa: E402
from tui_startup import ANSI  # noqa: E402

ROOT = HERE.parent
COLS, ROWS = 140, 45
MARKER = b"70410"  # a GPU process's pid: both dashboards show it once their first screen, processes included, is drawn
MINIMAL_APP = """
from textual.app import App
from textual.widgets import Static

class Minimal(App):
    def compose(self):
        yield Static("minimal textual app ready")

Minimal().run()
"""


class Terminal:
    """A program in a pseudo-terminal; a reader thread keeps the visible text and when the marker showed."""

    def __init__(self, cmd: list[str], env: dict[str, str], marker: bytes) -> None:
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
        self.master, self.marker = master, marker
        self.seen_at: float | None = None
        self.text = b""
        self.start = time.perf_counter()
        self.proc = subprocess.Popen(
            cmd, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=env["XDG_CONFIG_HOME"], start_new_session=True
        )
        os.close(slave)
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self) -> None:
        while True:
            try:
                chunk = os.read(self.master, 65536)
            except OSError:
                return
            if not chunk:
                return
            self.text = (self.text + ANSI.sub(b"", chunk))[-100_000:]
            if self.seen_at is None and self.marker in self.text:
                self.seen_at = time.perf_counter() - self.start

    def first_frame(self, timeout: float = 30.0) -> float:
        deadline = time.perf_counter() + timeout
        while self.seen_at is None:
            if time.perf_counter() > deadline or self.proc.poll() is not None:
                raise SystemExit(f"{self.marker!r} never appeared; last output {self.text[-400:]!r}")
            time.sleep(0.002)
        return self.seen_at

    def tree(self) -> list[psutil.Process]:
        root = psutil.Process(self.proc.pid)
        return [root, *root.children(recursive=True)]

    def end(self) -> None:
        for proc in reversed(self.tree()):
            try:
                proc.kill()
            except psutil.NoSuchProcess:
                pass
        self.proc.wait()
        os.close(self.master)


def cpu_seconds(procs: list[psutil.Process]) -> float:
    total = 0.0
    for proc in procs:
        try:
            times = proc.cpu_times()
        except psutil.NoSuchProcess:
            continue
        total += times.user + times.system + times.children_user + times.children_system
    return total


def measure(cmd: list[str], env: dict[str, str], marker: bytes, idle_s: float) -> dict[str, float]:
    term = Terminal(cmd, env, marker)
    try:
        frame = term.first_frame()
        time.sleep(3.0)  # start-up work (the first readings, the torch view) settles
        procs = term.tree()
        rss_main = procs[0].memory_info().rss / 2**20
        rss_tree = sum(p.memory_info().rss for p in procs) / 2**20
        pss_tree = sum(p.memory_full_info().pss for p in procs) / 2**20  # shared pages counted once
        before, start = cpu_seconds(procs), time.perf_counter()
        if idle_s:
            time.sleep(idle_s)
        idle = 100 * (cpu_seconds(term.tree()) - before) / (time.perf_counter() - start) if idle_s else 0.0
        return {"frame": frame, "rss": rss_main, "rss_tree": rss_tree, "pss_tree": pss_tree, "idle": idle}
    finally:
        term.end()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nvitop", metavar="PATH", required=True, help="the nvitop script of a scratch venv")
    parser.add_argument("--runs", type=int, default=5, help="alternated rounds for first frame and RSS")
    parser.add_argument("--idle-seconds", type=float, default=20.0, help="idle window of each idle round")
    parser.add_argument("--idle-rounds", type=int, default=1, help="the last rounds that also measure idle CPU")
    parser.add_argument("--info-runs", type=int, default=11)
    parser.add_argument("--snapshot", default="dgx-h100-8gpu.json")
    args = parser.parse_args()
    env = environment(args.snapshot)
    minimal = Path(env["XDG_CONFIG_HOME"]) / "minimal_app.py"
    minimal.write_text(MINIMAL_APP)
    programs = {
        "gpudash": ([sys.executable, "-m", "gpudash"], MARKER),
        "nvitop": ([args.nvitop, "--interval", "1"], MARKER),
        "minimal Textual app": ([sys.executable, str(minimal)], b"minimal textual app ready"),
    }
    for cmd, marker in programs.values():  # warm-up: bytecode written, files in the page cache
        measure(cmd, env, marker, 0)
    results: dict[str, list[dict[str, float]]] = {name: [] for name in programs}
    for round_ in range(args.runs):
        for name, (cmd, marker) in programs.items():
            idle = args.idle_seconds if round_ >= args.runs - args.idle_rounds else 0
            results[name].append(measure(cmd, env, marker, idle))
    info_cmds = {"gpudash info": [sys.executable, "-m", "gpudash", "info"], "nvitop -1": [args.nvitop, "-1"]}
    for cmd in info_cmds.values():
        one_run(cmd, env)
    walls: dict[str, list[float]] = {name: [] for name in info_cmds}
    cpus: dict[str, list[float]] = {name: [] for name in info_cmds}
    for _ in range(args.info_runs):
        for name, cmd in info_cmds.items():
            wall, cpu, _ = one_run(cmd, env)
            walls[name].append(wall)
            cpus[name].append(cpu)

    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    cpu_model = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        "?",
    )
    print(
        f"{args.snapshot} through benchmarks/fake_nvml; {cpu_model}, {psutil.cpu_count()} CPUs, Python "
        f"{platform.python_version()}; {COLS}x{ROWS} pseudo-terminal; median of {args.runs} alternated rounds, "
        f"idle over {args.idle_seconds:g} s at 1 s in the last {args.idle_rounds} round(s); info: median of "
        f"{args.info_runs}; load average {load} at the end"
    )
    print(f"{'':22}{'first frame':>12}{'RSS':>11}{'RSS tree':>11}{'PSS tree':>11}{'idle CPU':>11}")
    med = {}
    idle_by_round: dict[str, list[float]] = {}
    for name, runs in results.items():
        med[name] = {k: statistics.median(r[k] for r in runs) for k in ("frame", "rss", "rss_tree", "pss_tree")}
        idle_by_round[name] = [r["idle"] for r in runs[args.runs - args.idle_rounds :]]
        med[name]["idle"] = statistics.median(idle_by_round[name])
        m = med[name]
        print(
            f"{name:22}{m['frame']:>10.3f} s{m['rss']:>7.1f} MiB{m['rss_tree']:>7.1f} MiB{m['pss_tree']:>7.1f} MiB"
            f"{m['idle']:>9.2f} %"
        )
    if args.idle_rounds > 1:
        for name, idles in idle_by_round.items():
            print(f"{name:22}idle CPU by round: {', '.join(f'{x:.2f} %' for x in idles)}")
    for name in info_cmds:
        print(f"{name:22}wall {statistics.median(walls[name]):.3f} s, CPU {statistics.median(cpus[name]):.3f} s")
    ours, mini, peer = med["gpudash"], med["minimal Textual app"], med["nvitop"]
    info_ratio = statistics.median(walls["gpudash info"]) / statistics.median(walls["nvitop -1"])
    goals = [
        ("first frame <= 0.25 s", f"{ours['frame']:.3f} s", ours["frame"] <= 0.25),
        (
            "first frame <= 1.4x minimal app",
            f"{ours['frame'] / mini['frame']:.2f}x",
            ours["frame"] <= 1.4 * mini["frame"],
        ),
        ("RSS <= 45 MiB (process)", f"{ours['rss']:.1f} MiB", ours["rss"] <= 45),
        ("RSS <= 45 MiB (with NVML child)", f"{ours['rss_tree']:.1f} MiB", ours["rss_tree"] <= 45),
        ("PSS <= 45 MiB (with NVML child)", f"{ours['pss_tree']:.1f} MiB", ours["pss_tree"] <= 45),
        ("info no slower than nvitop -1", f"{info_ratio:.2f}x", info_ratio <= 1.0),
        ("idle CPU <= nvitop's", f"{ours['idle']:.2f} % vs {peer['idle']:.2f} %", ours["idle"] <= peer["idle"]),
    ]
    for goal, value, met in goals:
        print(f"goal {goal:34} {value:>22}  {'met' if met else 'NOT met'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
