"""Memory exact to the MiB, on request: "62771/81559MiB" as nvidia-smi and nvitop print it, where the
dashboard otherwise rounds to GiB ("61/80G"). The dashboard's `m` key and `[ui] memory_units` choose."""

from __future__ import annotations

from gpudash.render.formatting import NA

MIB = 1024 * 1024
UNITS = ("GiB", "MiB")  # the choices of [ui] memory_units: rounded GiB, or exact MiB


def used_of_mib(used: int | None, total: int | None) -> str:
    """ "62771/81559MiB"; a part not known is n/a ("n/a/81559MiB"); n/a when nothing is known."""
    if used is None and total is None:
        return NA
    return f"{_mib(used)}/{_mib(total)}MiB"


def _mib(value: int | None) -> str:
    return NA if value is None else str(value // MIB)
