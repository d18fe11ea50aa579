"""The health limits, from the config's [health] table (gpudash.config validates each key; docs/health.md gives
each default's public source)."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

# Azure NHC customTests/azure_gpu_xid.nhc: XIDs that fail the node when seen in the last 2 hours.
AZURE_CRITICAL_XIDS = (48, 56, 57, 58, 62, 63, 64, 65, 68, 69, 73, 74, 79, 80, 81, 92, 119, 120)


@dataclass(frozen=True)
class Thresholds:
    expect_gpus: int = 0  # 0: not checked
    xid_window_s: int = 7200  # Azure NHC: the last 2 hours
    xid_critical: tuple[int, ...] = AZURE_CRITICAL_XIDS
    ecc_sram_corrected_max: int = 10_000  # Azure NHC azure_gpu_ecc.nhc
    ecc_dram_corrected_max: int = 20_000_000  # Azure NHC azure_gpu_ecc.nhc
    ecc_sram_aggregate_uncorrected_max: int = 4  # stas00/ml-engineering nvidia/debug.md: RMA beyond this
    remapped_uncorrected_max: int = 512  # Azure NHC azure_gpu_ecc.nhc
    temperature_margin_c: float = 5.0  # gpudash: warn this close to the slowdown threshold
    amd_ecc_correctable_max: int = 10_000  # gpudash: the same limit as NVIDIA's SRAM corrected count
    amd_compute_partition: str = ""  # "" accepts any (e.g. "SPX", "CPX")
    amd_memory_partition: str = ""  # "" accepts any (e.g. "NPS1", "NPS4")
    edac_corrected_max: int = 0  # gpudash: any corrected host memory error is worth a warning
    kernel_log: str = "/dev/kmsg"

    @classmethod
    def from_config(cls, config: dict[str, Any] | None, expect_gpus: int | None = None) -> Thresholds:
        """The [health] table's values (already validated); `expect_gpus` (--expect-gpus) wins over it."""
        section = dict((config or {}).get("health") or {})
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in section.items() if k in known}
        if "xid_critical" in values:
            values["xid_critical"] = tuple(int(x) for x in values["xid_critical"])
        if expect_gpus is not None:
            values["expect_gpus"] = expect_gpus
        return cls(**values)
