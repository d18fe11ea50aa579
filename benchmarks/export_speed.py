"""How long `gpudash export` takes on this machine: `--bench none` and the default (quick) export.

    python benchmarks/export_speed.py [--runs 5] [--default-runs 1] [--json]

Each run is a fresh `python -m gpudash export` process writing to a temporary file: interpreter start-up,
device discovery, and for the default export the probes, the quick benchmark, the plugin checks and the
model-memory trace, each in gpudash's child processes. The figures are median wall times. Goals: under
5 s for `--bench none`, under 60 s for the default export. No user config or remembered state is read.
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

GOALS_S = {"none": 5.0, "default": 60.0}


def one_run(env: dict[str, str], out: str, extra: list[str]) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "gpudash", "export", "-o", out, *extra],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"gpudash export {' '.join(extra)} failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    return elapsed, done.stderr.strip().splitlines()[-1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="runs of --bench none (default 5)")
    parser.add_argument("--default-runs", type=int, default=1, help="runs of the default export (default 1)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    figures: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        env = {
            **os.environ,
            "XDG_STATE_HOME": os.path.join(tmp, "state"),
            "XDG_CONFIG_HOME": os.path.join(tmp, "config"),
        }
        for name in ("GPUDASH_REPLAY", "GPUDASH_CONFIG"):
            env.pop(name, None)
        out = os.path.join(tmp, "gpudash.toml")
        for mode, runs, extra in (("none", args.runs, ["--bench", "none"]), ("default", args.default_runs, [])):
            times, summary = [], ""
            for _ in range(max(1, runs)):
                elapsed, summary = one_run(env, out, extra)
                times.append(elapsed)
            figures[mode] = {
                "median_s": statistics.median(times),
                "runs_s": times,
                "goal_s": GOALS_S[mode],
                "summary": summary,
            }
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    for mode, fig in figures.items():
        command = "gpudash export --bench none" if mode == "none" else "gpudash export (default: --bench quick)"
        runs = ", ".join(f"{t:.2f}" for t in fig["runs_s"])
        met = "met" if fig["median_s"] < fig["goal_s"] else "NOT met"
        print(
            f"{command}: median {fig['median_s']:.2f} s of {len(fig['runs_s'])} runs ({runs} s); "
            f"goal < {fig['goal_s']:g} s: {met}"
        )
        print(f"  {fig['summary']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
