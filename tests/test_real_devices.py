"""Real device names as users' tools print them (tests/real_devices.py): family and peak coverage per row.

A name-only row (nvidia-smi / rocminfo / torch give the name and the cc or gfx, no SM count or clock here) gets
peaks only from the named-part tables, so this measures the tables' coverage directly.
"""

from __future__ import annotations

import pytest
from real_devices import REAL_DEVICES

from gpudash.knowledge import arch_for, match_parts, peak_memory_bandwidth_gbps, peaks_for
from gpudash.models import DeviceInfo


def _device(vendor: str, name: str, arch_id: str) -> DeviceInfo:
    return DeviceInfo(
        vendor,
        0,
        name,
        compute_capability=arch_id if vendor == "nvidia" else None,
        gfx_target=arch_id if vendor == "amd" else None,
    )


def test_the_set_is_large_enough_and_spans_both_vendors_and_every_tool():
    assert len(REAL_DEVICES) >= 49
    assert {row[1] for row in REAL_DEVICES} == {"nvidia", "amd"}
    assert {row[0] for row in REAL_DEVICES} == {"nvidia-smi", "torch", "rocminfo", "rocm-smi", "amd-smi"}


@pytest.mark.parametrize(("tool", "vendor", "name", "arch_id", "family", "expect"), REAL_DEVICES)
def test_real_device(tool, vendor, name, arch_id, family, expect):
    dev = _device(vendor, name, arch_id)
    assert arch_for(dev).family == family
    match = match_parts(dev)
    peaks = peaks_for(dev)
    if expect == "spec":
        assert match.part is not None, match.candidates
        assert peaks and all(p.provenance in ("spec", "spec-derived") for p in peaks.values())
        assert peak_memory_bandwidth_gbps(dev) is not None
    elif expect == "partial":
        assert match.part is not None, match.candidates
        assert all(p.provenance in ("spec", "spec-derived") for p in peaks.values())
        assert peaks or peak_memory_bandwidth_gbps(dev) is not None
    elif expect == "ambiguous":
        assert match.ambiguous and len(match.candidates) > 1
        assert all(p.candidates == match.candidates for p in peaks.values())  # never one product's figures
    else:
        assert not match.parts and peaks == {}
