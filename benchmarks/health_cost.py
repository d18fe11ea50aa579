"""What gpudash's health checks cost on 8 GPUs: every check of `gpudash check` (gpudash.health.run.run_health:
eight GPUs' counters read by the contained NVML child, the kernel log, sysfs, the remembered probe) and the
counter checks `gpudash info` runs (gpudash.health.device_summary), on the faked 8-GPU DGX H100.

    python benchmarks/health_cost.py [--runs 15] [--snapshot dgx-h100-8gpu.json]

The NVIDIA machine is benchmarks/fake_nvml/pynvml.py (tests/fakes.py over the snapshot, healthy counters), put
first on PYTHONPATH of a fresh interpreter that discovers it as `gpudash check` does: NVML in its contained child,
each GPU's health request under the child's time limit. The first reading also registers the XID event watch.
The goal (issue 23): at most 2 s for the checks on 8 GPUs, no workload. Prints the first run and the median of
the others, and the time `gpudash check --json` takes as a whole process (plugins, discovery and imports
included) for comparison.
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
GOAL_S = 2.0

_CHILD = """
import statistics, sys, time
from gpudash.config import load_config
from gpudash.devices import discover
from gpudash.health.device_summary import device_health
from gpudash.health.run import run_health
from gpudash.health.thresholds import Thresholds

runs = int(sys.argv[1])
machine = discover(include_torch=False)
gpus = [d for d in machine.devices if d.vendor == "nvidia"]
limits = Thresholds.from_config(load_config(None))
times, counters = [], []
for _ in range(runs):
    start = time.perf_counter()
    results = run_health(machine, limits)
    times.append(time.perf_counter() - start)
    start = time.perf_counter()
    device_health(machine, limits)
    counters.append(time.perf_counter() - start)
machine.close()
applied = sum(r.severity is not None for r in results)
bad = sorted({r.severity for r in results if r.severity not in (None, "OK")})
print(len(gpus), len(results), applied, ",".join(bad) or "none", times[0], statistics.median(times[1:] or times),
      max(times), statistics.median(counters))
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--snapshot", default="dgx-h100-8gpu.json", help="a file in examples/snapshots, or a path")
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPUDASH_")}
    env.update(
        PYTHONPATH=os.pathsep.join([str(ROOT / "benchmarks" / "fake_nvml"), str(ROOT)]),
        GPUDASH_FAKE_SNAPSHOT=args.snapshot,
        XDG_CONFIG_HOME=tempfile.mkdtemp(prefix="gpudash-health-"),
        XDG_STATE_HOME=tempfile.mkdtemp(prefix="gpudash-health-"),
    )
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(args.runs)], capture_output=True, text=True, env=env, check=True
    ).stdout.split()
    gpus, results, applied, bad = int(out[0]), int(out[1]), int(out[2]), out[3]
    first, median, worst, info_median = (float(x) for x in out[4:8])
    walls = []
    for _ in range(5):
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "gpudash", "check", "--json"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env=env, cwd=env["XDG_CONFIG_HOME"],
        )  # fmt: skip
        walls.append(time.perf_counter() - start)
    print(
        f"{args.snapshot} faked through benchmarks/fake_nvml/pynvml.py; {platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}; load average {os.getloadavg()[0]:.2f}"
    )
    print(f"{gpus} GPUs, {results} health results ({applied} applied; not OK: {bad})")
    print(
        f"run_health (gpudash check's health checks): first {first:.3f} s, median of the next {args.runs - 1} "
        f"{median:.3f} s, slowest {worst:.3f} s"
    )
    print(f"device_health (gpudash info's counter checks): median {info_median:.3f} s")
    print(
        f"gpudash check --json, whole process (plugins, discovery, imports): median of 5 {statistics.median(walls):.3f} s"
    )
    verdict = "met" if max(first, worst) <= GOAL_S else "NOT met"
    print(f"goal: the checks on 8 GPUs in at most {GOAL_S:g} s: {verdict}")
    return 0 if verdict == "met" else 1


if __name__ == "__main__":
    raise SystemExit(main())
