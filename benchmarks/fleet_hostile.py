"""A fleet round against 128 hostile endpoints at once (issue 27 item 2): round time against the deadline, and
the scraper's peak memory.

    python benchmarks/fleet_hostile.py [--kind mixed] [--hosts 128] [--timeout 5] [--rounds 6] [--budget-mib 256]

benchmarks/fleet_sim.py --hostile KIND serves the endpoints from another process (huge: a 30 MiB page of
57,351 hosts x 8 GPUs; endless: a chunked body that never ends; trickle: a byte every 50 ms; mixed: each in
turn), so the figures here are the scraper's alone. Rounds start every --timeout seconds, as `gpudash fleet`'s
Fleet view would at its slowest. Prints one JSON document: each round's took_s, the most any took, the process's
peak RSS (VmHWM) before and after, the budget's peak and refusals, and the reasons the hosts gave.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def vm_hwm_mib() -> float:
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:")) / 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kind", default="mixed", choices=("huge", "endless", "trickle", "mixed"))
    parser.add_argument("--hosts", type=int, default=128)
    parser.add_argument("--timeout", type=float, default=5.0)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--budget-mib", type=int, default=256)
    args = parser.parse_args()

    from gpudash.fleet.scrape import Scraper
    from gpudash.fleet.targets import parse_target

    sim = subprocess.Popen(
        [sys.executable, str(ROOT / "benchmarks" / "fleet_sim.py"), "--hostile", args.kind, "--hosts", str(args.hosts)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert sim.stdout is not None
        ports = json.loads(sim.stdout.readline())["ports"]
        rss_before = vm_hwm_mib()
        scraper = Scraper(
            [parse_target(f"127.0.0.1:{p}", "--hosts") for p in ports],
            timeout_s=args.timeout,
            memory_budget_bytes=args.budget_mib * 2**20,
        )
        took, reasons = [], Counter()
        try:
            for i in range(args.rounds):
                started = time.monotonic()
                fleet = scraper.round()
                took.append(round(fleet.took_s, 3))
                for host in fleet.hosts:
                    reason = (host.error or "").split(": ", 1)[-1]
                    reasons[reason.split(" (")[0].split(";")[0][:80]] += 1
                if i + 1 < args.rounds:
                    time.sleep(max(0.0, args.timeout - (time.monotonic() - started)))
        finally:
            closing = time.monotonic()
            scraper.close()
            close_s = time.monotonic() - closing
        print(
            json.dumps(
                {
                    "kind": args.kind,
                    "endpoints": len(ports),
                    "deadline_s": args.timeout,
                    "rounds_took_s": took,
                    "most_took_s": max(took),
                    "close_s": round(close_s, 3),
                    "peak_rss_mib_before": round(rss_before, 1),
                    "peak_rss_mib": round(vm_hwm_mib(), 1),
                    "budget_mib": args.budget_mib,
                    "budget_peak_mib": round(scraper.budget.peak / 2**20, 1),
                    "budget_refusals": scraper.budget.refused,
                    "reasons_last_rounds": dict(reasons.most_common(6)),
                },
                indent=1,
            )
        )
    finally:
        sim.stdin.close() if sim.stdin else None
        sim.wait(timeout=30)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
