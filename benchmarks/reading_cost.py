"""What checking the files gpudash reads costs: the schema validators measured, and the replay start-up.

    python benchmarks/reading_cost.py [--runs 7]

1. For each JSON Schema validator that is installed (jsonschema-rs, which gpudash uses; fastjsonschema;
   jsonschema): importing it and building the validator of gpudash/contracts/snapshot.schema.json, in a fresh
   process each run (median), and validating examples/snapshots/dgx2-v100-16gpu.json once.
2. `gpudash --replay examples/snapshots/h100-80gb.json info` wall time, each run a fresh process (median): the
   whole reader (bounded read, strict JSON, contract, field checks) inside a real command.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SNAPSHOT = ROOT / "examples" / "snapshots" / "dgx2-v100-16gpu.json"

BUILD = {
    "jsonschema_rs": "import jsonschema_rs as m; v = m.validator_for(schema); check = lambda d: list(v.iter_errors(d))",
    "fastjsonschema": "import fastjsonschema as m; v = m.compile(schema)\ndef check(d):\n    try: v(d)\n    except m.JsonSchemaException: pass",
    "jsonschema": "import jsonschema as m; v = m.Draft202012Validator(schema); check = lambda d: list(v.iter_errors(d))",
}


def validator_cost(module: str, runs: int) -> tuple[float, float]:
    code = f"""
import json, time
from gpudash.contracts import schema as load
schema = load("snapshot")
data = json.loads(open({str(SNAPSHOT)!r}).read())
start = time.perf_counter()
{BUILD[module]}
built = time.perf_counter()
check(data)
print(json.dumps([built - start, time.perf_counter() - built]))
"""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    found = []
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
        found.append(json.loads(out))
    return statistics.median(f[0] for f in found), statistics.median(f[1] for f in found)


def replay_info(runs: int) -> float:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "XDG_CONFIG_HOME": "/nonexistent"}
    args = [
        sys.executable,
        "-m",
        "gpudash",
        "--replay",
        str(ROOT / "examples" / "snapshots" / "h100-80gb.json"),
        "info",
    ]
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(args, env=env, stdout=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        f"reading cost: {platform.machine()}, {os.cpu_count()} logical CPUs, Python {platform.python_version()}, "
        f"load average {load}; median of {args.runs} fresh processes"
    )
    print(f"{'validator':<16} {'import + build':>15} {'validate ' + SNAPSHOT.name:>36}")
    for module in BUILD:
        if importlib.util.find_spec(module) is None:
            print(f"{module:<16} {'not installed':>15}")
            continue
        build, check = validator_cost(module, args.runs)
        print(f"{module:<16} {build * 1000:>12.1f} ms {check * 1000:>33.2f} ms")
    print(f"gpudash --replay h100-80gb.json info: {replay_info(args.runs):.3f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
