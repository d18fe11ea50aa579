"""The Precision view with Pilot: a replayed snapshot, remembered results, and a re-run with an injected
prober (no real probe runs here)."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import DataTable, Static
from tui_helpers import no_torch, screen_text, wait_until

from gpudash.config import defaults
from gpudash.devices import Machine, discover
from gpudash.measure import probe
from gpudash.measure.schema import PrecisionCapabilityMatrix, PrecisionTestResult
from gpudash.models import DeviceInfo, Host, Runtime
from gpudash.tui.app import create_app

SNAPSHOT = Path(__file__).resolve().parent.parent / "examples" / "snapshots" / "mi300x.json"
SIZE = (150, 45)


def detail(app) -> str:
    return str(app.query_one("#prec-detail", Static).render())


def status(app) -> str:
    return str(app.query_one("#prec-status", Static).render())


def _table_ready(app) -> bool:
    return bool(app.query("#prec-table")) and app.query_one("#prec-table", DataTable).row_count > 0


async def test_replayed_machine_shows_spec_and_is_never_probed(monkeypatch):
    monkeypatch.setattr(probe, "probe_machine", lambda *a, **k: pytest.fail("a replayed machine must not be probed"))
    app = create_app(discover(replay=str(SNAPSHOT), include_torch=False), defaults(), add_torch_view=no_torch)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("v")
        await wait_until(pilot, lambda: _table_ready(app))
        await pilot.pause(0.1)
        table = app.query_one("#prec-table", DataTable)
        assert table.row_count == 9
        text = screen_text(app)
        assert "amd:0 spec torch verified" in text and "fp8_e4m3" in text
        assert "spec and torch only, never probed" in status(app)
        assert "amd:0 fp64: spec native" in detail(app) and "not run: replayed" in detail(app)
        table.focus()
        for _ in range(5):  # down to fp8_e4m3: the detail follows the highlighted cell
            await pilot.press("down")
        await pilot.pause(0.05)
        assert detail(app).startswith("amd:0 fp8_e4m3: spec native")
        await pilot.press("R")
        await pilot.pause(0.05)
        assert any("never probed" in n.message for n in app._notifications)


def _matrix(device: DeviceInfo, verdicts: dict[str, tuple[str, str | None]], when: str) -> PrecisionCapabilityMatrix:
    results = {}
    for name, (verdict, reason) in verdicts.items():
        verified = {"verified": True, "slow_reference": True, "failed": False}[verdict]
        results[name] = PrecisionTestResult(
            precision=name,
            supported=verified,
            verified=verified,
            verdict=verdict,
            spec="native",
            torch=True,
            failure_reason=reason,
            max_rel_error=1e-3,
        )
    return PrecisionCapabilityMatrix(
        hardware_name=device.name, device=device.key, results=results, measured_at=when, provenance="measured"
    )


async def test_remembered_results_show_at_once_and_rerun_updates_them(monkeypatch):
    cpu = DeviceInfo(vendor="cpu", index=0, name="Test CPU", cpu_features=["avx512_bf16"], sources=["cpu"])
    machine = Machine(host=Host(hostname="testbox"), runtime=Runtime(), devices=[cpu])
    probe.remember(
        machine,
        {
            cpu.key: _matrix(
                cpu,
                {"fp32": ("verified", None), "bf16": ("failed", "bfloat16 to fp32: 4097 values became 0")},
                "2026-01-02T03:04:05+0000",
            )
        },
    )
    events = []

    def fake_prober(m, **kw):
        assert m is machine and kw["timeout_s"] == defaults()["probe"]["timeout_s"]
        kw["on_progress"](
            {"event": "check", "device": cpu.key, "precision": "bf16", "check": "matmul", "done": 0, "total": 1}
        )
        events.append("ran")
        return {
            cpu.key: _matrix(cpu, {"fp32": ("verified", None), "bf16": ("verified", None)}, "2026-02-03T04:05:06+0000")
        }

    monkeypatch.setattr(probe, "probe_machine", fake_prober)
    app = create_app(machine, defaults(), add_torch_view=no_torch)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("v")
        await wait_until(pilot, lambda: _table_ready(app))
        assert "remembered probe from" in status(app)
        table = app.query_one("#prec-table", DataTable)
        assert table.row_count == 2
        assert "✗" in str(table.get_cell_at((1, 1)))  # bf16 failed
        table.focus()
        await pilot.press("down")
        await pilot.pause(0.05)
        assert "became 0" in detail(app) and "measured 2026-01-02T03:04:05" in detail(app)

        await wait_until(pilot, lambda: app.torch_state != "loading")
        await pilot.press("R")
        await wait_until(pilot, lambda: status(app).startswith("probed"))
        assert events == ["ran"]
        assert "✓" in str(table.get_cell_at((1, 1)))
        assert not app.query_one("#prec-run").disabled
    _saved_at, matrices = probe.remembered(machine)
    assert matrices[cpu.key].results["bf16"].verdict == "verified"


async def test_remembered_results_that_are_ignored_are_said_on_the_dashboard(no_vendor_libs):
    """The command line prints one warning line when a remembered-results file is damaged and ignored; under the
    dashboard stderr is not seen, so it says the same in a notification naming the file."""
    from gpudash import store
    from gpudash.measure.probe.store import PROBE_KIND

    machine = discover(include_torch=False)
    damaged = store.path_of(PROBE_KIND, machine)
    damaged.parent.mkdir(parents=True, exist_ok=True)
    damaged.write_text('{"saved_at": "2026-11-20T10:00:00+0000", "data": ')  # cut off mid-write
    store._warned.discard(str(damaged))
    app = create_app(machine, defaults(), add_torch_view=no_torch)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("v")  # the Precision view reads the remembered probe
        await wait_until(pilot, lambda: any("remembered results ignored" in n.message for n in app._notifications))
        (said,) = [n.message for n in app._notifications if "remembered results ignored" in n.message]
    assert said.startswith(str(damaged)) and "\n" not in said
    assert store.warn is not app._say_ignored  # the command line's warning line is back after the dashboard
