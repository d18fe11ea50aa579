"""How long `gpudash preflight` takes on 2 CPU ranks with everything on (issue 24 item 8): every precision
probed, the plugin checks, the matmul rates and fingerprints, the health checks, the all_reduce check and the
bus-bandwidth sweep; torchrun on loopback with gloo. Wall time from torchrun's start to its exit, and each
rank's own "done in" figure, over --runs runs (default 3); the target is 30 s.

    .venv/bin/python benchmarks/preflight_time.py [--runs N] [--ranks N]
"""

from __future__ import annotations

import argparse
import re
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def one_run(ranks: int) -> tuple[float, list[float], int]:
    command = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", str(ranks), "--master-addr",
               "127.0.0.1", "--master-port", str(free_port()), "-m", "gpudash", "preflight"]  # fmt: skip
    began = time.monotonic()
    run = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=REPO)
    took = time.monotonic() - began
    done = [float(x) for x in re.findall(r"done in ([0-9.]+) s", run.stderr)]
    if run.returncode != 0:
        print(run.stdout + run.stderr[-2000:], file=sys.stderr)
    return took, done, run.returncode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--ranks", type=int, default=2)
    args = parser.parse_args()
    walls = []
    for i in range(args.runs):
        took, done, code = one_run(args.ranks)
        walls.append(took)
        print(f"run {i + 1}: {took:.1f} s wall (torchrun start to exit), ranks done in "
              f"{', '.join(f'{d:.1f}' for d in done)} s, exit {code}")  # fmt: skip
    print(f"median {statistics.median(walls):.1f} s, max {max(walls):.1f} s over {args.runs} runs "
          f"of {args.ranks} ranks (target: 30 s)")  # fmt: skip
    return 0 if max(walls) <= 30 else 1


if __name__ == "__main__":
    sys.exit(main())
