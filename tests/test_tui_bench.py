"""The Benchmarks view with Pilot: a replayed snapshot (spec peaks, never run), saved runs, an injected run with
progress, cancel, the before/after comparison, plugin benchmarks beside the sweep, and the history a CLI run
keeps. The built-in sweep is injected (no real sweep runs here); a plugin benchmark runs for real."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest
from textual.widgets import DataTable, Static
from tui_helpers import no_torch, screen_text, wait_until

from gpudash.cli import main
from gpudash.config import defaults
from gpudash.devices import Machine, discover
from gpudash.measure import bench
from gpudash.measure.bench import Job, assemble, bench_json
from gpudash.measure.bench.store import append_run, saved_runs
from gpudash.measure.runner import Task, TaskResult
from gpudash.models import DeviceInfo, Host, Runtime
from gpudash.render.bench import HEADER
from gpudash.tui.app import create_app

SNAPSHOT = Path(__file__).resolve().parent.parent / "examples" / "snapshots" / "mi300x.json"
SAMPLES = Path(__file__).resolve().parent / "plugin_samples"
SIZE = (150, 50)
CPU = DeviceInfo(
    vendor="cpu",
    index=0,
    name="Test CPU",
    multiprocessors=2,
    max_clock_mhz=2000,
    cpu_features=["avx2", "fma3", "avx512_f", "avx512_bf16", "avx512_vnni"],
    sources=["cpu"],
    extra={"cpu_vendor": "AuthenticAMD", "cpu_family": "25", "cpu_model": "17"},
)


def status(app) -> str:
    return str(app.query_one("#bench-status", Static).render())


def _reports(rates: dict[str, dict[tuple, float]]) -> dict:
    """BenchReports as bench_machine would assemble them from the child's sweep results."""
    jobs, results = [], []
    for p, per_shape in rates.items():
        cases = []
        for (m, n, k), g in per_shape.items():
            t = 2.0 * m * n * k / g / 1e9
            cases.append(
                {
                    "shape": [m, n, k],
                    "status": "ok",
                    "gflops": g,
                    "median_s": t,
                    "mean_s": t,
                    "min_s": t,
                    "p10_s": t,
                    "p90_s": t * 1.1,
                    "reps": 9,
                    "warmup_reps": 2,
                    "budget_cut": False,
                    "other_load": 0.0,
                }
            )
        task = Task("x:y", name=p)
        jobs.append(Job(CPU.key, "matmul", p, task, len(cases)))
        results.append(TaskResult(task, "ok", {"cases": cases, "dtypes": [p, p], "torch": "2.13.0+cpu"}))
    return {CPU.key: assemble(CPU, jobs, results, list(rates), {}, "quick", 2.0, None, "2026-01-01T00:00:00+0000", 9.0)}


SHAPES = ((512, 512, 512), (2048, 2048, 2048))
BEFORE = _reports({"fp32": {SHAPES[0]: 190.0, SHAPES[1]: 180.0}, "bf16": {SHAPES[0]: 300.0, SHAPES[1]: 320.0}})
AFTER = _reports({"fp32": {SHAPES[0]: 195.0, SHAPES[1]: 185.0}, "bf16": {SHAPES[0]: 400.0, SHAPES[1]: 416.0}})


@pytest.fixture
def cpu_machine(monkeypatch):
    """A one-CPU machine; no plugin is loaded unless a test names it (GPUDASH_LOAD_PLUGINS)."""
    monkeypatch.setenv("GPUDASH_LOAD_PLUGINS", "")
    return Machine(host=Host(hostname="testbox"), runtime=Runtime(), devices=[CPU])


def _rows(app, table_id: str) -> list[list[str]]:
    table = app.query_one(table_id, DataTable)
    return [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]


async def test_replayed_machine_shows_spec_peaks_and_never_runs(monkeypatch):
    monkeypatch.setattr(bench, "run_tasks", lambda *a, **k: pytest.fail("a replayed machine must not be measured"))
    app = create_app(discover(replay=str(SNAPSHOT), include_torch=False), defaults(), add_torch_view=no_torch)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("b")
        await wait_until(
            pilot, lambda: bool(app.query("#bench-table")) and app.query_one("#bench-table", DataTable).row_count > 0
        )
        rows = {r[0]: r for r in _rows(app, "#bench-table")}
        assert set(rows) >= {"fp32", "bf16", "fp8_e4m3", "int8"}
        assert rows["bf16"][1] == "–" and rows["bf16"][6] == "1,307,400 spec"
        assert "never measured" in status(app)
        assert "not run: replayed" in str(app.query_one("#bench-notes", Static).render())
        await pilot.press("R")
        await pilot.pause(0.05)
        assert any("never measured" in n.message for n in app._notifications)


async def test_saved_run_then_injected_run_with_progress_and_comparison(cpu_machine, monkeypatch):
    append_run(cpu_machine, bench_json(cpu_machine, BEFORE, "quick"))
    calls, proceed = [], threading.Event()

    def fake_bench(machine, **kw):
        calls.append((kw["mode"], kw["case_budget_s"], kw["timeout_s"]))
        kw["on_progress"](
            {"device": CPU.key, "kind": "matmul", "precision": "bf16", "shape": [512, 512, 512], "done": 2, "total": 4}
        )
        proceed.wait(5)  # the test looks at the progress first
        return AFTER

    monkeypatch.setattr(bench, "bench_machine", fake_bench)
    app = create_app(cpu_machine, defaults(), add_torch_view=no_torch)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("b")
        await wait_until(
            pilot, lambda: bool(app.query("#bench-table")) and app.query_one("#bench-table", DataTable).row_count == 2
        )
        assert status(app).startswith("newest run ")
        assert _rows(app, "#bench-table")[1][:3] == ["bf16", "320.0", "2048x2048x2048"]
        assert len(_rows(app, "#bench-history")) == 1
        text = screen_text(app)
        assert "best GFLOPS per precision" in text and "GFLOPS over matrix size" in text

        await pilot.press("R")
        await wait_until(pilot, lambda: "(2/4 cases)" in status(app))
        assert status(app).startswith("benchmarking cpu:0 bf16 512x512x512")
        bar = app.query_one("#bench-progress")
        assert bar.display and bar.total == 4 and bar.progress == 2
        proceed.set()
        await wait_until(pilot, lambda: status(app).startswith("measured just now"))
        assert not bar.display
        assert calls == [("quick", defaults()["bench"]["case_budget_s"], defaults()["bench"]["timeout_s"])]
        bf16 = _rows(app, "#bench-table")[1]
        assert (
            bf16[:3] == ["bf16", "416.0", "2048x2048x2048"]
            and bf16[HEADER.index("vs fp32")].startswith(f"{416 / 195:.2f}x (")  # best against best, with its band
        )
        history = _rows(app, "#bench-history")
        assert len(history) == 2 and history[1][2:4] == ["190.0", "320.0"]  # newest first
        assert not app.query_one("#bench-run").disabled and app.query_one("#bench-cancel").disabled

        table = app.query_one("#bench-history", DataTable)
        table.focus()
        table.move_cursor(row=1)
        await pilot.press("enter")
        await pilot.pause(0.05)
        header = [str(c.label) for c in app.query_one("#bench-table", DataTable).columns.values()]
        dropped = header[-1].endswith("›")  # a narrow table ends in the count of the columns it left out
        assert header[-2 if dropped else -1].startswith("vs ")
        assert _rows(app, "#bench-table")[1][-2 if dropped else -1] == f"{416 / 320:.2f}x"
    assert len(saved_runs(cpu_machine)) == 2


async def test_cancel_stops_the_run_and_saves_nothing(cpu_machine, monkeypatch):
    started = threading.Event()

    def slow_bench(machine, **kw):
        started.set()
        kw["cancel"].wait(10)
        return {}

    monkeypatch.setattr(bench, "bench_machine", slow_bench)
    app = create_app(cpu_machine, defaults(), add_torch_view=no_torch)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("b")
        await wait_until(pilot, lambda: bool(app.query("#bench-status")))
        assert status(app).startswith("no benchmark yet")
        await pilot.click("#bench-run")
        await wait_until(pilot, started.is_set)
        assert app.query_one("#bench-run").disabled and not app.query_one("#bench-cancel").disabled
        await pilot.click("#bench-cancel")
        await wait_until(pilot, lambda: status(app) == "cancelled: nothing saved")
        assert not app.query_one("#bench-run").disabled
    assert saved_runs(cpu_machine) == []


async def test_a_run_shows_the_plugin_benchmarks_beside_the_sweep(cpu_machine, monkeypatch):
    """As `gpudash bench` does: after the sweep, the plugins' benchmarks run (here a real one-file plugin, in
    its child process), are drawn in their own table, and are kept with the run in the history."""
    monkeypatch.setenv("GPUDASH_LOAD_PLUGINS", "good_sample")
    monkeypatch.setattr(bench, "bench_machine", lambda machine, **kw: AFTER)
    config = defaults()
    config["plugin_dirs"] = [str(SAMPLES)]
    app = create_app(cpu_machine, config, add_torch_view=no_torch)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("b")
        await wait_until(pilot, lambda: bool(app.query("#bench-plugins")))
        assert not app.query_one("#bench-plugins").display  # nothing measured yet, no plugin table
        await pilot.press("R")
        await wait_until(pilot, lambda: status(app).startswith("measured just now"), timeout=60)
        assert app.query_one("#bench-plugins").display
        rows = _rows(app, "#bench-plugins")
        assert [r[:4] for r in rows] == [["good_sample/python_loop", "fp64", "python_mul_add", "20000"]]
        assert float(rows[0][4].replace(",", "")) >= 0  # GFLOPS the plugin measured (a slow loop: may show 0.0)
        assert _rows(app, "#bench-table")[1][:2] == ["bf16", "416.0"]  # the sweep's table, unchanged
    (_saved_at, kept), *_ = saved_runs(cpu_machine)
    runs = kept["devices"][0]["plugin_benchmarks"]
    assert [(r["plugin"], r["benchmark"], r["status"]) for r in runs] == [("good_sample", "python_loop", "ok")]
    assert runs[0]["results"][0]["gflops"] > 0  # the figure the table rounds
    assert {r["precision"] for r in kept["devices"][0]["results"]} == {"fp32", "bf16"}  # never mixed into the sweep


async def test_the_history_a_cli_run_keeps_is_what_the_view_lists(cpu_machine, monkeypatch, capsys):
    found = SimpleNamespace(machine=lambda include_torch=True: cpu_machine)  # what begin_discovery hands back
    monkeypatch.setattr("gpudash.actions.session.begin_discovery", lambda replay=None: found)
    monkeypatch.setattr(bench, "bench_machine", lambda machine, **kw: BEFORE)
    assert main(["bench", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    app = create_app(cpu_machine, defaults(), add_torch_view=no_torch)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("b")
        await wait_until(
            pilot, lambda: bool(app.query("#bench-history")) and app.query_one("#bench-history", DataTable).row_count
        )
        (saved_at, mode, fp32, bf16, *_), *more = _rows(app, "#bench-history")
        assert not more and mode == "quick" and (fp32, bf16) == ("190.0", "320.0")
        assert status(app) == f"newest run {saved_at} · R: quick sweep · F: full"
        assert _rows(app, "#bench-table")[1][:3] == ["bf16", "320.0", "2048x2048x2048"]
    assert saved_runs(cpu_machine) == [(saved_at, printed)]  # the view lists the very document the CLI printed


async def test_a_device_name_with_brackets_is_listed_as_written(monkeypatch):
    # A replayed snapshot is the user's file: a device named with "[/]" must not end the view with MarkupError.
    monkeypatch.setenv("GPUDASH_LOAD_PLUGINS", "")
    odd = [DeviceInfo(vendor="cpu", index=i, name="Odd [/] CPU [b]2", sources=["cpu"]) for i in (1, 2)]
    machine = Machine(host=Host(hostname="testbox"), runtime=Runtime(), devices=[CPU, *odd])  # 2 groups
    app = create_app(machine, defaults(), add_torch_view=no_torch)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("b")
        await wait_until(pilot, lambda: bool(app.query("#bench-device")))
        select = app.query_one("#bench-device")
        select.focus()
        await pilot.press("enter")  # the list opens with every group's name ("cpu:1-2 (2x <name>)")
        await wait_until(pilot, lambda: "2x Odd [/] CPU [b]2" in screen_text(app))
        assert app.is_running
