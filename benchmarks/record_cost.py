"""What defining one immutable record costs in a fresh interpreter: a frozen dataclass against a NamedTuple.

    python benchmarks/record_cost.py [--runs 7] [--classes 10]

The dashboard's first frame defines a dozen small records (process columns and rows, the device table's
fields, the views' specs, config keys); a frozen dataclass writes and compiles its methods when it is defined,
a NamedTuple does not. Each run is a fresh interpreter that defines --classes records of four fields, the
shape of gpudash's, and prints the time per class; the figures are the medians of --runs, the two kinds
alternated. docs/performance.md ("eighth pass") keeps the result.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import subprocess
import sys
from pathlib import Path

DEFINE = """
import sys, time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple
kind, count = sys.argv[1], int(sys.argv[2])
start = time.perf_counter()
for _ in range(count):
    if kind == "frozen dataclass":
        @dataclass(frozen=True)
        class Column:
            id: str
            header: str
            right: bool
            text: Callable[[Any], str]
    else:
        class Column(NamedTuple):
            id: str
            header: str
            right: bool
            text: Callable[[Any], str]
print((time.perf_counter() - start) / count)
"""
KINDS = ("frozen dataclass", "NamedTuple")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--classes", type=int, default=10)
    args = parser.parse_args()
    seconds: dict[str, list[float]] = {kind: [] for kind in KINDS}
    for _ in range(args.runs):
        for kind in KINDS:
            out = subprocess.run(
                [sys.executable, "-c", DEFINE, kind, str(args.classes)], capture_output=True, text=True, check=True
            )
            seconds[kind].append(float(out.stdout))
    cpuinfo = Path("/proc/cpuinfo")
    model = (
        next(
            (
                line.split(":", 1)[1].strip()
                for line in cpuinfo.read_text().splitlines()
                if line.startswith("model name")
            ),
            platform.processor() or platform.machine(),
        )
        if cpuinfo.exists()
        else platform.processor() or platform.machine()
    )
    print(f"Python {platform.python_version()}, {model}; median of {args.runs} fresh interpreters")
    for kind in KINDS:
        print(f"{kind:18} {1000 * statistics.median(seconds[kind]):.3f} ms a class")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
