"""Calibration profiles (seed layout, lossless round trip, compare) and presets (peaks, platform check)."""

from __future__ import annotations

import json

import pytest
from conftest import H100, MI300X, snapshot_dict

from gpudash.cli import main
from gpudash.devices import discover
from gpudash.devices.machine import Machine
from gpudash.errors import EXIT_USAGE
from gpudash.knowledge import peaks_for
from gpudash.measure import bench
from gpudash.measure.bench import Job, assemble
from gpudash.measure.calibration.compare import compare_profiles
from gpudash.measure.calibration.platform import mismatches, platform_of, presets_that_fit
from gpudash.measure.calibration.presets import PRESETS
from gpudash.measure.calibration.profile import CalibrationProfile, load_profile, save_profile
from gpudash.measure.calibration.report import profile_from_report
from gpudash.measure.runner import Task, TaskResult
from gpudash.models import DeviceInfo, Host, Runtime
from gpudash.precisions import PRECISIONS

CPU = DeviceInfo(
    vendor="cpu",
    index=0,
    name="Test CPU",
    multiprocessors=2,
    max_clock_mhz=2000,
    cpu_features=["avx2", "fma3", "avx512_f", "avx512_bf16", "avx512_vnni"],
    extra={"cpu_vendor": "AuthenticAMD", "cpu_family": "25", "cpu_model": "17"},
)
MACHINE = Machine(
    host=Host(hostname="box", machine="x86_64", os="Linux"), runtime=Runtime(torch="2.13.0+cpu"), devices=[CPU]
)


def _sweep_value(precision: str, gflops: dict) -> dict:
    """What the child's matmul sweep returns, for given per-shape rates (no device needed)."""
    cases = []
    for (m, n, k), g in gflops.items():
        median = 2.0 * m * n * k / g / 1e9
        cases.append(
            {
                "shape": [m, n, k],
                "status": "ok",
                "gflops": g,
                "median_s": median,
                "mean_s": median * 1.01,
                "min_s": median * 0.97,
                "p10_s": median * 0.98,
                "p90_s": median * 1.04,
                "reps": 12,
                "warmup_reps": 2,
                "budget_cut": False,
                "other_load": 0.02,
                "first_call_s": median * 3,
            }
        )
    return {
        "op": "matmul",
        "precision": precision,
        "device": "cpu",
        "torch": "2.13.0+cpu",
        "cases": cases,
        "stopped": None,
        "failure_reason": None,
        "dtypes": [precision, precision],
    }


def _report(rates: dict[str, dict]):
    jobs, results = [], []
    for p, gflops in rates.items():
        task = Task("x:y", name=p)
        jobs.append(Job(CPU.key, "matmul", p, task, len(gflops)))
        results.append(TaskResult(task, "ok", _sweep_value(p, gflops)))
    return assemble(CPU, jobs, results, list(rates), {}, "quick", 2.0, None, "2026-01-01T00:00:00+0000", 3.5)


SHAPES = ((512, 512, 512), (2048, 2048, 2048))
BEFORE = _report(
    {
        "fp32": {SHAPES[0]: 190.0, SHAPES[1]: 180.0},
        "bf16": {SHAPES[0]: 400.0, SHAPES[1]: 410.0},
        "int8": {SHAPES[0]: 750.0, SHAPES[1]: 840.0},
    }
)
AFTER = _report({"fp32": {SHAPES[0]: 200.0, SHAPES[1]: 185.0}, "bf16": {SHAPES[0]: 420.0, SHAPES[1]: 430.0}})


# Profiles ------------------------------------------------------------------------------------------


def test_profile_follows_the_seed_layout():
    data = profile_from_report(BEFORE, MACHINE).to_dict()
    meta = data["metadata"]
    assert meta["hardware_name"] == "Test CPU" and meta["calibration_date"] == "2026-01-01T00:00:00+0000"
    assert meta["device_type"] == "cpu" and meta["platform_architecture"] == "x86_64"
    assert meta["torch_version"] == "2.13.0+cpu" and meta["gpudash_version"]
    matrix = data["precision_matrix"]
    assert matrix["supported_precisions"] == ["fp32", "bf16", "int8"]
    assert matrix["peak_gflops_by_precision"] == {"fp32": 190.0, "bf16": 410.0, "int8": 840.0}
    assert matrix["speedup_vs_fp32"] == {"bf16": pytest.approx(410 / 190), "int8": pytest.approx(840 / 190)}
    assert data["theoretical_peak_gflops"] == matrix["theoretical_peaks"]["fp32"] == 2 * 2000 * 32 / 1000
    op = data["operation_profiles"]["matmul_2048x2048x2048"]
    assert op["operation_type"] == "matmul" and op["shape"] == [2048, 2048, 2048]
    bf16 = op["precision_results"]["bf16"]
    assert bf16["supported"] is True and bf16["measured_gflops"] == 410.0
    assert bf16["speedup_vs_fp32"] == pytest.approx(410 / 180)  # against fp32 at the same shape
    assert bf16["mean_latency_ms"] == pytest.approx(2 * 2048**3 / 410e9 * 1.01 * 1000)
    # 410 GFLOPS beats the estimated 256 (2 cores x 2000 MHz): the estimate is wrong, so no efficiency.
    assert matrix["theoretical_peaks"]["bf16"] < 410 and bf16["efficiency"] is None


def test_profile_round_trips_without_loss(tmp_path):
    profile = profile_from_report(BEFORE, MACHINE, preset="i7-12700k")
    path = tmp_path / "p.json"
    save_profile(profile, path)
    loaded = load_profile(path)
    assert loaded == profile
    assert loaded.to_dict() == json.loads(path.read_text())
    save_profile(loaded, tmp_path / "again.json")
    assert (tmp_path / "again.json").read_text() == path.read_text()
    assert CalibrationProfile.from_dict(profile.to_dict()) == profile


def test_compare_gives_the_speedup_table(tmp_path, capsys):
    rows = {
        r["precision"]: r
        for r in compare_profiles(profile_from_report(BEFORE, MACHINE), profile_from_report(AFTER, MACHINE))
    }
    assert rows["bf16"]["b_over_a"] == pytest.approx(430 / 410)
    assert rows["int8"]["b_gflops"] is None and rows["int8"]["b_over_a"] is None
    assert rows["fp32"]["a_speedup_vs_fp32"] == 1.0
    save_profile(profile_from_report(BEFORE, MACHINE), tmp_path / "a.json")
    save_profile(profile_from_report(AFTER, MACHINE), tmp_path / "b.json")
    assert main(["bench", "--compare", str(tmp_path / "a.json"), str(tmp_path / "b.json")]) == 0
    out = capsys.readouterr().out
    assert "B / A" in out
    bf16_line = next(line for line in out.splitlines() if line.startswith("bf16"))
    assert "410.0" in bf16_line and "430.0" in bf16_line and "1.05x" in bf16_line


def test_load_shows_a_profile(tmp_path, capsys):
    save_profile(profile_from_report(BEFORE, MACHINE), tmp_path / "a.json")
    assert main(["bench", "--load", str(tmp_path / "a.json")]) == 0
    out = capsys.readouterr().out
    assert "Test CPU · cpu on x86_64" in out
    int8_line = next(line for line in out.splitlines() if line.startswith("int8"))
    assert "840.0" in int8_line and "2048x2048x2048" in int8_line and "4.42x" in int8_line
    assert main(["bench", "--load", str(tmp_path / "a.json"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads((tmp_path / "a.json").read_text())


@pytest.mark.parametrize(
    "content, message",
    [
        ("{not json", "not a JSON profile"),
        ('{"format": "gpudash-snapshot"}', "not a gpudash profile"),
        ('{"format": "gpudash-profile", "metadata": {"hardware_name": "x"}}', "profile has no 'precision_matrix'"),
        ('{"format": "gpudash-profile", "metadata": {}, "precision_matrix": {}}', "metadata has no 'hardware_name'"),
    ],
)
def test_unreadable_profiles_are_one_line_errors(tmp_path, capsys, content, message):
    path = tmp_path / "bad.json"
    path.write_text(content)
    assert main(["bench", "--load", str(path)]) == EXIT_USAGE
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"gpudash: error: {path}: ") and message in err[0]


def test_load_and_compare_together_is_a_usage_error(capsys):
    assert main(["bench", "--load", "a", "--compare", "b", "c"]) == 2
    assert "--load and --compare" in capsys.readouterr().err


# Presets -------------------------------------------------------------------------------------------


def test_the_seed_presets_and_a100_mi300x_exist():
    expected = {
        "h100-sxm5": ("cuda", "x86_64"),
        "jetson-orin-agx": ("cuda", "aarch64"),
        "jetson-orin-nano": ("cuda", "aarch64"),
        "i7-12700k": ("cpu", "x86_64"),
        "ampere-altra-max": ("cpu", "aarch64"),
        "a100": ("cuda", "x86_64"),
        "mi300x": ("cuda", "x86_64"),
    }
    assert {name: (p.device, p.platform) for name, p in PRESETS.items()} == expected
    for p in PRESETS.values():
        assert p.theoretical_peaks["fp32"] > 0 and p.provenance in ("spec", "estimated") and p.basis


def test_orin_nano_preset_corrects_the_seed():
    """The seed gave 1000/2000/4000 GFLOPS (fp32/fp16/int8) "from 32 Tensor Cores @ 625 MHz". fp32 runs on the
    1024 CUDA cores: 1024 x 2 x 625 MHz = 1280; the tensor cores do 2048 fp16 and 4096 int8 per SM per clock
    (A100 rates from its datasheet), 8 SMs: 10240 and 20480 dense (NVIDIA's 40 TOPS is sparse int8)."""
    nano = PRESETS["jetson-orin-nano"].theoretical_peaks
    seed = {"fp32": 1000.0, "fp16": 2000.0, "int8": 4000.0}
    assert nano["fp32"] == 1024 * 2 * 625 / 1000 != seed["fp32"]
    assert nano["fp16"] == 8 * 625 * 2048 / 1000 != seed["fp16"]
    assert nano["int8"] == 8 * 625 * 4096 / 1000 != seed["int8"]
    assert nano["int8"] * 2 / 1000 == pytest.approx(40, rel=0.05)  # the vendor's sparse TOPS figure


@pytest.mark.parametrize("preset, snapshot", [("h100-sxm5", H100), ("mi300x", MI300X)])
def test_datasheet_presets_agree_with_the_reference_tables(preset, snapshot):
    device = DeviceInfo(
        vendor=snapshot["vendor"],
        index=0,
        name=snapshot["name"],
        compute_capability=snapshot["compute_capability"],
        gfx_target=snapshot["gfx_target"],
    )
    tables = {p: pk.gflops for p, pk in peaks_for(device).items()}
    for p, gflops in PRESETS[preset].theoretical_peaks.items():
        assert gflops == pytest.approx(tables[p], rel=0.002), p


def test_a100_preset_matches_the_reference():
    a100 = PRESETS["a100"].theoretical_peaks
    assert (a100["fp32"], a100["tf32"], a100["bf16"], a100["int8"]) == (19_500, 156_000, 312_000, 624_000)
    assert "fp8_e4m3" not in a100


def test_platform_check_lists_the_presets_that_fit():
    facts = platform_of(MACHINE, CPU)
    assert (facts.architecture, facts.device) == ("x86_64", "cpu")
    assert presets_that_fit(facts) == ["i7-12700k"]
    assert (
        mismatches(PRESETS["jetson-orin-nano"], facts)[0]
        == "is designed for aarch64 architecture, but you are running on x86_64"
    )


def test_preset_for_another_platform_stops_with_the_seed_message(no_vendor_libs, monkeypatch, capsys):
    monkeypatch.setattr(bench, "run_tasks", lambda *a, **k: pytest.fail("nothing may run on a mismatch"))
    machine = discover(include_torch=False)
    assert main(["bench", "--preset", "jetson-orin-nano"]) == 1  # as the calibration seed's tool exits
    err = capsys.readouterr().err
    assert "ERROR: Platform Mismatch!" in err
    assert (
        f"Preset 'jetson-orin-nano' is designed for aarch64 architecture, but you are running on "
        f"{machine.host.machine}." in err
    )
    assert "This will produce incorrect calibration data!" in err
    assert "Available presets for your platform:\n  - i7-12700k" in err
    last = err.strip().splitlines()[-1]
    assert last.startswith("gpudash: error: --preset jetson-orin-nano: platform mismatch") and "Traceback" not in err


def test_gpu_preset_checks_the_vendor(tmp_path, capsys):
    path = tmp_path / "h100.json"
    path.write_text(json.dumps(snapshot_dict(H100)))
    assert main(["--replay", str(path), "bench", "--preset", "mi300x"]) == 1
    err = capsys.readouterr().err
    assert "Preset 'mi300x' is for an AMD GPU, but NVIDIA H100 80GB HBM3 is NVIDIA." in err
    assert "  - h100-sxm5" in err and "  - a100" in err and "  - mi300x" not in err


def test_skip_platform_check_overrides_with_a_warning(h100_snapshot, capsys):
    assert (
        main(
            ["--replay", str(h100_snapshot), "bench", "--preset", "jetson-orin-nano", "--skip-platform-check", "--json"]
        )
        == 0
    )
    captured = capsys.readouterr()
    assert "gpudash: warning: --skip-platform-check: preset 'jetson-orin-nano' is designed for aarch64" in captured.err
    dev = json.loads(captured.out)["devices"][0]
    assert dev["theoretical_peaks"]["fp32"] == 1280.0
    assert dev["peak_provenance"]["fp32"]["provenance"] == "estimated"
    assert dev["peak_provenance"]["fp32"]["basis"].startswith("preset jetson-orin-nano: ")


def test_fitting_preset_supplies_the_peaks(h100_snapshot, capsys):
    assert main(["--replay", str(h100_snapshot), "bench", "--preset", "h100-sxm5", "--json"]) == 0
    captured = capsys.readouterr()
    assert "warning" not in captured.err and "Mismatch" not in captured.err
    data = json.loads(captured.out)
    assert data["preset"] == "h100-sxm5"
    dev = data["devices"][0]
    assert dev["theoretical_peaks"]["fp8_e4m3"] == 1_978_900.0
    assert dev["peak_provenance"]["fp8_e4m3"]["basis"].startswith("preset h100-sxm5: ")


def test_preset_list(capsys):
    assert main(["bench", "--preset", "list"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in PRESETS)


# The calibration document's own layout, and older profiles ---------------------------------------

SEED_PROFILE = {  # the "Generated Profile Structure" example of the calibration document, as it writes it
    "metadata": {
        "hardware_name": "NVIDIA-Jetson-Orin-Nano-8GB",
        "calibration_date": "2025-11-15T10:00:00",
        "device_type": "cuda",
        "platform_architecture": "aarch64",
    },
    "theoretical_peak_gflops": 1000.0,
    "precision_matrix": {
        "hardware_name": "NVIDIA-Jetson-Orin-Nano-8GB",
        "supported_precisions": ["fp32", "fp16", "int8"],
        "unsupported_precisions": ["fp64", "bf16", "fp8_e4m3"],
        "peak_gflops_by_precision": {"fp32": 950.2, "fp16": 1850.5, "int8": 3720.1},
        "speedup_vs_fp32": {"fp16": 1.95, "int8": 3.92},
        "theoretical_peaks": {"fp32": 1000.0, "fp16": 2000.0, "int8": 4000.0},
    },
    "operation_profiles": {
        "matmul_1024_large": {
            "operation_type": "matmul",
            "precision_results": {
                "fp32": {"precision": "fp32", "supported": True, "measured_gflops": 950.2, "efficiency": 0.950},
                "fp16": {"precision": "fp16", "supported": True, "measured_gflops": 1850.5, "efficiency": 0.925},
                "fp64": {"precision": "fp64", "supported": False, "failure_reason": "No FP64 on Ampere GPU"},
            },
        }
    },
}


def _rows(out: str) -> dict[str, str]:
    return {line.split()[0]: line for line in out.splitlines() if line.split() and line.split()[0] in PRECISIONS}


def test_a_profile_in_the_calibration_layout_loads_and_shows_its_figures(tmp_path, capsys):
    path = tmp_path / "orin.json"
    path.write_text(json.dumps(SEED_PROFILE))
    assert main(["bench", "--load", str(path)]) == 0
    out = capsys.readouterr().out
    rows = _rows(out)
    assert "950.2" in rows["fp32"] and "95%" in rows["fp32"] and "1,000" in rows["fp32"]
    assert "1,850.5" in rows["fp16"] and "1.95x" in rows["fp16"]
    assert "3,720.1" in rows["int8"] and "3.92x" in rows["int8"] and "93%" in rows["int8"]  # 3720.1 / 4000
    assert "No FP64 on Ampere GPU" in out and "gpudash not recorded" in out and "2025-11-15T10:00:00" in out
    # with a "format" key added it is the same profile
    path.write_text(json.dumps({"format": "gpudash-profile", **SEED_PROFILE}))
    assert main(["bench", "--load", str(path)]) == 0
    assert _rows(capsys.readouterr().out) == rows


def test_an_older_profile_without_a_precision_matrix_loads(tmp_path, capsys):
    older = {k: v for k, v in SEED_PROFILE.items() if k != "precision_matrix"}
    path = tmp_path / "old.json"
    path.write_text(json.dumps(older))
    profile = load_profile(path)
    assert profile.precision_matrix.peak_gflops_by_precision == {"fp32": 950.2, "fp16": 1850.5}
    assert profile.precision_matrix.speedup_vs_fp32 == {"fp16": pytest.approx(1850.5 / 950.2)}
    assert profile.precision_matrix.unsupported_precisions == ["fp64"]
    assert main(["bench", "--load", str(path)]) == 0
    rows = _rows(capsys.readouterr().out)
    assert "950.2" in rows["fp32"] and "1,000" in rows["fp32"]  # theoretical_peak_gflops is the fp32 peak


def test_a_file_in_neither_layout_is_refused(tmp_path, capsys):
    path = tmp_path / "x.json"
    path.write_text(json.dumps({"metadata": {"hardware_name": "x"}, "results": []}))
    assert main(["bench", "--load", str(path)]) == 2  # bad input
    assert "not a gpudash profile" in capsys.readouterr().err


def test_preset_peaks_are_never_blanked_by_the_live_estimates():
    """The live CPU beating its own estimated bf16 peak says nothing about the named part's figures."""
    from gpudash.measure.calibration.presets import PRESETS

    preset = PRESETS["i7-12700k"]
    rates = {"fp32": {SHAPES[0]: 190.0}, "bf16": {SHAPES[0]: 400.0}, "int8": {SHAPES[0]: 840.0}}
    jobs, results = [], []
    for p, gflops in rates.items():
        task = Task("x:y", name=p)
        jobs.append(Job(CPU.key, "matmul", p, task, 1))
        results.append(TaskResult(task, "ok", _sweep_value(p, gflops)))
    report = assemble(CPU, jobs, results, list(rates), {}, "quick", 2.0, preset.peaks(), "2026-01-01T00:00:00+0000", 1)
    got = report.matrix.results
    assert got["fp32"].efficiency == pytest.approx(190.0 / 1433.6)  # against the preset's own fp32 peak
    assert got["int8"].efficiency == pytest.approx(840.0 / 5734.4)
    assert got["bf16"].efficiency is None and "bf16" not in report.matrix.theoretical_peaks  # the preset has none
    assert not any(info.get("too_low") for info in report.peak_provenance.values())
    # without the preset the same figures beat this CPU's estimates, which are then not shown
    plain = assemble(CPU, jobs, results, list(rates), {}, "quick", 2.0, None, "2026-01-01T00:00:00+0000", 1)
    assert plain.matrix.results["fp32"].efficiency is None


@pytest.mark.parametrize(
    ("where", "value"),
    [
        (("precision_matrix", "speedup_vs_fp32"), None),
        (("precision_matrix", "speedup_vs_fp32"), True),
        (("precision_matrix", "peak_gflops_by_precision"), ["fp32"]),
        (("operation_profiles", "matmul_1024_large", "precision_results", "fp32", "measured_gflops"), "fast"),
    ],
)
def test_a_calibration_layout_profile_with_a_wrong_type_is_one_line(tmp_path, capsys, where, value):
    """The calibration layout is not checked by gpudash's schema (it lacks what gpudash writes), but once filled
    in, its fields are: a wrong type is one line naming the field and exit 2, never a traceback."""
    broken = json.loads(json.dumps(SEED_PROFILE))
    node = broken
    for key in where[:-1]:
        node = node[key]
    node[where[-1]] = value
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(broken))
    assert main(["bench", "--load", str(path)]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{path}: damaged profile:" in err and where[-1] in err
