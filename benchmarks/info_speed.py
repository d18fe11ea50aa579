"""`gpudash info` against `nvitop -1` and `gpustat` on one faked NVIDIA machine, whole processes.

    python benchmarks/info_speed.py --nvitop /tmp/peers/bin/nvitop --gpustat /tmp/peers/bin/gpustat

nvitop and gpustat are not gpudash dependencies: install them into a scratch virtual environment
(`python3 -m venv /tmp/peers && /tmp/peers/bin/pip install nvitop gpustat`). Every tool imports the same
stand-in `pynvml` (benchmarks/fake_nvml/pynvml.py, first on PYTHONPATH), which serves the snapshot named by
--snapshot (default: the 8-GPU DGX H100) through tests/fakes.py, so each reads the same devices, readings
and processes. Runs alternate between the tools (round 1: gpudash, nvitop, gpustat; round 2: ...), each a
fresh process with stdout to a pipe that is read and thrown away (what `cmd | cat` costs); the figures are
the median wall time from spawn to exit and the median user + system CPU time of the process (os.wait4).
The ratio is gpudash's median over nvitop's, from the same run.

No user config is read (XDG_CONFIG_HOME points at an empty directory); GPUDASH_*, the *_VISIBLE_DEVICES
variables, NO_COLOR and PYTHONDONTWRITEBYTECODE are removed from the environment, so every tool runs from
compiled bytecode (the warm-up runs write any that is missing), as it would after an install.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FAKE = ROOT / "benchmarks" / "fake_nvml"


def environment(snapshot: str, source: str | None = None) -> dict[str, str]:
    drop = (
        "GPUDASH_",
        "CUDA_VISIBLE_DEVICES",
        "HIP_VISIBLE_DEVICES",
        "ROCR_VISIBLE_DEVICES",
        "NO_COLOR",
        # Every tool runs from its compiled bytecode, as after any install (pip compiles site-packages; an
        # editable checkout compiles on first import): the warm-up runs write what is missing.
        "PYTHONDONTWRITEBYTECODE",
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env.update(
        PYTHONPATH=os.pathsep.join([*([source] if source else []), str(FAKE)]),
        GPUDASH_FAKE_SNAPSHOT=snapshot,
        XDG_CONFIG_HOME=tempfile.mkdtemp(prefix="gpudash-bench-"),
        TERM="xterm-256color",
    )
    return env


def one_run(cmd: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds, bytes written to stdout) of one whole process."""
    start = time.perf_counter()
    # From a neutral folder: `python -m gpudash` would otherwise import the checkout it is started in.
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=env["XDG_CONFIG_HOME"])
    assert proc.stdout is not None
    size = len(proc.stdout.read())
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)}: exit code {proc.returncode}")
    return wall, usage.ru_utime + usage.ru_stime, size


def import_times(cmd: list[str], env: dict[str, str], runs: int) -> tuple[float, float]:
    """Median over `runs` of (every import's own time summed, gpudash.actions.session's cumulative time), in
    seconds, as `python -X importtime` reports them (which adds some overhead of its own)."""
    totals, sessions = [], []
    for _ in range(runs):
        err = subprocess.run(
            [sys.executable, "-X", "importtime", *cmd[1:]] if cmd[0] == sys.executable else cmd,
            capture_output=True,
            text=True,
            env=env,
            cwd=env["XDG_CONFIG_HOME"],
            check=True,
        ).stderr
        rows = [line.split("|") for line in err.splitlines() if line.startswith("import time:") and "self" not in line]
        totals.append(sum(int(r[0].split(":")[1]) for r in rows) / 1e6)
        sessions.append(next((int(r[1]) for r in rows if r[2].strip() == "gpudash.actions.session"), 0) / 1e6)
    return statistics.median(totals), statistics.median(sessions)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nvitop", metavar="PATH", help="the nvitop script of a scratch venv")
    parser.add_argument("--gpustat", metavar="PATH", help="the gpustat script of a scratch venv")
    parser.add_argument("--gpudash", metavar="PATH", default=str(Path(sys.executable).with_name("gpudash")))
    parser.add_argument("--snapshot", default="dgx-h100-8gpu.json", help="a file in examples/snapshots, or a path")
    parser.add_argument("--runs", type=int, default=15, help="runs per tool (median)")
    parser.add_argument("--warmup", type=int, default=2, help="runs per tool before measuring (page cache)")
    parser.add_argument("--args", default="info", help="gpudash's arguments (default: info)")
    parser.add_argument(
        "--importtime", type=int, default=0, metavar="N", help="also: N runs under python -X importtime (median)"
    )
    parser.add_argument(
        "--source",
        metavar="DIR",
        help="run the gpudash package found in DIR (an unpacked older commit, for a before/after figure)",
    )
    args = parser.parse_args()

    env = environment(args.snapshot, args.source)
    gpudash = [sys.executable, "-m", "gpudash"] if args.source else [args.gpudash]
    tools = {f"gpudash {args.args}": [*gpudash, *args.args.split()]}
    if args.nvitop:
        tools["nvitop -1"] = [args.nvitop, "-1"]
    if args.gpustat:
        tools["gpustat -a"] = [args.gpustat, "-a"]
    results: dict[str, list[tuple[float, float, int]]] = {name: [] for name in tools}
    for _ in range(args.warmup):
        for cmd in tools.values():
            one_run(cmd, env)
    load_before = os.getloadavg()[0]
    for _ in range(args.runs):
        for name, cmd in tools.items():
            results[name].append(one_run(cmd, env))

    print(
        f"{args.snapshot} faked through benchmarks/fake_nvml/pynvml.py; {platform.machine()}, "
        f"{os.cpu_count()} CPUs, Python {platform.python_version()}; median of {args.runs} alternating runs "
        f"after {args.warmup} warm-up runs each; load average {load_before:.2f} before, "
        f"{os.getloadavg()[0]:.2f} after"
    )
    width = max(len(n) for n in tools)
    print(f"{'command'.ljust(width)}  {'wall median':>11}  {'wall p10-p90':>13}  {'CPU median':>10}  stdout bytes")
    medians = {}
    for name, rows in results.items():
        walls = sorted(r[0] for r in rows)
        cpus = [r[1] for r in rows]
        medians[name] = (statistics.median(walls), statistics.median(cpus))
        p10, p90 = walls[len(walls) // 10], walls[-1 - len(walls) // 10]
        print(
            f"{name.ljust(width)}  {medians[name][0]:>9.3f} s  {p10:>5.3f}-{p90:.3f} s  "
            f"{medians[name][1]:>8.3f} s  {rows[-1][2]}"
        )
    if args.importtime:
        total, session = import_times([sys.executable, "-m", "gpudash", *args.args.split()], env, args.importtime)
        print(
            f"python -X importtime -m gpudash {args.args}, median of {args.importtime}: imports {total * 1000:.1f} ms "
            f"in all, gpudash.actions.session (config, discovery, devices) {session * 1000:.1f} ms"
        )
    if "nvitop -1" in medians:
        ours, theirs = medians[f"gpudash {args.args}"], medians["nvitop -1"]
        verdict = "no slower: met" if ours[0] <= theirs[0] else "slower: NOT met"
        print(
            f"gpudash / nvitop: wall {ours[0] / theirs[0]:.2f}x, CPU {ours[1] / theirs[1]:.2f}x  "
            f"(goal: gpudash no slower than nvitop -1: {verdict})"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
