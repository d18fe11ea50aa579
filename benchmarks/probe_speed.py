"""How long a full `gpudash probe` of this machine takes, end to end.

    python benchmarks/probe_speed.py [--runs 3] [--json]

Each run is a fresh `python -m gpudash probe --json` process: interpreter start-up, device discovery, the
child process with its torch import, every precision's checks, and the JSON on stdout. The figure is the
median wall time of the runs. Goal: under 10 s for the full probe of the development CPU. Remembered
results go to a temporary state directory, and no user config is read, so runs do not touch ~/.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

GOAL_S = 10.0


def one_run(env: dict[str, str]) -> tuple[float, dict]:
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "gpudash", "probe", "--json"], env=env, capture_output=True, text=True, timeout=600
    )
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"gpudash probe failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    return elapsed, json.loads(done.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    load_before = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    with tempfile.TemporaryDirectory() as tmp:
        env = {
            **os.environ,
            "XDG_STATE_HOME": os.path.join(tmp, "state"),
            "XDG_CONFIG_HOME": os.path.join(tmp, "config"),
        }
        env.pop("GPUDASH_REPLAY", None)
        env.pop("GPUDASH_CONFIG", None)
        times, last = [], {}
        for _ in range(args.runs):
            elapsed, last = one_run(env)
            times.append(elapsed)
    median = statistics.median(times)
    devices = [f"{d['key']} {d['name']}" for d in last.get("devices", [])]
    verdicts = {d["key"]: {p: e["verdict"] for p, e in d["precisions"].items()} for d in last.get("devices", [])}
    if args.json:
        print(
            json.dumps(
                {
                    "median_s": median,
                    "runs_s": times,
                    "goal_s": GOAL_S,
                    "devices": devices,
                    "verdicts": verdicts,
                    "load_average_1min_before": load_before,
                    "cpus": os.cpu_count(),
                },
                indent=2,
            )
        )
    else:
        runs = ", ".join(f"{t:.2f}" for t in times)
        print(
            f"gpudash probe (every precision, {'; '.join(devices)}): median {median:.2f} s of {len(times)} "
            f"runs ({runs} s); goal < {GOAL_S:g} s: {'met' if median < GOAL_S else 'NOT met'}"
        )
        if load_before is not None:  # other work on a shared machine slows every figure
            print(f"  load average before the runs: {load_before:.2f} on {os.cpu_count()} CPUs")
        for key, per in verdicts.items():
            print(f"  {key}: " + ", ".join(f"{p} {v}" for p, v in per.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
