"""gpudash.health: every check, healthy and faulty, through the real adapters in their contained children over
the fake NVML and amdsmi (tests/fakes.py), a kernel log file and a fake sysfs tree."""

from __future__ import annotations

import sys
import time
import types

import pytest
from conftest import H100, MI300X, make_fake_amdsmi, make_fake_pynvml
from fakes import real_pynvml

from gpudash.config import load_config
from gpudash.devices import discover
from gpudash.devices.contained import backend as contained
from gpudash.errors import UsageError
from gpudash.health import CRITICAL, OK, UNKNOWN, WARN, worst
from gpudash.health.catalog import CATALOG, NAGIOS_CODES
from gpudash.health.numerics import judge as judge_numerics
from gpudash.health.run import run_health
from gpudash.health.thresholds import Thresholds
from gpudash.models import DeviceInfo


@pytest.fixture
def quiet_log(tmp_path):
    """An empty kernel log: nothing in it, readable."""
    path = tmp_path / "kmsg"
    path.write_text("")
    return path


def live(monkeypatch, nvidia=(), amd=(), errors=None, faults=None):
    monkeypatch.setitem(sys.modules, "pynvml", make_fake_pynvml(list(nvidia), errors=errors, faults=faults))
    monkeypatch.setitem(sys.modules, "amdsmi", make_fake_amdsmi(list(amd)) if amd else None)
    monkeypatch.delenv("GPUDASH_REPLAY", raising=False)
    return discover(include_torch=False)


def check(machine, limits, tmp_path, **kw):
    try:
        return run_health(machine, limits, sys_root=tmp_path / "sys", **kw)
    finally:
        machine.close()


def by_id(results, device):
    return {r.id: r for r in results if r.device == device}


def h100(**health):
    return dict(H100, health=health)


def test_healthy_h100_has_no_finding_and_no_unknown(monkeypatch, tmp_path, quiet_log):
    results = check(live(monkeypatch, [h100()]), Thresholds(expect_gpus=1, kernel_log=str(quiet_log)), tmp_path)
    mine = by_id(results, "nvidia:0")
    assert {r.severity for r in results} <= {OK, None}, [r for r in results if r.severity not in (OK, None)]
    nvidia_checks = {i for i in CATALOG if i.startswith("gpu.") and i != "gpu.count"}
    assert nvidia_checks <= set(mine)
    # parts with row remapping answer NotSupported for retired pages: not applicable, never UNKNOWN
    assert mine["gpu.retired_pages"].severity is None
    assert mine["gpu.nvlink.down"].severity is None  # a PCIe board
    assert mine["gpu.row_remap"].evidence == {
        "corrected": 0,
        "uncorrected": 0,
        "pending": False,
        "failed": False,
        "uncorrected_limit": 512,
    }
    assert all(r.action == "none" for r in results)
    assert by_id(results, "host")["gpu.count"].severity == OK


FAULTS = [
    ({"ecc": {"volatile_sram_uncorrected": 1}}, "gpu.ecc.sram_uncorrected", CRITICAL, "reset_gpu"),
    ({"ecc": {"volatile_sram_corrected": 10_001}}, "gpu.ecc.sram_corrected", WARN, "drain"),
    ({"ecc": {"aggregate_sram_uncorrected": 5}}, "gpu.ecc.sram_aggregate_uncorrected", CRITICAL, "service"),
    ({"ecc": {"volatile_dram_uncorrected": 3}}, "gpu.ecc.dram_uncorrected", WARN, "reset_gpu"),
    ({"ecc": {"volatile_dram_corrected": 20_000_001}}, "gpu.ecc.dram_corrected", WARN, "drain"),
    ({"retired_pages": {"sbe": 2, "dbe": 1, "pending": True}}, "gpu.retired_pages", WARN, "reset_gpu"),
    (
        {"remapped_rows": {"corrected": 0, "uncorrected": 1, "pending": True, "failed": False}},
        "gpu.row_remap",
        CRITICAL,
        "reset_gpu",
    ),
    (
        {"remapped_rows": {"corrected": 0, "uncorrected": 2, "pending": False, "failed": True}},
        "gpu.row_remap",
        CRITICAL,
        "service",
    ),
    (
        {"remapped_rows": {"corrected": 0, "uncorrected": 513, "pending": False, "failed": False}},
        "gpu.row_remap",
        CRITICAL,
        "service",
    ),
    ({"recovery_action": 2}, "gpu.recovery_action", CRITICAL, "reboot"),
    ({"recovery_action": 1}, "gpu.recovery_action", CRITICAL, "reset_gpu"),
    ({"xids": [79]}, "gpu.xid.events", CRITICAL, "reboot"),
    ({"xids": [13]}, "gpu.xid.events", WARN, "none"),
    ({"clock_event_reasons": 0x80}, "gpu.clock_events", WARN, "service"),
    ({"clock_event_reasons": 0x40}, "gpu.clock_events", WARN, "service"),
    ({"pcie": {"gen": 5, "max_gen": 5, "width": 8, "max_width": 16}}, "gpu.pcie.width", CRITICAL, "reboot"),
    (
        {"clock_event_reasons": 0, "pcie": {"gen": 3, "max_gen": 5, "width": 16, "max_width": 16}},
        "gpu.pcie.gen",
        WARN,
        "reboot",
    ),
    ({"nvlink": [{"active": True}, {"active": False}]}, "gpu.nvlink.down", CRITICAL, "reset_gpu"),
    ({"nvlink": [{"active": True, "crc_flit": 4}]}, "gpu.nvlink.errors", WARN, "drain"),
    ({"power_limit_w": {"current": 500, "default": 700}}, "gpu.power_limit", WARN, "none"),
    ({"slowdown_c": 58}, "gpu.temperature", WARN, "service"),  # the sample reads 55 C: within 5 C
    ({"slowdown_c": 50}, "gpu.temperature", CRITICAL, "service"),
]


@pytest.mark.parametrize(("health", "check_id", "severity", "action"), FAULTS)
def test_each_nvidia_fault_is_found_with_its_action(
    monkeypatch, tmp_path, quiet_log, health, check_id, severity, action
):
    results = check(live(monkeypatch, [h100(**health)]), Thresholds(kernel_log=str(quiet_log)), tmp_path)
    found = by_id(results, "nvidia:0")[check_id]
    assert (found.severity, found.action) == (severity, action), found
    assert found.evidence  # the figures read
    assert found.uuid == H100["uuid"]
    others = [r for r in results if r.id != check_id and r.severity in (WARN, CRITICAL)]
    if check_id != "gpu.pcie.gen":  # a busy GPU may also show clock reasons; nothing else may fail
        assert others == []


def test_idle_gpu_at_a_lower_pcie_generation_is_fine(monkeypatch, tmp_path, quiet_log):
    link = {"gen": 1, "max_gen": 5, "width": 16, "max_width": 16}
    results = check(live(monkeypatch, [h100(pcie=link)]), Thresholds(kernel_log=str(quiet_log)), tmp_path)
    assert by_id(results, "nvidia:0")["gpu.pcie.gen"].severity == OK


def test_persistence_off_warns(monkeypatch, tmp_path, quiet_log):
    device = dict(H100, samples=[dict(H100["samples"][0], persistence_mode="disabled")])
    results = check(live(monkeypatch, [device]), Thresholds(kernel_log=str(quiet_log)), tmp_path)
    assert by_id(results, "nvidia:0")["gpu.persistence"].severity == WARN


def test_not_supported_is_not_applicable_and_other_errors_are_unknown(monkeypatch, tmp_path, quiet_log):
    gpu = h100(ecc="NotSupported", recovery_action="NotSupported", remapped_rows="NoPermission")
    results = check(live(monkeypatch, [gpu]), Thresholds(kernel_log=str(quiet_log)), tmp_path)
    mine = by_id(results, "nvidia:0")
    assert all(mine[i].severity is None for i in CATALOG if i.startswith("gpu.ecc."))
    assert mine["gpu.recovery_action"].severity is None
    assert mine["gpu.row_remap"].severity == UNKNOWN
    assert "NoPermission" in mine["gpu.row_remap"].summary


def test_a_hanging_driver_call_is_cut_by_the_time_limit_and_unknown(monkeypatch, tmp_path, quiet_log):
    monkeypatch.setattr(contained, "HEALTH_LIMIT_S", 0.5)
    machine = live(monkeypatch, [H100], faults={"nvmlDeviceGetRemappedRows": "hang"})
    started = time.monotonic()
    results = check(machine, Thresholds(kernel_log=str(quiet_log)), tmp_path)
    assert time.monotonic() - started < 10
    mine = by_id(results, "nvidia:0")
    assert mine["gpu.row_remap"].severity == UNKNOWN
    assert "timed out after 0.5 s" in mine["gpu.row_remap"].summary
    assert "nvmlDeviceGetRemappedRows" in mine["gpu.row_remap"].summary


def test_a_lost_gpu_is_critical_and_short_of_the_expected_count(monkeypatch, tmp_path, quiet_log):
    gpus = [H100, dict(H100, index=1, uuid="GPU-1", pci_bus_id="00000000:18:00.0")]
    machine = live(monkeypatch, gpus, errors={(1, "handle"): real_pynvml.NVMLError_GpuIsLost()})
    results = check(machine, Thresholds(expect_gpus=2, kernel_log=str(quiet_log)), tmp_path)
    lost = by_id(results, "nvidia:1")["gpu.lost"]
    assert (lost.severity, lost.action) == (CRITICAL, "reboot")
    assert "GpuIsLost" in lost.summary
    count = by_id(results, "host")["gpu.count"]
    assert count.severity == CRITICAL
    assert count.evidence == {"present": 1, "expected": 2, "lost": ["nvidia:1"]}
    assert by_id(results, "nvidia:0")["gpu.lost"].severity == OK


def kmsg(path, records):
    """A kernel log in /dev/kmsg's record format; `records` are (seconds ago, message)."""
    now_us = time.clock_gettime(time.CLOCK_MONOTONIC) * 1e6
    lines = [f"3,{n},{int(now_us - ago * 1e6)},-;{message}" for n, (ago, message) in enumerate(records)]
    path.write_text("\n".join(lines) + "\n")


def test_kernel_log_xids_of_this_gpu_in_the_window(monkeypatch, tmp_path):
    log = tmp_path / "kmsg"
    kmsg(
        log,
        [
            (9000, "NVRM: Xid (PCI:0000:17:00): 48, pid=1, An uncorrectable double bit error"),  # before the 2 h
            (60, "NVRM: Xid (PCI:0000:17:00): 79, pid=1, GPU has fallen off the bus."),
            (30, "NVRM: Xid (PCI:0000:99:00): 64, pid=1, another GPU"),
            (
                20,
                "pci 0000:17:00.0: 63.012 Gb/s available PCIe bandwidth, limited by 8.0 GT/s PCIe x8 link at 0000:00:01.0",
            ),
        ],
    )
    results = check(live(monkeypatch, [H100]), Thresholds(kernel_log=str(log)), tmp_path)
    xid = by_id(results, "nvidia:0")["gpu.xid.kernel_log"]
    assert (xid.severity, xid.action, xid.evidence["xids"]) == (CRITICAL, "reboot", [79])
    limited = by_id(results, "host")["host.pcie_limited"]
    assert limited.severity == WARN
    assert "0000:17:00.0" in limited.summary


def test_a_non_critical_xid_in_the_log_warns(monkeypatch, tmp_path):
    log = tmp_path / "kmsg"
    kmsg(log, [(5, "NVRM: Xid (PCI:0000:17:00): 13, pid=1, Graphics SM Warp Exception")])
    results = check(live(monkeypatch, [H100]), Thresholds(kernel_log=str(log)), tmp_path)
    assert by_id(results, "nvidia:0")["gpu.xid.kernel_log"].severity == WARN


def test_an_unreadable_kernel_log_is_unknown_with_its_reason(monkeypatch, tmp_path):
    missing = tmp_path / "no-such-log"
    results = check(live(monkeypatch, [H100]), Thresholds(kernel_log=str(missing)), tmp_path)
    xid = by_id(results, "nvidia:0")["gpu.xid.kernel_log"]
    assert xid.severity == UNKNOWN
    assert f"cannot read {missing}" in xid.summary
    assert by_id(results, "host")["host.pcie_limited"].severity == UNKNOWN


def sysfs(root, edac=None, throttle=None):
    if edac is not None:
        for name, (ce, ue) in edac.items():
            mc = root / "edac" / "mc" / name
            mc.mkdir(parents=True)
            (mc / "ce_count").write_text(f"{ce}\n")
            (mc / "ue_count").write_text(f"{ue}\n")
    for cpu, (core, package) in (throttle or {}).items():
        folder = root / "cpu" / cpu / "thermal_throttle"
        folder.mkdir(parents=True)
        (folder / "core_throttle_count").write_text(f"{core}\n")
        (folder / "package_throttle_count").write_text(f"{package}\n")


@pytest.mark.parametrize(
    ("edac", "throttle", "edac_severity", "throttle_severity"),
    [
        (None, None, None, None),
        ({"mc0": (0, 0)}, {"cpu0": (0, 0)}, OK, OK),
        ({"mc0": (3, 0)}, {"cpu0": (0, 2)}, WARN, WARN),
        ({"mc0": (0, 0), "mc1": (0, 1)}, {"cpu0": (5, 0), "cpu1": (0, 0)}, CRITICAL, WARN),
    ],
)
def test_host_memory_errors_and_cpu_throttling(
    monkeypatch, tmp_path, quiet_log, edac, throttle, edac_severity, throttle_severity
):
    sysfs(tmp_path / "sys", edac, throttle)
    results = check(live(monkeypatch), Thresholds(kernel_log=str(quiet_log)), tmp_path)
    host = by_id(results, "host")
    assert host["host.edac"].severity == edac_severity
    assert host["host.thermal_throttle"].severity == throttle_severity
    if edac_severity == CRITICAL:
        assert host["host.edac"].action == "service"


def test_an_unreadable_sysfs_counter_is_unknown(monkeypatch, tmp_path, quiet_log):
    sysfs(tmp_path / "sys", {"mc0": (0, 0)})
    (tmp_path / "sys" / "edac" / "mc" / "mc0" / "ue_count").unlink()
    (tmp_path / "sys" / "edac" / "mc" / "mc0" / "ue_count").mkdir()  # a directory where the count should be
    results = check(live(monkeypatch), Thresholds(kernel_log=str(quiet_log)), tmp_path)
    assert by_id(results, "host")["host.edac"].severity == UNKNOWN


def mi300x(**health):
    return dict(MI300X, health=health)


def test_healthy_mi300x(monkeypatch, tmp_path, quiet_log):
    results = check(live(monkeypatch, amd=[mi300x()]), Thresholds(kernel_log=str(quiet_log)), tmp_path)
    mine = by_id(results, "amd:0")
    assert {i for i in CATALOG if i.startswith("amd.")} <= set(mine)
    assert {r.severity for r in mine.values()} <= {OK, None}
    assert mine["amd.ecc"].evidence["blocks"]["umc"] == {
        "correctable_count": 0,
        "uncorrectable_count": 0,
        "deferred_count": 0,
    }


AMD_FAULTS = [
    ({"ecc_blocks": {"UMC": (0, 2), "GFX": (0, 0)}}, {}, "amd.ecc", CRITICAL),
    ({"ecc_blocks": {"UMC": (20_000, 0)}}, {}, "amd.ecc", WARN),
    ({"bad_pages": 3}, {}, "amd.bad_pages", WARN),
    ({"violations": {"active_hbm_thrm": True, "active_ppt_pwr": True}}, {}, "amd.violations", WARN),
    ({"pcie": {"width": 4, "max_width": 16, "speed": 32000, "max_speed": 32000}}, {}, "amd.pcie", CRITICAL),
    ({"pcie": {"width": 16, "max_width": 16, "speed": 16000, "max_speed": 32000}}, {}, "amd.pcie", WARN),
    ({"xgmi": ["U", "D", "U"]}, {}, "amd.xgmi", CRITICAL),
    ({"partition": ("CPX", "NPS4")}, {"amd_compute_partition": "SPX"}, "amd.partition", WARN),
]


@pytest.mark.parametrize(("health", "limits", "check_id", "severity"), AMD_FAULTS)
def test_each_amd_fault_is_found(monkeypatch, tmp_path, quiet_log, health, limits, check_id, severity):
    results = check(
        live(monkeypatch, amd=[mi300x(**health)]), Thresholds(kernel_log=str(quiet_log), **limits), tmp_path
    )
    found = by_id(results, "amd:0")[check_id]
    assert found.severity == severity, found
    assert found.action == CATALOG[check_id].action


def test_amd_counters_a_part_lacks_are_not_applicable(monkeypatch, tmp_path, quiet_log):
    gpu = mi300x(bad_pages="NOT_SUPPORTED", xgmi="NOT_SUPPORTED", ecc_blocks={})
    results = check(live(monkeypatch, amd=[gpu]), Thresholds(kernel_log=str(quiet_log)), tmp_path)
    mine = by_id(results, "amd:0")
    assert mine["amd.bad_pages"].severity is None
    assert mine["amd.xgmi"].severity is None
    assert mine["amd.ecc"].severity is None


def matrix(**verified):
    results = {p: types.SimpleNamespace(verified=ok) for p, ok in verified.items()}
    return types.SimpleNamespace(provenance="measured", results=results)


@pytest.mark.parametrize(
    ("flags", "bf16_failed"),
    [
        # bf16 native (AVX512-BF16, AMX): wrong numbers from it are a fault of the part
        (["avx2", "fma3", "avx512_f", "avx512_bf16", "amx_bf16"], CRITICAL),
        # bf16 emulated (a Zen 3: AVX2 only): wrong numbers from a software path warn
        (["avx2", "fma3"], WARN),
    ],
)
def test_numerics_judge_only_the_precisions_the_device_has(flags, bf16_failed):
    cpu = DeviceInfo("cpu", 0, "test cpu", cpu_features=flags)
    # tf32 and fp4 are absent on a CPU: their failures are the expected answer, not a fault
    healthy = judge_numerics(cpu, matrix(fp32=True, bf16=True, tf32=False, fp4=False))[0]
    assert (healthy.severity, healthy.evidence["failed"]) == (OK, [])
    broken = judge_numerics(cpu, matrix(fp32=True, bf16=False, tf32=False))[0]
    assert (broken.severity, broken.action, broken.evidence["failed"]) == (bf16_failed, "drain", ["bf16"])
    assert judge_numerics(cpu, None)[0].severity is None


def test_worst_orders_critical_warn_unknown_ok():
    assert worst([OK, UNKNOWN, None]) == UNKNOWN
    assert worst([UNKNOWN, WARN, OK]) == WARN
    assert worst([WARN, CRITICAL, UNKNOWN]) == CRITICAL
    assert worst([None, None]) is None
    assert [NAGIOS_CODES[s] for s in (OK, WARN, CRITICAL, UNKNOWN)] == [0, 1, 2, 3]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[health]\nxid_critical = [79, 'x']\n", "health.xid_critical: expected a list of XID numbers from 1 to 1023"),
        ("[health]\nexpect_gpus = -1\n", "health.expect_gpus: expected a value from 0 to 1024, got -1 (line 2)"),
        ("[health]\namd_memory_partition = 'NPS3'\n", "health.amd_memory_partition: expected one of"),
        ("[health]\nkernel_log = ' '\n", "health.kernel_log: expected a path"),
    ],
)
def test_bad_thresholds_are_one_line_errors(tmp_path, text, expected):
    cfg = tmp_path / "bad.toml"
    cfg.write_text(text)
    with pytest.raises(UsageError) as err:
        load_config(str(cfg))
    assert expected in str(err.value)
    assert "\n" not in str(err.value)


def test_thresholds_come_from_the_config_and_the_option_wins(tmp_path):
    cfg = tmp_path / "ok.toml"
    cfg.write_text("[health]\nexpect_gpus = 8\nxid_critical = [79]\n")
    limits = Thresholds.from_config(load_config(str(cfg)))
    assert (limits.expect_gpus, limits.xid_critical) == (8, (79,))
    assert Thresholds.from_config(load_config(str(cfg)), expect_gpus=4).expect_gpus == 4


# ------------------------------------------------------------------------------------------------ gpudash check


def check_cli(monkeypatch, tmp_path, capsys, gpus, *args, log_text=""):
    from gpudash import strict_json
    from gpudash.cli import main
    from gpudash.contracts.validation import problems

    log = tmp_path / "kmsg"
    log.write_text(log_text)
    cfg = tmp_path / "config.toml"
    cfg.write_text(f"[health]\nkernel_log = '{log}'\n")
    monkeypatch.setitem(sys.modules, "pynvml", make_fake_pynvml(list(gpus)))
    monkeypatch.setitem(sys.modules, "amdsmi", None)
    monkeypatch.setenv("GPUDASH_LOAD_PLUGINS", "rocm_checks")
    code = main(["--config", str(cfg), "check", "--json", *args])
    data = strict_json.loads(capsys.readouterr().out)
    assert problems("check", data) == []
    return code, data


def test_check_json_carries_the_contract_and_exits_1_on_critical(monkeypatch, tmp_path, capsys):
    code, data = check_cli(monkeypatch, tmp_path, capsys, [h100(remapped_rows="NoPermission", recovery_action=2)])
    assert code == 1
    assert all({"id", "severity", "device", "evidence", "action"} <= set(c) for c in data["checks"])
    by_check = {(c["id"], c["device"]): c for c in data["checks"]}
    recovery = by_check[("gpu.recovery_action", "nvidia:0")]
    assert (recovery["severity"], recovery["action"], recovery["status"]) == ("CRITICAL", "reboot", "fail")
    assert recovery["evidence"] == {"recovery_action": 2, "name": "NODE_REBOOT"}
    plugin = next(c for c in data["checks"] if c["plugin"] == "rocm_checks")
    assert plugin["id"].startswith("plugin.rocm_checks.") and plugin["severity"] is None  # skipped: not applicable


@pytest.mark.parametrize(
    ("health", "default_code", "nagios_code"),
    [
        ({}, 0, 0),
        ({"power_limit_w": {"current": 300, "default": 700}}, 0, 1),  # WARN
        ({"remapped_rows": "NoPermission"}, 0, 3),  # UNKNOWN
        ({"remapped_rows": "NoPermission", "power_limit_w": {"current": 300, "default": 700}}, 0, 1),  # WARN wins
        ({"ecc": {"volatile_sram_uncorrected": 1}, "remapped_rows": "NoPermission"}, 1, 2),  # CRITICAL wins
    ],
)
def test_exit_codes_default_and_nagios(monkeypatch, tmp_path, capsys, health, default_code, nagios_code):
    assert check_cli(monkeypatch, tmp_path, capsys, [h100(**health)])[0] == default_code
    assert check_cli(monkeypatch, tmp_path, capsys, [h100(**health)], "--exit-codes", "nagios")[0] == nagios_code


def test_expect_gpus_short_is_critical(monkeypatch, tmp_path, capsys):
    code, data = check_cli(monkeypatch, tmp_path, capsys, [h100()], "--expect-gpus", "2")
    count = next(c for c in data["checks"] if c["id"] == "gpu.count")
    assert (code, count["severity"], count["device"]) == (1, "CRITICAL", "host")


def test_bad_expect_gpus_is_one_line(monkeypatch, tmp_path, capsys):
    from gpudash.cli import main

    assert main(["check", "--expect-gpus", "-1"]) == 2
    assert capsys.readouterr().err.strip() == "gpudash: error: --expect-gpus: expected a count from 0 to 1024, got -1"
