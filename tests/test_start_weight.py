"""What the dashboard's start leaves out until it is needed (issue 25 item 7, docs/performance.md "Weight of the
dashboard's start"): the parser of every other command, the garbage collector's walks before the first frame,
views.tcss, the device detail and the process filter's Input. Each is still there, unchanged,
the moment it is asked for."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import H100, make_fake_pynvml
from tui_helpers import wait_until

from gpudash.config import defaults
from gpudash.devices import discover


def fake_nvml_env(tmp_path: Path) -> dict[str, str]:
    """A fresh interpreter's environment: this checkout and benchmarks/fake_nvml (the DGX H100 example's 8 GPUs)
    first on the path, no GPUDASH_ settings, no user config."""
    root = Path(__file__).resolve().parents[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPUDASH_")}
    env.update(
        PYTHONPATH=os.pathsep.join([str(root), str(root / "benchmarks" / "fake_nvml")]),
        GPUDASH_FAKE_SNAPSHOT="dgx-h100-8gpu.json",
        XDG_CONFIG_HOME=str(tmp_path),
    )
    return env


def _loaded_commands(words: list[str]) -> list[str]:
    """The command modules a fresh interpreter imports to parse `words` as `gpudash` does."""
    code = (
        "import sys; from gpudash.cli import build_parser; build_parser(lazy=True).parse_args(sys.argv[1:]); "
        "print(' '.join(sorted(m for m in sys.modules if m.startswith('gpudash.cli.') and m.endswith('_cmd'))))"
    )
    out = subprocess.run([sys.executable, "-c", code, *words], capture_output=True, text=True, timeout=60, check=True)
    return out.stdout.split()


def test_only_the_command_given_has_its_parser_built():
    assert _loaded_commands([]) == []  # the dashboard: no command's parser at all
    assert _loaded_commands(["info", "--json"]) == ["gpudash.cli.info_cmd"]
    assert _loaded_commands(["--replay", "x.json", "tui"]) == ["gpudash.cli.tui_cmd"]


def test_the_lazy_parser_helps_and_refuses_as_the_whole_one(capsys):
    from gpudash.cli import COMMANDS, build_parser

    whole = build_parser().format_help()
    lazy = build_parser(lazy=True)
    lazy.parse_args(["tui"])  # built out of order: the help still lists the commands in their order
    assert lazy.format_help() == whole
    again = build_parser(lazy=True)
    again.parse_args(["completion", "bash"])
    with pytest.raises(SystemExit):
        again.parse_args(["bogus"])
    assert f"commands: {', '.join(COMMANDS)}" in capsys.readouterr().err


def test_the_start_mode_is_the_dashboards_only(monkeypatch):
    """Until its first frame the dashboard runs without the cyclic collector and hands the GIL between its
    threads every 0.5 ms (gpudash.lifetime); every other command runs as Python does."""
    import gpudash.cli.info_cmd as info_cmd
    import gpudash.cli.terminal as terminal
    import gpudash.cli.tui_cmd as tui_cmd
    from gpudash import lifetime
    from gpudash.cli import main

    usual = sys.getswitchinterval()
    seen: dict[str, tuple[bool, float]] = {}
    monkeypatch.setattr(terminal, "is_terminal", lambda: True)
    monkeypatch.setattr(
        tui_cmd, "run", lambda ctx: seen.setdefault("tui", (gc.isenabled(), sys.getswitchinterval())) and 0
    )
    monkeypatch.setattr(
        info_cmd, "run", lambda ctx: seen.setdefault("info", (gc.isenabled(), sys.getswitchinterval())) and 0
    )
    replay = ["--replay", "examples/snapshots/h100-80gb.json"]
    try:
        main([*replay])
        main([*replay, "info"])
    finally:
        lifetime.started()
    assert seen == {"tui": (False, lifetime.START_SWITCH_INTERVAL_S), "info": (True, usual)}
    assert sys.getswitchinterval() == usual


def test_the_state_files_names_are_the_same_sha1_without_openssl():
    """The dashboard's health reading names the remembered results' file by a SHA-1 of the machine; hashlib would
    load OpenSSL's libcrypto for it (0.6 MiB resident)."""
    import hashlib

    code = (
        "import sys; from types import SimpleNamespace as N; from gpudash.store import machine_id; "
        "m = N(host=N(hostname='node1'), replayed=False, devices=[N(key='nvidia:0', name='H100 80GB HBM3')]); "
        "print(machine_id(m), 'hashlib' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    expected = hashlib.sha1(b"node1|live|nvidia:0=H100 80GB HBM3").hexdigest()[:12]  # what the files are named by
    assert out.stdout.split() == [expected, "False"]


@pytest.fixture
def machine(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", make_fake_pynvml([H100, dict(H100, index=1)]))
    monkeypatch.setitem(sys.modules, "amdsmi", None)
    monkeypatch.delenv("GPUDASH_REPLAY", raising=False)
    found = discover(include_torch=False)
    yield found
    found.close()


async def test_what_the_first_screen_leaves_out_comes_when_asked_for(machine):
    from textual.widgets import Input

    from gpudash import lifetime
    from gpudash.tui.app import VIEWS_CSS, create_app
    from gpudash.tui.stylesheets import DETAIL_CSS, DIALOGS_CSS
    from gpudash.tui.widgets.device_detail import DeviceDetail

    usual = sys.getswitchinterval()
    lifetime.starting()  # as gpudash.cli.main leaves it for the dashboard
    try:
        app = create_app(machine, defaults(), add_torch_view=lambda m: None)
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_until(pilot, lambda: bool(app.latest), timeout=30)
            await wait_until(pilot, gc.isenabled, timeout=30)  # on again once the first reading is drawn
            assert sys.getswitchinterval() == usual
            assert not app.query(DeviceDetail)  # mounted when a device is first opened
            assert not app.query("#proc-filter")
            assert not any(app.stylesheet.has_source(str(p)) for p in (VIEWS_CSS, DETAIL_CSS, DIALOGS_CSS))

            await pilot.press("enter")  # the highlighted device's detail, its fields as before
            await wait_until(pilot, lambda: app.query_one(DeviceDetail).display, timeout=30)
            detail = app.query_one(DeviceDetail)
            assert detail.device is not None and detail.device.key == "nvidia:0"
            assert detail.query("#detail-fields") and detail.query("#detail-title")
            assert app.stylesheet.has_source(str(DETAIL_CSS))  # read before the detail's widgets were mounted
            title = detail.query_one("#detail-title")
            assert title.styles.height is not None and title.styles.height.value == 1  # detail.tcss: height 1
            await pilot.press("escape")

            await pilot.press("question_mark")  # the help screen: dialogs.tcss, its box styled from the start
            await wait_until(pilot, lambda: bool(app.screen.query("#help")), timeout=30)
            assert app.stylesheet.has_source(str(DIALOGS_CSS))
            assert app.screen.query_one("#help").styles.max_height is not None  # dialogs.tcss: max-height 90%
            await pilot.press("escape")

            await pilot.press("slash")  # the filter, focused at once; escape hides it again
            await wait_until(pilot, lambda: bool(app.query("#proc-filter")), timeout=30)
            field = app.query_one("#proc-filter", Input)
            await wait_until(pilot, lambda: field.has_focus, timeout=30)
            await pilot.press("escape")
            await wait_until(pilot, lambda: not field.display, timeout=30)

            await pilot.press("c")  # another view: views.tcss is read before its widgets are mounted
            await wait_until(pilot, lambda: app.view("checks") is not None, timeout=30)
            assert app.stylesheet.has_source(str(VIEWS_CSS))
            table = app.query_one("#checks-table")
            await wait_until(pilot, lambda: table.styles.min_height is not None, timeout=30)
            assert table.styles.min_height.value == 4  # views.tcss: #prec-table, #checks-table ... min-height: 4
    finally:
        lifetime.started()


def test_the_parent_forks_the_driver_child_without_the_adapters_reading_code(tmp_path):
    """The parent reads the NVML child's answers; the adapter modules (and ctypes) are imported by the child only,
    and the AMD adapter not at all without an AMD driver. The devices and readings are the adapter's as before."""
    code = (
        "import sys; from gpudash.devices import begin_discovery; m = begin_discovery().machine(False); "
        "s = m.sample_all(); "
        "print(len([d for d in m.devices if d.vendor == 'nvidia']), sorted(s) == sorted(d.key for d in m.devices), "
        "[n for n in ('gpudash.devices.nvidia', 'gpudash.devices.amd', 'ctypes', 'pynvml') if n in sys.modules]); "
        "m.close()"
    )
    env = fake_nvml_env(tmp_path)
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True, env=env, cwd=tmp_path
    )
    assert out.stdout.split(None, 2) == ["8", "True", "[]\n"], out.stderr


async def test_the_first_screen_has_the_terminals_breakpoint_classes_before_its_widgets(machine):
    """At 80x24 the short, narrow layout from the first widget on: Textual gave the screen those classes only on
    its first resize, after the widgets were mounted and styled (a full restyle, and first frames drawn with
    the header of the tall layout)."""
    from gpudash.tui.app import create_app

    app = create_app(machine, defaults(), add_torch_view=lambda m: None)
    seen: list[set[str]] = []
    compose = app.compose
    app.compose = lambda: (seen.append(set(app.screen.classes)), (yield from compose()))[1]  # type: ignore[method-assign]
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: bool(app.latest), timeout=30)
        assert seen == [{"-narrow", "-short"}]
        assert {"-narrow", "-short"} <= set(app.screen.classes)
        await pilot.resize_terminal(140, 45)  # across both breakpoints: the classes follow, as before
        await wait_until(pilot, lambda: {"-normal", "-tall"} <= set(app.screen.classes), timeout=30)
        assert not {"-narrow", "-short"} & set(app.screen.classes)


@pytest.mark.parametrize("size", [(140, 45), (80, 24)])
async def test_the_first_screen_is_styled_once_and_as_a_full_restyle_would(machine, size):
    """Nothing restyles the whole first screen before its first reading is drawn (Textual did twice: on the first
    resize and on the screen's first resume); every widget's styles are what a full restyle gives them."""
    from gpudash.tui.app import create_app

    app = create_app(machine, defaults(), add_torch_view=lambda m: None)
    whole: list[int] = []
    update_nodes = app.stylesheet.update_nodes

    def counting(nodes, animate=False):  # type: ignore[no-untyped-def]
        nodes = list(nodes)
        if any(node is app.screen for node in nodes):
            whole.append(len(nodes))
        return update_nodes(nodes, animate=animate)

    app.stylesheet.update_nodes = counting  # type: ignore[method-assign]
    async with app.run_test(size=size) as pilot:
        await wait_until(pilot, lambda: bool(app.latest), timeout=30)
        await pilot.pause()  # the first reading drawn
        assert whole == []
        nodes = list(app.screen.walk_children(with_self=True))
        styled = [(node, node.styles.base.css) for node in nodes]
        update_nodes(nodes, animate=False)
        assert [(node, node.styles.base.css) for node in nodes] == styled
        await pilot.press("question_mark")  # a later resume restyles as Textual's screens do
        await wait_until(pilot, lambda: app.screen.id != "_default", timeout=30)
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen.id == "_default" and bool(whole), timeout=30)


def test_gpudash_alone_builds_no_parser_and_gets_the_parsers_defaults(monkeypatch):
    """`gpudash` with no words (the dashboard) skips argparse's parser: its options are what the parser gives for
    no words. Any word still goes through the parser."""
    import gpudash.cli as cli
    import gpudash.cli.terminal as terminal
    import gpudash.cli.tui_cmd as tui_cmd

    assert cli.bare_args() == cli.build_parser().parse_args([]) == cli.build_parser(lazy=True).parse_args([])
    built: list[list[str]] = []
    build_parser = cli.build_parser

    def counting(lazy: bool = False):  # type: ignore[no-untyped-def]
        parser = build_parser(lazy=lazy)
        parse = parser.parse_args
        parser.parse_args = lambda words=None, ns=None: (built.append(list(words or [])), parse(words, ns))[1]  # type: ignore[method-assign]
        return parser

    seen: list[dict[str, object]] = []
    monkeypatch.setattr(cli, "build_parser", counting)
    monkeypatch.setattr(terminal, "is_terminal", lambda: True)
    monkeypatch.setattr(tui_cmd, "run", lambda ctx: seen.append(dict(vars(ctx.args))) and 0)
    parsed = vars(build_parser().parse_args([])) | {"command": "tui", "func": tui_cmd.run}
    try:
        assert cli.main([]) == 0
        assert built == [] and seen == [parsed]  # the dashboard, with what the parser gave for no words
        assert cli.main(["--readonly"]) == 0  # a word: parsed as before
        assert built == [["--readonly"]] and seen[-1] == parsed | {"readonly": True}
    finally:
        gc.enable()


def test_the_first_frame_loads_none_of_what_it_does_not_show(tmp_path):
    """The dashboard's first frame on an NVIDIA machine: no signalling action, no MAMF table, no AMD table, no
    device detail's fields, card or health text, no health catalog (its watch starts after that frame; stopped
    here), no DataTable, no psutil. Each comes when asked for (the tests of the detail, the signal keys, the
    health marks, `info --json`, the process screen)."""
    later = (
        "gpudash.actions.processes",
        "gpudash.knowledge.mamf",
        "gpudash.knowledge.amd",
        "gpudash.tui.widgets.detail_fields",
        "gpudash.tui.widgets.device_card",
        "gpudash.health.catalog",
        "gpudash.render.device_health",
        "textual.widgets._data_table",  # the other views' tables (5 ms to import)
        "psutil",  # 9 ms to import: the CPU's row and the host line read /proc (gpudash.devices.host_counters)
    )
    code = f"""
import asyncio, sys, time
from gpudash.config import defaults
from gpudash.devices import begin_discovery
from gpudash.tui.app import create_app

async def main():
    machine = begin_discovery().machine(False)
    app = create_app(machine, defaults(), add_torch_view=lambda m: None)
    app.health_watch.start = lambda: None
    try:
        async with app.run_test(size=(140, 45)) as pilot:
            deadline = time.monotonic() + 30
            while not app.latest and time.monotonic() < deadline:
                await pilot.pause(0.02)
            await pilot.pause()
            print(bool(app.latest), [n for n in {later!r} if n in sys.modules])
    finally:
        machine.close()

asyncio.run(main())
"""
    env = fake_nvml_env(tmp_path)
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True, env=env, cwd=tmp_path
    )
    assert out.stdout.strip().splitlines()[-1] == "True []", out.stderr
