"""Every exit code docs/cli.md documents ("Exit codes by command"), run for real and compared with that table;
and each command's --help says the same words.

The table is parsed from the docs, so a row added there without a case here fails, and so does a command
(gpudash.cli.COMMANDS) without rows. Each case is a whole `gpudash` process on this machine (no GPU): faults are
planted the way the other tests plant them (tests/probe_faults.py, a plugin folder, torch hidden from the
import system), ports are loopback ones.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from servers import REPO, free_port, gpudash_serve

TESTS = Path(__file__).resolve().parent
H100 = str(REPO / "examples" / "snapshots" / "h100-80gb.json")
RTX_3060 = str(REPO / "examples" / "snapshots" / "rtx-3060.json")
EVERY = "every command"

NO_TORCH = "import sys; sys.modules['torch'] = None\n"  # importlib.util.find_spec('torch') is then None
PLANTED_PROBE = "from gpudash.measure import probe; probe.TASK_TARGET = 'probe_faults:run_probe'\n"


def documented() -> list[tuple[str, str, str]]:
    """(command, code, meaning) for every row of docs/cli.md's 'Exit codes by command'."""
    text = (REPO / "docs" / "cli.md").read_text()
    section = text.split("### Exit codes by command", 1)[1]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or cells[0] in ("command", "---") or not line.startswith("|"):
            continue
        rows.append((cells[0].strip("`"), cells[1], cells[2]))
    return rows


ROWS = documented()


def test_the_table_covers_every_command_and_every_code_of_each():
    from gpudash.cli import COMMANDS

    commands = {command for command, _, _ in ROWS}
    assert set(COMMANDS) <= commands, f"no rows in docs/cli.md for {sorted(set(COMMANDS) - commands)}"
    assert commands - {EVERY} <= set(COMMANDS)
    for command in COMMANDS:
        codes = [code for c, code, _ in ROWS if c == command]
        assert "0" in codes and "2" in codes, command
    assert {code for c, code, _ in ROWS if c == EVERY} == {"129", "130", "143"}
    assert set(CASES) == {(c, code) for c, code, _ in ROWS}, "a documented row without a case, or the reverse"


def _help(*words: str) -> str:
    run = subprocess.run([sys.executable, "-m", "gpudash", *words, "--help"], capture_output=True, text=True,
                         timeout=60, cwd=REPO, env=dict(os.environ, COLUMNS="100"))  # fmt: skip
    assert run.returncode == 0, run.stderr
    return " ".join(run.stdout.split())


@pytest.mark.parametrize("command", sorted({c for c, _, _ in ROWS if c != EVERY}))
def test_help_says_what_the_table_says(command):
    said = _help(command)
    for c, code, meaning in ROWS:
        if c == command:
            assert f"{code} {' '.join(meaning.split())}" in said, (command, code)
    assert "129, 130, 143 ended by SIGHUP, Ctrl-C (SIGINT) or SIGTERM" in said or command == "preflight"


def test_the_general_table_names_the_signal_codes():
    said = _help()
    general = {code: meaning for c, code, meaning in ROWS if c == EVERY}
    for code, meaning in general.items():  # the docs row may add when it applies; --help gives the code's name
        assert re.search(rf"\b{code}\s+{re.escape(meaning.split(',')[0])}", said), code


# --- the cases ---------------------------------------------------------------------------------------------


class Env:
    """What one case runs in: a scratch folder, the environment, plugins that pass, fail or wait."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.env = dict(
            os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")]))
        )
        self.marker = tmp / "check-started"

    def verdicts(self, *statuses: str) -> list[str]:
        """A plugin folder with one check per status ('raise': the check breaks; 'wait': it writes the marker
        and sleeps), as the arguments that load it."""
        folder = self.tmp / "plugins"
        folder.mkdir(exist_ok=True)
        (folder / "verdicts.py").write_text(
            f"STATUSES = {list(statuses)!r}\nMARKER = {str(self.marker)!r}\n" + CHECK_PLUGIN
        )
        self.env["GPUDASH_LOAD_PLUGINS"] = "verdicts"
        return ["--plugins-dir", str(folder)]

    def run(self, *words: str, prelude: str = "", stdout=subprocess.PIPE, findings: bool = False) -> int:
        """`findings`: a 2 or 3 is a verdict (check --exit-codes nagios), not an error line."""
        run = subprocess.run(self._argv(prelude, words), stdout=stdout, stderr=subprocess.PIPE, text=True,
                             env=self.env, cwd=self.tmp, timeout=120)  # fmt: skip
        _one_line_if_failed(run.returncode, run.stderr, findings)
        return run.returncode

    def signalled(self, sig: int, *words: str, ready: Callable[[subprocess.Popen], bool]) -> int:
        """Start the command, wait until `ready`, send `sig`, and return the exit code."""
        proc = subprocess.Popen(self._argv("", words), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                env=self.env, cwd=self.tmp)  # fmt: skip
        try:
            deadline = time.monotonic() + 60
            while not ready(proc):
                assert proc.poll() is None, f"ended before the signal: {proc.returncode}"
                assert time.monotonic() < deadline, "never got ready"
                time.sleep(0.05)
            proc.send_signal(sig)
            return proc.wait(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            assert proc.stdout is not None
            proc.stdout.close()

    def _argv(self, prelude: str, words) -> list[str]:
        main = "from gpudash.cli import main\nraise SystemExit(main(sys.argv[1:]))\n"
        return [sys.executable, "-c", "import sys\n" + prelude + main, *words]


def _one_line_if_failed(code: int, stderr: str, findings: bool) -> None:
    """A failure (2 or 3) says so in a line with `error` in it, never a traceback."""
    assert "Traceback" not in stderr, stderr
    if code in (2, 3) and not findings:
        assert "error" in stderr, stderr


CHECK_PLUGIN = """
import time
from pathlib import Path
from gpudash.plugins_api import Check, hookimpl


class Verdict(Check):
    needs_device = False

    def __init__(self, name, status):
        self.name, self.status = name, status

    def run(self, device):
        if self.status == "raise":
            raise RuntimeError("this check broke")
        if self.status == "wait":
            Path(MARKER).write_text("started")
            time.sleep(120)
        return self.result(self.status, f"{self.status} on {device.key}")


@hookimpl
def register_checks(register):
    register(*(Verdict(status + "_check", status) for status in STATUSES))
"""


@contextmanager
def busy_port() -> Iterator[int]:
    """A loopback port something else is listening on."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        yield held.getsockname()[1]


def closed_port() -> int:
    return free_port()


def _said(text: str) -> Callable[[subprocess.Popen], bool]:
    """Ready once the command has said `text` on stdout or stderr (one pipe, read from its descriptor)."""
    import selectors

    seen = bytearray()

    def ready(proc: subprocess.Popen) -> bool:
        assert proc.stdout is not None
        selector = selectors.DefaultSelector()
        selector.register(proc.stdout.fileno(), selectors.EVENT_READ)
        if selector.select(timeout=0.2):
            seen.extend(os.read(proc.stdout.fileno(), 65536))
        return text.encode() in seen

    return ready


def info_full(e: Env) -> int:
    with open("/dev/full", "w") as full:
        return e.run("--replay", H100, "info", stdout=full)


def check_signal(sig: int) -> Callable[[Env], int]:
    def case(e: Env) -> int:
        return e.signalled(sig, *e.verdicts("wait"), "check", ready=lambda _: e.marker.exists())

    return case


def fleet_up(e: Env) -> int:
    with gpudash_serve("--replay", H100, env=e.env) as (url, _):
        return e.run("fleet", "--hosts", url, "--timeout", "10")


def fleet_lost_gpu(e: Env) -> int:
    from health_snapshots import faulty_replay  # the 8-GPU example with GPU 3 lost

    with gpudash_serve("--replay", str(faulty_replay(e.tmp)), env=e.env) as (url, _):
        return e.run("fleet", "--hosts", url, "--timeout", "10")


def fleet_fewer_gpus(e: Env) -> int:
    with gpudash_serve("--replay", H100, env=e.env) as (url, _):
        return e.run("fleet", "--hosts", url, "--timeout", "10", "--expect-gpus", "2")


def fleet_no_device_series(e: Env) -> int:
    from servers import exposition_server

    with exposition_server("# TYPE node_load1 gauge\nnode_load1 0.25\n") as (url, _):
        return e.run("fleet", "--hosts", url, "--timeout", "10")


def fleet_bad_hostfile_column(e: Env) -> int:
    (e.tmp / "hosts").write_text("127.0.0.1:9483 eight\n")
    return e.run("fleet", "--hostfile", str(e.tmp / "hosts"))


def serve_listen_busy(e: Env) -> int:
    with busy_port() as port:
        return e.run("--replay", H100, "serve", "--listen", f"127.0.0.1:{port}")


def web_listen_busy(e: Env) -> int:
    with busy_port() as port:
        return e.run("web", "--listen", f"127.0.0.1:{port}")


def bad_web_config(e: Env) -> int:
    (e.tmp / "web.yml").write_text("basic_auth_users:\n  admin: not-a-bcrypt-hash\n")
    return e.run("--replay", H100, "serve", "--web-config", str(e.tmp / "web.yml"))


def export_no_fit(e: Env) -> int:
    (e.tmp / "model.toml").write_text("[model]\nlayers = 80\nhidden = 8192\nheads = 64\nseq_len = 4096\n")
    return e.run("--config", str(e.tmp / "model.toml"), "--replay", RTX_3060, "export", "--bench", "none", "-o",
                 str(e.tmp / "gpudash.toml"))  # fmt: skip


def nagios(*statuses: str) -> Callable[[Env], int]:
    return lambda e: e.run(*e.verdicts(*statuses), "--replay", H100, "check", "--exit-codes", "nagios", findings=True)


# (command, code) -> the cases that must exit with that code; "0/1/2/3": each case with its own code.
CASES: dict[tuple[str, str], list[tuple[Callable[[Env], int], int]]] = {
    ("info", "0"): [(lambda e: e.run("--replay", H100, "info"), 0)],
    ("info", "2"): [(lambda e: e.run("--replay", H100, "--only", "99", "info"), 2)],
    ("info", "3"): [(info_full, 3)],
    ("probe", "0"): [(lambda e: e.run("--replay", H100, "probe"), 0)],
    ("probe", "1"): [
        (
            lambda e: e.run(
                "probe", "--device", "cpu:0", "--precisions", "fp32", prelude=PLANTED_PROBE + _fault("fp32=segfault")
            ),
            1,
        )
    ],
    ("probe", "2"): [(lambda e: e.run("probe", "--precisions", "nope"), 2)],
    ("probe", "3"): [(lambda e: e.run("probe", prelude=NO_TORCH), 3)],
    ("bench", "0"): [(lambda e: e.run("bench", "--preset", "list"), 0)],
    ("bench", "1"): [(lambda e: e.run("bench", "--preset", _other_platform_preset()), 1)],
    ("bench", "2"): [(lambda e: e.run("bench", "--operations", "nope"), 2)],
    ("bench", "3"): [(lambda e: e.run("bench", prelude=NO_TORCH), 3)],
    ("check", "0"): [(lambda e: e.run(*e.verdicts("pass", "warn", "skip", "raise"), "--replay", H100, "check"), 0)],
    ("check", "1"): [(lambda e: e.run(*e.verdicts("pass", "fail"), "--replay", H100, "check"), 1)],
    ("check", "2"): [(lambda e: e.run("check", "--timeout", "soon"), 2)],
    ("check", "0/1/2/3"): [
        (nagios("pass"), 0),
        (nagios("pass", "warn", "raise"), 1),
        (nagios("warn", "fail"), 2),
        (nagios("pass", "raise"), 3),
    ],
    ("export", "0"): [
        (lambda e: e.run("--replay", RTX_3060, "export", "--bench", "none", "-o", str(e.tmp / "g.toml")), 0)
    ],
    ("export", "1"): [(export_no_fit, 1)],
    ("export", "2"): [(lambda e: e.run("--replay", RTX_3060, "export", "--bench", "none", "-o", str(e.tmp)), 2)],
    ("export", "3"): [
        (lambda e: e.run("export", "-o", str(e.tmp / "g.toml"), prelude=NO_TORCH), 3),
        (lambda e: e.run("--replay", RTX_3060, "export", "--bench", "none", "-o", "/sys/kernel/gpudash.toml"), 3),
    ],
    ("snapshot", "0"): [(lambda e: e.run("--replay", H100, "snapshot", "-o", str(e.tmp / "s.json")), 0)],
    ("snapshot", "2"): [(lambda e: e.run("--replay", H100, "snapshot", "-o", str(e.tmp / "no" / "s.json")), 2)],
    ("snapshot", "3"): [(lambda e: e.run("--replay", H100, "snapshot", "-o", "/sys/kernel/gpudash.json"), 3)],
    ("plugins", "0"): [(lambda e: e.run("plugins"), 0)],
    ("plugins", "2"): [(lambda e: e.run("--plugins-dir", "", "plugins"), 2)],
    ("serve", "0"): [
        (lambda e: e.run("--replay", H100, "serve", "--textfile", str(e.tmp / "g.prom")), 0),
        (
            lambda e: e.signalled(
                signal.SIGTERM, "--replay", H100, "serve", "--listen", "127.0.0.1:0", ready=_said("serving")
            ),
            0,
        ),
    ],
    ("serve", "2"): [(bad_web_config, 2)],
    ("serve", "3"): [
        (serve_listen_busy, 3),
        (lambda e: e.run("--replay", H100, "serve", "--textfile", "/sys/kernel/gpudash.prom"), 3),
    ],
    ("fleet", "0"): [(fleet_up, 0)],
    ("fleet", "1"): [
        (lambda e: e.run("fleet", "--hosts", f"127.0.0.1:{closed_port()}", "--timeout", "2"), 1),
        (fleet_lost_gpu, 1),
        (fleet_fewer_gpus, 1),
        (fleet_no_device_series, 1),
    ],
    ("fleet", "2"): [
        (lambda e: e.run("fleet", "--hosts", "127.0.0.1:9483", "--concurrency", "0"), 2),
        (fleet_bad_hostfile_column, 2),
        (lambda e: e.run("fleet", "--hosts", "127.0.0.1:9483", "--filter", "temp>>85"), 2),
        (lambda e: e.run("fleet", "--hosts", "127.0.0.1:9483", "--sort", "colour"), 2),
    ],
    ("fleet", "3"): [
        (lambda e: e.run("fleet", "--prometheus", f"http://127.0.0.1:{closed_port()}", "--timeout", "2"), 3)
    ],
    ("preflight", "0"): [
        (lambda e: e.run("preflight", "--device", "cpu", "--precisions", "fp32", "--no-checks", "--timeout", "60"), 0)
    ],
    ("preflight", "1"): [
        (
            lambda e: e.run(
                "preflight",
                "--device",
                "cpu",
                "--precisions",
                "fp32",
                "--no-checks",
                prelude=PLANTED_PROBE + _fault("fp32=segfault"),
            ),
            1,
        )
    ],
    ("preflight", "2"): [(lambda e: e.run("preflight", "--wait", "-1"), 2)],
    ("preflight", "3"): [(lambda e: e.run("preflight", prelude=NO_TORCH), 3)],
    ("completion", "0"): [(lambda e: e.run("completion", "bash"), 0)],
    ("completion", "2"): [(lambda e: e.run("completion", "powershell"), 2)],
    ("tui", "0"): [(lambda e: e.run("--replay", H100, "tui"), 0)],  # stdout is a pipe: prints info
    ("tui", "2"): [(lambda e: e.run("tui", "--no-such-option"), 2)],
    ("web", "0"): [
        (
            lambda e: e.signalled(signal.SIGINT, "web", "--listen", f"127.0.0.1:{free_port()}", ready=_said("serving")),
            0,
        )
    ],
    ("web", "2"): [(lambda e: e.run("web", "--max-sessions", "0"), 2)],
    ("web", "3"): [(web_listen_busy, 3)],
    (EVERY, "129"): [(check_signal(signal.SIGHUP), 129)],
    (EVERY, "130"): [(check_signal(signal.SIGINT), 130)],
    (EVERY, "143"): [(check_signal(signal.SIGTERM), 143)],
}


def _fault(fault: str) -> str:
    return f"import os; os.environ['GPUDASH_PROBE_FAULT'] = {fault!r}\n"


def _other_platform_preset() -> str:
    import platform

    return "ampere-altra-max" if platform.machine() == "x86_64" else "i7-12700k"


@pytest.mark.parametrize("command, code", sorted(CASES), ids=lambda v: str(v).replace(" ", "-"))
def test_every_documented_failure_exits_with_the_documented_code(tmp_path, command, code):
    for number, (case, expected) in enumerate(CASES[(command, code)]):
        assert str(expected) in code.split("/"), "a case must expect the code of its row"
        folder = tmp_path / str(number)
        folder.mkdir()
        assert case(Env(folder)) == expected, (command, code, number)
