"""Published figures a preflight compares with: the part's MAMF (knowledge/mamf.py) and all_reduce floors.

Floors are nccl-tests' (rccl-tests') all_reduce busbw at 16 GiB on one node of 8 GPUs, as public health checks
require them (docs/fleet.md cites each): a node of 8 such ranks whose within-node sweep reached 16 GiB and
whose busbw is lower fails.
"""

from __future__ import annotations

import re
from types import SimpleNamespace
from typing import Any

GIB = 2**30
AZ_NHC = "Azure/azurehpc-health-checks conf/{conf}.conf: check_{lib}_allreduce {gbs} 1 16G"

# (device name pattern, GPUs per node, floor GB/s, bytes, node name, source)
FLOORS: tuple[tuple[str, int, float, int, str, str], ...] = (
    (r"\bH100\b.*(SXM|HBM3)", 8, 460.0, 16 * GIB, "8xH100 SXM",
     AZ_NHC.format(conf="nd96isr_h100_v5", lib="nccl", gbs="460.0")),
    (r"\bH200\b", 8, 431.0, 16 * GIB, "8xH200 SXM", AZ_NHC.format(conf="nd96isr_h200_v5", lib="nccl", gbs="431.0")),
    (r"\bMI300X\b", 8, 314.0, 16 * GIB, "8xMI300X", AZ_NHC.format(conf="nd96isr_mi300x_v5", lib="rccl", gbs="314")),
    (r"\bA100\b.*SXM", 8, 230.0, 16 * GIB, "8xA100 SXM",
     "public NCCL validation write-ups: 230-250 GB/s on 8xA100 (the lower end taken)"),
)  # fmt: skip


def mamf_gflops(device: dict[str, Any] | None, precision: str) -> tuple[float, str] | None:
    """(the part's published MAMF in GFLOPS, its source) for this rank's device, or None."""
    if not device:
        return None
    from gpudash.knowledge.mamf import SOURCE_NAME, mamf_for

    facts = SimpleNamespace(vendor=device["key"].split(":")[0], name=device["name"], uuid=device.get("uuid"))
    row = mamf_for(facts).get(precision)
    return (row.tflops * 1000, f"{SOURCE_NAME}: {row.accelerator}, torch {row.torch}") if row else None


def busbw_floor(rank: dict[str, Any], node: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The published floor for the within-node bus bandwidth of this rank's node (`node`: the results of its
    ranks), when the node is one of that kind: as many ranks as the floor's GPUs, each on that part."""
    device = rank.get("device")
    if not device:
        return None
    same = [r for r in node if r.get("device") and r["device"]["name"] == device["name"]]
    for pattern, gpus, gbs, size, name, source in FLOORS:
        if re.search(pattern, device["name"], re.IGNORECASE) and len(same) == len(node) == gpus:
            return {"gbs": gbs, "bytes": size, "node": name, "source": source}
    return None
