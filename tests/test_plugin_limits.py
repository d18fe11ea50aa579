"""Plugin check children run under resource limits (issue 27 item 5): address space (RLIMIT_AS) and CPU time
(RLIMIT_CPU) from the config's [plugins] table, set in the child before plugin code runs, and a check that
reaches one says which, naming the plugin."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpudash.devices import discover
from gpudash.measure import limits as child_limits
from gpudash.measure.limits import ChildLimits
from gpudash.measure.runner import OK, Task, run_tasks
from gpudash.plugin_manager import make_plugin_manager, run_checks
from gpudash.plugin_manager.limits import limits_for

SAMPLES = Path(__file__).resolve().parent / "plugin_samples" / "limits"


@pytest.fixture
def live_cpu(no_vendor_libs):
    return discover(include_torch=False)


def checks_of(plugin: str, settings: dict, machine, monkeypatch, timeout_s: float = 60.0):
    monkeypatch.setenv("GPUDASH_LOAD_PLUGINS", plugin)
    pm = make_plugin_manager([str(SAMPLES)], on_error=None)
    pm.limits = settings
    found = run_checks(machine, pm, timeout_s=timeout_s, devices=machine.devices[:1], on_error=None)
    return {r.check: r for r in found}


def settings(address_space_mib=0, cpu_time_s=0, on_gpu=False):
    return {"address_space_mib": address_space_mib, "cpu_time_s": cpu_time_s, "address_space_on_gpu": on_gpu}


def test_memory_hog_reaches_its_memory_limit(live_cpu, monkeypatch):
    result = checks_of("memory_hog", settings(address_space_mib=768), live_cpu, monkeypatch)["memory_hog"]
    assert result.status == "error"
    assert result.summary.startswith("plugin memory_hog reached its memory limit (768 MiB)"), result.summary
    assert "MemoryError" in result.summary


def test_cpu_spinner_reaches_its_cpu_limit_by_sigxcpu(live_cpu, monkeypatch):
    monkeypatch.delenv("GPUDASH_TEST_IGNORE_SIGXCPU", raising=False)
    result = checks_of("cpu_spinner", settings(cpu_time_s=1), live_cpu, monkeypatch)["cpu_spinner"]
    assert result.status == "error"
    assert result.summary.startswith("plugin cpu_spinner reached its CPU time limit (1 s)"), result.summary
    assert "SIGXCPU" in result.summary


def test_cpu_spinner_that_ignores_sigxcpu_is_killed_at_the_hard_limit(live_cpu, monkeypatch):
    monkeypatch.setenv("GPUDASH_TEST_IGNORE_SIGXCPU", "1")
    result = checks_of("cpu_spinner", settings(cpu_time_s=1), live_cpu, monkeypatch)["cpu_spinner"]
    assert result.status == "error"
    assert result.summary.startswith("plugin cpu_spinner reached its CPU time limit (1 s)"), result.summary
    assert "SIGKILL" in result.summary


def test_within_limits_a_check_passes_and_a_crash_is_not_called_a_limit(live_cpu, monkeypatch):
    result = checks_of("well_behaved", settings(768, 30), live_cpu, monkeypatch)["well_behaved"]
    assert result.status == "pass", result.summary
    # A child killed for another reason is not said to have reached a limit.
    assert child_limits.reached(ChildLimits(768, 30), "process killed by SIGKILL", -9, cpu_s=0.2) is None
    assert child_limits.reached(ChildLimits(0, 30), "MemoryError: ", None) is None


def test_limits_are_set_in_the_child_before_the_task_and_renewed_per_task():
    """The child's own rlimits, read by a task: RLIMIT_AS as given; RLIMIT_CPU soft at used + allowance."""
    read = "gpudash.measure.limits:current"
    results = run_tasks([Task(read, limits=ChildLimits(1024, 7)), Task(read, limits=ChildLimits(1024, 7)), Task(read)])
    assert [r.status for r in results] == [OK, OK, OK]
    first, second, free = (r.value for r in results)
    assert first["address_space"] == [1024 * 2**20, 1024 * 2**20]
    for limits in (first, second):
        soft, hard = limits["cpu"]
        assert 7 <= soft <= 7 + 5 and hard >= soft  # little CPU used before it; the hard limit covers both + grace
    assert second["cpu"][1] == first["cpu"][1]  # the hard limit is set once, the soft one renewed per task
    assert free["address_space"][0] == -1  # a task without limits ran in a child of its own


def test_torch_plugin_fits_the_default_limit(live_cpu, monkeypatch):
    """The default address-space limit (config.toml: 8192 MiB) leaves a torch plugin on the CPU room: its
    VmPeak is measured in the child, under the limit."""
    pytest.importorskip("torch")
    from gpudash.config import defaults

    conf = defaults()["plugins"]
    result = checks_of("torch_peak", conf, live_cpu, monkeypatch, timeout_s=120)["torch_peak"]
    assert result.status == "pass", result.summary
    assert result.details["vm_peak_kib"] < conf["address_space_mib"] * 1024 / 2, result.summary


def test_the_address_space_limit_is_left_out_on_a_gpu_unless_asked():
    conf = settings(8192, 600)
    assert limits_for(conf, "cpu") == ChildLimits(8192, 600)
    assert limits_for(conf, "nvidia") == ChildLimits(0, 600)
    assert limits_for(settings(8192, 600, on_gpu=True), "amd") == ChildLimits(8192, 600)


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("address_space_mib = 100", "plugins.address_space_mib: expected 0 (no limit) or at least 256 MiB"),
        ("cpu_time_s = -1", "plugins.cpu_time_s: expected a value from 0 to 604800"),
        ('address_space_on_gpu = "yes"', "plugins.address_space_on_gpu: expected true or false"),
    ],
)
def test_bad_limits_in_the_config_are_one_line_and_exit_2(tmp_path, line, problem):
    config = tmp_path / "config.toml"
    config.write_text(f"[plugins]\n{line}\n")
    env = {k: v for k, v in os.environ.items() if k != "GPUDASH_REPLAY"}
    res = subprocess.run(
        [sys.executable, "-m", "gpudash", "--config", str(config), "check"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert res.returncode == 2, res.stderr
    assert problem in res.stderr and len(res.stderr.strip().splitlines()) == 1, res.stderr


def test_the_export_s_checks_run_under_the_user_s_limits(live_cpu, monkeypatch):
    """`gpudash export` runs the plugin checks as `gpudash check` does: under the config's [plugins] limits."""
    from gpudash.actions import export
    from gpudash.actions.session import Session
    from gpudash.config import defaults
    from gpudash.recommend.facts import facts_for

    monkeypatch.setenv("GPUDASH_LOAD_PLUGINS", "memory_hog")
    config = defaults()
    config["plugins"].update(settings(address_space_mib=768))
    session = Session(config, plugin_dirs=[str(SAMPLES)], machine=live_cpu)
    device = live_cpu.devices[0]
    facts = facts_for(device)
    export._checks(live_cpu, device, session, facts, lambda _: None, None)
    [hog] = [c for c in facts.checks if c["check"] == "memory_hog"]
    assert hog["status"] == "error" and hog["summary"].startswith(
        "plugin memory_hog reached its memory limit (768 MiB)"
    )


def test_a_plugin_that_allocates_without_end_at_import_fails_its_vetting(monkeypatch):
    monkeypatch.setenv("GPUDASH_LOAD_PLUGINS", "import_hog")
    pm = make_plugin_manager([str(SAMPLES)], on_error=None)
    [record] = [r for r in pm.records.values() if r.name == "import_hog"]
    assert not record.loaded and any("MemoryError" in e for e in record.errors), record.errors
