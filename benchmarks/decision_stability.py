#!/usr/bin/env python
"""Does `gpudash export` give the same AMP dtype on a busy machine as on a quiet one?

Runs the default `gpudash export` (its quick probe and benchmark) several times quiet, then several times while
1 and then 2 CPU-burning processes (started here, one busy Python loop each) run beside it. Every run starts
from fresh state (its own XDG_STATE_HOME), so nothing remembered carries an answer from one run to the next.
Prints, per load level, how many runs gave the quiet runs' AMP dtype, with each run's reason; the goal is all.

    python benchmarks/decision_stability.py                  # 3 quiet, 3 with 1 burner, 3 with 2 burners
    python benchmarks/decision_stability.py --runs 5 --burners 1,2,4 --json

"Quiet" means no burner of ours: say what else ran on the machine when quoting the figures.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BURN = "while True:\n    pass\n"
EXPORT_TIMEOUT_S = 600


def gpudash_command() -> list[str]:
    return [sys.executable, "-m", "gpudash"]


def one_export(workdir: Path) -> dict:
    """One default export from fresh state; returns its dtype, reason, wall time and exit code."""
    state = Path(tempfile.mkdtemp(prefix="state-", dir=workdir))
    out = workdir / f"export-{state.name}.json"
    env = dict(os.environ, XDG_STATE_HOME=str(state), XDG_CONFIG_HOME=str(state))
    began = time.perf_counter()
    proc = subprocess.run(
        [*gpudash_command(), "export", "--format", "json", "-o", str(out)],
        env=env,
        capture_output=True,
        text=True,
        timeout=EXPORT_TIMEOUT_S,
    )
    took = time.perf_counter() - began
    if proc.returncode != 0 or not out.exists():
        return {"code": proc.returncode, "dtype": None, "reason": proc.stderr.strip()[-300:], "seconds": took}
    tree = json.loads(out.read_text())
    reason = tree.get("reasons", {}).get("amp.dtype")
    return {"code": 0, "dtype": tree["amp"]["dtype"], "reason": reason, "seconds": took}


def with_burners(count: int, fn):
    burners = [subprocess.Popen([sys.executable, "-c", BURN]) for _ in range(count)]
    try:
        time.sleep(0.5 if count else 0)  # let them reach the busy loop before measuring starts
        return fn()
    finally:
        for b in burners:
            b.kill()
        for b in burners:
            b.wait()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="exports per load level (default 3)")
    parser.add_argument("--burners", default="1,2", help="burner counts to try after the quiet runs (default 1,2)")
    parser.add_argument("--json", action="store_true", help="print the runs as JSON")
    args = parser.parse_args(argv)
    levels = [0] + [int(x) for x in args.burners.split(",") if x.strip()]
    results: dict[int, list[dict]] = collections.defaultdict(list)
    with tempfile.TemporaryDirectory(prefix="decision-stability-") as tmp:
        for level in levels:
            for i in range(args.runs):
                run = with_burners(level, lambda: one_export(Path(tmp)))
                results[level].append(run)
                print(
                    f"burners={level} run {i + 1}: {run['dtype']} in {run['seconds']:.1f} s (exit {run['code']})",
                    file=sys.stderr,
                )
    quiet = collections.Counter(r["dtype"] for r in results[0])
    answer = quiet.most_common(1)[0][0] if quiet else None
    if args.json:
        print(json.dumps({"quiet_answer": answer, "levels": {str(k): v for k, v in results.items()}}, indent=2))
    else:
        print(f"machine: {_cpu_name()}, {os.cpu_count()} logical CPUs")
        print(f"quiet answer: {answer} ({dict(quiet)})")
        for level in levels:
            runs = results[level]
            same = sum(r["dtype"] == answer for r in runs)
            print(f"{level} burner(s): {same} of {len(runs)} runs gave {answer}")
            for r in runs:
                print(f"  {r['dtype']}  {r['seconds']:.1f} s  {(r['reason'] or '')[:160]}")
    agree = all(r["dtype"] == answer for runs in results.values() for r in runs)
    return 0 if agree else 1


def _cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


if __name__ == "__main__":
    sys.exit(main())
