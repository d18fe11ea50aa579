"""`gpudash bench` runs plugin benchmarks too, beside the built-in sweep, never mixed into it."""

import json

from gpudash.actions.bench import attach
from gpudash.cli import main
from gpudash.render.bench import plugin_lines


def test_plugin_results_are_attached_per_device_and_follow_too_low_peaks():
    data = {
        "devices": [
            {
                "key": "cpu:0",
                "peak_provenance": {
                    "bf16": {"provenance": "estimated", "too_low": True},
                    "fp32": {"provenance": "estimated"},
                },
            },
            {"key": "nvidia:0"},
        ]
    }
    runs = {
        "cpu:0": [
            {
                "plugin": "p",
                "benchmark": "b",
                "status": "ok",
                "summary": "",
                "results": [
                    {"precision": "bf16", "op": "x", "shape": [4, 4, 4], "gflops": 9.0, "efficiency": 1.2},
                    {"precision": "fp32", "op": "x", "shape": [4, 4, 4], "gflops": 5.0, "efficiency": 0.5},
                ],
            }
        ]
    }
    attach(data, runs)
    results = data["devices"][0]["plugin_benchmarks"][0]["results"]
    assert [r["efficiency"] for r in results] == [None, 0.5]
    assert "plugin_benchmarks" not in data["devices"][1]
    text = "\n".join(plugin_lines(data["devices"][0]))
    assert "p/b" in text and "9.0" in text and "50%" in text


def test_replayed_bench_lists_plugin_benchmarks_as_not_run(capsys):
    from pathlib import Path

    snap = Path(__file__).resolve().parent.parent / "examples" / "snapshots" / "h100-80gb.json"
    assert main(["--replay", str(snap), "bench", "--json"]) == 0
    dev = json.loads(capsys.readouterr().out)["devices"][0]
    runs = dev["plugin_benchmarks"]
    assert {(r["plugin"], r["benchmark"]) for r in runs} >= {("adaptive_kernels", "adaptive_matmul")}
    assert all(r["status"] == "skip" and "replayed" in r["summary"] for r in runs)
    assert main(["--replay", str(snap), "bench", "--json", "--no-plugins"]) == 0
    assert "plugin_benchmarks" not in json.loads(capsys.readouterr().out)["devices"][0]


# Two benchmarks whose figures bracket any CPU's estimated peak: one far below it, one far above it.
BRACKETING_PLUGIN = """
from gpudash.plugins_api import Benchmark, BenchResult, hookimpl


class Modest(Benchmark):
    name = "modest"

    def run(self, device, budget_s):
        return [BenchResult("fp32", "modest", [1], 0.001, 1.0)]


class Impossible(Benchmark):
    name = "impossible"

    def run(self, device, budget_s):
        return [BenchResult("fp32", "impossible", [1], 1e12, 1.0), BenchResult("fp64", "impossible", [1], 0.001, 1.0)]


@hookimpl
def register_benchmarks(register):
    register(Modest(), Impossible())
"""


def test_a_plugin_figure_above_an_estimated_peak_gets_no_efficiency(no_vendor_libs, monkeypatch, tmp_path):
    """An estimated peak (the CPU formula on the clock the OS reports) that a plugin's figure exceeds is proved
    wrong: like the built-in sweep, gpudash then gives no efficiency against any estimated peak of that run,
    instead of one above 100 %. A figure below the estimate keeps its efficiency."""
    import pytest

    from gpudash.devices import discover
    from gpudash.knowledge import peaks_for
    from gpudash.plugin_manager import make_plugin_manager, run_benchmarks

    (tmp_path / "bracketing.py").write_text(BRACKETING_PLUGIN)
    monkeypatch.setenv("GPUDASH_LOAD_PLUGINS", "bracketing")
    machine = discover(include_torch=False)
    cpu = machine.devices[0]
    peaks = peaks_for(cpu)
    if "fp32" not in peaks or peaks["fp32"].provenance == "spec":
        pytest.skip("this CPU has no estimated fp32 peak")
    runs = run_benchmarks(machine, make_plugin_manager([tmp_path], on_error=None), devices=[cpu], budget_s=0.1)
    by_name = {r.benchmark: r for r in runs}
    assert by_name["modest"].results[0]["efficiency"] == pytest.approx(0.001 / peaks["fp32"].gflops)
    assert [r["efficiency"] for r in by_name["impossible"].results] == [None, None]
