"""Simulated fleet for benchmarks/fleet_scale.py: N gpudash exporters on 127.0.0.1, in one process.

    python benchmarks/fleet_sim.py --hosts 128

Each host is prometheus_client's HTTP server on its own loopback port with gpudash's real collector over the
replayed 8-GPU snapshot (examples/snapshots/dgx-h100-8gpu.json), hostname label sim-000 ... sim-127. One
process instead of 128 keeps the machine usable; every host still answers its own connections, on its own
server thread. Prints one JSON line {"ports": [...]} when all listen, then serves until stdin closes.
Nothing is remembered for the replayed machine here: each host serves spec, recommendation and telemetry.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DGX = ROOT / "examples" / "snapshots" / "dgx-h100-8gpu.json"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=128)
    args = parser.parse_args()

    from gpudash.config import defaults
    from gpudash.devices import discover
    from gpudash.exporter import registry_for
    from gpudash.exporter.http import MetricsApp, start

    ports = []
    for i in range(args.hosts):
        _, collector = registry_for(discover(replay=str(DGX)), defaults(), hostname=f"sim-{i:03d}")
        collector.families()  # warm, as `gpudash serve` is before it listens
        server = start(MetricsApp(collector), "127.0.0.1", 0)  # the endpoint `gpudash serve` runs
        ports.append(server.server_address[1])
    print(json.dumps({"ports": ports}), flush=True)
    sys.stdin.read()  # until the benchmark closes our stdin; the servers' threads are daemons and end with us
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
