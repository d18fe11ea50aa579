"""Hostile inputs, generated: snapshots, configs, profiles, remembered results (state) and command lines.

Whatever the input, gpudash answers with an exit code from the documented table (0; 2 for UsageError, as for
argparse; 3 for GpudashError), at most one line on stderr when it fails and never a traceback, strict JSON on
stdout (no NaN, no lone surrogates) when it succeeds, text without raw escape sequences otherwise, and nothing
left running. The CLI runs in-process (fast); the few inputs that could block or fill memory if the checks
regressed (a FIFO, /dev/zero, /dev/full) run as subprocesses with a time limit.

Generated with Hypothesis, derandomized so that CI sees the same cases every run; each target is bounded in
examples so the whole file stays within about 20 s here (GPUDASH_FUZZ_SCALE explores more).
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import psutil
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpudash import store
from gpudash.cli import main
from gpudash.errors import GpudashError, UsageError

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "snapshots"
H100 = EXAMPLES / "h100-80gb.json"
EXIT_CODES = {0, GpudashError.exit_code, UsageError.exit_code}  # gpudash/errors.py
# GPUDASH_FUZZ_SCALE=20 explores 20 times as many cases, new ones each run (CI: 1, the same cases every run).
SCALE = int(os.environ.get("GPUDASH_FUZZ_SCALE", "1"))
SETTINGS = settings(
    max_examples=150 * SCALE,
    deadline=None,
    derandomize=SCALE == 1,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)

NASTY_TEXT = st.sampled_from(
    ["", " ", "\x1b[2J\x1b[31mred", "a\x00b", "\ud800", "x\udfff", "\u202eevil", "\r\n\t", "é" * 3, "a" * 70000]
)
HOSTILE = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**6), max_value=10**6),
    st.sampled_from([10**400, -(2**70), 2**63, -1, 0, 10**18]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([1e30, -1e30, 1e-300, -0.0, 100.0000001]),
    NASTY_TEXT,
    st.text(max_size=20),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=4), st.integers(), max_size=3),
)


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse
            code = exc.code if isinstance(exc.code, int) else 2
    return code, out.getvalue(), err.getvalue()


@contextlib.contextmanager
def working_directory(folder: Path):
    previous = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(previous)


def _no_constant(name: str) -> Any:
    raise AssertionError(f"{name} in JSON output")


def assert_answer(argv: list[str], code: int, out: str, err: str) -> None:
    """The documented answer (see the module docstring). Output that looks like JSON must be strict JSON."""
    assert code in EXIT_CODES, (argv, code, err)
    assert "Traceback" not in err and "Traceback" not in out, (argv, err)
    said = [line for line in err.splitlines() if not line.startswith("gpudash: warning: ")]
    if code != 0:
        if err.startswith("usage:"):  # argparse's own: its usage line, then one error line
            said = [line for line in said if "error:" in line]
        assert len(said) == 1 and said[0].startswith(("gpudash: error: ", "gpudash ")), (argv, err)
    out.encode("utf-8")  # no lone surrogate reached the output
    if code == 0 and out.lstrip().startswith(("{", "[")):
        json.loads(out, parse_constant=_no_constant)
    else:
        assert "\x1b" not in out and "\x00" not in out, (argv, out[:200])
    for line in err.splitlines():
        line.encode("utf-8")
        assert "\x1b" not in line and "\x00" not in line, (argv, line)


@pytest.fixture
def nothing_left_running():
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    yield
    after = {p.pid for p in psutil.Process().children(recursive=True) if p.status() != psutil.STATUS_ZOMBIE}
    assert after <= before, f"left running: {after - before}"


def paths_of(node: Any, prefix: tuple = ()) -> list[tuple]:
    found = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            found += paths_of(value, (*prefix, key))
    elif isinstance(node, list):
        for i, value in enumerate(node[:3]):
            found += paths_of(value, (*prefix, i))
    return found


def mutated(document: Any, data: st.DataObject) -> Any:
    """`document` with a few values replaced by hostile ones, keys removed, or values wrapped deep."""
    doc = copy.deepcopy(document)
    for _ in range(data.draw(st.integers(1, 3))):
        paths = [p for p in paths_of(doc) if p]
        if not paths:  # everything was deleted
            break
        path = data.draw(st.sampled_from(paths))
        parent = doc
        for part in path[:-1]:
            parent = parent[part]
        action = data.draw(st.sampled_from(["replace", "replace", "delete", "deep"]))
        if action == "delete" and isinstance(parent, dict):
            del parent[path[-1]]
        elif action == "deep":
            value = parent[path[-1]]
            for _ in range(data.draw(st.integers(60, 200))):
                value = [value]
            parent[path[-1]] = value
        else:
            parent[path[-1]] = data.draw(HOSTILE)
    return doc


def write(path: Path, document: Any) -> Path:
    path.write_text(json.dumps(document), encoding="utf-8", errors="surrogatepass")
    return path


# Snapshots -----------------------------------------------------------------------------------------------

SNAPSHOTS = [json.loads(p.read_text()) for p in sorted(EXAMPLES.glob("*.json"))]


@SETTINGS
@given(data=st.data(), which=st.integers(0, len(SNAPSHOTS) - 1))
def test_fuzzed_snapshots(tmp_path, nothing_left_running, data, which):
    path = write(tmp_path / "snapshot.json", mutated(SNAPSHOTS[which], data))
    for command in (["info", "--json"], ["info"], ["snapshot", "-o", "-", "--seconds", "0"]):
        argv = ["--replay", str(path), *command]
        code, out, err = run_cli(argv)
        assert_answer(argv, code, out, err)
        assert code in (0, UsageError.exit_code)  # a bad snapshot is a bad argument


@settings(SETTINGS, max_examples=60 * SCALE)
@given(data=st.binary(max_size=400), cut=st.integers(0, 3000))
def test_damaged_snapshot_bytes(tmp_path_factory, data, cut):
    text = H100.read_bytes()
    path = tmp_path_factory.mktemp("bytes") / "snapshot.json"
    path.write_bytes(text[:cut] + data + text[cut:])
    argv = ["--replay", str(path), "info", "--json"]
    code, out, err = run_cli(argv)
    assert_answer(argv, code, out, err)


# Configs -------------------------------------------------------------------------------------------------

TOML_VALUES = st.sampled_from(
    [
        "nan",
        "inf",
        "-inf",
        "1e400",
        "99999999999999999999999",
        "-1",
        "0",
        "0.0001",
        "true",
        '"textual-dark"',
        '"\\u001b[2J"',
        '""',
        "[]",
        '[""]',
        '["."]',
        "{a = 1}",
        "[" * 3000 + "]" * 3000,
        "'x'",
        "1979-05-27",
        "=",
    ]
)
CONFIG_KEYS = st.sampled_from(
    ["ui.refresh_interval", "ui.history_seconds", "ui.theme", "snapshot.seconds", "snapshot.interval",
     "snapshot.redact", "probe.timeout_s", "bench.timeout_s", "export.bench", "model.layers", "plugin_dirs",
     "nope.key", "ui.\x1b[2J", "ui"]
)  # fmt: skip


@SETTINGS
@given(entries=st.lists(st.tuples(CONFIG_KEYS, TOML_VALUES), min_size=1, max_size=4))
def test_fuzzed_configs(tmp_path_factory, entries):
    lines = []
    for key, value in entries:
        section, _, name = key.rpartition(".")
        quoted = json.dumps(name) if not name.isidentifier() else name
        lines += ([f"[{section}]"] if section else []) + [f"{quoted} = {value}"]
    path = tmp_path_factory.mktemp("config") / "config.toml"
    path.write_text("\n".join(lines) + "\n")
    argv = ["--config", str(path), "--replay", str(H100), "info", "--json"]
    code, out, err = run_cli(argv)
    assert_answer(argv, code, out, err)
    assert code in (0, UsageError.exit_code)


# Profiles (bench --load / --compare) ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def profile(tmp_path_factory) -> dict:
    path = tmp_path_factory.mktemp("profile") / "h100.json"
    code, _out, err = run_cli(["--replay", str(H100), "bench", "--no-plugins", "--save", str(path)])
    assert code == 0, err
    return json.loads(path.read_text())


@SETTINGS
@given(data=st.data())
def test_fuzzed_profiles(tmp_path_factory, profile, data):
    folder = tmp_path_factory.mktemp("profiles")
    broken = mutated(profile, data)
    path = write(folder / "p.json", broken)
    good = write(folder / "good.json", profile)
    # Without "version" the same file is read as another layout (the calibration document's), which the
    # schema does not cover: the field checks must.
    other = {k: v for k, v in broken.items() if k != "version"} if isinstance(broken, dict) else broken
    other_layout = write(folder / "o.json", other)
    for argv in (
        ["bench", "--load", str(path), "--json"],
        ["bench", "--load", str(path)],
        ["bench", "--compare", str(good), str(path), "--json"],
        ["bench", "--load", str(other_layout), "--json"],
    ):
        code, out, err = run_cli(argv)
        assert_answer(argv, code, out, err)


# Remembered results (state): what the Precision and Benchmarks views and gpudash.amp read ---------------


@pytest.fixture(scope="module")
def bench_run() -> dict:
    code, out, err = run_cli(["--replay", str(H100), "bench", "--no-plugins", "--json"])
    assert code == 0, err
    return json.loads(out)


PROBE_RECORD = {
    "version": 1,
    "matrices": {
        "cpu:0": {
            "hardware_name": "Test CPU",
            "device": "cpu:0",
            "provenance": "measured",
            "measured_at": "2026-01-02T03:04:05+0000",
            "results": {
                "fp32": {"precision": "fp32", "supported": True, "verdict": "verified", "max_rel_error": 1e-6},
                "bf16": {"precision": "bf16", "supported": False, "verdict": "failed", "failure_reason": "zeros"},
            },
        }
    },
}


@SETTINGS
@given(data=st.data())
def test_fuzzed_state(monkeypatch, no_vendor_libs, bench_run, data):
    from gpudash import strict_json
    from gpudash.actions import bench, probe
    from gpudash.actions.session import Session
    from gpudash.config import defaults
    from gpudash.measure.bench.store import BENCH_HISTORY_KIND
    from gpudash.measure.probe.store import PROBE_KIND
    from gpudash.render.bench import render as render_bench
    from gpudash.render.probe import render as render_probe

    said: list[str] = []
    monkeypatch.setattr(store, "warn", said.append)
    monkeypatch.setattr(store, "_warned", set())
    session = Session(defaults())
    machine = session.machine(include_torch=False)
    records = {
        PROBE_KIND: {"saved_at": "2026-01-02T03:04:05+0000", "data": PROBE_RECORD},
        BENCH_HISTORY_KIND: {"saved_at": "x", "data": [{"saved_at": "2026-01-02T03:04:05+0000", "data": bench_run}]},
    }
    for kind, record in records.items():
        path = store.path_of(kind, machine)
        path.parent.mkdir(parents=True, exist_ok=True)
        write(path, mutated(record, data))
    known = probe.known(session)
    render_probe(known.to_json())
    strict_json.dumps(known.to_json())
    for _saved_at, run in bench.known(session).runs:
        render_bench(run)
        strict_json.dumps(run)
    assert len(said) <= 2 and all("\n" not in s and "remembered results ignored" in s for s in said)


# Command lines -------------------------------------------------------------------------------------------

VALUES = st.sampled_from(
    ["", " ", "nan", "inf", "-inf", "-1", "0", "1e-6", "1e400", "3601", "abc", "\x1b[2J", "-", "/dev/null",
     "/dev/zero", "/dev/full", "/", "cpu", "cpu:0", "nvidia:0", "nvidia:9", "fp32,bf16", "fp99", "list", "h100"]
)  # fmt: skip
OPTIONS = {
    "info": ["--json", "--no-torch", "--redact"],
    "probe": ["--device", "--precision", "--json", "--timeout"],
    "bench": ["--device", "--precisions", "--json", "--save", "--load", "--preset", "--case-budget", "--timeout",
              "--quick", "--full"],
    "export": ["-o", "--format", "--device"],
    "snapshot": ["-o", "--seconds", "--interval", "--redact", "--no-redact"],
}  # fmt: skip
TAKES_VALUE = {"--device", "--precision", "--timeout", "--precisions", "--save", "--load", "--preset",
               "--case-budget", "-o", "--format", "--seconds", "--interval"}  # fmt: skip


@settings(SETTINGS, max_examples=300 * SCALE)
@given(data=st.data(), command=st.sampled_from(sorted(OPTIONS)))
def test_fuzzed_command_lines(tmp_path_factory, nothing_left_running, data, command):
    argv = ["--replay", str(H100), command]
    for _ in range(data.draw(st.integers(0, 4))):
        option = data.draw(st.sampled_from(OPTIONS[command]))
        argv.append(option)
        if option in TAKES_VALUE:
            argv.append(data.draw(VALUES))
    if command == "bench":
        argv.append("--no-plugins")  # plugin benchmarks run children: covered by their own tests
    if command == "export":
        argv += ["--bench", "none"]  # quick would run checks and a memory trace
    if command == "snapshot":
        argv += [] if "-o" in argv else ["-o", "-"]
        argv += [] if "--seconds" in argv else ["--seconds", "0"]  # VALUES' own are refused, or at most 1e-6 s
    folder = tmp_path_factory.mktemp("out")
    argv = [str(folder / "out.file") if a == "h100" else a for a in argv]  # where a command may write
    with working_directory(folder):  # a relative -o or --save lands in the test's folder
        code, out, err = run_cli(argv)
    assert_answer(argv, code, out, err)


# Inputs that block or never end, in a subprocess with a time limit ----------------------------------------


def gpudash(*args: str, stdout=subprocess.PIPE, env_extra: dict | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, **(env_extra or {})}
    env.pop("GPUDASH_REPLAY", None)
    return subprocess.run(
        [sys.executable, "-m", "gpudash", *args], stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=30, env=env
    )


@pytest.mark.parametrize("option", ["--replay", "--config"])
def test_a_fifo_or_dev_zero_as_input_is_refused_at_once(tmp_path, option):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for source, kind in ((fifo, "a pipe (FIFO)"), ("/dev/zero", "a character device (1:5)")):
        res = gpudash(option, str(source), "info", "--json")
        assert res.returncode == UsageError.exit_code and res.stdout == ""
        assert res.stderr.count("\n") == 1 and f"is {kind}, not a regular file" in res.stderr


def test_bench_load_of_a_fifo_is_refused_at_once(tmp_path):
    fifo = tmp_path / "profile.json"
    os.mkfifo(fifo)
    res = gpudash("bench", "--load", str(fifo))
    assert res.returncode == UsageError.exit_code
    assert res.stderr == f"gpudash: error: {fifo}: is a pipe (FIFO), not a regular file (profile expected)\n"


@pytest.mark.parametrize("command", [["info", "--json"], ["snapshot", "-o", "-", "--seconds", "0"]])
def test_a_full_stdout_is_one_line_and_exit_3(command):
    with open("/dev/full", "w") as full:
        res = gpudash("--replay", str(H100), *command, stdout=full)
    assert res.returncode == GpudashError.exit_code
    assert res.stderr == "gpudash: error: cannot write to standard output: No space left on device\n"


# serve, fleet and web: arguments and the files they name ------------------------------------------------------
# Each example gets fresh hostile files (a FIFO nobody writes or reads, a directory, links, a device, a 0444 file,
# garbage); whatever gpudash does with them, nothing that was not its own regular file may change, and a
# read-only file changes only with --force. serve always has --textfile (it would otherwise serve until
# stopped), fleet's rounds go to loopback ports where nothing listens with a short --timeout, and web's server
# is replaced by a recorder once every option is checked: the checks are what is fuzzed, bounded in time
# (an example that blocks fails by SIGALRM instead of hanging the suite).

FILE_KINDS = ["fifo", "dir", "link", "dangling", "devzero", "devnull", "readonly", "garbage", "empty", "missing"]


def hostile_files(folder: Path) -> dict[str, Path]:
    made = {kind: folder / f"{kind}.prom" for kind in FILE_KINDS}
    os.mkfifo(made["fifo"])
    made["dir"].mkdir()
    (folder / "real.prom").write_text("# real\n")
    made["link"].symlink_to("real.prom")
    made["dangling"].symlink_to("gone.prom")
    made["devzero"].symlink_to("/dev/zero")
    made["devnull"].symlink_to(os.devnull)
    made["readonly"].write_text("# read-only\n")
    os.chmod(made["readonly"], 0o444)
    made["garbage"].write_bytes(b"\xff\x00-----BEGIN CERTIFICATE-----\n\x1b[2J\n")
    made["empty"].write_text("")
    made["missing"] = folder / "no" / "such.prom"
    made["new"] = folder / "new.prom"  # nothing there yet, in a folder that exists: a textfile is written
    return made


def fingerprints(folder: Path) -> dict[str, tuple]:
    found = {}
    for path in sorted(folder.rglob("*")):
        st_ = os.lstat(path)
        content = (
            path.read_bytes()
            if path.is_file() and not path.is_symlink()
            else os.readlink(path)
            if path.is_symlink()
            else None
        )
        found[str(path.relative_to(folder))] = (st_.st_mode, st_.st_ino, content)
    return found


def assert_nothing_lost(before: dict[str, tuple], after: dict[str, tuple], argv: list[str]) -> None:
    """Only a regular file gpudash may write changes (the garbage/empty ones, the read-only one with --force, a
    new file in the folder); every FIFO, directory, link and other file is as it was."""
    writable = {"garbage.prom", "empty.prom"} | ({"readonly.prom"} if "--force" in argv else set())
    for name, was in before.items():
        if name in writable:
            continue
        assert after.get(name) == was, (argv, name, was, after.get(name))


@contextlib.contextmanager
def bounded(seconds: float):
    """An example that blocks (a FIFO opened for reading or writing without a peer) fails here, not hangs."""
    import signal

    def late(*_):
        raise AssertionError(f"blocked for more than {seconds} s")

    previous = signal.signal(signal.SIGALRM, late)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


FILE = st.one_of(st.just("new"), st.sampled_from(FILE_KINDS))  # often a path gpudash may write, so work runs
NET_VALUES = st.sampled_from(
    ["", " ", " , ,", ",", "nan", "inf", "-1", "0", "1e-6", "0.2", "129", "1e400", "abc", "\x1b[2J", "a\x00b",
     "127.0.0.1:1", "127.0.0.1:0", "[::1]:1", "[::1", "127.0.0.1:99999", "http://127.0.0.1:1/metrics",
     "https://127.0.0.1:1", "ftp://127.0.0.1:1", "0.0.0.0:0", "localhost:0", "é" * 3, "a" * 3000]
)  # fmt: skip
FILE_OPTIONS = {
    "serve": ["--textfile", "--tls-cert", "--tls-key", "--config", "--replay"],
    "fleet": ["--hostfile", "--ca-file", "--config", "--replay"],
    "web": ["--config", "--replay"],
}
VALUE_OPTIONS = {
    "serve": ["--listen", "--hostname"],
    "fleet": ["--hosts", "--prometheus", "--timeout", "--concurrency", "--host"],
    "web": ["--listen", "--max-sessions"],
}
FLAGS = {
    "serve": ["--force", "--telemetry", "--no-telemetry"],
    "fleet": ["--json"],
    "web": ["--allow-remote", "--readonly"],
}


def network_argv(command: str, files: dict[str, Path], data: st.DataObject) -> list[str]:
    argv = [command]
    for option in data.draw(st.lists(st.sampled_from(FILE_OPTIONS[command]), max_size=2, unique=True)):
        argv += [option, str(files[data.draw(FILE)])]
    for option in data.draw(st.lists(st.sampled_from(VALUE_OPTIONS[command]), max_size=2, unique=True)):
        argv += [option, data.draw(NET_VALUES)]
    argv += data.draw(st.lists(st.sampled_from(FLAGS[command]), max_size=2, unique=True))
    if command == "serve" and "--textfile" not in argv:
        argv += ["--textfile", str(files[data.draw(FILE)])]
    if command == "fleet":
        if "--timeout" not in argv:
            argv += ["--timeout", "0.3"]
        if not any(o in argv for o in ("--hosts", "--prometheus", "--hostfile")):
            argv += ["--hosts", "127.0.0.1:1"]
    return argv


def hostfile_text(data: st.DataObject) -> str:
    lines = data.draw(st.lists(st.one_of(NET_VALUES, NASTY_TEXT, st.just("# comment")), max_size=5))
    return "\n".join(line.encode("utf-8", "replace").decode("utf-8") for line in lines if len(line) < 5000)


@settings(SETTINGS, max_examples=60 * SCALE)
@given(data=st.data(), command=st.sampled_from(["serve", "fleet", "web"]))
def test_fuzzed_serve_fleet_web(tmp_path_factory, monkeypatch, nothing_left_running, data, command):
    folder = tmp_path_factory.mktemp(command)
    files = hostile_files(folder)
    if command == "fleet" and data.draw(st.booleans()):
        files["garbage"].write_bytes(hostfile_text(data).encode("utf-8", "surrogateescape"))  # hostile lines
    before = fingerprints(folder)
    served: list[tuple] = []
    monkeypatch.setattr("gpudash.web.server.serve", lambda *a, **k: served.append((a, k)) or 0)
    argv = network_argv(command, files, data)
    with working_directory(folder), bounded(20):
        code, out, err = run_cli(argv)
    if command == "fleet" and code == 1:  # a finding: a host not up (nothing listens on those ports)
        assert "Traceback" not in err and "host" in out, (argv, err)
    else:
        assert_answer(argv, code, out, err)
    if command == "web" and code == 0:
        assert len(served) == 1  # it got as far as serving, every option accepted
    assert_nothing_lost(before, fingerprints(folder), argv)
