"""One device per physical GPU: the vendor library's view merged with torch's.

NVML orders devices by PCI bus and torch by CUDA ordinal (unless CUDA_DEVICE_ORDER=PCI_BUS_ID), so
matching is by UUID, then PCI address, then (AMD) the hip_id amdsmi reports, and only then by order.
"""

from __future__ import annotations

import dataclasses

from gpudash.models import DeviceInfo


def _uuid(value: str | None) -> str | None:
    if not value:
        return None
    value = value.lower()
    return value[4:] if value.startswith("gpu-") else value


def _pci(value: str | None) -> tuple[int, int, int] | None:
    """'00000000:17:00.0' or '0000:17:00.0' -> (domain, bus, device)."""
    if not value:
        return None
    try:
        domain, bus, rest = value.lower().split(":")
        return int(domain, 16), int(bus, 16), int(rest.split(".")[0], 16)
    except ValueError:
        return None


def _match(vendor_dev: DeviceInfo, torch_devs: list[DeviceInfo]) -> DeviceInfo | None:
    for candidate in torch_devs:
        if _uuid(candidate.uuid) and _uuid(candidate.uuid) == _uuid(vendor_dev.uuid):
            return candidate
    for candidate in torch_devs:
        if _pci(candidate.pci_bus_id) and _pci(candidate.pci_bus_id) == _pci(vendor_dev.pci_bus_id):
            return candidate
    for candidate in torch_devs:
        if vendor_dev.torch_index is not None and candidate.torch_index == vendor_dev.torch_index:
            return candidate
    return None


def merge_devices(vendor_devs: list[DeviceInfo], torch_devs: list[DeviceInfo]) -> list[DeviceInfo]:
    """Vendor devices enriched with torch's view; torch-only devices kept (NVML missing, say)."""
    remaining = list(torch_devs)
    merged = []
    unmatched_vendor = []
    for dev in vendor_devs:
        other = _match(dev, remaining)
        if other is None:
            unmatched_vendor.append(dev)
            merged.append(dev)
            continue
        remaining.remove(other)
        merged.append(_combine(dev, other))
    # Same count on both sides and nothing identifies them: fall back to order (single-GPU boxes).
    if unmatched_vendor and len(unmatched_vendor) == len(remaining):
        for dev, other in zip(unmatched_vendor, list(remaining)):
            merged[merged.index(dev)] = _combine(dev, other)
            remaining.remove(other)
    next_index = {v: 1 + max([d.index for d in merged if d.vendor == v], default=-1) for v in ("nvidia", "amd")}
    for other in remaining:
        idx = next_index[other.vendor]
        next_index[other.vendor] += 1
        merged.append(dataclasses.replace(other, index=idx))
    return merged


def _combine(vendor_dev: DeviceInfo, torch_dev: DeviceInfo) -> DeviceInfo:
    """Vendor fields win where present; torch fills gaps (SM count, gfx arch) and adds its view."""
    filled = {}
    for f in (
        "uuid",
        "pci_bus_id",
        "compute_capability",
        "gfx_target",
        "memory_total_bytes",
        "multiprocessors",
        "max_clock_mhz",
    ):
        if getattr(vendor_dev, f) is None and getattr(torch_dev, f) is not None:
            filled[f] = getattr(torch_dev, f)
    unavailable = {k: v for k, v in vendor_dev.unavailable.items() if k not in filled}
    unavailable.update({k: v for k, v in torch_dev.unavailable.items() if k.startswith("torch")})
    return dataclasses.replace(
        vendor_dev,
        **filled,
        torch_index=torch_dev.torch_index,
        sources=vendor_dev.sources + [s for s in torch_dev.sources if s not in vendor_dev.sources],
        unavailable=unavailable,
        extra={**vendor_dev.extra, **torch_dev.extra},
    )
