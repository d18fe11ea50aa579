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
