"""Replays with planted health faults, for the tests of serve's alerts and the Slurm and node-problem-detector
scripts: the 8-GPU example with GPU 3 lost and uncorrected SRAM ECC errors recorded for GPU 5."""

from __future__ import annotations

import json
from pathlib import Path

from servers import DGX

HEALTHY_COUNTERS = {
    "ecc": {"volatile_sram_uncorrected": 0, "volatile_sram_corrected": 0},
    "remapped_rows": {"corrected": 0, "uncorrected": 0, "pending": False, "failed": False},
    "recovery_action": 0,
    "clock_event_reasons": 1,
    "pcie": {"gen": 5, "max_gen": 5, "width": 16, "max_width": 16},
    "energy_mj": 5_000_000,
}


def faulty_replay(folder: Path) -> Path:
    data = json.loads(DGX.read_text())
    data["devices"][3]["status"] = "lost"
    data["devices"][3]["unavailable"] = {"device": "GpuIsLost: the GPU has fallen off the bus"}
    for i in (4, 5):
        data["devices"][i]["health_counters"] = {
            "counters": json.loads(json.dumps(HEALTHY_COUNTERS)),
            "unavailable": {},
        }
    data["devices"][5]["health_counters"]["counters"]["ecc"]["volatile_sram_uncorrected"] = 3
    path = folder / "faulty.json"
    path.write_text(json.dumps(data))
    return path
