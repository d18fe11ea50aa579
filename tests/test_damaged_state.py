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


async def test_the_precision_and_benchmarks_views_draw_despite_damaged_state_and_say_so_once(machine, warnings):
    probe_path = write_state(PROBE_KIND, machine, probe_record(measured_gflops={"x": 1}))
    bad_run = {"saved_at": "2026-01-02T03:04:05+0000", "data": {"devices": [{"matrix": "not a matrix"}]}}
    bench_path = write_state(BENCH_HISTORY_KIND, machine, json.dumps({"saved_at": "x", "data": [bad_run]}))
    app = create_app(machine, defaults(), add_torch_view=no_torch)

    def said() -> list[str]:
        return [n.message for n in app._notifications if "remembered results ignored" in n.message]

    async with app.run_test(size=(150, 45), notifications=True) as pilot:
        await pilot.press("v")
        await wait_until(
            pilot, lambda: bool(app.query("#prec-table")) and app.query_one("#prec-table", DataTable).row_count > 0
        )
        assert "remembered" not in str(app.query_one("#prec-status", Static).render())
        await wait_until(pilot, lambda: len(said()) == 1)
        assert said()[0].startswith(f"{probe_path}: remembered results ignored: ") and "measured_gflops" in said()[0]
        await pilot.press("b")
        await wait_until(pilot, lambda: bool(app.query("#bench-status")))
        await wait_until(pilot, lambda: len(said()) == 2)
        assert said()[1].startswith(f"{bench_path}: remembered results ignored: the run saved at 2026-01-02")
        assert all("\n" not in m for m in said())
        # On screen as a notification (toast), not only recorded; and said once: the views asking again add none.
        await pilot.pause(0.2)
        shown = "\n".join(str(t.render()) for t in app.screen.query("Toast"))
        assert str(probe_path) in shown and str(bench_path) in shown
        await pilot.press("v")
        await pilot.press("b")
        await pilot.pause(0.3)
        assert len(said()) == 2 and app.is_running
    assert warnings == []  # said in the dashboard, which hides stderr, instead of on stderr
    assert store.warn == warnings.append  # and the command line's warning is back after the app


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


# Every reader says when it ignores remembered results, not only on damage --------------------------------------


def test_a_probe_record_of_another_gpudash_version_is_ignored_with_one_warning(machine, warnings):
    path = write_state(PROBE_KIND, machine, probe_record().replace('"version": 1', '"version": 99'))
    assert probe.remembered(machine) is None and probe.remembered(machine) is None
    assert warnings == [
        f"{path}: remembered results ignored: written by another gpudash (probe record version 99, this gpudash "
        "reads 1); the next probe replaces it"
    ]


def test_a_probe_of_another_device_under_this_machines_name_is_ignored_with_one_warning(machine, warnings):
    path = write_state(PROBE_KIND, machine, probe_record().replace('"Test CPU"', '"Other CPU"'))
    assert probe.remembered_matrix(machine, CPU) is None
    [line] = warnings
    assert (
        line
        == f"{path}: remembered results ignored: the probe of cpu:0 was measured on Other CPU, not on this Test CPU"
    )


def test_a_bench_history_of_the_wrong_shape_is_said_and_a_bad_entry_left_out(machine, warnings, monkeypatch):
    good = {"version": 1, "replayed": False, "source": "live", "mode": "quick", "preset": None, "devices": []}
    path = write_state(BENCH_HISTORY_KIND, machine, json.dumps({"saved_at": "x", "data": {"runs": []}}))
    assert saved_runs(machine) == []
    assert warnings == [f"{path}: remembered results ignored: expected a list of kept entries, found dict"]
    monkeypatch.setattr(store, "_warned", set())
    write_state(
        BENCH_HISTORY_KIND, machine, json.dumps({"saved_at": "x", "data": [7, {"saved_at": "a", "data": good}]})
    )
    assert [at for at, _ in saved_runs(machine)] == ["a"]
    assert warnings[-1] == f"{path}: remembered results ignored: entry 1 is not an object with saved_at and data"
    # The next run keeps the good entries and drops the damaged one, rather than the whole history.
    from gpudash.measure.bench.store import append_run

    append_run(machine, good)
    assert len(saved_runs(machine)) == 2 and 7 not in json.loads(path.read_text())["data"]


def test_remembered_checks_of_another_version_or_shape_are_said(machine, warnings, monkeypatch):
    from gpudash.plugin_manager.remembered import CHECKS_KIND, remembered_checks

    path = write_state(CHECKS_KIND, machine, json.dumps({"saved_at": "x", "data": {"version": 7, "checks": []}}))
    assert remembered_checks(machine) is None
    assert "written by another gpudash (checks record version 7" in warnings[-1]
    monkeypatch.setattr(store, "_warned", set())
    write_state(CHECKS_KIND, machine, json.dumps({"saved_at": "x", "data": {"version": 1, "checks": "none"}}))
    assert remembered_checks(machine) is None
    assert warnings[-1] == f"{path}: remembered results ignored: expected an object with a list of checks"


def test_the_exporter_reads_state_through_the_same_checks(machine, warnings):
    """`gpudash serve` reads the state files at each scrape: a FIFO returns at once and every file it ignores is
    said, as for every other reader (it used to read them with json.load and say nothing)."""
    from gpudash.exporter.remembered import RememberedResults

    path = store.path_of(PROBE_KIND, machine)
    path.parent.mkdir(parents=True)
    os.mkfifo(path)
    write_state(BENCH_HISTORY_KIND, machine, '{"saved_at": "x", "data": [{"saved_at": "a", "data": NaN}]}')
    results = RememberedResults(machine).current()
    assert results.probes == {} and results.bench_runs == []
    assert len(warnings) == 2 and "is a pipe (FIFO)" in warnings[0] and "the run saved at a" in warnings[1]


async def test_a_notification_shows_a_path_with_brackets_as_written(machine, warnings, monkeypatch, tmp_path):
    # Notifications carry file names, process names and plugins' errors: "[b]" must not vanish into markup and
    # "[/]" must not end the dashboard with MarkupError.
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "st[b]ate[/]"))
    probe_path = write_state(PROBE_KIND, machine, probe_record(measured_gflops={"x": 1}))
    app = create_app(machine, defaults(), add_torch_view=no_torch)
    async with app.run_test(size=(150, 45), notifications=True) as pilot:
        await pilot.press("v")
        await wait_until(pilot, lambda: any("remembered results ignored" in n.message for n in app._notifications))
        await pilot.pause(0.2)
        shown = "\n".join(str(t.render()) for t in app.screen.query("Toast"))
        assert str(probe_path) in shown and "st[b]ate[/]" in str(probe_path)
        assert app.is_running
