"""Hostile plugins cannot break gpudash: their code runs only in children, their output never reaches stdout,
what they return is checked before it reaches JSON or the screen, and their noise is kept bounded."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import gpudash
import gpudash.errors
import gpudash.plugin_manager.runs as runs
from gpudash.devices import discover
from gpudash.measure.runner import TAIL_BYTES
from gpudash.plugin_manager import list_plugins, make_plugin_manager, run_benchmarks, run_checks
from gpudash.plugin_manager.loading import VET_TIMEOUT_ENV

HOSTILE = Path(__file__).resolve().parent / "plugin_samples" / "hostile"


@pytest.fixture
def live_cpu(no_vendor_libs):
    return discover(include_torch=False)


def gpudash_cli(*args, tmp_path, plugins):
    env = {k: v for k, v in os.environ.items() if k != "GPUDASH_REPLAY"}
    env.update(
        GPUDASH_LOAD_PLUGINS=plugins,
        XDG_STATE_HOME=str(tmp_path / "state"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        **{VET_TIMEOUT_ENV: "20"},
    )
    return subprocess.run(
        [sys.executable, "-m", "gpudash", "--plugins-dir", str(HOSTILE), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def strict_json(text: str):
    """json.loads that refuses NaN and Infinity, as any strict JSON reader does."""

    def refuse(name):
        raise ValueError(f"{name} is not JSON")

    return json.loads(text, parse_constant=refuse)


def test_writes_to_fd_1_never_reach_check_json(tmp_path):
    res = gpudash_cli("check", "--json", tmp_path=tmp_path, plugins="fd1_writer,rocm_checks")
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("{") and "FD1 NOISE" not in res.stdout
    checks = {c["check"]: c["status"] for c in strict_json(res.stdout)["checks"] if c["plugin"] != "gpudash"}
    assert checks["fd1_check"] == "pass" and len(checks) == 9  # and the eight built-in ROCm checks
    listing = gpudash_cli("plugins", "--json", tmp_path=tmp_path, plugins="fd1_writer")
    assert listing.returncode == 0 and listing.stdout.startswith("{") and "FD1 NOISE" not in listing.stdout


def test_nan_and_terminal_escapes_never_reach_check_json(tmp_path):
    res = gpudash_cli("check", "--json", tmp_path=tmp_path, plugins="nan_result")
    assert res.returncode == 0, res.stderr  # the NaN check is an error: UNKNOWN, reported in the whole document
    assert "\x1b" not in res.stdout
    by_check = {c["check"]: c for c in strict_json(res.stdout)["checks"]}
    nan = by_check["nan_details"]
    assert (nan["status"], nan["summary"]) == (
        "error",
        "the check returned an invalid result: details.ratio: nan is not a finite number",
    )
    escapes = by_check["escapes_in_summary"]
    assert escapes["status"] == "warn"
    assert escapes["summary"] == "\\x1b[2J\\x1b[31mscreen cleared and\\u202eflipped"
    assert escapes["remediation"] == "set\\x07 X"


def test_a_benchmark_returning_infinity_is_an_error(live_cpu, monkeypatch):
    monkeypatch.setenv("GPUDASH_LOAD_PLUGINS", "nan_result")
    [run] = run_benchmarks(live_cpu, make_plugin_manager([HOSTILE], load_entry_points=False), budget_s=0.01)
    assert (run.status, run.results) == ("error", [])
    assert run.summary == "the benchmark returned an invalid result: result 0: gflops: inf is not a finite number >= 0"


def test_keyboard_interrupt_at_import_is_a_failed_plugin_not_an_interrupted_command(tmp_path):
    res = gpudash_cli("check", "--json", tmp_path=tmp_path, plugins="interrupt_at_import,rocm_checks")
    assert res.returncode == 0, res.stderr
    data = strict_json(res.stdout)
    plugin_checks = [c for c in data["checks"] if c["id"].startswith("plugin.")]
    assert len(plugin_checks) == 8  # the built-in plugin checks all ran (the health checks come beside them)
    [failed] = data["plugin_errors"]
    assert failed["plugin"] == "interrupt_at_import"
    assert failed["errors"] == [
        f"failed to import {HOSTILE / 'interrupt_at_import.py'}: KeyboardInterrupt: raised by the plugin at import"
    ]


def test_a_plugin_changing_gpudash_globals_changes_nothing_here(live_cpu, monkeypatch):
    monkeypatch.setenv("GPUDASH_LOAD_PLUGINS", "globals_mutator")
    before = (gpudash.__version__, gpudash.errors.UsageError.exit_code, runs.DEFAULT_CHECK_TIMEOUT_S)
    pm = make_plugin_manager([HOSTILE], load_entry_points=False)
    [record] = list_plugins(pm)
    assert record.loaded and record.provides["checks"] == ["after_mutation"]
    [result] = run_checks(live_cpu, pm)
    assert result.status == "pass" and result.summary == "gpudash here says it is version mutated by a plugin"
    assert (gpudash.__version__, gpudash.errors.UsageError.exit_code, runs.DEFAULT_CHECK_TIMEOUT_S) == before
    assert not [name for name in sys.modules if "globals_mutator" in name]


def test_output_tails_are_bounded_in_bytes(live_cpu, monkeypatch):
    monkeypatch.setenv("GPUDASH_LOAD_PLUGINS", "noisy_stderr")
    results = run_checks(live_cpu, make_plugin_manager([HOSTILE], load_entry_points=False))
    assert len(results) == 20 and {r.status for r in results} == {"error"}
    for result in results:
        tail = result.details["output_tail"]
        assert len(tail.encode()) <= TAIL_BYTES + 3 and tail.endswith("EEEE") and "\x1b" not in tail
    assert len(json.dumps([r.to_dict() for r in results])) < 20 * (TAIL_BYTES + 500)


def test_a_plugin_is_imported_only_in_children_and_at_most_twice_for_a_check(live_cpu, monkeypatch, tmp_path):
    log = tmp_path / "imports"
    monkeypatch.setenv("GPUDASH_TEST_IMPORT_LOG", str(log))
    monkeypatch.setenv("GPUDASH_LOAD_PLUGINS", "counts_imports")
    pm = make_plugin_manager([HOSTILE], load_entry_points=False)
    assert list_plugins(pm)[0].provides["checks"] == ["counted"]
    vetting = log.read_text().split()
    assert len(vetting) == 1  # the vetting child; not this process
    [result] = run_checks(live_cpu, pm)
    assert result.status == "pass"
    pids = log.read_text().split()
    assert len(pids) == 2 and str(os.getpid()) not in pids  # + the child that ran the check
