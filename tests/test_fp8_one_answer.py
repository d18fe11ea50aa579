"""Issue 22: the export's [fp8] table and the adaptive kernels give one answer on whether fp8 runs here.

torchao's float8 training and TransformerEngine's fp8 GEMMs need what torch._scaled_mm needs; the kernel gate
(recommend.fp8.fp8_choice, asked by the dispatcher through gpudash.amp) says the OCP fp8 dtypes of gfx950 and
gfx120x need ROCm >= 6.5 (PyTorch ScaledBlas.cpp). The export used to say yes on ROCm 6.3 regardless."""

import pytest

from gpudash.models import DeviceInfo, Runtime
from gpudash.plugins_api import Device
from gpudash.recommend import facts_for, recommend
from gpudash_plugins.adaptive_kernels import Dispatcher
from gpudash_plugins.adaptive_kernels.kernels import BUILTIN_KERNELS

GIB = 1024**3


def export_fp8(gfx: str, name: str, hip: str):
    device = DeviceInfo(vendor="amd", index=0, name=name, gfx_target=gfx, memory_total_bytes=192 * GIB)
    facts = facts_for(device, runtime=Runtime(torch=f"2.7.0+rocm{hip}", hip=hip), host_logical_cores=32)
    return recommend(facts)


def kernel_runs_fp8(gfx: str, name: str, hip: str) -> bool:
    device = Device("amd", 0, name, gfx_target=gfx, torch_index=0, runtime={"hip": hip})
    return Dispatcher(BUILTIN_KERNELS).choose(device).name.startswith("fp8")


@pytest.mark.parametrize(
    "gfx, name, hip, usable, te",
    [
        ("gfx950", "AMD Instinct MI355X", "6.3.42131", False, False),  # OCP fp8 _scaled_mm needs ROCm >= 6.5
        ("gfx950", "AMD Instinct MI355X", "7.0.51831", True, True),
        ("gfx1201", "AMD Radeon RX 9070 XT", "6.3.42131", False, False),
        ("gfx1201", "AMD Radeon RX 9070 XT", "7.0.51831", True, False),  # TE's ROCm fork wants gfx94x/gfx95x
        ("gfx942", "AMD Instinct MI300X", "6.3.42131", True, True),  # FNUZ: no ROCm 6.5 gate
    ],
)
def test_export_and_kernels_agree_on_fp8(gfx, name, hip, usable, te):
    s = export_fp8(gfx, name, hip)
    assert kernel_runs_fp8(gfx, name, hip) is usable
    assert s.value("fp8.torchao") is usable
    assert s.value("fp8.transformer_engine") is te
    assert s.value("fp8.available") is True  # the hardware has fp8 either way
    if not usable:
        assert "ROCm >= 6.5" in s.get("fp8.torchao").reason
        if gfx == "gfx950":  # the fork supports the part; the gate is what stops it
            assert "ROCm >= 6.5" in s.get("fp8.transformer_engine").reason
        assert "fp8.accelerate_backend" not in s.sections["fp8"]  # nothing to opt in to
