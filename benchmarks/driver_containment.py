"""What containing the drivers costs: NVML and amdsmi in forked children (gpudash.devices.contained) against
the same adapters in gpudash's own process.

    python benchmarks/driver_containment.py [--runs 7] [--readings 50]

1. `gpudash info --no-torch` on this machine, each run a fresh process, contained and in-process alternating
   (median wall time, and CPU time of the process with its children). On a machine without GPU drivers the
   difference is the forks and the children's failed library loads.
2. With a fake NVML of 8 GPUs (tests/fakes.py over examples/snapshots/dgx-h100-8gpu.json, the real adapter
   code running against it): discovery, then one reading of every device (what `info` does), and the time
   per device reading over `--readings` rounds of the dashboard's poll (sample_all), contained and in-process.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
IN_PROCESS = "import gpudash.devices.contained.backend as b; b.fork_available = lambda: False; "


def info_runs(runs: int) -> dict[bool, tuple[float, float]]:
    """contained? -> (median wall s, median CPU s of the process and its children) of `gpudash info --no-torch`;
    the two ways alternate run by run, so that other work on the machine weighs on both alike."""
    code = "from gpudash.cli import main; raise SystemExit(main(['info', '--no-torch']))"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "XDG_CONFIG_HOME": "/nonexistent"}
    env.pop("GPUDASH_REPLAY", None)
    walls: dict[bool, list[float]] = {False: [], True: []}
    cpus: dict[bool, list[float]] = {False: [], True: []}
    for _ in range(runs):
        for contained in (False, True):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            args = [sys.executable, "-c", ("" if contained else IN_PROCESS) + code]
            subprocess.run(args, env=env, stdout=subprocess.DEVNULL, check=True)
            walls[contained].append(time.perf_counter() - start)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus[contained].append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return {mode: (statistics.median(walls[mode]), statistics.median(cpus[mode])) for mode in (False, True)}


def fake_gpus(contained: bool, readings: int) -> tuple[float, float]:
    """(discovery + one reading of each device, seconds per device reading in the poll loop), in a fresh process."""
    code = f"""
import json, sys, time
sys.path.insert(0, {str(ROOT / "tests")!r})
from fakes import load_example, make_fake_pynvml
sys.modules["pynvml"] = make_fake_pynvml(load_example("dgx-h100-8gpu.json")["devices"])
sys.modules["amdsmi"] = None
{"" if contained else IN_PROCESS}
from gpudash.devices import discover
start = time.perf_counter()
machine = discover(include_torch=False)
machine.sample_all()
first = time.perf_counter() - start
gpus = [d for d in machine.devices if d.vendor == "nvidia"]
start = time.perf_counter()
for _ in range({readings}):
    for d in gpus:
        machine.sample(d)
per = (time.perf_counter() - start) / ({readings} * len(gpus))
machine.close()
print(json.dumps([first, per]))
"""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    first, per = json.loads(out.strip().splitlines()[-1])
    return first, per


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--readings", type=int, default=50)
    args = parser.parse_args()
    info = info_runs(args.runs)
    fakes = {mode: [fake_gpus(mode, args.readings) for _ in range(3)] for mode in (False, True)}
    first = {mode: statistics.median(r[0] for r in runs) for mode, runs in fakes.items()}
    per = {mode: statistics.median(r[1] for r in runs) for mode, runs in fakes.items()}
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        f"driver containment cost: {platform.machine()}, {os.cpu_count()} logical CPUs, Python "
        f"{platform.python_version()}, load average {load}"
    )
    rows = [
        (
            f"gpudash info --no-torch, no GPU driver here: wall (median of {args.runs})",
            info[False][0],
            info[True][0],
            "s",
        ),
        ("gpudash info --no-torch: CPU time, the process and its children", info[False][1], info[True][1], "s"),
        ("fake NVML, 8 GPUs: discovery + one reading each (median of 3)", first[False], first[True], "s"),
        (f"fake NVML, 8 GPUs: one device reading in the poll ({args.readings} rounds)", per[False], per[True], "ms"),
    ]
    width = max(len(r[0]) for r in rows)
    print(f"{'measure'.ljust(width)}  {'in-process':>11}  {'contained':>11}  {'difference':>11}")
    for name, a, b, unit in rows:
        scale = 1000.0 if unit == "ms" else 1.0
        print(
            f"{name.ljust(width)}  {a * scale:>8.3f} {unit:<2}  {b * scale:>8.3f} {unit:<2}  "
            f"{(b - a) * scale:>+8.3f} {unit:<2}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
