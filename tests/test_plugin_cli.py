"""`gpudash plugins` and `gpudash check` as a user runs them: output, clean JSON on stdout, exit codes."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpudash.cli import main
from gpudash.plugin_manager.loading import VET_TIMEOUT_ENV

REPO = Path(__file__).resolve().parent.parent
SAMPLES = Path(__file__).resolve().parent / "plugin_samples"
ALL_SAMPLES = ",".join(p.stem for p in SAMPLES.glob("*.py"))
SNAPSHOTS = REPO / "examples" / "snapshots"
VET_LIMIT_S = "3"  # hanging_import costs this much wherever it is vetted; the default (20 s) would be slow


def gpudash(*args, **env):
    full = {k: v for k, v in os.environ.items() if k not in ("GPUDASH_REPLAY", "GPUDASH_LOAD_PLUGINS")}
    full[VET_TIMEOUT_ENV] = VET_LIMIT_S
    full.update(env)
    return subprocess.run(
        [sys.executable, "-m", "gpudash", *args], capture_output=True, text=True, env=full, timeout=90
    )


def test_plugins_table_lists_the_builtins():
    res = gpudash("plugins")
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0].split() == ["name", "version", "from", "hooks", "provides", "status"]
    rocm = next(line for line in lines if line.startswith("rocm_checks"))
    assert "entry point (gpudash 0.1.0)" in rocm and "register_checks" in rocm and "8 checks" in rocm
    assert rocm.endswith("loaded")


def test_plugins_json_stays_clean_with_broken_and_noisy_plugins():
    res = gpudash("--plugins-dir", str(SAMPLES), "plugins", "--json", GPUDASH_LOAD_PLUGINS=ALL_SAMPLES)
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)  # the noisy plugin's prints must not be here
    by_name = {p["name"]: p for p in data["plugins"]}
    assert data["version"] == 1 and data["load_plugins_env"] == ALL_SAMPLES
    assert by_name["broken_import"]["loaded"] is False and by_name["typo_hook"]["loaded"] is False
    assert by_name["good_sample"]["provides"]["checks"] == ["always_passes", "needs_the_device"]
    # Third-party plugins load in the vetting child only: what they print there stays there.
    assert "noisy plugin" not in res.stdout and "noisy plugin" not in res.stderr
    assert "gpudash: plugin 'broken_import': failed to import" in res.stderr
    assert "unknown hook 'register_chekcs'" in res.stderr
    assert by_name["crashing_import"]["loaded"] is False and by_name["hanging_import"]["loaded"] is False
    assert by_name["crashing_import"]["errors"] == ["plugin import crashed: process killed by SIGSEGV"]
    assert by_name["hanging_import"]["errors"] == [f"plugin import hung: timed out after {VET_LIMIT_S} s"]
    assert "gpudash: plugin 'crashing_import': plugin import crashed: process killed by SIGSEGV" in res.stderr


def test_check_json_with_broken_plugins_is_clean_and_exits_0_for_the_checks_that_broke():
    res = gpudash(
        "check",
        "--json",
        "--plugins-dir",
        str(SAMPLES),
        GPUDASH_LOAD_PLUGINS="good_sample,raising,crashing,noisy,broken_import",
    )
    # two checks errored: UNKNOWN, reported in full; only a CRITICAL result exits 1 (docs/health.md)
    assert res.returncode == 0, res.stderr
    assert res.stderr.strip().splitlines()[-1] == "gpudash: checks: 2 errored"
    data = json.loads(res.stdout)
    assert data["replayed"] is False and data["source"] == "live"
    statuses = {r["check"]: r["status"] for r in data["checks"] if r["plugin"] != "gpudash"}  # not health's
    assert statuses == {
        "always_passes": "pass",
        "needs_the_device": "pass",
        "raises": "error",
        "segfaults": "error",
        "chatty": "pass",
    }
    # Each plugin's register_* hooks all ran in its vetting child: `raising` fails in register_benchmarks.
    assert {e["plugin"] for e in data["plugin_errors"]} == {"broken_import", "raising"}
    assert res.stdout.startswith("{")  # nothing printed in front of the JSON (json.loads took the rest)


def test_plugins_table_lists_plugins_that_crash_or_hang_on_import_as_failed_and_exits_zero():
    res = gpudash("--plugins-dir", str(SAMPLES), "plugins")  # every plugin: the built-ins and all the samples
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    for name, error in (
        ("crashing_import", "plugin import crashed: process killed by SIGSEGV"),
        ("hanging_import", f"plugin import hung: timed out after {VET_LIMIT_S} s"),
    ):
        row = next(i for i, line in enumerate(lines) if line.startswith(name + " "))
        assert lines[row].endswith("FAILED") and lines[row + 1] == f"  error: {error}"
    for name in ("rocm_checks", "adaptive_kernels", "good_sample", "crashing", "hanging"):
        assert next(line for line in lines if line.startswith(name + " ")).endswith("loaded"), name


def test_check_still_runs_the_builtin_checks_next_to_a_plugin_that_crashes_on_import():
    res = gpudash(
        "--plugins-dir", str(SAMPLES), "check", GPUDASH_LOAD_PLUGINS="rocm_checks,crashing_import,good_sample"
    )
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("[live]  10 checks on 1 device: 2 pass, 8 skip")
    assert "rocm_checks (8 checks)        skip    not run: for amd devices only" in res.stdout
    assert "good_sample/always_passes     pass" in res.stdout
    assert "plugin crashing_import had errors: plugin import crashed: process killed by SIGSEGV" in res.stdout


def test_a_bad_vetting_limit_is_one_line_and_exits_2():
    res = gpudash(
        "--plugins-dir", str(SAMPLES), "plugins", GPUDASH_LOAD_PLUGINS="good_sample", **{VET_TIMEOUT_ENV: "0"}
    )
    assert res.returncode == 2 and res.stdout == ""
    assert res.stderr.strip() == f"gpudash: error: {VET_TIMEOUT_ENV}='0': not a positive number of seconds"


def test_check_table_live_cpu_skips_rocm_checks(no_vendor_libs, capsys, monkeypatch):
    monkeypatch.setenv("GPUDASH_LOAD_PLUGINS", "rocm_checks")
    assert main(["check"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("[live]  8 checks on 1 device: 8 skip")
    assert "rocm_checks (8 checks)  skip    not run: for amd devices only" in out


@pytest.mark.skipif(not (SNAPSHOTS / "rx-5600-xt.json").exists(), reason="example snapshot not written yet")
def test_check_replayed_rdna1_table_shows_fix_and_env(capsys, monkeypatch):
    monkeypatch.setenv("GPUDASH_LOAD_PLUGINS", "rocm_checks")
    assert main(["--replay", str(SNAPSHOTS / "rx-5600-xt.json"), "check"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("[replayed from rx-5600-xt.json")
    assert "rocm_checks (5 checks)         skip    not run: replayed" in out
    assert "rocm_checks/hipblaslt_support  warn    hipBLASLt does not support gfx1010" in out
    assert "env: TORCH_BLAS_PREFER_HIPBLASLT=0" in out
    assert "rocm_checks/fft_stability      warn    FFT routed to the CPU on gfx1010" in out


@pytest.mark.skipif(not (SNAPSHOTS / "strix-halo-8060s.json").exists(), reason="example snapshot not written yet")
def test_check_json_replayed_strix_halo(capsys, monkeypatch):
    monkeypatch.setenv("GPUDASH_LOAD_PLUGINS", "rocm_checks")
    assert main(["check", "--json", "--device", "0", "--replay", str(SNAPSHOTS / "strix-halo-8060s.json")]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["replayed"] is True
    by = {r["check"]: r for r in data["checks"]}
    assert by["bf16_to_fp32"]["summary"] == "not run: replayed"
    assert by["known_issues"]["status"] == "warn"
    assert by["known_issues"]["env"]["TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL"] == "1"
    assert by["hipblaslt_support"]["status"] == "pass"  # gfx1151 is supported from ROCm 7.0; this one is 7.1


def test_usage_errors_are_one_line_and_exit_2(tmp_path, h100_snapshot):
    res = gpudash("--replay", str(h100_snapshot), "check", "--device", "7")
    assert res.returncode == 2 and res.stdout == ""
    # The same words as probe, bench and export give for a device that is not there.
    assert res.stderr.strip() == "gpudash: error: --device '7': no such device (this machine has: nvidia:0)"
    res = gpudash("plugins", "--plugins-dir", str(tmp_path / "missing"))
    assert res.returncode == 2
    assert res.stderr.strip() == f"gpudash: error: --plugins-dir {tmp_path / 'missing'}: not a directory"
    config = tmp_path / "c.toml"
    config.write_text(f'plugin_dirs = ["{tmp_path / "gone"}"]\n')
    res = gpudash("--config", str(config), "check", "--json", GPUDASH_LOAD_PLUGINS="")
    assert res.returncode == 2 and res.stdout == ""
    assert "config key plugin_dirs" in res.stderr and "Traceback" not in res.stderr


def test_plugins_listing_from_the_config_key(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("GPUDASH_LOAD_PLUGINS", "good_sample")
    config = tmp_path / "c.toml"
    config.write_text(f'plugin_dirs = ["{SAMPLES}"]\n')
    assert main(["--config", str(config), "plugins"]) == 0
    out = capsys.readouterr().out
    assert "good_sample  1.2.3    file (" in out and "2 checks, 1 benchmark" in out
    assert "GPUDASH_LOAD_PLUGINS='good_sample': only the plugins named there were loaded" in out


def test_check_help_mentions_device_and_json():
    res = gpudash("check", "--help")
    assert res.returncode == 0 and "--device DEVICE" in res.stdout and "--json" in res.stdout
    assert "cuda:N, or a GPU index N; repeatable" in " ".join(res.stdout.split())
