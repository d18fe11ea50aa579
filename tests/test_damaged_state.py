"""Remembered results (the state files) that are damaged, wrongly typed, not regular files or unwritable never
cost a command or a view: they are ignored with one warning, and what was measured is still shown."""

from __future__ import annotations

import json
import os

import pytest
from textual.widgets import DataTable, Static
from tui_helpers import no_torch, wait_until

from gpudash import store
from gpudash.cli import main
from gpudash.config import defaults
from gpudash.devices import Machine
from gpudash.measure import probe
from gpudash.measure.bench.store import BENCH_HISTORY_KIND, saved_runs
from gpudash.measure.probe.store import PROBE_KIND
from gpudash.measure.schema import PrecisionCapabilityMatrix, PrecisionTestResult
from gpudash.models import DeviceInfo, Host, Runtime
from gpudash.tui.app import create_app

CPU = DeviceInfo(vendor="cpu", index=0, name="Test CPU", cpu_features=["avx512_bf16"], sources=["cpu"])


@pytest.fixture
def machine():
    return Machine(host=Host(hostname="testbox"), runtime=Runtime(), devices=[CPU])


@pytest.fixture
def warnings(monkeypatch):
    said: list[str] = []
    monkeypatch.setattr(store, "warn", said.append)
    monkeypatch.setattr(store, "_warned", set())
    return said


def matrix() -> PrecisionCapabilityMatrix:
    result = PrecisionTestResult(precision="fp32", supported=True, verified=True, verdict="verified", spec="native")
    return PrecisionCapabilityMatrix(hardware_name=CPU.name, device=CPU.key, results={"fp32": result})


def write_state(kind: str, machine, text: str):
    path = store.path_of(kind, machine)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def probe_record(**result_fields) -> str:
    result = {"precision": "fp32", "supported": True, "verdict": "verified", **result_fields}
    doc = {"version": 1, "matrices": {"cpu:0": {"hardware_name": "Test CPU", "results": {"fp32": result}}}}
    return json.dumps({"saved_at": "2026-01-02T03:04:05+0000", "data": doc})


@pytest.mark.parametrize(
    "text, problem",
    [
        ("{not json", "not valid JSON"),
        ('{"saved_at": 5, "data": {}}', "not a gpudash results file"),
        ('{"saved_at": "x", "data": 1e400}', "number 1e400 is out of range"),
        ("[" * 5000 + "]" * 5000, "nested more than"),
        (probe_record(measured_gflops="fast"), "matrices.cpu:0.results.fp32.measured_gflops: expected a number"),
        (probe_record(max_rel_error=-1.0), "max_rel_error: -1 is outside 0"),
        (probe_record(supported="yes"), "supported: expected true or false"),
    ],
)
def test_a_damaged_probe_record_is_ignored_with_one_warning(machine, warnings, text, problem):
    path = write_state(PROBE_KIND, machine, text)
    assert probe.remembered(machine) is None
    assert probe.remembered(machine) is None  # asked again (each view does): still one warning
    assert len(warnings) == 1 and warnings[0].startswith(f"{path}: remembered results ignored: ")
    assert problem in warnings[0] and "\n" not in warnings[0]


def test_a_fifo_or_a_huge_state_file_is_refused_at_once(machine, warnings, monkeypatch):
    path = store.path_of(PROBE_KIND, machine)
    path.parent.mkdir(parents=True)
    os.mkfifo(path)  # nobody writes to it: reading it would block forever
    assert probe.remembered(machine) is None
    assert "is a pipe (FIFO), not a regular file" in warnings[-1]
    path.unlink()
    monkeypatch.setattr("gpudash.fileio.MAX_INPUT_BYTES", 100)
    monkeypatch.setattr(store, "_warned", set())
    write_state(PROBE_KIND, machine, json.dumps({"saved_at": "x", "data": "y" * 200}))
    assert probe.remembered(machine) is None
    assert warnings[-1].endswith("remembered results is 229 bytes, more than the 100 bytes gpudash reads")


def test_a_bench_run_off_its_contract_is_left_out_and_the_others_kept(machine, warnings):
    good = {"version": 1, "replayed": False, "source": "live", "mode": "quick", "preset": None, "devices": []}
    store.save(
        BENCH_HISTORY_KIND,
        machine,
        [{"saved_at": "a", "data": good}, {"saved_at": "b", "data": {**good, "devices": 7}}],
    )
    runs = saved_runs(machine)
    assert [at for at, _ in runs] == ["a"]
    [warning] = warnings
    assert "the run saved at b: devices: 7 is not of type" in warning


async def test_the_precision_and_benchmarks_views_draw_despite_damaged_state(machine, warnings):
    write_state(PROBE_KIND, machine, probe_record(measured_gflops={"x": 1}))
    bad_run = {"saved_at": "2026-01-02T03:04:05+0000", "data": {"devices": [{"matrix": "not a matrix"}]}}
    write_state(BENCH_HISTORY_KIND, machine, json.dumps({"saved_at": "x", "data": [bad_run]}))
    app = create_app(machine, defaults(), add_torch_view=no_torch)
    async with app.run_test(size=(150, 45)) as pilot:
        await pilot.press("v")
        await wait_until(
            pilot, lambda: bool(app.query("#prec-table")) and app.query_one("#prec-table", DataTable).row_count > 0
        )
        assert "remembered" not in str(app.query_one("#prec-status", Static).render())
        await pilot.press("b")
        await wait_until(pilot, lambda: bool(app.query("#bench-status")))
        await pilot.pause(0.2)
        assert app.is_running
        said = [n.message for n in app._notifications if "remembered results ignored" in n.message]
    # Said on the dashboard, once per file, instead of on a stderr nobody sees under it.
    assert len(said) == 2 and warnings == []


def test_probe_prints_what_it_measured_when_the_state_cannot_be_written(monkeypatch, tmp_path, capsys, no_vendor_libs):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setenv("XDG_STATE_HOME", str(blocker))  # the state folder would have to be inside a file
    monkeypatch.setattr(probe, "probe_machine", lambda machine, **kw: {CPU.key: matrix()})
    assert main(["probe", "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["devices"][0]["precisions"]["fp32"]["verdict"] == "verified"
    [line] = [e for e in err.splitlines() if "warning" in e]
    assert line.startswith("gpudash: warning: not remembered: ") and "cannot keep remembered results" in line
