"""The built-in ROCm checks: table checks on replayed ROCm machines, skips elsewhere, and the bf16 experiments
run for real on this CPU (the reference device) including that they catch a broken conversion."""

import json

import pytest
import torch
from conftest import MI300X, snapshot_dict
from fakes import EXAMPLES

from gpudash.devices import discover
from gpudash.plugin_manager import make_plugin_manager, run_checks
from gpudash.plugins_api import Device
from gpudash_plugins.rocm_checks import probes
from gpudash_plugins.rocm_checks.device_checks import DEVICE_CHECKS, Bf16CacheNanInf, cache_verdict
from gpudash_plugins.rocm_checks.facts import HIPBLASLT_SUPPORTED, listed_since
from gpudash_plugins.rocm_checks.table_checks import FftStability, HipblasltSupport, KnownIssues, fft_report


def amd(index, gfx, name):
    return {**MI300X, "index": index, "gfx_target": gfx, "name": name}


def rocm_machine(tmp_path, hip, *targets):
    devices = [amd(i, gfx, f"AMD {gfx}") for i, gfx in enumerate(targets)]
    runtime = {"torch": "2.9.0+rocm", "cuda": None, "hip": hip, "driver": "6.8"}
    path = tmp_path / f"rocm-{hip}.json"
    path.write_text(json.dumps(snapshot_dict(*devices, runtime=runtime)))
    return discover(replay=str(path))


@pytest.fixture
def rocm_only(monkeypatch):
    monkeypatch.setenv("GPUDASH_LOAD_PLUGINS", "rocm_checks")
    return make_plugin_manager()


def by_target(machine, results):
    gfx = {d.key: d.gfx_target for d in machine.devices}
    out = {}
    for r in results:
        out.setdefault(gfx[r.device], {})[r.check] = r
    return out


def test_replayed_rocm_7_1_machine(tmp_path, rocm_only):
    machine = rocm_machine(tmp_path, "7.1.25424", "gfx1151", "gfx1010", "gfx942", "gfx1100", "gfx1201", "gfx1102")
    got = by_target(machine, run_checks(machine, rocm_only))
    for gfx, checks in got.items():  # device checks never run on a replay
        for name in ("bf16_to_fp32", "bf16_cpu_round_trip", "bf16_save_load", "bf16_cache_nan_inf"):
            assert (checks[name].status, checks[name].summary) == ("skip", "not run: replayed"), gfx

    strix = got["gfx1151"]
    assert strix["known_issues"].status == "warn"
    assert "bf16 is partial" in strix["known_issues"].summary
    assert strix["known_issues"].env == {
        "TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL": "1",
        "MIOPEN_DEBUG_CONV_DIRECT": "0",
        "PYTORCH_TUNABLEOP_ENABLED": "1",
    }
    assert "ROCm/legacy-rocm-build#6034" in strix["known_issues"].details["issues"][0]["refs"]
    assert strix["hipblaslt_support"].status == "pass"
    assert strix["hipblaslt_support"].details["supported_since_rocm"] == "7.0"
    assert "TORCH_BLAS_PREFER_HIPBLASLT=1" in strix["hipblaslt_support"].remediation
    assert strix["fft_stability"].summary == "not run: replayed"

    rdna1 = got["gfx1010"]
    assert rdna1["hipblaslt_support"].status == "warn"
    assert rdna1["hipblaslt_support"].env == {"TORCH_BLAS_PREFER_HIPBLASLT": "0"}
    assert "Attempting to use hipBLASLt on an unsupported architecture" in rdna1["hipblaslt_support"].summary
    assert rdna1["known_issues"].status == "warn" and "no hipBLASLt" in rdna1["known_issues"].summary
    assert rdna1["fft_stability"].status == "warn" and "FFT routed to the CPU" in rdna1["fft_stability"].summary
    assert rdna1["fft_stability"].details["ran_on_device"] is False

    mi300 = got["gfx942"]
    assert mi300["hipblaslt_support"].status == "pass" and "by default" in mi300["hipblaslt_support"].summary
    assert mi300["known_issues"].status == "pass" and "FNUZ" in mi300["known_issues"].summary

    rdna3 = got["gfx1100"]
    assert rdna3["known_issues"].status == "warn"
    assert "pytorch/pytorch#189394" in json.dumps(rdna3["known_issues"].details)
    assert rdna3["known_issues"].env == {"TORCH_BLAS_PREFER_HIPBLASLT": "1"}  # hipBLASLt supports gfx1100 here
    # gfx1102 is RDNA3 too, but hipBLASLt does not list it: the advice to switch to it is withheld, and said so.
    assert got["gfx1102"]["known_issues"].env == {}
    assert "Not set: TORCH_BLAS_PREFER_HIPBLASLT=1" in got["gfx1102"]["known_issues"].remediation
    assert got["gfx1102"]["hipblaslt_support"].env == {"TORCH_BLAS_PREFER_HIPBLASLT": "0"}

    rdna4 = got["gfx1201"]
    assert rdna4["hipblaslt_support"].status == "warn"
    assert "ROCm/rocm-libraries#5706" in rdna4["hipblaslt_support"].summary
    assert rdna4["known_issues"].env == {"TORCH_BLAS_PREFER_HIPBLASLT": "0"}


def test_hipblaslt_support_depends_on_the_rocm_version(tmp_path, rocm_only):
    machine = rocm_machine(tmp_path, "6.2.41133", "gfx1151", "gfx1100", "gfx942")
    got = by_target(machine, run_checks(machine, rocm_only))
    strix = got["gfx1151"]["hipblaslt_support"]
    assert strix.status == "warn" and "with ROCm 6.2 (from ROCm 7.0)" in strix.summary
    assert strix.env == {"TORCH_BLAS_PREFER_HIPBLASLT": "0"}
    # Before ROCm 6.3 hipBLASLt does not cover gfx1100, so the RDNA3 bf16 workaround is not offered.
    assert got["gfx1100"]["known_issues"].env == {}
    assert got["gfx942"]["hipblaslt_support"].status == "pass"


def test_hipblaslt_table_matches_the_reference():
    assert listed_since(HIPBLASLT_SUPPORTED, "gfx942") == (0, 0)
    assert listed_since(HIPBLASLT_SUPPORTED, "gfx1200") == (6, 3)
    assert listed_since(HIPBLASLT_SUPPORTED, "gfx1150") == (7, 0)
    assert listed_since(HIPBLASLT_SUPPORTED, "gfx1010") is None


def test_unknown_rocm_version_and_unknown_target_warn():
    no_version = Device("amd", 0, "AMD gfx1151", gfx_target="gfx1151", replayed=True)
    result = HipblasltSupport().run(no_version)
    assert result.status == "warn" and result.summary.startswith("ROCm version unknown")
    no_target = Device("amd", 0, "AMD something", replayed=True, runtime={"hip": "6.4.1"})
    assert KnownIssues().run(no_target).status == "warn"


def test_every_check_skips_on_non_rocm_devices_and_says_why(h100_snapshot):
    cpu = Device("cpu", 0, "AMD EPYC", cpu_features=["avx512_bf16"])
    nvidia = Device("nvidia", 0, "H100", compute_capability="9.0", replayed=True)
    for check in (*DEVICE_CHECKS, HipblasltSupport, KnownIssues, FftStability):
        for device in (cpu, nvidia):
            result = check().run(device)
            assert result.status == "skip"
            assert result.summary == f"not an AMD GPU ({device.vendor}): this is a ROCm check"


def test_device_checks_on_a_live_amd_device_without_rocm_torch_skip():
    live_amd = Device("amd", 0, "AMD Radeon", gfx_target="gfx1100", torch_index=0, runtime={"hip": "6.3.0"})
    result = DEVICE_CHECKS[0]().run(live_amd)
    assert result.status == "skip" and "not a ROCm build" in result.summary  # this torch is the CPU build


# The bf16 experiments, for real, with the CPU as the device ----------------------------------------


def test_conversion_report_passes_on_the_cpu():
    report = probes.conversion_report(torch, "cpu")
    assert report["mismatches"] == 0 and report["first_failure"] is None
    assert report["cases"] == 2 * 2 * len(probes.SIZES)  # two converters, contiguous and strided


def test_conversion_report_catches_the_zeros_bug():
    def buggy(t):  # what the ROCm guide describes: values come back as zeros past a vector width
        out = t.float().clone()
        out[8:] = 0
        return out

    report = probes.conversion_report(torch, "cpu", convert=buggy, sizes=(64, 4097))
    assert report["mismatches"] > 0 and report["zeros_where_nonzero"] > 0
    assert report["first_failure"].startswith("convert contiguous n=64:")


def test_round_trip_and_save_load_pass_on_the_cpu(tmp_path):
    assert probes.round_trip_report(torch, "cpu")["mismatches"] == 0
    report = probes.save_load_report(torch, "cpu", directory=str(tmp_path))
    assert report["mismatches"] == 0 and report["cases"] == 6
    try:
        import safetensors  # noqa: F401

        assert report["format"] == "safetensors"
    except ImportError:
        assert report["format"].startswith("torch.save/torch.load (the safetensors package is not installed)")


def test_cache_check_passes_on_the_cpu_and_catches_overflow():
    check = Bf16CacheNanInf()
    assert cache_verdict(check, probes.cache_report(torch, "cpu")).status == "pass"
    bad = cache_verdict(check, probes.cache_report(torch, "cpu", process=lambda t: t * 1e38))
    assert bad.status == "fail" and "NaN/Inf via direct .cpu()" in bad.summary
    assert "nan_to_num" in bad.remediation


def test_fft_report_on_the_cpu_matches():
    report = fft_report(torch, "cpu")
    assert report["finite"] and report["max_rel_error"] < 1e-4


def test_results_carry_what_the_recommender_reads():
    rdna1 = Device("amd", 0, "RX 5600 XT", gfx_target="gfx1010", replayed=True, runtime={"hip": "6.0.0"})
    fft = FftStability().run(rdna1)
    assert fft.details["routing"] == {"fft": "cpu"}
    assert KnownIssues().run(rdna1).details["precisions"] == ["bf16"]
    strix = Device("amd", 0, "8060S", gfx_target="gfx1151", replayed=True, runtime={"hip": "7.1.0"})
    assert KnownIssues().run(strix).details["precisions"] == ["bf16"]
    assert cache_verdict(Bf16CacheNanInf(), probes.cache_report(torch, "cpu")).details["precision"] == "bf16"


def test_advice_is_gpudash_decision_not_the_table_text():
    """What to train in comes from the one AMP decision: the export writes the same dtype for the same device."""
    rdna3 = Device("amd", 0, "AMD Radeon RX 7900 XTX", gfx_target="gfx1100", replayed=True, runtime={"hip": "6.4.0"})
    known = KnownIssues().run(rdna3)
    assert known.details["amp_dtype"] == "float16"
    assert known.remediation.startswith("Train with fp16 autocast and a GradScaler (dynamic loss scaling): caution")
    assert "pytorch/pytorch/pull/189394" in known.remediation and "hipBLASLt" in known.remediation
    rdna1 = Device("amd", 0, "AMD Radeon RX 5600 XT", gfx_target="gfx1010", replayed=True, runtime={"hip": "6.0.0"})
    assert KnownIssues().run(rdna1).details["amp_dtype"] == "float32"
    mi300 = Device("amd", 0, "AMD Instinct MI300X", gfx_target="gfx942", replayed=True, runtime={"hip": "6.2.0"})
    assert "amp_dtype" not in KnownIssues().run(mi300).details  # no issue in doubt: nothing to advise
    # a device check that finds bf16 broken advises what the export would then choose: fp16 on MI300's MFMA
    from gpudash_plugins.rocm_checks.device_checks import Bf16ToFp32, _verdict

    def buggy(t):
        out = t.float()
        out[::3] = 0
        return out

    report = probes.conversion_report(torch, "cpu", convert=buggy, sizes=(64,))
    failed = _verdict(Bf16ToFp32(), mi300, report, "bf16 -> fp32 on the GPU", "Convert on the CPU.")
    assert failed.status == "fail" and failed.details["amp_dtype"] == "float16"
    assert failed.remediation.startswith("Convert on the CPU. Train with fp16 autocast and a GradScaler")


def test_the_conversion_table_check_runs_gpudash_rocm_and_names_a_broken_bf16_fp16_row():
    """The plugin checks the whole table of the ROCm guide through gpudash.rocm.conversion_matrix_report (one
    implementation): on a correct device every row passes; a device whose bf16 -> fp16 is broken fails on that
    row, with what to do and what to train in."""
    from rocm_faults import HalfFault, on_device

    from gpudash.rocm import conversion_matrix_report
    from gpudash_plugins.rocm_checks.device_checks import ConversionMatrix, matrix_verdict

    mi300 = Device("amd", 0, "AMD Instinct MI300X", gfx_target="gfx942", replayed=True, runtime={"hip": "6.2.0"})
    passed = ConversionMatrix().run_on_torch(torch, "cpu", mi300)  # the CPU as the device: conversions are right
    assert passed.status == "pass" and passed.summary.startswith("all 6 rows of the ROCm guide's conversion table")
    report = conversion_matrix_report(torch, "cpu", to_device=lambda t: on_device(t, HalfFault), sizes=(3, 64))
    failed = matrix_verdict(ConversionMatrix(), mi300, report)
    assert failed.status == "fail"
    assert failed.summary.endswith("differ from the CPU: bfloat16 -> float16 .half() on the device")
    assert failed.details["failing_rows"] == ["bfloat16 -> float16 .half() on the device"]
    assert "gpudash.rocm.bf16_to_float32" in failed.remediation


def test_a_failing_live_fft_check_routes_fft_to_the_cpu(monkeypatch):
    """A live FFT failure (not only RDNA1's table answer) carries {"routing": {"fft": "cpu"}}, which the export's
    [routing] rule and gpudash.runtime.get_optimal_device("fft") follow."""
    import dataclasses

    from gpudash.runtime import get_optimal_device
    from gpudash_plugins.rocm_checks import table_checks

    monkeypatch.setattr(table_checks, "rocm_torch", lambda check, device: (torch, "cuda:0"))
    broken = {"sizes": [1024], "max_rel_error": 0.5, "finite": False, "ran_on_device": True}
    monkeypatch.setattr(table_checks, "fft_report", lambda torch, where: broken)
    strix = Device("amd", 0, "AMD Radeon 8060S", gfx_target="gfx1151", torch_index=0, runtime={"hip": "7.1.0"})
    result = FftStability().run(strix)
    assert result.status == "fail" and result.details["routing"] == {"fft": "cpu"}
    as_saved = {**dataclasses.asdict(result), "device": "amd:0"}
    strix_replay = str(EXAMPLES / "strix-halo-8060s.json")
    assert get_optimal_device("fft", replay=strix_replay) == "cuda:0"  # the tables alone keep FFT on the GPU
    assert get_optimal_device("fft", replay=strix_replay, checks=[as_saved]) == "cpu"


def test_the_hipblaslt_advice_says_what_the_seeds_fix_really_does():
    """The RX 5600 XT summary's "fix" (ROCBLAS_LAYER=1, HIPBLASLT_LOG_LEVEL=0) only turns on logging: the check's
    remediation says so, from the one text the export's reason uses too."""
    from gpudash.recommend.env import HIPBLASLT_SEED_NOTE

    rdna1 = Device("amd", 0, "AMD Radeon RX 5600 XT", gfx_target="gfx1010", replayed=True, runtime={"hip": "6.2.0"})
    result = HipblasltSupport().run(rdna1)
    assert result.env == {"TORCH_BLAS_PREFER_HIPBLASLT": "0"}
    assert HIPBLASLT_SEED_NOTE in result.remediation and "ROCBLAS_LAYER=1" in result.remediation
