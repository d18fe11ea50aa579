"""The monitor's plain-text pieces: device labels, short names and compact figures for one-line rows.

A dense device row has about 80 columns for a dozen figures (nvitop's compact mode), so figures here are
short: "61/80G", "312/700W", "3:25:07". A missing value is always "n/a"; its reason is shown elsewhere.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from gpudash.render.formatting import GIB, NA

if TYPE_CHECKING:
    from gpudash.models import DeviceInfo

MIB = 1024**2
KIB = 1024
# Vendor words every name of a kind repeats; the row has little room and the vendor is known.
NAME_PREFIXES = ("NVIDIA ", "Tesla ", "AMD ", "Instinct ")
# From widest to narrowest: the narrowest float format a device runs natively names it best.
PRECISION_MARK_ORDER = ("fp8", "bf16", "fp16", "tf32", "fp32")


def device_labels(devices: Sequence[DeviceInfo]) -> dict[str, str]:
    """device.key -> the short label rows use: "0".."15" for the GPUs of one vendor (as nvidia-smi numbers
    them), "nv0"/"amd0" when two GPU vendors share the machine, "cpu" (or "cpu1"...) for the CPU."""
    gpu_vendors = {d.vendor for d in devices if d.vendor != "cpu"}
    cpus = [d for d in devices if d.vendor == "cpu"]
    out = {}
    for d in devices:
        if d.vendor == "cpu":
            out[d.key] = "cpu" if len(cpus) == 1 else f"cpu{d.index}"
        elif len(gpu_vendors) > 1:
            out[d.key] = f"{'nv' if d.vendor == 'nvidia' else d.vendor}{d.index}"
        else:
            out[d.key] = str(d.index)
    return out


def short_name(name: str) -> str:
    """ "NVIDIA H100 80GB HBM3" -> "H100 80GB HBM3"; "Tesla V100-SXM3-32GB" -> "V100-SXM3-32GB"."""
    for prefix in NAME_PREFIXES:
        if name.startswith(prefix) and len(name) > len(prefix):
            name = name[len(prefix) :]
    return name


def short_cpu_name(name: str) -> str:
    """ "Intel(R) Xeon(R) Platinum 8480+ CPU @ 2.00GHz" -> "Intel Xeon Platinum 8480+": the marks, the word CPU
    or Processor at its end and the base clock say nothing a row needs (the detail view has the name as the OS gives it)."""
    for mark in ("(R)", "(r)", "(TM)", "(tm)"):
        name = name.replace(mark, "")
    name = name.split(" @ ", 1)[0]
    words = name.split()
    if len(words) > 1 and words[-1] in ("CPU", "Processor"):
        words.pop()
    return " ".join(words) or name


def clip(text: str, width: int) -> str:
    """At most `width` columns, with an ellipsis when cut."""
    if width <= 0:
        return ""
    return text if len(text) <= width else text[: max(0, width - 1)] + "…"


def size(value: int | float | None) -> str:
    """Bytes in at most five columns: "512K", "37M", "60.8G", "123G"."""
    if value is None:
        return NA
    if value >= 100 * GIB:
        return f"{value / GIB:.0f}G"
    if value >= GIB:
        return f"{value / GIB:.1f}G"
    if value >= MIB:
        return f"{value / MIB:.0f}M"
    return f"{value / KIB:.0f}K"


def used_of(used: int | None, total: int | None, wide: bool = False) -> str:
    """ "61/80G" (narrow) or "61.2/79.6 GiB" (wide); n/a when nothing is known."""
    if used is None and total is None:
        return NA
    if wide:
        return f"{_gib(used, 1)}/{_gib(total, 1)} GiB"
    small = used is not None and used < 10 * GIB  # "0.5/80G" rather than a misleading "0/80G"
    return f"{_gib(used, 1 if small else 0)}/{_gib(total, 0)}G"


def _gib(value: int | None, digits: int) -> str:
    return NA if value is None else f"{value / GIB:.{digits}f}"


def power(draw: float | None, limit: float | None) -> str:
    """ "312/700W", "312W" without a limit, "n/a"."""
    if draw is None:
        return NA
    return f"{draw:.0f}/{limit:.0f}W" if limit else f"{draw:.0f}W"


def temperature(value: float | None) -> str:
    return NA if value is None else f"{value:.0f}°C"


def percent(value: float | None, digits: int = 0) -> str:
    return NA if value is None else f"{value:.{digits}f}%"


def elapsed(seconds: float | None) -> str:
    """Like ps's etime, shortest form: "0:52", "3:25:07", "4d 01h"."""
    if seconds is None:
        return NA
    whole = int(seconds)
    days, rest = divmod(whole, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}d {hours:02d}h"
    if hours:
        return f"{hours}:{minutes:02d}:{secs:02d}"
    return f"{minutes}:{secs:02d}"


def precision_mark(levels: Mapping[str, str]) -> str:
    """The narrowest float format native by the spec tables ("fp8", "bf16", ...), from badge levels
    (gpudash.precisions.BADGE_PRECISIONS -> "native" / "emulated" / "absent"); n/a when none is."""
    for name in PRECISION_MARK_ORDER:
        if levels.get(name) == "native":
            return name
    return NA


def ranges(indices: Sequence[int]) -> str:
    """[0, 1, 2, 3, 5, 7] -> "0-3,5,7"."""
    out: list[str] = []
    ordered = sorted(set(indices))
    start = prev = None
    for i in [*ordered, None]:
        if i is not None and prev is not None and i == prev + 1:
            prev = i
            continue
        if start is not None:
            out.append(str(start) if start == prev else f"{start}-{prev}")
        start = prev = i
    return ",".join(out)
