"""The conventions every command keeps: exit codes (one table), colour only on a terminal and never with
NO_COLOR, `gpudash` without a terminal, `info --watch`, and `--precisions`."""

import fcntl
import json
import os
import pty
import re
import signal
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from gpudash.cli import main
from gpudash.errors import EXIT_CODES, EXIT_FINDINGS, EXIT_OK, EXIT_USAGE

REPO = Path(__file__).resolve().parent.parent
TESTS = REPO / "tests"
H100 = str(REPO / "examples" / "snapshots" / "h100-80gb.json")
DGX = str(REPO / "examples" / "snapshots" / "dgx-h100-8gpu.json")
ESCAPE = "\x1b["


def environment(**extra):
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "GPUDASH_REPLAY", "CUDA_VISIBLE_DEVICES")}
    env.update(extra)
    return env


def run(*args, timeout=60, **env):
    return subprocess.run(
        [sys.executable, "-m", "gpudash", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=environment(**env),
        cwd=TESTS,
    )


def in_terminal(args, *, cols=200, rows=50, stop_after=None, timeout=30, **env):
    """gpudash in a pseudo-terminal of cols x rows: (exit code, everything it wrote). `stop_after` seconds: then
    Ctrl-C is sent, as a user stops --watch."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    proc = subprocess.Popen(
        [sys.executable, "-m", "gpudash", *args],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=environment(TERM="xterm-256color", **env),
        cwd=TESTS,
        start_new_session=True,
    )
    os.close(slave)
    output, start, interrupted = b"", time.monotonic(), False
    while True:
        if stop_after is not None and not interrupted and time.monotonic() - start > stop_after:
            os.killpg(proc.pid, signal.SIGINT)  # what the terminal sends for Ctrl-C
            interrupted = True
        try:
            import select

            ready, _, _ = select.select([master], [], [], 0.1)
            chunk = os.read(master, 65536) if ready else b""
        except OSError:  # the child closed its side
            chunk = b""
            if proc.poll() is not None:
                break
        output += chunk
        if not chunk and proc.poll() is not None:
            break
        if time.monotonic() - start > timeout:
            proc.kill()
            raise AssertionError(f"gpudash {' '.join(args)} did not end; wrote {output[-500:]!r}")
    os.close(master)
    return proc.wait(), output.decode(errors="replace")


# Exit codes ------------------------------------------------------------------------------------------------


def test_every_exit_code_is_in_the_docs_and_in_help():
    table = (REPO / "docs" / "cli.md").read_text().split("## Exit codes", 1)[1]
    documented = [(int(m.group(1)), m.group(2).strip()) for m in re.finditer(r"^\| (\d+) \| (.+) \|$", table, re.M)]
    assert documented == list(EXIT_CODES)
    help_text = run("--help").stdout
    for code, meaning in EXIT_CODES:
        assert re.search(rf"^  {code}\s+{re.escape(meaning)}$", help_text, re.M), code


CHECK_PLUGIN = """
from gpudash.plugins_api import Check, hookimpl


class Verdict(Check):
    needs_device = False

    def __init__(self, name, status):
        self.name, self.status = name, status

    def run(self, device):
        return self.result(self.status, f"{self.status} on {device.key}")


@hookimpl
def register_checks(register):
    register(*(Verdict(status + "_check", status) for status in STATUSES))
"""


@pytest.mark.parametrize(
    "statuses, code, last_line",
    [
        (["pass", "warn", "skip"], EXIT_OK, None),
        (["pass", "warn", "fail"], EXIT_FINDINGS, "gpudash: checks: 1 failed"),
    ],
)
def test_check_exits_1_when_a_check_fails_and_0_on_warnings(
    tmp_path, no_vendor_libs, capsys, monkeypatch, statuses, code, last_line
):
    (tmp_path / "verdicts.py").write_text(f"STATUSES = {statuses!r}\n" + CHECK_PLUGIN)
    monkeypatch.setenv("GPUDASH_LOAD_PLUGINS", "verdicts")
    assert main(["--plugins-dir", str(tmp_path), "check"]) == code
    out, err = capsys.readouterr()
    assert all(f"verdicts/{s}_check" in out for s in statuses)  # the whole report first, whatever the code
    assert (err.strip().splitlines() or [None])[-1] == last_line


@pytest.fixture
def planted_probe(monkeypatch):
    """`gpudash probe` on this CPU with a fault planted in its child (tests/probe_faults.py)."""
    from gpudash.measure import probe

    monkeypatch.setattr(probe, "TASK_TARGET", "probe_faults:run_probe")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")])))

    def plant(fault: str):
        monkeypatch.setenv("GPUDASH_PROBE_FAULT", fault)

    return plant


def test_probe_exits_1_when_a_native_precision_fails(no_vendor_libs, planted_probe, capsys):
    planted_probe("fp32=segfault")  # fp32 is native on every CPU
    assert main(["probe", "--device", "cpu", "--precisions", "fp32", "--timeout", "30"]) == EXIT_FINDINGS
    out, err = capsys.readouterr()
    assert "fp32" in out
    assert err.strip().splitlines()[-1] == "gpudash: failed where the spec says native: cpu:0 fp32"


def test_probe_exits_0_when_only_a_precision_the_cpu_lacks_fails(no_vendor_libs, planted_probe, capsys):
    from gpudash.devices import discover
    from gpudash.knowledge import arch_for

    cpu = next(d for d in discover(include_torch=False).devices if d.vendor == "cpu")
    lacking = next(p for p in ("fp4", "tf32", "fp8_e4m3") if arch_for(cpu).precisions.get(p) != "native")
    planted_probe(f"{lacking}=segfault")
    assert main(["probe", "--device", "cpu", "--precisions", lacking, "--timeout", "30", "--json"]) == EXIT_OK
    result = json.loads(capsys.readouterr().out)["devices"][0]["precisions"][lacking]
    assert result["verdict"] == "failed" and result["spec"] is False


def test_usage_errors_exit_2_with_one_line():
    for args, line in [
        (["info", "--count", "2"], "gpudash: error: --count: only with --watch"),
        (["info", "--watch", "0"], "gpudash: error: --watch: expected at least 0.1 seconds, got 0"),
        (["--replay", H100, "bench", "--precisions", "fp32,fp7"], "gpudash: error: --precisions: unknown precision"),
    ]:
        res = run(*args)
        assert res.returncode == EXIT_USAGE and res.stderr.strip().startswith(line), (args, res.stderr)
        assert len(res.stderr.strip().splitlines()) == 1


# Precisions ------------------------------------------------------------------------------------------------


def test_probe_takes_precisions_and_still_the_old_spelling(capsys):
    assert main(["--replay", H100, "probe", "--precisions", "fp32,bf16", "--json"]) == 0
    out, err = capsys.readouterr()
    assert list(json.loads(out)["devices"][0]["precisions"]) == ["fp32", "bf16"] and err == ""
    assert main(["--replay", H100, "probe", "--precision", "bf16", "--precision", "fp8_e4m3", "--json"]) == 0
    out, err = capsys.readouterr()
    assert list(json.loads(out)["devices"][0]["precisions"]) == ["bf16", "fp8_e4m3"]
    assert err.strip() == "gpudash: warning: --precision is deprecated; use --precisions bf16,fp8_e4m3"
    assert "--precision " not in " ".join(run("probe", "--help").stdout.split())  # hidden from --help


# Colour ----------------------------------------------------------------------------------------------------


def test_colour_only_on_a_terminal_and_never_with_no_color():
    piped = run("--replay", DGX, "info")
    assert piped.returncode == 0 and ESCAPE not in piped.stdout
    code, shown = in_terminal(["--replay", DGX, "info"])
    assert code == 0 and ESCAPE in shown and "[nvidia:7]" in shown
    for env, flags in [({"NO_COLOR": "1"}, []), ({}, ["--no-color"]), ({"NO_COLOR": "1"}, ["--force-color"])]:
        code, shown = in_terminal(["--replay", DGX, *flags, "info"], **env)
        assert code == 0 and ESCAPE not in shown and "[nvidia:7]" in shown, (env, flags)
    assert ESCAPE in run("--replay", DGX, "info", "--force-color").stdout  # a pipe, asked for colour


def test_an_empty_no_color_does_not_turn_colour_off():
    """no-color.org: NO_COLOR counts when it is present and not an empty string."""
    assert ESCAPE in run("--replay", DGX, "--force-color", "info", NO_COLOR="").stdout
    assert ESCAPE not in run("--replay", DGX, "--force-color", "info", NO_COLOR="1").stdout


# `gpudash` without a terminal ----------------------------------------------------------------------------------


def test_gpudash_without_a_terminal_prints_info_and_exits():
    res = run("--replay", DGX, timeout=30)
    assert res.returncode == 0
    assert res.stderr.strip() == "gpudash: stdout is not a terminal: printing `gpudash info` (the dashboard needs one)"
    assert ESCAPE not in res.stdout and "[nvidia:7]" in res.stdout and "device  " in res.stdout
    res = run("--replay", DGX, "--only", "3", timeout=30)  # global options still apply
    assert [line.split()[0] for line in res.stdout.splitlines() if line.startswith("[")] == ["[nvidia:3]"]


# --watch ---------------------------------------------------------------------------------------------------


def test_watch_to_a_pipe_prints_each_round():
    res = run("--replay", H100, "info", "--watch", "0.1", "--count", "3", "--no-processes")
    assert res.returncode == 0, res.stderr
    rounds = res.stdout.split("\n\n")
    assert len(rounds) == 3 and all(r.splitlines()[1].startswith("device") for r in rounds)
    # The replay cycles through its samples: the rounds are readings, not one reading printed three times.
    temperatures = {re.search(r" (\d+)C ", r.splitlines()[2]).group(1) for r in rounds}
    assert len(temperatures) > 1


def test_watch_json_is_one_document_per_line():
    res = run("--replay", H100, "info", "--watch", "0.1", "--count", "2", "--json")
    lines = res.stdout.splitlines()
    assert res.returncode == 0 and len(lines) == 2
    docs = [json.loads(line) for line in lines]
    assert all(d["devices"][0]["name"] == "NVIDIA H100 80GB HBM3" for d in docs)


def test_ctrl_c_stops_watch_with_exit_0_and_gives_the_screen_back():
    code, shown = in_terminal(["--replay", DGX, "info", "--watch", "0.2"], cols=100, rows=30, stop_after=2.0)
    assert code == 0
    assert shown.count("\x1b[?1049h") == 1 and shown.rstrip().endswith("\x1b[?1049l")  # alternate screen left
    assert shown.count("\x1b[H") >= 3  # redrawn in place, round after round
    assert "Traceback" not in shown and "interrupted" not in shown
    frame = shown.split("\x1b[H")[-1]
    visible = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", frame).splitlines()
    assert 0 < len(visible) <= 30 and all(len(line) <= 100 for line in visible)  # fits: nothing scrolls


def test_sigint_stops_watch_in_a_pipe_with_exit_0():
    proc = subprocess.Popen(
        [sys.executable, "-m", "gpudash", "--replay", H100, "info", "--watch", "0.1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment(),
        cwd=TESTS,
    )
    time.sleep(1.5)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=15)
    assert proc.returncode == 0 and err == ""
    assert out.count("[nvidia:0]") >= 2


def test_check_statuses_are_coloured_on_request_only(monkeypatch):
    rdna1 = str(REPO / "examples" / "snapshots" / "rx-5600-xt.json")
    coloured = run("--replay", rdna1, "--force-color", "check", GPUDASH_LOAD_PLUGINS="rocm_checks")
    assert coloured.returncode == 0 and "\x1b[33mwarn\x1b[0m" in coloured.stdout
    plain = run("--replay", rdna1, "check", GPUDASH_LOAD_PLUGINS="rocm_checks")
    assert ESCAPE not in plain.stdout and re.sub(r"\x1b\[[0-9;]*m", "", coloured.stdout) == plain.stdout
