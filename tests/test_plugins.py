"""Plugin discovery, loading and hardening: entry points, one-file plugins, and every way a plugin breaks."""

import importlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gpudash.devices import discover
from gpudash.plugin_manager import (
    collect_benchmarks, collect_checks, list_plugins, make_plugin_manager, run_benchmarks, run_checks,
)
from gpudash.plugins_api import Check, hookimpl

REPO = Path(__file__).resolve().parent.parent
SAMPLES = Path(__file__).resolve().parent / "plugin_samples"
ALL_SAMPLES = ",".join(p.stem for p in SAMPLES.glob("*.py"))


@pytest.fixture(scope="session")
def example_target(tmp_path_factory):
    """examples/plugin-package installed (for real, by pip) into a target directory."""
    src = tmp_path_factory.mktemp("example-src") / "plugin-package"
    shutil.copytree(REPO / "examples" / "plugin-package", src)  # the build writes egg-info next to the sources
    target = tmp_path_factory.mktemp("example-target")
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                    "--target", str(target), str(src)], check=True, capture_output=True, timeout=120)
    return target


@pytest.fixture
def example_on_path(example_target, monkeypatch):
    monkeypatch.syspath_prepend(str(example_target))
    importlib.invalidate_caches()
    yield example_target
    sys.modules.pop("gpudash_example_plugin", None)


@pytest.fixture
def live_cpu(no_vendor_libs):
    return discover(include_torch=False)


@pytest.fixture
def errors():
    seen = []
    return seen, lambda plugin, message: seen.append((plugin, message))


def test_the_example_package_is_found_through_its_installed_entry_point(example_on_path, monkeypatch):
    monkeypatch.setenv("GPUDASH_LOAD_PLUGINS", "gpudash-example-plugin,rocm_checks,adaptive_kernels")
    pm = make_plugin_manager()
    records = {r.name: r for r in list_plugins(pm)}
    example = records["example"]
    assert (example.source, example.origin, example.version) == ("entry point", "gpudash-example-plugin 0.1.0", "0.1.0")
    assert example.loaded and not example.errors
    assert example.hooks == ["register_benchmarks", "register_checks"]
    assert example.provides == {"checks": ["torch_threads"], "benchmarks": ["axpy"], "kernels": []}
    # gpudash's own plugins come through the same door, from gpudash's distribution.
    for name in ("adaptive_kernels", "rocm_checks"):
        assert records[name].source == "entry point" and records[name].origin.startswith("gpudash ")


def test_the_example_check_and_benchmark_run_in_the_child(example_on_path, monkeypatch, live_cpu):
    monkeypatch.setenv("GPUDASH_LOAD_PLUGINS", "example")
    pm = make_plugin_manager()
    [result] = run_checks(live_cpu, pm)
    assert (result.plugin, result.check, result.device) == ("example", "torch_threads", "cpu:0")
    assert result.status in ("pass", "warn") and result.details["torch_threads"] >= 1
    [run] = run_benchmarks(live_cpu, pm, budget_s=0.1)
    assert run.status == "ok", run.summary
    assert [r["precision"] for r in run.results] == ["fp32", "bf16"]
    for item in run.results:
        assert item["op"] == "axpy" and item["gflops"] > 0 and item["median_s"] > 0
        assert (item["plugin"], item["benchmark"]) == ("example", "axpy")


def test_one_file_plugins_load_register_and_run(monkeypatch, live_cpu, tmp_path):
    monkeypatch.setenv("GPUDASH_LOAD_PLUGINS", "good_sample")
    pm = make_plugin_manager([SAMPLES], load_entry_points=False)
    [record] = list_plugins(pm)
    assert (record.name, record.source, record.version) == ("good_sample", "file", "1.2.3")
    assert record.origin == str(SAMPLES / "good_sample.py")
    assert record.provides["checks"] == ["always_passes", "needs_the_device"]
    results = run_checks(live_cpu, pm)
    assert [(r.check, r.status) for r in results] == [("always_passes", "pass"), ("needs_the_device", "pass")]
    assert results[0].env == {"SAMPLE_VAR": "1"} and results[0].details == {"vendor": "cpu"}
    [run] = run_benchmarks(live_cpu, pm)
    assert run.status == "ok" and run.results[0]["op"] == "python_mul_add" and run.results[0]["gflops"] > 0


def test_every_kind_of_broken_plugin_is_reported_and_the_rest_still_work(monkeypatch, live_cpu, errors):
    seen, on_error = errors
    monkeypatch.setenv("GPUDASH_LOAD_PLUGINS", ALL_SAMPLES)
    pm = make_plugin_manager([SAMPLES], load_entry_points=False, on_error=on_error)
    records = {r.name: r for r in list_plugins(pm)}
    assert not records["broken_import"].loaded
    assert "ModuleNotFoundError" in records["broken_import"].errors[0]
    assert records["raising"].loaded
    assert records["raising"].errors == ["register_benchmarks raised ValueError: sample registration blew up"]
    assert any("is not a check" in e for e in records["bad_status"].errors)
    assert records["good_sample"].loaded and not records["good_sample"].errors
    assert {plugin for plugin, _ in seen} == {"broken_import", "raising", "typo_hook", "bad_status"}

    results = {r.check: r for r in run_checks(live_cpu, pm)}
    assert results["raises"].status == "error"
    assert results["raises"].summary == "the check raised RuntimeError: sample check blew up"
    assert results["hangs"].status == "error"
    assert results["hangs"].summary == "the check did not finish: timed out after 1 s"
    assert results["segfaults"].status == "error" and "SIGSEGV" in results["segfaults"].summary
    assert results["bad_status"].status == "error" and "'ok'" in results["bad_status"].summary
    # The good ones ran, including those after the crash and the hang (the runner starts a new child).
    assert results["always_passes"].status == "pass" and results["chatty"].status == "pass"
    assert results["needs_the_device"].status == "pass"


def test_a_hook_name_typo_rejects_the_plugin(monkeypatch, errors):
    seen, on_error = errors
    monkeypatch.setenv("GPUDASH_LOAD_PLUGINS", "typo_hook,good_sample")
    pm = make_plugin_manager([SAMPLES], load_entry_points=False, on_error=on_error)
    record = pm.records["typo_hook"]
    assert not record.loaded and record.hooks == []
    assert record.errors == ["unknown hook 'register_chekcs' (did you mean 'register_checks'?)"]
    assert seen == [("typo_hook", record.errors[0])]
    assert pm.get_plugin("typo_hook") is None
    pm.check_pending()  # the manager left behind is valid
    assert [r.name for r in collect_checks(pm)] == ["always_passes", "needs_the_device"]


def test_a_hook_with_wrong_arguments_is_rejected(tmp_path, errors):
    seen, on_error = errors
    (tmp_path / "wrong_args.py").write_text(
        "from gpudash.plugins_api import hookimpl\n\n@hookimpl\ndef register_checks(regster):\n    pass\n")
    pm = make_plugin_manager([tmp_path], load_entry_points=False, on_error=on_error)
    assert not pm.records["wrong_args"].loaded
    assert "regster" in pm.records["wrong_args"].errors[0] and "\n" not in pm.records["wrong_args"].errors[0]


def test_load_plugins_env_restricts_and_empty_loads_none(monkeypatch, errors):
    seen, on_error = errors
    monkeypatch.setenv("GPUDASH_LOAD_PLUGINS", "")
    assert make_plugin_manager([SAMPLES]).records == {}
    monkeypatch.setenv("GPUDASH_LOAD_PLUGINS", "rocm_checks, good_sample ,no_such_plugin")
    pm = make_plugin_manager([SAMPLES], on_error=on_error)
    assert sorted(pm.records) == ["good_sample", "rocm_checks"]
    assert seen == [("no-such-plugin", "named in GPUDASH_LOAD_PLUGINS but not found")]


def test_replayed_machines_skip_device_checks_without_running_them(monkeypatch, h100_snapshot):
    monkeypatch.setenv("GPUDASH_LOAD_PLUGINS", "good_sample,crashing")
    pm = make_plugin_manager([SAMPLES], load_entry_points=False)
    results = {r.check: r for r in run_checks(discover(replay=str(h100_snapshot)), pm)}
    assert (results["needs_the_device"].status, results["needs_the_device"].summary) == ("skip", "not run: replayed")
    assert results["always_passes"].status == "pass" and results["always_passes"].device == "nvidia:0"
    assert results["segfaults"].status == "error"  # table-style checks do run on a replay, in the child
    runs = run_benchmarks(discover(replay=str(h100_snapshot)), pm)
    assert [(r.benchmark, r.status, r.summary) for r in runs] == [("python_loop", "skip", "not run: replayed")]


def test_plugins_registered_in_process_are_listed_but_not_run(live_cpu):
    class Inline(Check):
        name = "inline"
        needs_device = False

        def run(self, device):
            return self.passed("never reached")

    class Plugin:
        @hookimpl
        def register_checks(self, register):
            register(Inline())

    pm = make_plugin_manager(load_entry_points=False)
    pm.register(Plugin(), name="inline_plugin")
    assert pm.records["inline_plugin"].source == "registered in-process"
    [result] = run_checks(live_cpu, pm)
    assert result.status == "error" and "child process cannot load it" in result.summary


def test_a_missing_plugin_dir_is_a_usage_error(tmp_path):
    from gpudash.errors import UsageError

    with pytest.raises(UsageError, match="not a directory"):
        make_plugin_manager([tmp_path / "nope"], load_entry_points=False)


def test_listing_plugins_imports_neither_torch_nor_textual():
    code = ("import sys\n"
            "from gpudash.plugin_manager import make_plugin_manager, list_plugins\n"
            "records = list_plugins(make_plugin_manager())\n"
            "assert {'adaptive_kernels', 'rocm_checks'} <= {r.name for r in records}, records\n"
            "heavy = [m for m in ('torch', 'textual') if m in sys.modules]\n"
            "assert not heavy, heavy\n")
    env = {k: v for k, v in os.environ.items() if k != "GPUDASH_LOAD_PLUGINS"}
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert res.returncode == 0, res.stderr


def test_collect_benchmarks_names_the_builtin_adaptive_benchmark(monkeypatch):
    monkeypatch.setenv("GPUDASH_LOAD_PLUGINS", "adaptive_kernels")
    found = collect_benchmarks(make_plugin_manager())
    assert [(r.plugin, r.name) for r in found] == [("adaptive_kernels", "adaptive_matmul")]


def test_json_round_trip_of_a_record(monkeypatch):
    monkeypatch.setenv("GPUDASH_LOAD_PLUGINS", "good_sample")
    [record] = list_plugins(make_plugin_manager([SAMPLES], load_entry_points=False))
    assert json.loads(json.dumps(record.to_dict()))["provides"]["benchmarks"] == ["python_loop"]


def test_the_builtin_plugins_load_from_an_installed_wheel(tmp_path):
    """Not only from a checkout: build gpudash's wheel, install it, and find the built-ins from there."""
    src = tmp_path / "src"
    src.mkdir()
    for name in ("gpudash", "plugins"):
        shutil.copytree(REPO / name, src / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, src / name)
    pip = [sys.executable, "-m", "pip", "-q"]
    subprocess.run([*pip, "wheel", "--no-deps", "--no-build-isolation", "-w", str(tmp_path / "whl"), str(src)],
                   check=True, capture_output=True, timeout=120)
    [wheel] = (tmp_path / "whl").glob("gpudash-*.whl")
    target = tmp_path / "site"
    subprocess.run([*pip, "install", "--no-deps", "--target", str(target), str(wheel)],
                   check=True, capture_output=True, timeout=120)
    code = ("import json, gpudash, plugins.rocm_checks\n"
            "from gpudash.plugin_manager import make_plugin_manager, list_plugins\n"
            "records = {r.name: r.to_dict() for r in list_plugins(make_plugin_manager())}\n"
            "print(json.dumps([gpudash.__file__, plugins.rocm_checks.__file__, records]))\n")
    env = {k: v for k, v in os.environ.items() if k != "GPUDASH_LOAD_PLUGINS"}
    env["PYTHONPATH"] = str(target)
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path,
                         timeout=60)
    assert res.returncode == 0, res.stderr
    gpudash_file, rocm_file, records = json.loads(res.stdout)
    assert gpudash_file.startswith(str(target)) and rocm_file.startswith(str(target))
    assert records["rocm_checks"]["loaded"] and len(records["rocm_checks"]["provides"]["checks"]) == 7
    assert records["adaptive_kernels"]["provides"]["benchmarks"] == ["adaptive_matmul"]
