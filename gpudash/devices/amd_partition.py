"""An AMD GPU's compute partition (SPX, DPX, TPX, QPX, CPX) and memory partition (NPS1, NPS2, NPS4, NPS8), as
amdsmi reports them: the one read both the adapter (the dashboard, `info`) and the health counters (`serve`,
`check`) use, so every face names the same mode.

amdsmi lists each compute partition as a device of its own, so a CPX GPU is already eight devices here; the
mode is what tells the user why (AMD's counterpart of NVIDIA's MIG).
"""

from __future__ import annotations

from typing import Any

from gpudash.devices.fields import read_field
from gpudash.plain_text import one_line

# The key an unreadable partition's reason goes under, in DeviceInfo.unavailable and the health counters alike.
FIELD = "partition"


def _known(value: Any) -> str | None:
    """amdsmi writes "N/A" (or nothing) for what it cannot read; a mode is a short word, kept on one line."""
    if value in ("N/A", None, ""):
        return None
    return one_line(str(value), 16)


def read_partition(smi: Any, handle: Any, missing: dict[str, str]) -> tuple[str | None, str | None]:
    """(compute, memory): ("CPX", "NPS4"); None for a mode amdsmi could not read, its reason in missing["partition"]."""
    compute = read_field(missing, FIELD, lambda: smi.amdsmi_get_gpu_compute_partition(handle))
    memory = read_field(missing, FIELD, lambda: smi.amdsmi_get_gpu_memory_partition(handle))
    return _known(compute), _known(memory)


def partition_tag(compute: str | None, memory: str | None) -> str:
    """ "CPX · NPS4", the tag the device table puts after the name as it does MIG's; '' with neither."""
    return " · ".join(m for m in (compute, memory) if m)
