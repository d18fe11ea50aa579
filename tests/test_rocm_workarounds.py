"""gpudash.rocm: the compatibility guide's workarounds, each shown fixing its fault planted on a pretend device
(tests/rocm_faults.py), each the plain operation where no workaround is needed, and the guide's whole
conversion table checked row by row."""

from __future__ import annotations

import math
import sys

import pytest
import torch
from fakes import EXAMPLES
from rocm_faults import ConversionFault, CopyFault, DeviceFault, HalfFault, on_device

import gpudash.rocm.workarounds as workarounds
from gpudash.devices import discover
from gpudash.errors import GpudashError
from gpudash.rocm import (
    CONVERSION_MATRIX,
    MissingDependencyError,
    bf16_to_float32,
    cache_to_cpu,
    clamp_nonfinite,
    conversion_matrix_report,
    load_safetensors_float32,
    needs_bf16_workarounds,
    save_cache,
)
from gpudash.rocm.conversions import known_values

SNAPSHOTS = EXAMPLES


def bits(t: torch.Tensor) -> torch.Tensor:
    t = t.contiguous()
    return t.view({2: torch.int16, 4: torch.int32}[t.element_size()])


def latents() -> torch.Tensor:
    return known_values(torch, "bfloat16", 4097).reshape(17, 241)


@pytest.fixture
def everything_affected(monkeypatch):
    """Every device counts as one the guide's bugs concern (the CPU included), with no via_cpu given."""
    monkeypatch.setattr(workarounds, "decide", lambda device, via_cpu: True if via_cpu is None else via_cpu)


# Which devices need them ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "snapshot, needed",
    [
        ("strix-halo-8060s.json", True),  # RDNA3.5: the guide's gfx1151 ("partial" bf16)
        ("rx-5600-xt.json", False),  # RDNA1: no bf16 hardware, nothing in the guide
        ("mi300x.json", False),
        ("h100-80gb.json", False),
        ("rtx-3060.json", False),
    ],
)
def test_the_devices_that_need_the_workarounds_follow_the_tables(snapshot, needed):
    machine = discover(replay=f"{SNAPSHOTS}/{snapshot}", include_torch=False)
    gpu = next(d for d in machine.devices if d.vendor != "cpu")
    assert needs_bf16_workarounds(gpu) is needed


def test_a_live_rocm_gpu_is_looked_up_by_its_gfx_target(monkeypatch):
    import gpudash.plugins_api
    import gpudash.rocm.affected as affected
    from gpudash.plugins_api import Device

    monkeypatch.setattr(torch.version, "hip", "7.1.0", raising=False)
    targets = {"cuda:0": "gfx1151", "cuda:1": "gfx942", "cuda:2": "gfx1100"}
    monkeypatch.setattr(
        gpudash.plugins_api, "local_device", lambda key: Device("amd", int(key[-1]), "AMD", gfx_target=targets[key])
    )
    monkeypatch.setattr(affected, "_cache", {})
    assert [needs_bf16_workarounds(key) for key in targets] == [True, False, True]
    assert needs_bf16_workarounds("cpu") is False
    monkeypatch.setattr(torch.version, "hip", None, raising=False)  # CUDA on NVIDIA: never
    monkeypatch.setattr(affected, "_cache", {})
    assert needs_bf16_workarounds("cuda:0") is False


# bf16 -> fp32 ----------------------------------------------------------------------------------------


def test_bf16_to_float32_fixes_the_planted_conversion_bug(everything_affected):
    source = latents()
    gpu = on_device(source, ConversionFault)
    assert torch.count_nonzero(gpu.to(torch.float32)) == 0  # the guide's bug, planted: zeros
    assert torch.count_nonzero(gpu.float()) == 0
    fixed = bf16_to_float32(gpu)
    assert torch.equal(bits(fixed.cpu()), bits(source.float()))  # bit for bit the CPU's exact conversion
    assert torch.equal(bits(bf16_to_float32(on_device(source, CopyFault)).cpu()), bits(source.float()))


def test_bf16_to_float32_is_plain_float_where_not_needed(monkeypatch):
    crossings = []
    monkeypatch.setattr(workarounds, "raw_to_cpu", lambda t: crossings.append(t) or t)
    source = latents()
    out = bf16_to_float32(source)
    assert out.dtype == torch.float32 and torch.equal(out, source.float()) and crossings == []
    assert bf16_to_float32(torch.ones(3, dtype=torch.float16)).dtype == torch.float32
    assert bf16_to_float32(source, via_cpu=False).dtype == torch.float32 and crossings == []


# Caches ----------------------------------------------------------------------------------------------


def test_cache_to_cpu_moves_bf16_bits_past_both_planted_bugs(everything_affected):
    source = latents()
    for fault in (CopyFault, ConversionFault):
        gpu = on_device(source, fault)
        on_cpu, clamped = cache_to_cpu(gpu)
        assert type(on_cpu) is torch.Tensor and on_cpu.dtype == torch.bfloat16 and clamped == 0
        assert torch.equal(bits(on_cpu), bits(source))
    # The plain copy and the guide's own recipe (convert to fp32 on the GPU first) each trip over one of them:
    assert torch.count_nonzero(on_device(source, CopyFault).cpu()) == 0
    guide_recipe = on_device(source, ConversionFault).detach().to(torch.float32).cpu().to(torch.bfloat16)
    assert torch.count_nonzero(guide_recipe) == 0


def test_nan_and_inf_are_clamped_before_a_cache_is_written(tmp_path, everything_affected):
    bad = torch.tensor([1.0, math.nan, math.inf, -math.inf, -2.0], dtype=torch.bfloat16)
    on_cpu, clamped = cache_to_cpu(on_device(bad, DeviceFault))
    big = torch.finfo(torch.bfloat16).max
    assert clamped == 3 and on_cpu.tolist() == [1.0, 0.0, big, -big, -2.0]
    report = save_cache({"latents": on_device(bad, CopyFault)}, tmp_path / "cache.pt")
    assert report.clamped == {"latents": 3} and report.raw_copies == ["latents"] and report.format == "torch.save"
    assert torch.load(tmp_path / "cache.pt")["latents"].tolist() == [1.0, 0.0, big, -big, -2.0]


def test_where_not_needed_a_cache_is_saved_as_it_is_unless_asked(tmp_path):
    bad = torch.tensor([1.0, math.nan, math.inf], dtype=torch.bfloat16)
    report = save_cache({"x": bad}, tmp_path / "plain.pt")
    assert report.clamped == {} and report.raw_copies == []
    kept = torch.load(tmp_path / "plain.pt")["x"]
    assert torch.isnan(kept[1]) and torch.isinf(kept[2])
    assert save_cache({"x": bad}, tmp_path / "asked.pt", clamp=True).clamped == {"x": 2}
    assert torch.isfinite(torch.load(tmp_path / "asked.pt")["x"]).all()
    assert torch.equal(clamp_nonfinite(torch.arange(3)), torch.arange(3))  # integers pass through


def test_a_failed_write_leaves_the_old_cache_whole(tmp_path, monkeypatch):
    path = tmp_path / "cache.pt"
    save_cache({"x": torch.ones(4)}, path)

    def crash(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(torch, "save", crash)
    with pytest.raises(OSError, match="disk full"):
        save_cache({"x": torch.zeros(4)}, path)
    monkeypatch.undo()
    assert torch.equal(torch.load(path)["x"], torch.ones(4))
    assert [p.name for p in tmp_path.iterdir()] == ["cache.pt"]  # no temporary left behind
    with pytest.raises(GpudashError, match="is not a directory"):
        save_cache({"x": torch.ones(1)}, tmp_path / "missing" / "cache.pt")


# safetensors -------------------------------------------------------------------------------------------


def test_safetensors_cache_round_trip_and_float32_load_past_the_planted_bug(tmp_path, monkeypatch):
    pytest.importorskip("safetensors")
    from safetensors.torch import load_file

    source = latents()
    path = tmp_path / "latents.safetensors"
    report = save_cache({"latents": on_device(source, CopyFault), "steps": torch.arange(4)}, path, via_cpu=True)
    assert report.format == "safetensors" and report.raw_copies == ["latents"]
    assert torch.equal(bits(load_file(path)["latents"]), bits(source))  # stored bit for bit

    # "cuda:0" plays the GPU: whatever is moved there becomes a tensor with the conversion bug.
    real_to = torch.Tensor.to

    def to(self, *args, **kwargs):
        if (args and str(args[0]) == "cuda:0") or str(kwargs.get("device")) == "cuda:0":
            return self.as_subclass(ConversionFault)
        return real_to(self, *args, **kwargs)

    monkeypatch.setattr(torch.Tensor, "to", to)
    naive = load_file(path)["latents"].to("cuda:0").float()  # load, move, convert on the GPU: zeros
    assert torch.count_nonzero(naive) == 0
    loaded = load_safetensors_float32(path, device="cuda:0", via_cpu=True)
    assert isinstance(loaded["latents"], ConversionFault)  # it is on the "GPU", as fp32 ...
    assert torch.equal(bits(loaded["latents"].cpu()), bits(source.float()))  # ... with the right values
    assert loaded["steps"].dtype == torch.int64  # integer tensors keep their dtype


def test_safetensors_load_where_not_needed_and_its_errors(tmp_path):
    pytest.importorskip("safetensors")
    from safetensors.torch import save_file

    path = tmp_path / "mixed.safetensors"
    save_file({"a": latents(), "b": torch.ones(2, dtype=torch.float16), "c": torch.ones(2)}, path)
    loaded = load_safetensors_float32(path)
    assert {k: v.dtype for k, v in loaded.items()} == dict.fromkeys("abc", torch.float32)
    assert torch.equal(loaded["a"], latents().float())
    assert list(load_safetensors_float32(path, keys=["c"])) == ["c"]
    with pytest.raises(GpudashError, match=r"no tensor named 'z' \(it has: a, b, c\)"):
        load_safetensors_float32(path, keys=["z"])
    with pytest.raises(GpudashError, match="no such safetensors file"):
        load_safetensors_float32(tmp_path / "absent.safetensors")
    (tmp_path / "broken.safetensors").write_bytes(b"\x00\x01not a header")
    with pytest.raises(GpudashError, match="not a readable safetensors file"):
        load_safetensors_float32(tmp_path / "broken.safetensors")


def test_without_safetensors_the_functions_say_what_to_install(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "safetensors", None)  # as if it were not installed
    monkeypatch.setitem(sys.modules, "safetensors.torch", None)
    with pytest.raises(MissingDependencyError, match=r"needs the safetensors package.*pip install safetensors"):
        load_safetensors_float32(tmp_path / "x.safetensors")
    with pytest.raises(MissingDependencyError, match="save_cache needs the safetensors package"):
        save_cache({"x": torch.ones(1)}, tmp_path / "x.safetensors")
    assert save_cache({"x": torch.ones(1)}, tmp_path / "x.pt").format == "torch.save"  # torch.save needs nothing


# The guide's conversion table --------------------------------------------------------------------------


def test_the_matrix_has_every_row_of_the_guide():
    rows = [(r.source, r.target, r.method, r.where, r.guide_works) for r in CONVERSION_MATRIX]
    assert rows == [
        ("bfloat16", "float32", ".to(torch.float32)", "device", False),
        ("bfloat16", "float32", ".float()", "cpu", True),
        ("bfloat16", "float32", ".to(torch.float32)", "cpu", True),
        ("bfloat16", "float16", ".half()", "device", True),
        ("float32", "bfloat16", ".to(torch.bfloat16)", "device", True),
        ("float16", "bfloat16", ".to(torch.bfloat16)", "device", True),
    ]


def test_on_a_correct_device_every_row_works():
    report = conversion_matrix_report(torch, "cpu", sizes=(1, 3, 4097))
    assert report["failing_rows"] == [] and report["mismatches"] == 0
    assert [r["as_guide_says"] for r in report["rows"]] == [False, True, True, True, True, True]  # row 1: no bug here
    assert all(r["elements"] > 6000 for r in report["rows"])


@pytest.mark.parametrize(
    "fault, failing",
    [
        (ConversionFault, ["bfloat16 -> float32 .to(torch.float32) on the device"]),
        (HalfFault, ["bfloat16 -> float16 .half() on the device"]),
        (
            CopyFault,
            [
                "bfloat16 -> float32 .float() on the CPU",
                "bfloat16 -> float32 .to(torch.float32) on the CPU",
                "float32 -> bfloat16 .to(torch.bfloat16) on the device",
                "float16 -> bfloat16 .to(torch.bfloat16) on the device",
            ],
        ),
    ],
)
def test_a_planted_fault_fails_exactly_its_rows(fault, failing):
    report = conversion_matrix_report(torch, "cpu", to_device=lambda t: on_device(t, fault), sizes=(3, 4097))
    assert report["failing_rows"] == failing
    broken = next(r for r in report["rows"] if r["label"] == failing[0])
    assert broken["zeros_where_nonzero"] > 0 and broken["first_failure"].startswith("contiguous n=3")
