"""Issue 22: every AMD target spelling torch, rocminfo and amdsmi print loads from a snapshot; the feature flags
of a target ID are kept as facts of the device, recorded again and shown."""

import json

import pytest
from conftest import snapshot_dict

from gpudash.devices import discover
from gpudash.devices.target_id import split_target_id
from gpudash.info import info_json
from gpudash.knowledge import arch_for
from gpudash.record import record
from gpudash.render.info import arch_text

# (what the tool printed, the processor, the flags, the family the tables give)
FORMS = [
    ("gfx906", "gfx906", {}, "GCN5.1"),  # amdsmi target_graphics_version, rocminfo agent Name
    ("gfx906:sramecc+:xnack-", "gfx906", {"sramecc": True, "xnack": False}, "GCN5.1"),  # torch on an MI50
    ("gfx90a:xnack-", "gfx90a", {"xnack": False}, "CDNA2"),
    ("gfx942:sramecc+:xnack-", "gfx942", {"sramecc": True, "xnack": False}, "CDNA3"),  # torch on an MI300X
    ("amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-", "gfx90a", {"sramecc": True, "xnack": False}, "CDNA2"),  # rocminfo ISA
    ("gfx1100", "gfx1100", {}, "RDNA3"),
    ("gfx1151", "gfx1151", {}, "RDNA3.5"),
]


def _amd(gfx: str) -> dict:
    return {
        "vendor": "amd",
        "index": 0,
        "name": "AMD Instinct MI50",
        "compute_capability": None,
        "gfx_target": gfx,
        "memory_total_bytes": 32 * 1024**3,
        "samples": [{"memory_used_bytes": 0}],
    }


@pytest.mark.parametrize(("printed", "processor", "flags", "family"), FORMS)
def test_every_printed_target_form_replays_with_its_flags(tmp_path, printed, processor, flags, family):
    path = tmp_path / "amd.json"
    path.write_text(json.dumps(snapshot_dict(_amd(printed))))
    machine = discover(replay=str(path))
    dev = machine.devices[0]
    assert dev.gfx_target == processor
    assert dev.extra.get("gfx_features", {}) == flags
    assert arch_for(dev).family.startswith(family)
    shown = info_json(machine, with_samples=False)["devices"][0]
    assert shown.get("gfx_features", {}) == flags
    assert arch_text(shown).endswith(printed.removeprefix("amdgcn-amd-amdhsa--"))


def test_the_flags_survive_a_second_recording(tmp_path):
    path = tmp_path / "mi50.json"
    path.write_text(json.dumps(snapshot_dict(_amd("gfx906:sramecc+:xnack-"))))
    again = record(discover(replay=str(path)), seconds=0, interval=1)
    entry = again["devices"][0]
    assert entry["gfx_target"] == "gfx906"
    assert entry["extra"]["gfx_features"] == {"sramecc": True, "xnack": False}
    from gpudash.contracts.validation import problems

    assert problems("snapshot", again) == []
    path2 = tmp_path / "mi50-again.json"
    path2.write_text(json.dumps(again))
    assert discover(replay=str(path2)).devices[0].extra["gfx_features"] == {"sramecc": True, "xnack": False}


@pytest.mark.parametrize("bad", ["gfx906:sramecc", "gfx906:+", "sm_90", "gfx906 ; rm", "GFX906"])
def test_a_target_no_tool_prints_is_still_refused(tmp_path, bad):
    from gpudash.errors import UsageError

    path = tmp_path / "bad.json"
    path.write_text(json.dumps(snapshot_dict(_amd(bad))))
    with pytest.raises(UsageError, match="gfx_target"):
        discover(replay=str(path))


def test_split_target_id():
    assert split_target_id("gfx942") == ("gfx942", {})
    assert split_target_id("gfx90a:sramecc-:xnack+") == ("gfx90a", {"sramecc": False, "xnack": True})
    assert split_target_id("not a target") == ("not a target", {})
