"""benchmarks/gpu_check.sh (issue 28), run here without a GPU: the plan, a fast subset of the CPU paths, the
time limits and the summary it leaves in $OUT. The same script runs on a lent H100/H200 (docs/benchmarks.md,
"Real GPU check"); these tests keep it working between such runs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import psutil
import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "gpu_check.sh"
HAS_GPU = shutil.which("nvidia-smi") is not None
# Every step in the script's order, with its own cap (seconds); nvidia_smi only where nvidia-smi is.
CAPS = {
    "install": 120,
    "nvidia_smi": 30,
    "info": 45,
    "info_json": 60,
    "snapshot": 45,
    "replay": 30,
    "probe": 150,
    "bench": 180,
    "check": 90,
    "serve": 45,
    "preflight": 150,
    "export": 180,
    "tui_startup": 90,
}


def run_script(tmp_path: Path, *args: str, timeout: float = 110) -> tuple[subprocess.CompletedProcess, Path]:
    out = tmp_path / "out"
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPUDASH_")}
    env.update(OUT=str(out), TMPDIR=str(tmp_path))
    done = subprocess.run(
        ["bash", str(SCRIPT), "--python", sys.executable, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=tmp_path,
    )
    return done, out


def summary(out: Path) -> dict:
    return json.loads((out / "summary.json").read_text())


def step_files(out: Path) -> dict[str, str]:
    with tarfile.open(out / "steps.tar.gz") as tar:
        return {
            member.name: tar.extractfile(member).read().decode()  # type: ignore[union-attr]
            for member in tar.getmembers()
            if member.isfile()
        }


def test_dry_run_plans_every_step_and_runs_nothing(tmp_path):
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    done, out = run_script(tmp_path, "--dry-run", "--install", "--wheels", str(wheels))
    assert done.returncode == 0, done.stderr
    expected = [name for name in CAPS if HAS_GPU or name != "nvidia_smi"]
    doc = summary(out)
    assert doc["dry_run"] is True and doc["complete"] is True
    assert [s["name"] for s in doc["steps"]] == expected
    for step in doc["steps"]:
        assert step["status"] == "planned" and step["rc"] is None and step["wall_s"] is None
        assert step["limit_s"] == CAPS[step["name"]]
        assert f"would run {step['name']} " in done.stdout
    assert sum(CAPS[name] for name in expected) > doc["budget_s"] == 330  # the budget, not the caps, bounds a run
    assert not (out / "steps.tar.gz").exists()
    assert not list(tmp_path.glob("gpu-check-work.*"))  # its scratch folder is gone
    if not HAS_GPU:
        assert "no NVIDIA GPU here" in done.stdout and doc["mode"] == "cpu"


def test_cpu_subset_runs_and_records_each_step(tmp_path):
    names = ["info", "info_json", "snapshot", "replay", "check", "serve"]
    done, out = run_script(tmp_path, "--steps", ",".join(names))
    assert done.returncode == 0, done.stdout + done.stderr
    doc = summary(out)
    assert doc["complete"] is True and doc["dry_run"] is False
    assert doc["counts"] == {"ok": len(names)}
    assert [s["name"] for s in doc["steps"]] == names
    files = step_files(out)
    for number, step in enumerate(doc["steps"], start=1):
        assert step["file"] == f"{number:02d}-{step['name']}"
        assert step["status"] == "ok" and step["rc"] == 0
        assert 0 < step["wall_s"] < step["limit_s"] <= CAPS[step["name"]]
        assert step["command"][0] == sys.executable
        assert f"steps/{step['file']}.out" in files and f"steps/{step['file']}.err" in files
        assert step["stdout_bytes"] == len(files[f"steps/{step['file']}.out"].encode())

    info = json.loads(files["steps/02-info_json.out"])
    assert info["version"] == 1 and info["devices"]
    assert doc["seen"]["devices"][0]["name"] == info["devices"][0]["name"]
    # The snapshot was recorded redacted, copied to $OUT, and replayed by gpudash's reader.
    snapshot = json.loads((out / "snapshot.json").read_text())
    assert snapshot["format"] == "gpudash-snapshot"
    replayed = json.loads(files["steps/04-replay.out"])
    assert replayed["replayed"] is True
    assert [d["name"] for d in replayed["devices"]] == [d["name"] for d in snapshot["devices"]]
    assert json.loads(files["steps/05-check.out"])
    # One scrape of gpudash serve over loopback, with the results this run remembered (the check step's).
    assert any(line.startswith("gpudash_") for line in files["steps/06-serve.out"].splitlines())
    assert "scrape 200" in files["steps/06-serve.err"] and "server exit code 0" in files["steps/06-serve.err"]
    assert (out / "gpu_check.log").exists()
    assert not list(tmp_path.glob("gpu-check-work.*"))


def test_a_step_over_its_limit_is_stopped_and_recorded(tmp_path):
    done, out = run_script(tmp_path, "--steps", "bench", "--cap", "2")
    assert done.returncode == 1, done.stdout + done.stderr
    (step,) = summary(out)["steps"]
    assert step["name"] == "bench" and step["limit_s"] == 2
    assert step["status"] == "timed_out" and step["rc"] in (124, 137)
    assert step["wall_s"] < 2 + 10 + 15  # the limit, the SIGKILL grace, a loaded machine's slack
    # Nothing of the stopped step runs on: every process started there (cwd under tmp_path) has ended.
    deadline = time.monotonic() + 20
    while True:
        left = []
        for proc in psutil.process_iter(["cwd"]):
            if (proc.info["cwd"] or "").startswith(str(tmp_path)):
                left.append(proc)
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert not left, [p.cmdline() for p in left]


def test_spent_budget_skips_steps(tmp_path):
    done, out = run_script(tmp_path, "--steps", "info,check", "--budget", "1")
    assert done.returncode == 1
    doc = summary(out)
    assert doc["counts"] == {"skipped": 2}
    assert all(s["status"] == "skipped" and s["rc"] is None for s in doc["steps"])
    assert "budget is spent" in done.stdout


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["--steps", "info,nosuch"], "nosuch"),
        (["--budget", "soon"], "--budget"),
        (["--cap", "0"], "--cap"),
        (["--python", "/nonexistent/python3"], "/nonexistent/python3"),
        (["--install", "--wheels", "/nonexistent/wheels"], "/nonexistent/wheels"),
        (["--frobnicate"], "--frobnicate"),
    ],
)
def test_bad_options_exit_2_with_one_line(tmp_path, args, named):
    done, out = run_script(tmp_path, *args, timeout=30)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and named in lines[0] and lines[0].startswith("gpu_check: ")
    assert "Traceback" not in done.stderr
    assert not out.exists()


@pytest.mark.skipif(
    shutil.which("shellcheck") is None, reason="shellcheck is not installed (apt-get install shellcheck)"
)
def test_scripts_are_shellcheck_clean():
    scripts = [SCRIPT, ROOT / "benchmarks" / "gpu_check_install.sh", ROOT / "benchmarks" / "gpu_check_wheels.sh"]
    done = subprocess.run(["shellcheck", *map(str, scripts)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout
