"""What NVML says about a GPU's traffic: BAR1 memory, PCIe and NVLink throughput (nvitop's and nvidia-smi's
figures). Each call that fails leaves its fields n/a with NVML's reason, as every other reading does.

PCIe: nvmlDeviceGetPcieThroughput gives KB/s over the driver's last 20 ms (nvidia-smi -q and nvitop read it
as KiB). NVLink: the data counters NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX/RX of each active link count KiB
since the driver loaded; the rate is their growth between two readings, so the first reading has none.
"""

from __future__ import annotations

import time
from typing import Any

from gpudash.devices.fields import error_reason, read_field

KIB = 1024
FIRST_READING = "a rate needs two readings: shown from the next one"
NO_LINKS = "no active NVLink"


def bar1(nv: Any, handle: Any, missing: dict[str, str]) -> dict[str, int | None]:
    info = read_field(missing, "bar1_used_bytes", lambda: nv.nvmlDeviceGetBAR1MemoryInfo(handle))
    if info is None:
        missing["bar1_total_bytes"] = missing["bar1_used_bytes"]
        return {"bar1_used_bytes": None, "bar1_total_bytes": None}
    return {"bar1_used_bytes": int(info.bar1Used), "bar1_total_bytes": int(info.bar1Total)}


def pcie(nv: Any, handle: Any, missing: dict[str, str]) -> dict[str, float | None]:
    tx = read_field(
        missing, "pcie_tx_bytes_per_s", lambda: nv.nvmlDeviceGetPcieThroughput(handle, nv.NVML_PCIE_UTIL_TX_BYTES)
    )
    rx = read_field(
        missing, "pcie_rx_bytes_per_s", lambda: nv.nvmlDeviceGetPcieThroughput(handle, nv.NVML_PCIE_UTIL_RX_BYTES)
    )
    return {
        "pcie_tx_bytes_per_s": float(tx) * KIB if tx is not None else None,
        "pcie_rx_bytes_per_s": float(rx) * KIB if rx is not None else None,
    }


class NvlinkRates:
    """NVLink TX/RX bytes per second of each GPU, from its links' counters at this reading and the last."""

    def __init__(self, nv: Any) -> None:
        self.nv = nv
        self._links: dict[int, list[int]] = {}  # GPU index -> its active links, found once
        self._last: dict[int, tuple[float, int, int]] = {}  # GPU index -> (monotonic s, TX KiB, RX KiB)

    def _active_links(self, index: int, handle: Any) -> list[int]:
        if index not in self._links:
            active = []
            for link in range(int(getattr(self.nv, "NVML_NVLINK_MAX_LINKS", 18))):
                try:
                    if self.nv.nvmlDeviceGetNvLinkState(handle, link):
                        active.append(link)
                except Exception:  # NotSupported / InvalidArgument past the GPU's last link
                    break
            self._links[index] = active
        return self._links[index]

    def read(self, index: int, handle: Any, missing: dict[str, str]) -> dict[str, float | None]:
        nothing: dict[str, float | None] = {"nvlink_tx_bytes_per_s": None, "nvlink_rx_bytes_per_s": None}
        links = self._active_links(index, handle)
        if not links:
            missing.update(dict.fromkeys(nothing, NO_LINKS))
            return nothing
        nv = self.nv
        ids = [(nv.NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX, link) for link in links]
        ids += [(nv.NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX, link) for link in links]
        try:
            values = nv.nvmlDeviceGetFieldValues(handle, ids)
        except Exception as exc:
            missing.update(dict.fromkeys(nothing, error_reason(exc)))
            return nothing
        failed = next((v.nvmlReturn for v in values if v.nvmlReturn != 0), None)
        if failed is not None:
            missing.update(dict.fromkeys(nothing, f"NVML field error {failed}"))
            return nothing
        counts = [int(v.value.ullVal) for v in values]
        now, tx, rx = time.monotonic(), sum(counts[: len(links)]), sum(counts[len(links) :])
        last, self._last[index] = self._last.get(index), (now, tx, rx)
        if last is None or now <= last[0] or tx < last[1] or rx < last[2]:  # first, or the counters were reset
            missing.update(dict.fromkeys(nothing, FIRST_READING))
            return nothing
        seconds = now - last[0]
        return {
            "nvlink_tx_bytes_per_s": (tx - last[1]) * KIB / seconds,
            "nvlink_rx_bytes_per_s": (rx - last[2]) * KIB / seconds,
        }
