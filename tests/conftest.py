import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # tests/fakes.py

from fakes import make_fake_amdsmi, make_fake_pynvml

H100 = {
    "vendor": "nvidia",
    "index": 0,
    "name": "NVIDIA H100 80GB HBM3",
    "compute_capability": "9.0",
    "gfx_target": None,
    "memory_total_bytes": 85520809984,
    "uuid": "GPU-5d2f0c1e-aaaa-bbbb-cccc-000000000001",
    "pci_bus_id": "00000000:17:00.0",
    "samples": [
        {
            "memory_used_bytes": 1073741824,
            "utilization_pct": 35,
            "temperature_c": 41,
            "power_w": 180.5,
            "sm_clock_mhz": 1755,
            "memory_clock_mhz": 2619,
            "processes": [{"pid": 4242, "memory_used_bytes": 1000000000}],
        },
        {
            "memory_used_bytes": 2147483648,
            "utilization_pct": 90,
            "temperature_c": 55,
            "power_w": 600.0,
            "sm_clock_mhz": 1980,
            "memory_clock_mhz": 2619,
        },
    ],
}
MI300X = {
    "vendor": "amd",
    "index": 0,
    "name": "AMD Instinct MI300X",
    "compute_capability": None,
    "gfx_target": "gfx942",
    "memory_total_bytes": 206141652992,
    "multiprocessors": 304,
    "samples": [
        {
            "memory_used_bytes": 4 * 1024**3,
            "utilization_pct": 12,
            "temperature_c": 45,
            "power_w": 220,
            "sm_clock_mhz": 2100,
            "memory_clock_mhz": 1300,
        }
    ],
}


def snapshot_dict(*devices, **extra):
    return {
        "format": "gpudash-snapshot",
        "version": 1,
        "host": {"hostname": "node7", "machine": "x86_64", "os": "Linux"},
        "runtime": {"torch": "2.5.1+cu124", "cuda": "12.4", "hip": None, "driver": "550.54.15"},
        "devices": [dict(d) for d in devices],
        **extra,
    }


@pytest.fixture
def h100_snapshot(tmp_path):
    path = tmp_path / "h100.json"
    path.write_text(json.dumps(snapshot_dict(H100)))
    return path


@pytest.fixture
def no_vendor_libs(monkeypatch):
    """A live machine with neither NVML nor amdsmi: what CI and our laptops have."""
    from fakes import real_pynvml

    monkeypatch.setitem(sys.modules, "pynvml", make_fake_pynvml([], init_error=real_pynvml.NVMLError_LibraryNotFound()))
    monkeypatch.setitem(sys.modules, "amdsmi", None)  # None in sys.modules makes the import fail
    monkeypatch.delenv("GPUDASH_REPLAY", raising=False)


# A Sapphire Rapids' /proc/cpuinfo, abridged: bf16 and int8 native by the spec tables (AMX, AVX512-BF16, VNNI).
SAPPHIRE_RAPIDS_CPUINFO = """processor\t: 0
vendor_id\t: GenuineIntel
cpu family\t: 6
model\t\t: 143
model name\t: Intel(R) Xeon(R) Platinum 8480+
cpu MHz\t\t: 2000.000
flags\t\t: fpu sse sse2 avx avx2 fma avx512f avx512_bf16 avx512_vnni avx512_fp16 amx_bf16 amx_int8 amx_tile

"""


@pytest.fixture
def native_bf16_cpu(monkeypatch, tmp_path):
    """The live CPU described as a Sapphire Rapids, whatever CPU runs the tests (CI's differ: a Zen 3 has no
    native bf16 or int8, a Zen 4 or an Emerald Rapids has both), for a test of what gpudash says where bf16 is
    native. Only the description changes: anything measured still runs on this CPU."""
    from gpudash.devices import cpu

    path = tmp_path / "cpuinfo"
    path.write_text(SAPPHIRE_RAPIDS_CPUINFO)
    monkeypatch.setattr(cpu.CpuBackend.__init__, "__defaults__", (str(path),))


@pytest.fixture(autouse=True)
def isolated_config(monkeypatch, tmp_path):
    """No test reads the developer's own ~/.config/gpudash or environment, or writes remembered results
    into their ~/.local/state/gpudash (subprocesses inherit both)."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("GPUDASH_CONFIG", raising=False)
    monkeypatch.delenv("GPUDASH_REPLAY", raising=False)


@pytest.fixture(scope="session")
def slurm_two_node_cluster(tmp_path_factory):
    """One real two-node Slurm (n1, n2: tests/slurm_cluster.py) for the whole session, started by the first test
    that asks for it; tests/test_preflight_slurm.py and tests/test_preflight_slurm_examples.py both use it
    (each started its own before). A test that drains a node resumes it before it ends."""
    import slurm_cluster

    with slurm_cluster.cluster_or_skip(tmp_path_factory.mktemp("slurm2"), nodes=2) as env:
        yield env


@pytest.fixture
def state_dir(tmp_path):
    """Where this test's remembered results go (isolated_config points XDG_STATE_HOME here)."""
    return tmp_path / "state"


__all__ = ["H100", "MI300X", "make_fake_amdsmi", "make_fake_pynvml", "snapshot_dict"]
