"""Import cost of the HTTP clients the fleet could use, each in fresh interpreters.

    python benchmarks/http_client_import.py [--runs 9]

The fleet uses the standard library: asyncio streams carry the requests on one event-loop thread and
http.client parses the answers (gpudash/fleet/fetch.py); the thread pool it replaced is listed for comparison.
aiohttp comes with gpudash (textual-serve needs it); httpx is not a dependency: to compare, run this with a
Python that has it (e.g. a scratch venv with `pip install httpx aiohttp`); a client that is not installed is
reported as such.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys

CLIENTS = ("asyncio, http.client", "http.client, concurrent.futures", "httpx", "aiohttp")


def import_ms(module: str) -> float | None:
    code = f"import time; t = time.perf_counter(); import {module}; print((time.perf_counter() - t) * 1000)"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    return float(run.stdout) if run.returncode == 0 else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    print(f"import cost in fresh interpreters ({sys.executable}, {args.runs} runs each)")
    for client in CLIENTS:
        times = [import_ms(client) for _ in range(args.runs)]
        if None in times:
            print(f"  {client:<34} not installed")
            continue
        print(f"  {client:<34} median {statistics.median(times):6.1f} ms, min {min(times):6.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
