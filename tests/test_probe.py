"""Precision probes: the real probe of this machine's CPU, planted faults, replay, schema, CLI contract."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import H100, snapshot_dict

from gpudash.cli import main
from gpudash.devices import Machine, discover
from gpudash.measure import probe, runner
from gpudash.measure.schema import PrecisionCapabilityMatrix
from gpudash.models import DeviceInfo, Host, Runtime
from gpudash.precisions import PRECISIONS

TESTS = Path(__file__).resolve().parent
EXAMPLES = TESTS.parent / "examples" / "snapshots"
VERDICTS = {"verified", "slow_reference", "failed", "not_run"}


@pytest.fixture(scope="module")
def cpu_machine():
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("GPUDASH_REPLAY", raising=False)
        machine = discover(include_torch=False)
    cpu = next(d for d in machine.devices if d.vendor == "cpu")
    return machine, cpu


@pytest.fixture(scope="module")
def cpu_probe(cpu_machine):
    """The real probe of this CPU, every precision, run once for the module."""
    machine, cpu = cpu_machine
    events = []
    matrices = probe.probe_machine(machine, devices=[cpu], timeout_s=120, on_progress=events.append)
    return matrices[cpu.key], events


def _check(result, name):
    return next(c for c in result.details["checks"] if c["check"] == name)


# The real probe on this CPU ------------------------------------------------------------------------


def test_every_precision_is_probed_for_real(cpu_probe, cpu_machine):
    matrix, events = cpu_probe
    assert list(matrix.results) == list(PRECISIONS)
    assert matrix.provenance == "measured" and matrix.measured_at
    assert matrix.device == cpu_machine[1].key
    for name, result in matrix.results.items():
        assert result.verdict in VERDICTS - {"not_run"}, (name, result.failure_reason)
        assert result.details["checks"], name  # something actually ran
        assert result.verified is (result.verdict != "failed")
        assert (result.failure_reason is None) == (result.verdict != "failed")
    done = [e for e in events if e["event"] == "done"]
    assert [e["precision"] for e in done] == list(PRECISIONS) and done[-1]["done"] == done[-1]["total"] == 9
    assert any(e["event"] == "check" for e in events)


def test_exact_precisions_match_the_reference(cpu_probe):
    results = cpu_probe[0].results
    assert results["fp64"].verdict == "verified" and results["fp64"].max_rel_error < 1e-12
    assert results["fp32"].verdict == "verified" and results["fp32"].max_rel_error < 1e-5
    # int8 is exact everywhere; without VNNI (a Zen 3) its matmul runs below a tenth of fp32's rate
    assert results["int8"].verdict in ("verified", "slow_reference") and results["int8"].max_rel_error == 0.0
    for name in ("bf16", "fp16", "fp8_e4m3", "fp8_e5m2"):  # they all compute correctly on any CPU
        assert results[name].verdict in ("verified", "slow_reference"), results[name].failure_reason
        matmul = _check(results[name], "matmul")
        assert matmul["frac_nan"] == matmul["frac_inf"] == 0.0
        assert matmul["max_rel_error"] <= matmul["tolerance"]


def test_conversions_cover_sizes_views_and_fp8_flavours(cpu_probe):
    results = cpu_probe[0].results
    for name, dtype in (
        ("bf16", "bfloat16"),
        ("fp16", "float16"),
        ("fp8_e4m3", "float8_e4m3fn"),
        ("fp8_e5m2", "float8_e5m2"),
        ("int8", "int8"),
    ):
        conv = _check(results[name], "conversion")
        assert conv["ok"] and conv["dtype"] == dtype
        assert conv["sizes"] == [1, 3, 4097, 2**20 + 3] and conv["cases"] == 21  # 7 views x 3 steps


def test_autocast_step_per_mixed_dtype(cpu_probe):
    results = cpu_probe[0].results
    bf16, fp16 = _check(results["bf16"], "autocast"), _check(results["fp16"], "autocast")
    assert bf16["ok"] and bf16["autocast_output_dtype"] == "bfloat16" and not bf16["grad_scaler"]
    assert fp16["ok"] and fp16["autocast_output_dtype"] == "float16" and fp16["grad_scaler"]
    assert fp16["loss_scale"] == 65536.0  # the step was not skipped for overflow


def test_tf32_is_never_verified_on_the_cpu_and_the_onednn_mode_is_reported(cpu_probe):
    tf32 = cpu_probe[0].results["tf32"]
    assert tf32.verdict == "failed" and tf32.verified is False and tf32.spec == "absent" and tf32.torch is False
    assert "no TF32 on cpu" in tf32.failure_reason
    effect = _check(tf32, "tf32_effect")
    assert effect["in_effect"] is False and effect["mkldnn_bf16"]["settings"]["mkldnn"] == "bf16"
    assert "oneDNN's bf16 mode" in tf32.details["note"]


def test_slow_reference_rule_follows_the_measured_rate(cpu_probe):
    for name, result in cpu_probe[0].results.items():
        ratio = result.details.get("rate_vs_fp32")
        if ratio is None or result.verdict == "failed":
            continue
        slow = name not in probe.RATE_EXEMPT and ratio < probe.SLOW_REFERENCE_FRACTION
        assert (result.verdict == "slow_reference") is slow, (name, ratio)
        assert result.verified is True
        if slow:
            assert "slow reference path" in result.details["note"] and f"{ratio:.1%}" in result.details["note"]
    # Timed in nn.Linear's layout (B = W.T): the rate training code gets, not a layout it never uses.
    assert cpu_probe[0].results["fp16"].details["rate_vs_fp32"] > 0


def test_torch_claims_come_with_their_basis(cpu_probe):
    for name, result in cpu_probe[0].results.items():
        assert result.details.get("torch_basis"), name
    assert "is_mkldnn_bf16_supported" in cpu_probe[0].results["bf16"].details["torch_basis"]


def test_matrix_survives_json_without_loss(cpu_probe):
    matrix = cpu_probe[0]
    text = json.dumps(matrix.to_dict(), allow_nan=False)
    again = PrecisionCapabilityMatrix.from_dict(json.loads(text))
    assert again == matrix
    assert again.to_dict() == matrix.to_dict()


# Planted faults ------------------------------------------------------------------------------------


@pytest.fixture
def planted(cpu_machine, monkeypatch):
    """probe_machine on this CPU with faults planted in the child through tests/probe_faults.py."""
    machine, cpu = cpu_machine
    monkeypatch.setattr(probe, "TASK_TARGET", "probe_faults:run_probe")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")])))

    def run(faults: dict[str, str], timeout_s: float):
        monkeypatch.setenv("GPUDASH_PROBE_FAULT", ",".join(f"{p}={kind}" for p, kind in faults.items()))
        return probe.probe_machine(machine, devices=[cpu], timeout_s=timeout_s, precisions=list(faults))[
            cpu.key
        ].results

    return run


def test_planted_wrong_numbers_fail_with_their_reason(planted):
    results = planted({"fp32": "matmul_nan", "bf16": "conversion_zeros"}, timeout_s=120)
    assert {r.verdict for r in results.values()} == {"failed"}
    assert "NaN" in results["fp32"].failure_reason and results["fp32"].max_rel_error is None
    bf16 = results["bf16"].failure_reason
    assert "bfloat16 to fp32" in bf16 and "became 0" in bf16, bf16
    assert _check(results["bf16"], "matmul")["ok"]  # only the conversion was broken, and only it is blamed


def test_planted_crashes_and_hangs_fail_with_their_reason(planted):
    results = planted({"fp64": "abort", "fp16": "hang", "int8": "segfault"}, timeout_s=2)
    assert {r.verdict for r in results.values()} == {"failed"}
    assert all(r.verified is False for r in results.values())
    assert results["fp64"].failure_reason.startswith("probe crashed") and "SIGABRT" in results["fp64"].failure_reason
    assert (
        results["fp16"].failure_reason.startswith("probe hung")
        and "timed out after 2 s" in results["fp16"].failure_reason
    )
    assert results["int8"].failure_reason.startswith("probe crashed") and "SIGSEGV" in results["int8"].failure_reason


def test_cancel_marks_what_did_not_run(cpu_machine):
    import threading

    machine, cpu = cpu_machine
    cancel = threading.Event()
    cancel.set()
    results = probe.probe_machine(machine, devices=[cpu], cancel=cancel, precisions=["fp32"])[cpu.key].results
    assert results["fp32"].verdict == "not_run" and results["fp32"].failure_reason == "not run: cancelled"


# Verdicts without a child process -------------------------------------------------------------------


def _task_result(status, value=None, error=None):
    return runner.TaskResult(runner.Task("x:y"), status, value=value, error=error, duration_s=1.0)


@pytest.mark.parametrize(
    "status,error,start",
    [
        (runner.TIMEOUT, "timed out after 3 s", "probe hung: timed out after 3 s"),
        (runner.CRASHED, "process killed by SIGSEGV", "probe crashed: process killed by SIGSEGV"),
        (runner.ERROR, "ImportError: no torch", "probe raised ImportError: no torch"),
    ],
)
def test_judge_turns_runner_failures_into_failed(status, error, start):
    result = probe.judge("bf16", "native", True, _task_result(status, error=error))
    assert result.verdict == "failed" and result.verified is False and result.failure_reason.startswith(start)
    assert result.spec == "native" and result.torch is True


def test_judge_slow_reference_and_not_run():
    slow = {
        "torch": {"value": False, "basis": "b"},
        "checks": [
            {
                "check": "matmul",
                "ok": True,
                "max_rel_error": 1e-4,
                "max_abs_error": 1e-3,
                "rate_vs_fp32": 0.05,
                "gflops": 1.0,
                "fp32_gflops": 20.0,
                "timing_shape": [256, 256, 256],
            }
        ],
    }
    result = probe.judge("fp16", "emulated", None, _task_result(runner.OK, slow))
    assert result.verdict == "slow_reference" and result.verified is True and result.torch is False
    assert "5.0% of fp32" in result.details["note"]
    exempt = probe.judge("fp64", "native", True, _task_result(runner.OK, slow))
    assert exempt.verdict == "verified"  # fp64 below fp32's rate is by design, not a reference path
    missing = probe.judge("fp4", "absent", None, _task_result(runner.OK, {"not_run": "torch 2.1 has no fp4 dtype"}))
    assert missing.verdict == "not_run" and missing.verified is None and "no fp4" in missing.failure_reason


def test_device_torch_cannot_see_is_not_run():
    gpu = DeviceInfo(vendor="nvidia", index=0, name="NVIDIA H100 80GB HBM3", compute_capability="9.0")
    machine = Machine(host=Host(hostname="gpu-box"), runtime=Runtime(), devices=[gpu])
    results = probe.probe_machine(machine)["nvidia:0"].results
    assert {r.failure_reason for r in results.values()} == {"not run: torch does not see this device"}
    assert results["bf16"].spec == "native" and results["bf16"].verified is None


def test_find_device(cpu_machine):
    machine, cpu = cpu_machine
    assert probe.find_device(machine, "cpu") is cpu
    assert probe.find_device(machine, cpu.key) is cpu
    with pytest.raises(probe.UsageError, match="no such device"):
        probe.find_device(machine, "cuda:7")


# Replay --------------------------------------------------------------------------------------------


@pytest.fixture
def h100_with_torch(tmp_path):
    path = tmp_path / "h100.json"
    path.write_text(json.dumps(snapshot_dict({**H100, "torch": {"bf16": True, "tf32": True}})))
    return path


def test_replayed_h100_shows_spec_and_torch_never_runs(h100_with_torch, monkeypatch):
    monkeypatch.setattr(runner, "run_tasks", lambda *a, **k: pytest.fail("a replayed machine must not be run"))
    machine = discover(replay=str(h100_with_torch))
    matrix = probe.probe_machine(machine)["nvidia:0"]
    assert matrix.provenance == "replayed" and matrix.measured_at is None
    for result in matrix.results.values():
        assert result.verified is None and result.verdict == "not_run"
        assert result.failure_reason == "not run: replayed"
    assert matrix.results["bf16"].torch is True and matrix.results["tf32"].torch is True
    assert matrix.results["fp8_e4m3"].torch is None  # not recorded in the snapshot
    assert matrix.results["fp8_e4m3"].spec == "native" and matrix.results["fp4"].spec == "absent"
    assert matrix.theoretical_peaks["bf16"] == pytest.approx(989400.0)


# CLI -----------------------------------------------------------------------------------------------


def test_cli_json_contract_replayed(capsys, state_dir):
    snapshot = EXAMPLES / "h100-80gb.json"
    assert main(["probe", "--json", "--replay", str(snapshot)]) == 0
    out, _err = capsys.readouterr()
    data = json.loads(out)
    assert data["version"] == 1 and data["replayed"] is True
    dev = data["devices"][0]
    assert {"index", "name", "precisions"} <= set(dev) and dev["index"] == 0
    assert set(dev["precisions"]) == set(PRECISIONS)
    for entry in dev["precisions"].values():
        assert {"spec", "torch", "verified", "max_rel_error", "failure_reason"} <= set(entry)
        assert entry["verified"] is None and entry["failure_reason"] == "not run: replayed"
    assert dev["precisions"]["bf16"]["spec"] is True and dev["precisions"]["fp4"]["spec"] is False
    assert not state_dir.exists()  # nothing measured, nothing remembered


def test_cli_table_replayed(capsys):
    assert main(["probe", "--replay", str(EXAMPLES / "mi300x.json")]) == 0
    out = capsys.readouterr().out
    assert "replayed from mi300x.json" in out and "[amd:0] AMD Instinct MI300X (CDNA3)" in out
    assert "amd:0 all precisions: not run: replayed" in out
    assert "verified" in out.splitlines()[3]


def test_cli_live_json_and_table_from_real_results(cpu_probe, cpu_machine, monkeypatch, capsys, state_dir):
    matrix = cpu_probe[0]
    monkeypatch.setattr(probe, "probe_machine", lambda machine, **kw: {matrix.device: matrix})
    found = SimpleNamespace(machine=lambda include_torch=True: cpu_machine[0])  # what begin_discovery hands back
    monkeypatch.setattr("gpudash.actions.session.begin_discovery", lambda replay=None: found)
    assert main(["probe", "--json", "--device", "cpu"]) == 0
    out, err = capsys.readouterr()
    data = json.loads(out)
    assert data["replayed"] is False
    entry = data["devices"][0]["precisions"]["bf16"]
    assert entry["verified"] is True and entry["max_rel_error"] == matrix.results["bf16"].max_rel_error
    assert "remembered in" in err
    _saved_at, remembered = probe.remembered(cpu_machine[0])
    kept = remembered[matrix.device]
    for result in kept.results.values():  # each result remembers when it was measured
        assert result.details.pop("measured_at") == matrix.measured_at
    assert kept == matrix
    assert main(["probe", "--device", "0"]) == 0
    table = capsys.readouterr().out
    assert "max rel err" in table and "cpu:0 tf32 ✗ no TF32 on cpu" in table


@pytest.mark.parametrize(
    "args,message",
    [
        (["probe", "--device", "nvidia:3"], "--device 'nvidia:3': no such device"),
        (["probe", "--timeout", "0"], "--timeout: expected a positive number"),
        (["probe", "--precision", "fp7"], "--precision: unknown precision 'fp7' (choose from fp64,"),
        (["probe", "--precisions", "fp32,fp7"], "--precisions: unknown precision 'fp7' (choose from fp64,"),
    ],
)
def test_cli_bad_input_is_one_line_exit_2(args, message, capsys, h100_with_torch):
    assert main(["--replay", str(h100_with_torch), *args]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("gpudash: error: ") and message in err and "\n" not in err


def test_remember_merges_devices_and_ignores_replays(cpu_probe, cpu_machine, state_dir, h100_with_torch):
    machine, cpu = cpu_machine
    matrix = cpu_probe[0]
    other = PrecisionCapabilityMatrix(hardware_name="other", device="nvidia:0", provenance="measured")
    probe.remember(machine, {"nvidia:0": other})
    probe.remember(machine, {cpu.key: matrix})
    assert set(probe.remembered(machine)[1]) == {"nvidia:0", cpu.key}
    replayed = discover(replay=str(h100_with_torch))
    assert probe.remember(replayed, probe.probe_machine(replayed)) is None
    assert probe.remembered(replayed) is None


def test_parent_side_never_imports_torch():
    code = (
        "import sys, gpudash.measure.probe, gpudash.cli.probe_cmd, gpudash.actions.probe, gpudash.amp; "
        "assert 'torch' not in sys.modules, 'torch imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
