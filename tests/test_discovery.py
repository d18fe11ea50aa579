"""Discovery on a live machine: vendor views, torch's view, the CPU, merged into one device each."""

import sys
import time
import types
from collections import namedtuple

from conftest import H100, MI300X
from fakes import make_fake_amdsmi, make_fake_pynvml, real_pynvml

from gpudash.devices import add_torch_view, discover
from gpudash.devices.cpu import features_from_cpuinfo, parse_cpuinfo
from gpudash.devices.merge import merge_devices
from gpudash.models import DeviceInfo

Props = namedtuple(
    "Props",
    "name major minor total_memory multi_processor_count gcnArchName uuid clock_rate "
    "pci_bus_id pci_domain_id pci_device_id",
)


def fake_torch(props_list, hip=None, bf16=True):
    cuda = types.SimpleNamespace(
        is_available=lambda: bool(props_list),
        device_count=lambda: len(props_list),
        get_device_properties=lambda i: props_list[i],
        is_bf16_supported=lambda including_emulation=True: bf16,
        is_tf32_supported=lambda: True,
        mem_get_info=lambda i: (60 * 2**30, 80 * 2**30),
    )
    return types.SimpleNamespace(
        __version__="2.5.1+cu124", cuda=cuda, version=types.SimpleNamespace(cuda=None if hip else "12.4", hip=hip)
    )


H100_PROPS = Props(
    "NVIDIA H100 80GB HBM3", 9, 0, 85520809984, 132, "", "5d2f0c1e-aaaa-bbbb-cccc-000000000001", 1980000, 0x17, 0, 0
)


def test_cpu_only_machine(no_vendor_libs, monkeypatch):
    # The first reading is n/a when it comes sooner than FIRST_WINDOW_S after discovery began; discovery on a
    # slow or busy CI machine can take longer than the 0.1 s, so the window is widened here, not the timing trusted.
    monkeypatch.setattr("gpudash.devices.cpu.FIRST_WINDOW_S", 60.0)
    machine = discover(include_torch=False)
    assert [d.vendor for d in machine.devices] == ["cpu"]
    assert any("NVML" in n for n in machine.notes) and any("amdsmi" in n for n in machine.notes)
    first = machine.sample(machine.devices[0])
    assert first.memory_total_bytes > 0
    # Read right after discovery, the load covers too short a time to mean anything: n/a, saying why, and
    # nothing waits for it; the next reading measures since this one.
    assert first.utilization_pct is None and first.unavailable["utilization_pct"].startswith("needs a second reading")
    time.sleep(0.05)
    assert 0 <= machine.sample(machine.devices[0]).utilization_pct <= 100
    assert machine.label == "live"


def test_cpu_first_reading_leaves_out_gpudash_itself():
    from gpudash.devices.cpu import _Window

    # 0.2 s on 2 CPUs (0.4 CPU-seconds): 0.3 busy, of which 0.2 were gpudash starting up.
    start, end = _Window(0.0, busy=10.0, total=20.0, own=1.0), _Window(0.2, busy=10.3, total=20.4, own=1.2)
    assert start.others_busy_pct(end) == 25.0
    assert start.others_busy_pct(start) == 0.0  # no time passed: nothing to divide


def test_nvml_and_torch_merge_into_one_device(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", make_fake_pynvml([H100]))
    monkeypatch.setitem(sys.modules, "amdsmi", None)
    machine = discover(include_torch=False)
    add_torch_view(machine, torch=fake_torch([H100_PROPS]))
    gpus = [d for d in machine.devices if d.vendor == "nvidia"]
    assert len(gpus) == 1
    gpu = gpus[0]
    assert gpu.sources == ["nvml", "torch"]
    assert gpu.multiprocessors == 132  # only torch knows the SM count
    assert gpu.torch_index == 0
    assert gpu.extra["torch"]["bf16"] is True
    assert machine.runtime.cuda == "12.4" and machine.runtime.driver == "550.54.15"
    assert machine.sample(gpu).power_w is not None


def test_torch_only_gpu_when_nvml_is_missing(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", make_fake_pynvml([], init_error=real_pynvml.NVMLError_DriverNotLoaded()))
    monkeypatch.setitem(sys.modules, "amdsmi", None)
    machine = discover(include_torch=False)
    add_torch_view(machine, torch=fake_torch([H100_PROPS]))
    gpu = machine.devices[0]
    assert (gpu.vendor, gpu.name, gpu.compute_capability) == ("nvidia", "NVIDIA H100 80GB HBM3", "9.0")
    sample = machine.sample(gpu)
    assert sample.memory_used_bytes == 20 * 2**30
    assert "torch reports memory only" in sample.unavailable["utilization_pct"]
    assert any("kernel driver not loaded" in n for n in machine.notes)


def test_amd_gpu_merges_with_hip_device_by_hip_id(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", make_fake_pynvml([], init_error=real_pynvml.NVMLError_LibraryNotFound()))
    monkeypatch.setitem(sys.modules, "amdsmi", make_fake_amdsmi([MI300X]))
    machine = discover(include_torch=False)
    props = Props("AMD Instinct MI300X", 9, 4, 206141652992, 304, "gfx942:sramecc+:xnack-", "", 2100000, None, 0, 0)
    add_torch_view(machine, torch=fake_torch([props], hip="6.2.41133"))
    gpus = [d for d in machine.devices if d.vendor == "amd"]
    assert len(gpus) == 1 and gpus[0].sources == ["amdsmi", "torch"]
    assert gpus[0].gfx_target == "gfx942"
    assert gpus[0].extra["gfx_features"] == {"sramecc": True, "xnack": False}  # torch's suffixes kept as facts
    assert machine.runtime.hip == "6.2.41133"


def test_merge_matches_by_pci_when_order_differs():
    nvml = [
        DeviceInfo("nvidia", 0, "A", pci_bus_id="00000000:17:00.0"),
        DeviceInfo("nvidia", 1, "B", pci_bus_id="00000000:65:00.0"),
    ]
    torch_devs = [
        DeviceInfo("nvidia", 0, "B", pci_bus_id="00000000:65:00.0", torch_index=0, sources=["torch"]),
        DeviceInfo("nvidia", 1, "A", pci_bus_id="00000000:17:00.0", torch_index=1, sources=["torch"]),
    ]
    merged = merge_devices(nvml, torch_devs)
    assert [(d.name, d.torch_index) for d in merged] == [("A", 1), ("B", 0)]


def test_broken_torch_keeps_vendor_view(no_vendor_libs):
    machine = discover(include_torch=False)

    class Broken:
        @property
        def version(self):
            raise RuntimeError("CUDA driver initialization failed")

    add_torch_view(machine, torch=Broken())
    assert machine.devices[0].vendor == "cpu"
    assert any(n.startswith("torch:") for n in machine.notes)


def test_cpuinfo_features():
    text = (
        "processor : 0\nvendor_id : GenuineIntel\ncpu family : 6\nmodel : 143\n"
        "model name : Intel(R) Xeon(R) Platinum 8480+\nflags : fpu avx2 fma avx512f avx512_bf16 amx_bf16 "
        "amx_int8 amx_tile avx512_fp16\n\nprocessor : 1\nflags : nothing\n"
    )
    info = parse_cpuinfo(text)
    assert info["model name"].startswith("Intel")
    assert features_from_cpuinfo(info) == [
        "amx_bf16",
        "amx_int8",
        "amx_tile",
        "avx2",
        "avx512_bf16",
        "avx512_f",
        "avx512_fp16",
        "fma3",
    ]
    arm = parse_cpuinfo("processor : 0\nFeatures : fp asimd asimddp bf16 i8mm\n")
    assert features_from_cpuinfo(arm) == ["asimddp", "bf16", "i8mm"]


def test_versions_without_importing_torch_when_no_gpu_node(no_vendor_libs, monkeypatch):
    import subprocess

    # In a fresh interpreter: on this GPU-less Linux box torch's versions come from its files.
    code = (
        "import sys; from gpudash.devices import discover; m = discover(); "
        "print(m.runtime.torch, 'torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    import torch

    assert out == [torch.__version__, "False"]


def test_gpu_node_makes_discovery_ask_torch(no_vendor_libs, monkeypatch):
    import gpudash.devices as devices

    monkeypatch.setattr(devices, "torch_could_see_gpus", lambda: True)
    asked = []
    monkeypatch.setattr("gpudash.devices.torch_view.load_torch", lambda: asked.append(1) or fake_torch([H100_PROPS]))
    machine = discover()
    assert asked and machine.devices[0].name == "NVIDIA H100 80GB HBM3"
