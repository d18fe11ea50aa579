"""MAMF references (issue 22 item 6): the published best measured matmul of a part, looked up only for a part the
peak tables identify, shown beside "% of spec peak" in info, bench, the export, the Benchmarks view and serve."""

from __future__ import annotations

from pathlib import Path

import jsonschema
import pytest
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families
from textual.widgets import DataTable, Static
from tui_helpers import no_torch, wait_until

from gpudash.config import defaults
from gpudash.contracts import schema
from gpudash.devices import discover
from gpudash.exporter import mamf as mamf_metrics
from gpudash.exporter import registry_for
from gpudash.exporter.remembered import Results
from gpudash.exporter.scrape import Scrape
from gpudash.info import info_json
from gpudash.knowledge import arch_for
from gpudash.knowledge.mamf import ROWS, SOURCE, mamf_for, of_mamf
from gpudash.knowledge.peak_tables import PARTS
from gpudash.measure import bench
from gpudash.measure.schema import PrecisionCapabilityMatrix, PrecisionTestResult
from gpudash.models import DeviceInfo
from gpudash.recommend import Facts, recommend
from gpudash.render.bench import HEADER, render
from gpudash.render.info import render as render_info
from gpudash.tui.app import create_app

SNAPSHOTS = Path(__file__).resolve().parent.parent / "examples" / "snapshots"
REPLAYED = {"h100-80gb.json": 794.5, "a100-80gb.json": 271.2, "mi300x.json": 668.4}


def _device(name: str, vendor: str = "nvidia", units: int | None = None, cc: str | None = "9.0") -> DeviceInfo:
    gfx = "gfx942" if vendor == "amd" else None
    return DeviceInfo(vendor, 0, name, compute_capability=None if gfx else cc, gfx_target=gfx, multiprocessors=units)


def _figures(device: DeviceInfo) -> dict[str, float]:
    return {p: row.tflops for p, row in mamf_for(device).items()}


# The table, as ml-engineering prints it --------------------------------------------------------------------------


def test_the_rows_are_the_published_figures_and_name_parts_of_the_peak_tables():
    published = {
        ("NVIDIA H100 SXM", "bf16"): 794.5,
        ("NVIDIA A100 SXM", "bf16"): 271.2,
        ("NVIDIA A100 PCIe", "bf16"): 252.9,
        ("NVIDIA GH200 SXM", "bf16"): 828.6,
        ("NVIDIA B200 SXM", "bf16"): 1745.0,
        ("NVIDIA B300 SXM", "bf16"): 1769.0,
        ("NVIDIA GB200 SXM", "bf16"): 1822.0,
        ("AMD MI300X", "bf16"): 668.4,
        ("AMD MI325X", "bf16"): 784.9,
        ("AMD MI355X", "bf16"): 1565.0,
        ("NVIDIA H100 SXM", "fp8_e4m3"): 1402.6,
        ("NVIDIA H200 SXM", "fp8_e4m3"): 1453.4,
        ("NVIDIA GH200 SXM", "fp8_e4m3"): 1535.0,
        ("NVIDIA B200 SXM", "fp8_e4m3"): 3432.5,
        ("NVIDIA B300 SXM", "fp8_e4m3"): 3353.3,
        ("NVIDIA GB200 SXM", "fp8_e4m3"): 3615.6,
    }
    assert {(r.accelerator, r.precision): r.tflops for r in ROWS} == published
    labels = {p.label for p in PARTS}
    for row in ROWS:
        assert set(row.parts) <= labels, row
        assert 0.5 < row.tflops / row.theory_tflops < 1.0  # every figure is below the spec it was compared with
        if row.accelerator.startswith("AMD"):
            assert "PYTORCH_TUNABLEOP_ENABLED" in row.notes  # the source's condition that matters most on ROCm
    assert SOURCE.startswith("https://github.com/stas00/ml-engineering/")


@pytest.mark.parametrize(
    ("name", "vendor", "units", "expected"),
    [
        ("NVIDIA H100 80GB HBM3", "nvidia", 132, {"bf16": 794.5, "fp8_e4m3": 1402.6}),
        ("NVIDIA H100 PCIe", "nvidia", 114, {}),  # an H100 PCIe is not an H100 SXM
        ("NVIDIA H100 NVL", "nvidia", 132, {}),
        ("NVIDIA H200", "nvidia", 132, {"bf16": 794.5, "fp8_e4m3": 1453.4}),  # bf16: "H200 is the same"
        ("NVIDIA A100-SXM4-80GB", "nvidia", 108, {"bf16": 271.2}),
        ("NVIDIA A100-SXM4-40GB", "nvidia", 108, {"bf16": 271.2}),
        ("NVIDIA A100-PCIE-40GB", "nvidia", 108, {"bf16": 252.9}),
        ("NVIDIA A100 80GB PCIe", "nvidia", 108, {"bf16": 252.9}),
        ("NVIDIA A100", "nvidia", 108, {}),  # SXM or PCIe: not guessed
        ("NVIDIA GH200 144G HBM3e", "nvidia", 132, {"bf16": 828.6, "fp8_e4m3": 1535.0}),
        ("NVIDIA GH200 480GB", "nvidia", 132, {}),  # the 96 GB or the 144 GB module: not guessed
        ("NVIDIA B200", "nvidia", 148, {"bf16": 1745.0, "fp8_e4m3": 3432.5}),
        ("NVIDIA GB200", "nvidia", 152, {"bf16": 1822.0, "fp8_e4m3": 3615.6}),
        ("AMD Instinct MI300X", "amd", 304, {"bf16": 668.4}),  # the source's fp8 row is blank
        ("AMD Instinct MI300X", "amd", 38, {}),  # a CPX partition is not the part that was measured
        ("AMD Instinct MI325X", "amd", 304, {"bf16": 784.9}),
        ("AMD Instinct MI355X", "amd", 256, {"bf16": 1565.0}),
        ("AMD Instinct MI300A", "amd", 228, {}),
        ("NVIDIA GeForce RTX 4090", "nvidia", 128, {}),
    ],
)
def test_a_device_gets_the_figures_of_its_identified_part_only(name, vendor, units, expected):
    assert _figures(_device(name, vendor, units)) == expected


def test_of_mamf_is_measured_over_the_best_measured_and_refuses_what_is_not_a_figure():
    row = next(r for r in ROWS if r.accelerator == "NVIDIA H100 SXM" and r.precision == "bf16")
    assert of_mamf(794_500.0, row) == pytest.approx(1.0)
    assert of_mamf(397_250.0, {"tflops": 794.5}) == pytest.approx(0.5)
    for bad in (None, True, "700", 0.0, -1.0):
        assert of_mamf(bad, row) is None


# The replayed H100, A100 and MI300X: info, bench, the Benchmarks view ---------------------------------------------


@pytest.mark.parametrize("snapshot", sorted(REPLAYED))
def test_info_shows_the_mamf_of_a_replayed_part(snapshot):
    machine = discover(str(SNAPSHOTS / snapshot), include_torch=False)
    data = info_json(machine)
    jsonschema.validate(data, schema("info"))
    ref = data["devices"][0]["mamf"]["bf16"]
    assert ref["tflops"] == REPLAYED[snapshot] and ref["source"] == SOURCE and ref["torch"]
    line = next(line for line in render_info(data).splitlines() if line.startswith("MAMF"))
    assert f"bf16 {REPLAYED[snapshot]:,.1f} TFLOPS" in line and SOURCE in line
    if snapshot == "mi300x.json":
        assert "PYTORCH_TUNABLEOP_ENABLED=1" in line  # the condition the AMD figure was measured under


def test_info_gives_an_empty_mamf_for_a_part_with_none():
    data = info_json(discover(str(SNAPSHOTS / "rtx-3060.json"), include_torch=False))
    jsonschema.validate(data, schema("info"))
    assert all(dev["mamf"] == {} for dev in data["devices"])
    assert not any(line.startswith("MAMF") for line in render_info(data).splitlines())


@pytest.mark.parametrize("snapshot", sorted(REPLAYED))
def test_bench_of_a_replayed_part_shows_the_mamf_column(snapshot):
    machine = discover(str(SNAPSHOTS / snapshot), include_torch=False)
    data = bench.bench_json(machine, bench.bench_machine(machine), "quick")
    jsonschema.validate(data, schema("bench"))
    dev = data["devices"][0]
    assert dev["mamf"]["bf16"]["tflops"] == REPLAYED[snapshot] and dev["mamf"]["bf16"]["of_mamf"] is None
    text = render(data)
    column = HEADER.index("% of MAMF")
    assert HEADER[column - 1] == "peak (provenance)"  # beside % of spec peak
    assert f"MAMF {REPLAYED[snapshot] * 1000:,.0f}" in text
    assert any(
        line.startswith("MAMF (best measured matmul, published") and SOURCE in line for line in text.splitlines()
    )


def test_a_measured_figure_is_shown_as_a_share_of_the_mamf():
    machine = discover(str(SNAPSHOTS / "h100-80gb.json"), include_torch=False)
    data = bench.bench_json(machine, bench.bench_machine(machine), "quick")
    dev = data["devices"][0]
    dev["precisions"]["bf16"].update(supported=True, measured_gflops=635_600.0, failure_reason=None)
    device = machine.devices[0]
    from gpudash.measure.bench.peaks import mamf_references

    dev["mamf"] = mamf_references(device, dev["precisions"])
    assert dev["mamf"]["bf16"]["of_mamf"] == pytest.approx(0.8)
    assert dev["mamf"]["fp8_e4m3"]["of_mamf"] is None  # not measured in this run
    row = next(line for line in render(data).splitlines() if line.startswith("bf16 "))
    assert "80% of 794,500" in row


def test_a_bench_entry_without_mamf_still_renders():
    """Runs kept before this key existed, and parts with no figure: the column is a dash."""
    machine = discover(str(SNAPSHOTS / "rtx-3060.json"), include_torch=False)
    data = bench.bench_json(machine, bench.bench_machine(machine), "quick")
    assert "mamf" not in data["devices"][0]
    jsonschema.validate(data, schema("bench"))
    assert "MAMF" not in render(data).replace("% of MAMF", "")


async def test_the_benchmarks_view_shows_the_mamf_of_a_replayed_mi300x():
    app = create_app(
        discover(replay=str(SNAPSHOTS / "mi300x.json"), include_torch=False), defaults(), add_torch_view=no_torch
    )
    async with app.run_test(size=(150, 50)) as pilot:
        await pilot.press("b")
        await wait_until(
            pilot, lambda: bool(app.query("#bench-table")) and app.query_one("#bench-table", DataTable).row_count > 0
        )
        table = app.query_one("#bench-table", DataTable)
        rows = {str(table.get_row_at(i)[0]): [str(c) for c in table.get_row_at(i)] for i in range(table.row_count)}
        assert rows["bf16"][HEADER.index("% of MAMF")] == "MAMF 668,400"
        assert rows["fp32"][HEADER.index("% of MAMF")] == "–"
        notes = str(app.query_one("#bench-notes", Static).render())
        assert "AMD MI300X" in notes and "PYTORCH_TUNABLEOP_ENABLED=1" in notes


# serve --------------------------------------------------------------------------------------------------------------


def _samples(text: str, name: str) -> list:
    return [s for f in text_string_to_metric_families(text) for s in f.samples if s.name == name]


@pytest.mark.parametrize("snapshot", sorted(REPLAYED))
def test_serve_publishes_the_mamf_reference_of_a_replayed_part(snapshot):
    machine = discover(str(SNAPSHOTS / snapshot), include_torch=False)
    registry, _ = registry_for(machine, defaults(), telemetry=False)
    found = _samples(generate_latest(registry).decode(), "gpudash_matmul_mamf_reference_flops_per_second")
    bf16 = [s for s in found if s.labels["precision"] == "bf16"]
    assert len(bf16) == 1 and bf16[0].value == pytest.approx(REPLAYED[snapshot] * 1e12)
    assert bf16[0].labels["source"] == SOURCE and bf16[0].labels["torch"]


def test_serve_publishes_a_remembered_measurement_over_the_mamf():
    machine = discover(str(SNAPSHOTS / "h100-80gb.json"), include_torch=False)
    device = machine.devices[0]
    run = {
        "devices": [
            {
                "key": device.key,
                "replayed": False,
                "measured_at": "2026-11-20T10:00:00+0000",
                "precisions": {"bf16": {"supported": True, "measured_gflops": 715_050.0}},
            }
        ]
    }
    scrape = Scrape(machine, "node", {}, Results(bench_runs=[run]), defaults())
    families = {f.name: f for f in mamf_metrics.families(scrape)}
    ratio = {s.labels["precision"]: s.value for s in families["gpudash_bench_matmul_mamf_ratio"].samples}
    assert ratio == {"bf16": pytest.approx(0.9)}  # fp8 has a reference but no measurement: no ratio
    refs = {s.labels["precision"] for s in families["gpudash_matmul_mamf_reference_flops_per_second"].samples}
    assert refs == {"bf16", "fp8_e4m3"}


# the export --------------------------------------------------------------------------------------------------------


def _facts(bf16_gflops: float, speedup: float) -> Facts:
    device = discover(str(SNAPSHOTS / "h100-80gb.json"), include_torch=False).devices[0]
    results = {
        "fp32": PrecisionTestResult("fp32", True, measured_gflops=60_000.0, speedup_vs_fp32=1.0),
        "bf16": PrecisionTestResult("bf16", True, measured_gflops=bf16_gflops, speedup_vs_fp32=speedup),
    }
    matrix = PrecisionCapabilityMatrix(
        device.name, device=device.key, results=results, speedup_vs_fp32={"fp32": 1.0, "bf16": speedup}
    )
    return Facts(device=device, arch=arch_for(device), bench=matrix, bench_mode="quick")


def test_the_export_cites_the_benchmark_figure_against_the_mamf():
    settings = recommend(_facts(700_000.0, 11.7))
    assert any(
        "bf16 benchmark best 700,000 GFLOPS = 88% of the best measured on NVIDIA H100 SXM" in n for n in settings.notes
    )


def test_a_reason_that_cites_the_benchmark_gets_the_mamf_beside_it():
    """A contended bf16 run (0.9x fp32 on an H100) shows for what it is: 7% of what the part reaches."""
    reason = recommend(_facts(54_000.0, 0.9)).get("amp.dtype").reason
    assert "benchmark" in reason and "= 7% of the best measured on NVIDIA H100 SXM (MAMF 794.5 TFLOPS" in reason


def test_the_export_says_nothing_of_mamf_without_a_benchmark():
    facts = _facts(700_000.0, 11.7)
    facts.bench = None
    settings = recommend(facts)
    assert not any("MAMF" in n for n in settings.notes)
    assert not any("MAMF" in s.reason for _, s in settings.items())


def test_docs_record_every_row_with_its_source():
    """docs/peak-sources.md, "MAMF references": one table row per ROWS entry, same figures and conditions."""
    doc = (Path(__file__).resolve().parent.parent / "docs" / "peak-sources.md").read_text(encoding="utf-8")
    section = doc.split("## MAMF references", 1)[1].split("\n## ", 1)[0]
    assert SOURCE in section and "744d01e18b79512572f64a6bbd8b5f4a725203a7" in section
    recorded = [
        [c.strip() for c in line.strip("|").split("|")]
        for line in section.splitlines()
        if line.startswith("| ") and not line.startswith("| source row")
    ]
    expected = [
        [
            r.accelerator,
            r.precision,
            str(r.tflops),
            f"{r.theory_tflops:g}",
            "x".join(map(str, r.shape)),
            r.torch,
            "; ".join(x for x in (r.notes, r.also) if x) or "–",
            ", ".join(r.parts),
        ]
        for r in ROWS
    ]
    assert recorded == expected
