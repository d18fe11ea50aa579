"""The Checks and Plugins views under Pilot: injected results (status, fix, env; loaded, failed, why), then one
real run of the built-in ROCm checks on a replayed Strix Halo."""

from __future__ import annotations

import json

from conftest import MI300X, snapshot_dict
from textual.widgets import DataTable, Static
from tui_helpers import no_torch, screen_text, wait_until

from gpudash.actions.check import CheckRun
from gpudash.config import defaults
from gpudash.devices import discover
from gpudash.plugin_manager import PluginRecord
from gpudash.plugins_api import CheckResult
from gpudash.tui import views
from gpudash.tui.app import create_app
from gpudash.tui.screens.checks_view import ChecksView
from gpudash.tui.screens.plugins_view import PluginsView

SIZE = (160, 48)


def replayed(tmp_path, gfx="gfx1151", hip="7.1.25424"):
    path = tmp_path / "amd.json"
    runtime = {"torch": "2.9.0+rocm", "cuda": None, "hip": hip, "driver": "6.8"}
    device = {**MI300X, "gfx_target": gfx, "name": "AMD Radeon 8060S"}
    path.write_text(json.dumps(snapshot_dict(device, runtime=runtime)))
    return discover(replay=str(path))


INJECTED = [
    CheckResult(
        "rocm_checks",
        "known_issues",
        "amd:0",
        "warn",
        "bf16 is partial [red][/]",  # a plugin's words: shown as they are, never read as markup
        remediation="convert on the CPU",
        env={"MIOPEN_DEBUG_CONV_DIRECT": "0"},
    ),
    CheckResult("rocm_checks", "bf16_to_fp32", "amd:0", "skip", "not run: replayed"),
    CheckResult("sample", "segfaults", "amd:0", "error", "the check killed its process: process killed by SIGSEGV"),
]


def inject(monkeypatch, spec):
    """Replace the registry's view of the same id: the app builds views from gpudash.tui.views.VIEWS."""
    monkeypatch.setattr(views, "VIEWS", [spec if v.id == spec.id else v for v in views.VIEWS])


async def test_checks_view_shows_injected_results_fix_and_env(tmp_path, monkeypatch):
    calls = []

    def runner(session, cancel, on_result):
        machine = session.machine()
        calls.append(machine.label)
        for result in INJECTED:
            on_result(result)
        broken = [{"plugin": "broken", "errors": ["failed to import broken: ImportError"]}]
        return CheckRun(machine, list(machine.devices), INJECTED, 3, broken)

    inject(monkeypatch, views.ViewSpec("checks", "Checks", "c", lambda app: ChecksView(app, runner=runner)))
    app = create_app(replayed(tmp_path), defaults(), add_torch_view=no_torch)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("c")
        await wait_until(pilot, lambda: app.query("#checks") and not app.query_one(ChecksView).running)
        await pilot.pause(0.1)
        text = screen_text(app)
        assert "rocm_checks/known_issues" in text and "WARN" in text and "bf16 is partial [red][/]" in text
        assert "the check killed its process" in text
        status = str(app.query_one("#checks-status", Static).render())
        assert "1 WARN, 1 UNKNOWN, 1 not applicable" in status and "1 plugin(s) with load errors" in status
        detail = str(app.query_one("#checks-detail", Static).render())
        assert "fix: convert on the CPU" in detail and "env: MIOPEN_DEBUG_CONV_DIRECT=0" in detail

        table = app.query_one("#checks-table", DataTable)
        table.focus()
        await pilot.press("down", "down")  # the detail follows the highlighted row: the skip is last
        await wait_until(pilot, lambda: "not run: replayed" in str(app.query_one("#checks-detail", Static).render()))

        await pilot.press("R")  # run again, from the key binding
        await wait_until(pilot, lambda: len(calls) == 2 and not app.query_one(ChecksView).running)
        await pilot.pause(0.05)
        assert table.row_count == 3


async def test_plugins_view_shows_loaded_and_failed_with_why(tmp_path, monkeypatch):
    records = [
        PluginRecord(
            "rocm_checks",
            "entry point",
            "gpudash 0.1.0",
            "0.1.0",
            "gpudash_plugins.rocm_checks.hooks",
            True,
            ["register_checks"],
            [],
            {"checks": ["known_issues", "fft_stability"], "benchmarks": [], "kernels": []},
        ),
        PluginRecord(
            "typo_hook",
            "file",
            "/p/typo_hook.py",
            None,
            None,
            False,
            [],
            ["unknown hook 'register_chekcs' (did you mean 'register_checks'?)"],
        ),
    ]
    inject(
        monkeypatch,
        views.ViewSpec("plugins", "Plugins", "l", lambda app: PluginsView(app, loader=lambda session: records)),
    )
    app = create_app(replayed(tmp_path), defaults(), add_torch_view=no_torch)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("l")
        await wait_until(
            pilot, lambda: app.query("#plugins-table") and app.query_one("#plugins-table", DataTable).row_count
        )
        await pilot.pause(0.1)
        text = screen_text(app)
        assert "rocm_checks" in text and "2 checks" in text and "loaded" in text
        assert "typo_hook" in text and "failed" in text
        assert "2 plugins, 1 failed to load" in str(app.query_one("#plugins-status", Static).render())
        table = app.query_one("#plugins-table", DataTable)
        table.focus()
        await pilot.press("down")
        await pilot.pause(0.05)
        detail = str(app.query_one("#plugins-detail", Static).render())
        assert "why: unknown hook 'register_chekcs'" in detail


async def test_checks_view_runs_the_real_rocm_checks_on_a_replay(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUDASH_LOAD_PLUGINS", "rocm_checks")
    app = create_app(replayed(tmp_path), defaults(), add_torch_view=no_torch)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("c")
        await wait_until(pilot, lambda: app.query("#checks") and not app.query_one(ChecksView).running)
        view = app.query_one(ChecksView)
        by = {r.check: r for r in view.results}
        assert by["known_issues"].status == "warn" and by["bf16_to_fp32"].summary == "not run: replayed"
        status = str(app.query_one("#checks-status", Static).render())
        assert "1 WARN, 1 OK" in status and f"{len(view.results) - 2 + len(view.health)} not applicable" in status
        assert all(h.severity is None for h in view.health)  # nothing recorded to judge on this replay
        await pilot.press("l")  # and the real Plugins view lists the plugin that ran them
        await wait_until(pilot, lambda: app.query("#plugins") and app.query_one(PluginsView).records)
        assert [r.name for r in app.query_one(PluginsView).records] == ["rocm_checks"]


async def test_checks_run_from_the_dashboard_are_remembered_for_serve(no_vendor_libs):
    """The Checks view runs the checks through `gpudash check`'s action, so what it found is remembered the same
    way: `gpudash serve` then publishes it (gpudash.exporter reads the remembered checks)."""
    from gpudash.exporter.remembered import RememberedResults
    from gpudash.plugin_manager.remembered import remembered_checks

    machine = discover(include_torch=False)
    assert remembered_checks(machine) is None
    app = create_app(machine, defaults(), add_torch_view=no_torch)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("c")
        await wait_until(pilot, lambda: app.query("#checks") and not app.query_one(ChecksView).running, timeout=60)
        shown = len(app.query_one(ChecksView).results)  # the plugins' results (the table folds the skips)
    saved = remembered_checks(machine)
    assert saved is not None and shown > 0 and len(saved[1]) == shown
    assert {c["device"] for c in saved[1]} == {"cpu:0"}
    published = RememberedResults(machine).current().checks  # what `gpudash serve` publishes for this machine
    assert [(c["plugin"], c["check"], c["status"]) for c in published] == [
        (c["plugin"], c["check"], c["status"]) for c in saved[1]
    ]
