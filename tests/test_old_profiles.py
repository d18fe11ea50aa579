"""Issue 22: profiles in the older layouts of the calibration seed's source project (branes-ai/graphs,
src/graphs/hardware/calibration/profiles/) load and show their figures.

OLD is that project's intel_i7_12700k.json of 2025-11-15, cut to three of its operations: `"precision_matrix":
null`, figures per operation, empty precision_results (its numpy matmul measured float32). GOPS is its
intel_i7_12700k_numpy.json of 2025-11-17, cut to one operation: per-precision results named `measured_gops`,
with int32 and int16 (no gpudash precision)."""

import json

import pytest

from gpudash.cli import main
from gpudash.contracts.validation import problems
from gpudash.measure.calibration.profile import load_profile

OLD = {
    "metadata": {
        "hardware_name": "Intel-i7-12700K",
        "calibration_date": "2025-11-15T10:10:13.170079",
        "calibration_tool_version": "1.0.0",
        "pytorch_version": "2.7.1+cu126",
        "num_measurement_runs": 10,
        "device_type": "cpu",
        "platform_architecture": "x86_64",
    },
    "theoretical_peak_gflops": 720.0,
    "theoretical_bandwidth_gbps": 75.0,
    "best_measured_gflops": 824.977322896147,
    "operation_profiles": {
        "add_operation=memory_copy_size_mb=256": {
            "operation_type": "add",
            "measured_gflops": 0.0,
            "efficiency": 0.7173577556993803,
            "achieved_bandwidth_gbps": 53.80183167745352,
            "memory_bound": True,
            "input_shape": [67108864],
            "output_shape": [67108864],
            "mean_latency_ms": 9.978673499790602,
            "num_trials": 10,
            "extra_params": {"size_mb": 256, "operation": "memory_copy"},
            "precision_results": {},
        },
        "matmul_cpp_gflops=None_implementation=numpy_blas_matrix_size=512_small": {
            "operation_type": "matmul",
            "measured_gflops": 569.7459363463455,
            "efficiency": 0.7913138004810354,
            "input_shape": [512, 512],
            "output_shape": [512, 512],
            "mean_latency_ms": 0.47114939989114646,
            "num_trials": 10,
            "extra_params": {"matrix_size": 512, "implementation": "numpy_blas", "cpp_gflops": None},
            "precision_results": {},
        },
        "matmul_cpp_gflops=None_implementation=numpy_blas_matrix_size=4096_large": {
            "operation_type": "matmul",
            "measured_gflops": 824.977322896147,
            "efficiency": 1.1458018373557597,
            "input_shape": [4096, 4096],
            "output_shape": [4096, 4096],
            "mean_latency_ms": 166.59725020017504,
            "num_trials": 10,
            "precision_results": {},
        },
    },
    "fusion_profiles": {},
    "precision_matrix": None,
}


def _gops(precision: str, gops: float) -> dict:
    return {"precision": precision, "supported": True, "failure_reason": None, "measured_gops": gops, "num_trials": 10}


GOPS = {
    "metadata": {"hardware_name": "Intel-i7-12700K", "calibration_date": "2025-11-17T09:30:49.397970"},
    "theoretical_peak_gflops": 720.0,
    "operation_profiles": {
        "matmul_device=cpu_matrix_size=32_small": {
            "operation_type": "matmul",
            "measured_gflops": 23.50982781393844,
            "input_shape": [32, 32],
            "output_shape": [32, 32],
            "precision_results": {
                "fp64": _gops("fp64", 12.525514511104976),
                "fp32": _gops("fp32", 23.50982781393844),
                "int32": _gops("int32", 2.646144392542765),
                "int8": _gops("int8", 2.7593640490469378),
            },
        }
    },
    "fusion_profiles": {},
    "precision_matrix": {
        "hardware_name": "Intel-i7-12700K",
        "supported_precisions": ["fp64", "fp32", "int32", "int8"],
        "unsupported_precisions": ["fp8_e4m3"],
        "peak_gflops_by_precision": {"fp64": 12.525514511104976, "fp32": 23.50982781393844, "int8": 2.7593640490469378},
        "speedup_vs_fp32": {"fp64": 0.5327778072317011, "fp32": 1.0, "int8": 0.11737066178812991},
        "theoretical_peaks": {"fp64": 360.0, "fp32": 720.0, "int8": 1440.0},
    },
}


def _problems_beside_the_date(printed: str) -> list[str]:
    """What --json shows keeps the profile contract, but for the file's own calibration_date, which the source
    project wrote without an offset (kept as written: gpudash does not know the zone it was measured in)."""
    data = json.loads(printed)
    data["metadata"]["calibration_date"] = data["precision_matrix"]["measured_at"] = None
    return problems("profile", data, limit=5)


def _rows(out: str) -> dict[str, str]:
    return {line.split()[0]: line for line in out.splitlines() if line.split()}


def test_a_profile_with_a_null_matrix_and_figures_per_operation_shows_them(tmp_path, capsys):
    path = tmp_path / "intel_i7_12700k.json"
    path.write_text(json.dumps(OLD))
    profile = load_profile(path)
    fp32 = profile.precision_matrix.results["fp32"]
    assert fp32.measured_gflops == pytest.approx(824.977322896147)  # the best of its matmul operations
    assert fp32.efficiency == pytest.approx(1.1458018373557597)  # the file's own figure
    assert fp32.details["best_shape"] == [4096, 4096, 4096]
    assert profile.precision_matrix.theoretical_peaks == {"fp32": 720.0}
    assert profile.metadata.torch_version == "2.7.1+cu126"
    assert main(["bench", "--load", str(path)]) == 0
    out = capsys.readouterr().out
    rows = _rows(out)
    assert "825.0" in rows["fp32"] and "4096x4096x4096" in rows["fp32"] and "115%" in rows["fp32"]
    assert "memory add: best 53.8 GB/s (256 MB), 72% of the file's 75 GB/s theoretical" in out
    assert main(["bench", "--load", str(path), "--json"]) == 0
    assert _problems_beside_the_date(capsys.readouterr().out) == []


def test_per_precision_results_named_gops_show_and_unknown_precisions_are_noted(tmp_path, capsys):
    path = tmp_path / "numpy.json"
    path.write_text(json.dumps(GOPS))
    assert main(["bench", "--load", str(path)]) == 0
    out = capsys.readouterr().out
    rows = _rows(out)
    assert "12.5" in rows["fp64"] and "23.5" in rows["fp32"] and "2.8" in rows["int8"]
    assert "int32" not in rows and "int32 2.6 GOPS in the file; gpudash has no int32 precision" in out
    assert main(["bench", "--load", str(path), "--json"]) == 0
    assert _problems_beside_the_date(capsys.readouterr().out) == []


def test_a_null_matrix_with_a_damaged_figure_is_still_one_line(tmp_path, capsys):
    broken = json.loads(json.dumps(OLD))
    broken["operation_profiles"]["matmul_cpp_gflops=None_implementation=numpy_blas_matrix_size=512_small"][
        "measured_gflops"
    ] = "fast"
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(broken))
    code = main(["bench", "--load", str(path)])
    err = capsys.readouterr().err
    assert code != 0 and err.count("\n") == 1 and str(path) in err and "Traceback" not in err
