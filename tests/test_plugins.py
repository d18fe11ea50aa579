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
    allowed_names,
    collect_benchmarks,
    collect_checks,
    list_plugins,
    make_plugin_manager,
    run_benchmarks,
    run_checks,
)
from gpudash.plugin_manager.loading import VET_TIMEOUT_ENV, Candidate, candidates
from gpudash.plugins_api import Check, hookimpl

REPO = Path(__file__).resolve().parent.parent
SAMPLES = Path(__file__).resolve().parent / "plugin_samples"
ALL_SAMPLES = ",".join(p.stem for p in SAMPLES.glob("*.py"))
VET_LIMIT_S = "3"  # hanging_import costs this much wherever it is vetted; the default (20 s) would be slow


@pytest.fixture(autouse=True)
def short_vetting(monkeypatch):
    monkeypatch.setenv(VET_TIMEOUT_ENV, VET_LIMIT_S)


@pytest.fixture(scope="session")
def example_target(tmp_path_factory):
    """examples/plugin-package installed (for real, by pip) into a target directory."""
    src = tmp_path_factory.mktemp("example-src") / "plugin-package"
    shutil.copytree(REPO / "examples" / "plugin-package", src)  # the build writes egg-info next to the sources
    target = tmp_path_factory.mktemp("example-target")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "--target",
            str(target),
            str(src),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
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
    # Crashing or hanging while importing is caught by vetting in a child: never imported here.
    assert records["crashing_import"].errors == ["plugin import crashed: process killed by SIGSEGV"]
    assert records["hanging_import"].errors == [f"plugin import hung: timed out after {VET_LIMIT_S} s"]
    assert not records["crashing_import"].loaded and not records["hanging_import"].loaded
    assert not [
        m
        for m in sys.modules
        if m.startswith(("gpudash_plugin_file_crashing_import", "gpudash_plugin_file_hanging_import"))
    ]
    assert {plugin for plugin, _ in seen} == {
        "broken_import",
        "raising",
        "typo_hook",
        "bad_status",
        "crashing_import",
        "hanging_import",
    }

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
    # ...which also means those children skipped the plugins vetting ruled out: importing one would kill them.


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
    _seen, on_error = errors
    (tmp_path / "wrong_args.py").write_text(
        "from gpudash.plugins_api import hookimpl\n\n@hookimpl\ndef register_checks(regster):\n    pass\n"
    )
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
    code = (
        "import sys\n"
        "from gpudash.plugin_manager import make_plugin_manager, list_plugins\n"
        "records = list_plugins(make_plugin_manager())\n"
        "assert {'adaptive_kernels', 'rocm_checks'} <= {r.name for r in records}, records\n"
        "heavy = [m for m in ('torch', 'textual') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
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
    subprocess.run(
        [*pip, "wheel", "--no-deps", "--no-build-isolation", "-w", str(tmp_path / "whl"), str(src)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    [wheel] = (tmp_path / "whl").glob("gpudash-*.whl")
    target = tmp_path / "site"
    subprocess.run(
        [*pip, "install", "--no-deps", "--target", str(target), str(wheel)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    code = (
        "import json, gpudash, gpudash_plugins.rocm_checks\n"
        "from gpudash.plugin_manager import make_plugin_manager, list_plugins\n"
        "records = {r.name: r.to_dict() for r in list_plugins(make_plugin_manager())}\n"
        "print(json.dumps([gpudash.__file__, gpudash_plugins.rocm_checks.__file__, records]))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "GPUDASH_LOAD_PLUGINS"}
    env["PYTHONPATH"] = str(target)
    res = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60
    )
    assert res.returncode == 0, res.stderr
    gpudash_file, rocm_file, records = json.loads(res.stdout)
    assert gpudash_file.startswith(str(target)) and rocm_file.startswith(str(target))
    assert records["rocm_checks"]["loaded"] and len(records["rocm_checks"]["provides"]["checks"]) == 8
    assert records["adaptive_kernels"]["provides"]["benchmarks"] == ["adaptive_matmul"]


def test_crashing_or_hanging_in_a_register_hook_is_caught_by_vetting_and_the_rest_load(tmp_path, monkeypatch, errors):
    seen, on_error = errors
    monkeypatch.setenv(VET_TIMEOUT_ENV, "2")
    (tmp_path / "aborts_registering.py").write_text(
        "import os\nfrom gpudash.plugins_api import hookimpl\n\n"
        "@hookimpl\ndef register_checks(register):\n    os.abort()\n"
    )
    (tmp_path / "blocks_registering.py").write_text(
        "import time\nfrom gpudash.plugins_api import hookimpl\n\n"
        "@hookimpl\ndef register_benchmarks(register):\n    time.sleep(600)\n"
    )
    (tmp_path / "fine_after_them.py").write_text(  # vetted in a new child: the hang ended the last one
        "from gpudash.plugins_api import Check, hookimpl\n\n"
        "class Fine(Check):\n    name = 'fine'\n    def run(self, device):\n        return self.passed('ok')\n\n"
        "@hookimpl\ndef register_checks(register):\n    register(Fine())\n"
    )
    pm = make_plugin_manager([tmp_path], load_entry_points=False, on_error=on_error)
    records = {r.name: r for r in list_plugins(pm)}  # safe here: the two never got into this process
    assert records["aborts_registering"].errors == ["plugin registration crashed: process killed by SIGABRT"]
    assert records["blocks_registering"].errors == ["plugin registration hung: timed out after 2 s"]
    assert records["fine_after_them"].loaded and records["fine_after_them"].provides["checks"] == ["fine"]
    assert [plugin for plugin, _ in seen] == ["aborts_registering", "blocks_registering"]


def test_an_entry_point_that_crashes_on_import_is_vetted_out_here_and_in_the_check_children(
    tmp_path, monkeypatch, live_cpu, errors
):
    seen, on_error = errors
    (tmp_path / "crashy_ep_plugin.py").write_text("import os\n\nos.abort()\n")
    info = tmp_path / "crashy_ep-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: crashy-ep\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[gpudash]\ncrashy = crashy_ep_plugin\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("GPUDASH_LOAD_PLUGINS", "crashy-ep,good_sample")
    pm = make_plugin_manager([SAMPLES], on_error=on_error)
    record = pm.records["crashy"]
    assert (record.source, record.origin, record.target) == ("entry point", "crashy-ep 0.1", "crashy_ep_plugin")
    assert record.errors == ["plugin import crashed: process killed by SIGABRT"] and not record.loaded
    assert seen == [("crashy", record.errors[0])] and "crashy_ep_plugin" not in sys.modules
    # The check children load entry points too; they take the parent's verdict instead of crashing on it.
    results = run_checks(live_cpu, pm)
    assert [(r.check, r.status) for r in results] == [("always_passes", "pass"), ("needs_the_device", "pass")]


def test_builtins_are_trusted_and_third_party_plugins_are_vetted_in_one_child(example_on_path, monkeypatch):
    import gpudash.measure.runner as runner

    monkeypatch.setenv("GPUDASH_LOAD_PLUGINS", "gpudash,example,good_sample")
    found = candidates([SAMPLES], True, allowed_names())
    assert found == [
        Candidate("example", "entry point", "gpudash_example_plugin", "gpudash-example-plugin", "0.1.0"),
        Candidate("good_sample", "file", str(SAMPLES / "good_sample.py")),
    ]
    calls = []
    real_run_tasks = runner.run_tasks
    monkeypatch.setattr(runner, "run_tasks", lambda tasks, **kw: calls.append(tasks) or real_run_tasks(tasks, **kw))
    pm = make_plugin_manager([SAMPLES])
    assert all(r.loaded and not r.errors for r in pm.records.values()) and len(pm.records) == 4
    [tasks] = calls  # one runner call, so one child for every candidate
    assert [t.target.split(":")[1] for t in tasks] == ["vetting_ready", "vet_plugin", "vet_plugin", "end_vetting"]
    assert [t.kwargs.get("name") for t in tasks[1:3]] == ["example", "good_sample"]
    calls.clear()
    monkeypatch.setenv("GPUDASH_LOAD_PLUGINS", "gpudash")
    assert sorted(make_plugin_manager().records) == ["adaptive_kernels", "rocm_checks"]
    assert calls == []  # only the built-ins: no child at all


def test_a_bad_vetting_limit_is_a_usage_error(monkeypatch):
    from gpudash.errors import UsageError

    monkeypatch.setenv("GPUDASH_LOAD_PLUGINS", "good_sample")
    monkeypatch.setenv(VET_TIMEOUT_ENV, "soon")
    with pytest.raises(UsageError, match=f"^{VET_TIMEOUT_ENV}='soon': not a positive number of seconds$"):
        make_plugin_manager([SAMPLES])


def test_vetting_a_plugin_dir_imports_neither_torch_nor_textual():
    code = (
        "import sys\n"
        "from gpudash.plugin_manager import make_plugin_manager, list_plugins\n"
        f"records = {{r.name: r for r in list_plugins(make_plugin_manager([{str(SAMPLES)!r}]))}}\n"
        "assert records['good_sample'].loaded, records\n"
        "assert records['crashing_import'].errors[0].startswith('plugin import crashed'), records\n"
        "heavy = [m for m in ('torch', 'textual') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    env = {**os.environ, "GPUDASH_LOAD_PLUGINS": "good_sample,crashing_import,rocm_checks"}
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert res.returncode == 0, res.stderr


def test_a_plugin_that_makes_a_plugin_manager_while_registering_is_vetted_once(tmp_path, monkeypatch, errors):
    # Vetting it runs its hook in the child, which makes a manager, which must not vet it again in a grandchild.
    seen, on_error = errors
    monkeypatch.setenv(VET_TIMEOUT_ENV, "5")
    (tmp_path / "nested_manager.py").write_text(
        "from gpudash.plugins_api import hookimpl\n\n"
        "@hookimpl\ndef register_checks(register):\n"
        "    from gpudash.plugin_manager import make_plugin_manager\n"
        f"    make_plugin_manager([{str(tmp_path)!r}], load_entry_points=False, on_error=None)\n"
    )
    pm = make_plugin_manager([tmp_path], load_entry_points=False, on_error=on_error)
    assert pm.records["nested_manager"].loaded and seen == []
