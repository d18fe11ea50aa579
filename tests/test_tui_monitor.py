"""The monitor as a user sees it, with Pilot: the dense device view at 80x24 and 160x48 on the 8- and 16-GPU
example snapshots, the process panel (sorted, filtered), signalling a real child process after the
confirmation (and every refusal), keys right after a tab switch, the command palette and the help screen."""

from __future__ import annotations

import getpass
import re
import signal
import subprocess
from pathlib import Path

import pytest
from textual.command import CommandPalette
from textual.widgets import Button, DataTable, Static
from tui_helpers import no_torch, open_detail, screen_text, wait_until, widget_text

from gpudash.config import defaults
from gpudash.devices import Machine, discover
from gpudash.devices.nvidia import lost_sample
from gpudash.models import DeviceInfo, Host, ProcessUsage, Runtime, Sample
from gpudash.render import processes as proc_text
from gpudash.tui.app import create_app
from gpudash.tui.commands import commands
from gpudash.tui.screens.help import HelpScreen
from gpudash.tui.screens.signal_dialog import SignalDialog
from gpudash.tui.widgets.device_detail import DeviceDetail
from gpudash.tui.widgets.device_table import DeviceTable
from gpudash.tui.widgets.process_table import ProcessTable

SNAPSHOTS = Path(__file__).resolve().parent.parent / "examples" / "snapshots"
DGX_H100 = SNAPSHOTS / "dgx-h100-8gpu.json"
DGX2_V100 = SNAPSHOTS / "dgx2-v100-16gpu.json"
GIB = 1024**3


def replay(path: Path, **kwargs):
    return create_app(discover(replay=str(path), include_torch=False), defaults(), add_torch_view=no_torch, **kwargs)


def lines(app) -> list[str]:
    return screen_text(app).splitlines()


def notes(app) -> list[str]:
    return [n.message for n in app._notifications]


async def ready(pilot, app) -> None:
    await wait_until(pilot, lambda: app.latest and app.query(DeviceTable) and app.query_one(DeviceTable).row_keys)
    await pilot.pause(0.15)


# The dense view --------------------------------------------------------------------------------


async def test_8_gpus_their_mig_devices_and_processes_fit_80x24():
    app = replay(DGX_H100)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot, app)
        shown = lines(app)
        for index in range(8):  # every GPU row on screen, none scrolled away
            assert any(re.match(rf"^ {index} +H100 80GB HBM3 ", line) for line in shown), index
        for mig in ("7:0 MIG 3g.40gb", "7:1 MIG 2g.20gb", "7:2 MIG 1g.10gb", "7:3 MIG 1g.10gb"):
            assert any("└ " + mig in line for line in shown)
        gpu7 = next(line for line in shown if line.startswith(" 7 "))
        assert " n/a " in gpu7 and "fp8" in gpu7  # utilization is NotSupported under MIG; the precision mark
        # The replay's host note, or (beside the driver facts, docs/cli.md) left out whole with the marker.
        assert any(
            "host dgx-h100-example" in line and ("not recorded (replayed" in line or "driver 550.54.15" in line)
            for line in shown
        )
        header = next(i for i, line in enumerate(shown) if "PID USER" in line)
        process_lines = [line for line in shown[header + 1 :] if re.match(r"^ +\d+ \S+ +\d", line)]
        assert len(process_lines) >= 5  # the panel keeps its rows; the rest scroll
        assert app.query_one(DeviceTable).scroll_y == 0 and app.query_one(DeviceTable).max_scroll_y == 0


async def test_16_gpus_and_all_their_processes_fit_160x48():
    app = replay(DGX2_V100)
    async with app.run_test(size=(160, 48)) as pilot:
        await ready(pilot, app)
        shown = lines(app)
        for index in range(16):
            assert any(re.match(rf"^ {index} +V100-SXM3-32GB ", line) for line in shown), index
        header = next(line for line in shown if "GPU NAME" in line)
        for column in ("UTIL", "MEMORY", "TEMP", "POWER", "FAN", "SM MHz", "MEM MHz", "PERF", "ENC/DEC", "PREC"):
            assert column in header  # the wide layout's extra fields
        table = app.query_one(ProcessTable)
        assert len(table.shown_rows) == 15
        text = screen_text(app)
        for row in table.shown_rows:  # every process row is on screen
            assert re.search(rf"\b{row.proc.pid} +{row.proc.user} +{re.escape(row.gpu)} ", text)
        assert "tritonserver" in text and "svc-triton" in text


async def test_numbers_line_up_under_their_headers_and_long_names_are_clipped():
    app = replay(DGX2_V100)
    async with app.run_test(size=(160, 48)) as pilot:
        await ready(pilot, app)
        shown = lines(app)
        header = next(line for line in shown if "GPU NAME" in line)
        rows = [line for line in shown if re.match(r"^ \d+ +V100-SXM3-32GB ", line)]
        assert len(rows) == 16
        for label in ("SM MHz", "MEM MHz", "ENC/DEC"):  # right-aligned: each value ends where its header ends
            end = header.index(label) + len(label)
            assert all(row[end - 1] != " " and row[end] == " " for row in rows), label
    app = replay(DGX2_V100)
    async with app.run_test(size=(60, 24)) as pilot:
        await ready(pilot, app)
        # The name whole: columns are left out first, counted in the header (docs/cli.md, narrow terminal).
        assert re.search(r"^ 0 +V100-SXM3-32GB ", screen_text(app), re.MULTILINE)
        assert re.search(r"^ GPU NAME .* HEALTH \+\d›", screen_text(app), re.MULTILINE)


async def test_enter_opens_the_detail_with_every_field_and_its_reason_and_escape_returns():
    app = replay(DGX_H100)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot, app)
        await open_detail(pilot, app, "nvidia:7")
        detail = app.query_one(DeviceDetail)
        assert detail.card is not None and detail.card.chart.display  # the chart is there at 80 columns too
        fields = {
            r: [c.plain.strip() for c in detail.query_one("#detail-fields").cells_of(r)]
            for r in detail.query_one("#detail-fields").row_keys
        }
        assert fields["fan"] == ["fan", "n/a", "NotSupported"]
        assert fields["utilization"][1:] == ["n/a", "NotSupported"]
        assert fields["power limit"][1] == "700 W" and fields["CUDA driver"][1] == "12.4"
        assert fields["UUID"][1].startswith("GPU-") and fields["MIG mode"][1] == "enabled"
        assert any(key.startswith("└ MIG 7:0 3g.40gb") for key in fields)
        await pilot.press("escape")
        await wait_until(pilot, lambda: not app.query_one(DeviceDetail).display)
        assert app.query_one(DeviceTable).highlighted_key == "nvidia:7" and app.focused is app.query_one(DeviceTable)


async def test_a_device_name_with_brackets_is_shown_as_written_in_the_table_and_its_card(tmp_path):
    # Names come from drivers and from replayed snapshots, the user's files: "[b]" must not vanish and "[/]"
    # must not end the dashboard with MarkupError.
    odd = DeviceInfo(vendor="cpu", index=0, name="Odd [/] CPU [b]2", sources=["cpu"])
    app = create_app(Machine(host=Host(hostname="box"), runtime=Runtime(), devices=[odd]), defaults(),
                     add_torch_view=no_torch)  # fmt: skip
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot, app)
        assert "Odd [/] CPU" in screen_text(app)  # the table cuts the name to its column
        await open_detail(pilot, app, "cpu:0")
        await wait_until(pilot, lambda: "CPU 0 · Odd [/] CPU [b]2" in screen_text(app))
        assert app.is_running


async def test_a_lost_gpu_says_lost_with_the_drivers_reason():
    gpus = [
        DeviceInfo(vendor="nvidia", index=i, name="NVIDIA A100-SXM4-80GB", compute_capability="8.0", sources=["nvml"])
        for i in range(2)
    ]
    machine = Machine(
        host=Host(hostname="testbox"),
        runtime=Runtime(driver="550.54.15"),
        devices=gpus,
        samplers={
            "nvidia:0": lambda: Sample(memory_used_bytes=GIB, memory_total_bytes=80 * GIB, utilization_pct=5),
            "nvidia:1": lambda: lost_sample("GpuIsLost"),
        },
    )
    app = create_app(machine, defaults(), add_torch_view=no_torch)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot, app)
        row = next(line for line in lines(app) if line.startswith(" 1 "))
        assert "LOST" in row and "GpuIsLost" in row and "n/a" not in row
        assert "GPU 1 lost: GpuIsLost: the GPU has fallen off the bus" in screen_text(app)
        await open_detail(pilot, app, "nvidia:1")
        table = app.query_one(DeviceDetail).query_one("#detail-fields")
        assert table.cells_of("status")[1].plain.strip().startswith("lost: GpuIsLost")


async def test_a_reading_that_failed_says_why_in_one_line():
    gpu = DeviceInfo(vendor="nvidia", index=0, name="NVIDIA L4", compute_capability="8.9", sources=["nvml"])

    def broken() -> Sample:
        raise TimeoutError("driver call timed out after 2 s (nvmlDeviceGetPowerUsage)")

    machine = Machine(host=Host(hostname="testbox"), runtime=Runtime(), devices=[gpu], samplers={gpu.key: broken})
    app = create_app(machine, defaults(), add_torch_view=no_torch)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot, app)
        assert "GPU 0: sampling failed: driver call timed out after 2 s" in screen_text(app)
        assert app.is_running


# The process panel -----------------------------------------------------------------------------


def _values(table: ProcessTable, sort_id: str) -> list:
    key = proc_text.SORT_BY_ID[sort_id].value
    return [key(r) for r in table.shown_rows if key(r) is not None]


async def test_processes_sort_by_key_reverse_and_filter():
    app = replay(DGX2_V100)
    async with app.run_test(size=(160, 48)) as pilot:
        await ready(pilot, app)
        table = app.query_one(ProcessTable)
        memory = _values(table, "gpu_mem")
        assert memory == sorted(memory, reverse=True) and "GPU-MEM▼" in screen_text(app)
        await pilot.press("s")  # the next key: SM%
        await pilot.pause(0.1)
        assert table.sort_id == "sm" and "SM%▼" in screen_text(app)
        sm = _values(table, "sm")
        assert sm == sorted(sm, reverse=True)
        assert table.shown_rows[-1].proc.utilization_pct is None  # n/a sorts last
        await pilot.press("S")
        await pilot.pause(0.1)
        assert _values(table, "sm") == sorted(_values(table, "sm")) and "SM%▲" in screen_text(app)
        await app.query_one("#dashboard").run_action("sort_by('pid')")
        await pilot.pause(0.1)
        assert [r.proc.pid for r in table.shown_rows] == sorted(r.proc.pid for r in table.shown_rows)
        x = sum(c.width for c in table.columns[: [c.key for c in table.columns].index("cpu")]) + 2
        await pilot.click(ProcessTable, offset=(x, 0))  # a click on the CPU% header sorts by it
        await pilot.pause(0.1)
        assert table.sort_id == "cpu" and "CPU%▼" in screen_text(app)
        await pilot.click(ProcessTable, offset=(x, 0))  # again: the other way
        await pilot.pause(0.1)
        assert table.sort_id == "cpu" and table.reverse and "CPU%▲" in screen_text(app)

        await pilot.press("slash")
        await pilot.press(*"triton")
        await pilot.pause(0.2)
        # Both of its GPUs' rows; their order follows the CPU% sort, whose replayed readings change with the cycle.
        assert {r.proc.pid for r in table.shown_rows} == {4410} and sorted(r.gpu for r in table.shown_rows) == [
            "12",
            "13",
        ]
        assert "filter “triton”: 2 of 15" in screen_text(app)
        await pilot.press("enter")  # keeps the filter, back to the table
        await pilot.pause(0.1)
        assert app.focused is table and len(table.shown_rows) == 2
        await pilot.press("escape")
        await pilot.pause(0.1)
        assert len(table.shown_rows) == 15 and "filter" not in str(app.query_one("#proc-note", Static).render())


# Signals -----------------------------------------------------------------------------------------


@pytest.fixture
def child():
    proc = subprocess.Popen(["sleep", "60"])
    yield proc
    if proc.poll() is None:
        proc.kill()
    proc.wait()


def live_machine(*pids: int) -> Machine:
    """A live (not replayed) machine whose one GPU lists the given pids, as NVML would."""
    gpu = DeviceInfo(vendor="nvidia", index=0, name="NVIDIA L4", compute_capability="8.9", sources=["nvml"])

    def sample() -> Sample:
        procs = [
            ProcessUsage(
                pid=pid, name="sleep", type="C", user=getpass.getuser(), command="sleep 60", memory_used_bytes=GIB
            )
            for pid in pids
        ]
        return Sample(memory_used_bytes=GIB, memory_total_bytes=24 * GIB, utilization_pct=10, processes=procs)

    return Machine(host=Host(hostname="testbox"), runtime=Runtime(), devices=[gpu], samplers={gpu.key: sample})


async def _highlight(pilot, app, pid: int) -> None:
    table = app.query_one(ProcessTable)
    await wait_until(pilot, lambda: any(r.proc.pid == pid for r in table.shown_rows))
    table.move_to_key(f"{pid}@0")
    await pilot.pause(0.05)


async def test_sigterm_after_confirmation_ends_a_real_process_and_cancel_does_not(child):
    app = create_app(live_machine(child.pid), defaults(), add_torch_view=no_torch)
    async with app.run_test(size=(100, 30)) as pilot:
        await _highlight(pilot, app, child.pid)
        await pilot.press("T")
        await wait_until(pilot, lambda: isinstance(app.screen, SignalDialog))
        assert f"Send SIGTERM to pid {child.pid}" in screen_text(app) and "sleep 60" in screen_text(app)
        await pilot.press("enter")  # the focus is on Cancel: a stray enter sends nothing
        await wait_until(pilot, lambda: not isinstance(app.screen, SignalDialog))
        await pilot.pause(0.2)
        assert child.poll() is None and "SIGTERM not sent: cancelled" in notes(app)

        await pilot.press("T")
        await wait_until(pilot, lambda: isinstance(app.screen, SignalDialog))
        await pilot.press("y")
        assert child.wait(timeout=10) == -signal.SIGTERM
        await wait_until(pilot, lambda: f"SIGTERM sent to pid {child.pid}" in notes(app))


async def test_sigkill_from_the_dialogs_button(child):
    app = create_app(live_machine(child.pid), defaults(), add_torch_view=no_torch)
    async with app.run_test(size=(100, 30)) as pilot:
        await _highlight(pilot, app, child.pid)
        await pilot.press("K")
        await wait_until(pilot, lambda: isinstance(app.screen, SignalDialog))
        await pilot.click("#signal-send")
        assert child.wait(timeout=10) == -signal.SIGKILL


async def test_signals_are_refused_on_a_replay_with_the_reason():
    app = replay(DGX_H100)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot, app)
        assert app.query_one(ProcessTable).highlighted is not None
        await pilot.press("T")
        await pilot.pause(0.2)
        assert not isinstance(app.screen, SignalDialog)
        assert any(
            m.startswith("SIGTERM not sent: replayed: these pids belong to dgx-h100-example") for m in notes(app)
        )


async def test_readonly_turns_signals_off(child):
    app = create_app(live_machine(child.pid), defaults(), add_torch_view=no_torch, readonly=True)
    async with app.run_test(size=(100, 30)) as pilot:
        await _highlight(pilot, app, child.pid)
        await pilot.press("K")
        await pilot.pause(0.2)
        assert not isinstance(app.screen, SignalDialog) and child.poll() is None
        assert "SIGKILL not sent: read-only: started with --readonly, so signals are off" in notes(app)


async def test_a_process_that_may_not_be_signalled_is_one_line_not_a_dialog():
    app = create_app(live_machine(1), defaults(), add_torch_view=no_torch)  # pid 1: init, never a target
    async with app.run_test(size=(100, 30)) as pilot:
        await _highlight(pilot, app, 1)
        await pilot.press("T")
        await pilot.pause(0.2)
        assert not isinstance(app.screen, SignalDialog) and app.is_running
        assert "SIGTERM not sent: pid 1 is not a user process" in notes(app)


# Keys, palette, help -----------------------------------------------------------------------------


async def test_a_tabs_own_keys_work_right_after_switching_to_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    app = replay(DGX_H100)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot, app)
        await pilot.press("r")
        await wait_until(pilot, lambda: app.query("#rec-table") and app.focused is app.query_one("#rec-table"))
        await wait_until(pilot, lambda: app.query_one("#recommend").gathered is not None)
        await pilot.press("x")  # no Tab first
        await wait_until(pilot, lambda: (tmp_path / "gpudash.toml").is_file())

        await pilot.press("v")
        await wait_until(pilot, lambda: app.query("#prec-table") and app.focused is app.query_one("#prec-table"))
        await pilot.press("R")
        await wait_until(pilot, lambda: any("never probed" in m for m in notes(app)))

        await pilot.press("b")
        await wait_until(pilot, lambda: app.query("#bench-table") and app.focused is app.query_one("#bench-table"))
        await pilot.press("R")
        await wait_until(pilot, lambda: any("never measured" in m for m in notes(app)))

        await pilot.press("d")
        await wait_until(pilot, lambda: app.focused is app.query_one(DeviceTable))
        await pilot.press("s")
        await wait_until(pilot, lambda: app.query_one(ProcessTable).sort_id == "sm")


async def test_the_command_palette_lists_and_runs_gpudashs_actions():
    app = replay(DGX_H100)
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot, app)
        names = [name for name, _, _ in commands(app)]
        for expected in (
            "Show Benchmarks",
            "Pause or resume live polling",
            "Export the recommended settings",
            "Re-run the precision probe",
            "Send SIGTERM to the highlighted process",
            "Sort processes by CPU%",
            "Details of GPU 7 (H100 80GB HBM3)",
        ):
            assert expected in names
        await pilot.press("ctrl+p")
        await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette))
        await pilot.press(*"sigterm")
        await wait_until(pilot, lambda: "Send SIGTERM to the highlighted process" in screen_text(app))
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, CommandPalette))

        await pilot.press("ctrl+p")
        await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette))
        await pilot.press(*"details of gpu 7")
        await wait_until(pilot, lambda: "Details of GPU 7" in screen_text(app))
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.query_one(DeviceDetail).display)
        assert app.query_one(DeviceDetail).device.key == "nvidia:7"

        await pilot.press("ctrl+p")
        await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette))
        await pilot.press(*"show benchmarks")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.query_one("#views").active == "view-bench")


async def test_help_lists_every_binding_with_tab_palette_and_each_views_keys():
    app = replay(DGX_H100)
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot, app)
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        text = widget_text(app.screen)
        for expected in (
            "tab\n", "ctrl+p\n", "command palette",
            "Dashboard (d)", "/\nfilter processes", "T\nask the highlighted process to exit",
            "K\nkill the highlighted process", "enter\non a device row",
            "Recommendations (r)", "x\nwrite the settings file",
            "Precision (v)", "Benchmarks (b)", "F\nthe long mamf-finder style sweep",
            "Checks (c)", "Plugins (l)",
        ):  # fmt: skip
            assert expected in text, expected


# Precision and Benchmarks on 8 identical GPUs ----------------------------------------------------


async def test_precision_groups_identical_gpus_and_shows_its_rows_at_80x24():
    app = replay(DGX_H100)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot, app)
        await pilot.press("v")
        await wait_until(pilot, lambda: app.query("#prec-table") and app.query_one("#prec-table").row_count)
        await pilot.pause(0.1)
        table = app.query_one("#prec-table", DataTable)
        assert [str(c.label) for c in table.columns.values()] == [
            "precision",
            "nvidia:0-7 (8x H100 80GB HBM3) spec torch verified",
        ]
        shown = screen_text(app)
        for name in ("fp64", "fp32", "tf32", "fp16", "bf16", "fp8_e4m3", "fp8_e5m2", "int8", "fp4"):
            assert re.search(rf"^ +{name} ", shown, re.M), name  # every row on screen
        detail = str(app.query_one("#prec-detail", Static).render())
        assert "verified: not run" in detail and "None" not in detail and "not_run" not in detail
        run = app.query_one("#prec-run", Button)
        assert run.disabled and "never probed" in str(run.tooltip)


async def test_benchmarks_group_identical_gpus_and_run_is_off_on_a_replay():
    app = replay(DGX_H100)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot, app)
        await pilot.press("b")
        await wait_until(pilot, lambda: app.query("#bench-table") and app.query_one("#bench-table").row_count)
        await pilot.pause(0.1)
        assert not app.query("#bench-device")  # one model: one entry, no chooser
        for button in ("#bench-run", "#bench-full"):
            assert app.query_one(button, Button).disabled
            assert "never measured" in str(app.query_one(button, Button).tooltip)
        assert "Run is off" in str(app.query_one("#bench-status", Static).render())
        assert "nvidia:0-7 (8x H100 80GB HBM3): one model" in str(app.query_one("#bench-notes", Static).render())
        assert not app.query_one("#bench-charts").display  # nothing measured: the table gets the rows
        shown = screen_text(app)
        for name in ("fp64", "fp32", "bf16", "fp8_e4m3", "int8"):
            assert re.search(rf"^ +{name} ", shown, re.M), name


def test_readonly_is_taken_where_people_type_it():
    """`gpudash --readonly` (how the dashboard is started), `gpudash tui --readonly`, and a session of its own."""
    from gpudash.cli import build_parser
    from gpudash.cli.context import Context

    for argv in (["--readonly"], ["tui", "--readonly"], ["--readonly", "web"]):
        args = build_parser().parse_args(argv)
        assert args.readonly is True, argv
        assert Context(args).session.readonly is True, argv
    assert Context(build_parser().parse_args([])).session.readonly is False


async def test_the_size_chart_draws_one_group_with_its_legend_beside_and_round_ticks(monkeypatch):
    from test_tui_bench import CPU, _reports

    from gpudash.measure.bench import bench_json
    from gpudash.measure.bench.store import append_run
    from gpudash.tui.screens.bench_view import SizeLines

    monkeypatch.setenv("GPUDASH_LOAD_PLUGINS", "")
    shapes = [(256, 256, 256), (1024, 1024, 1024), (4096, 4096, 4096)]
    bases = {"fp64": 90.3, "fp32": 178.1, "tf32": 190.7, "fp16": 310.2, "bf16": 402.9, "int8": 555.1}
    rates = {p: {s: b * (1 + i * 0.37) for i, s in enumerate(shapes)} for p, b in bases.items()}
    machine = Machine(host=Host(hostname="testbox"), runtime=Runtime(), devices=[CPU])
    append_run(machine, bench_json(machine, _reports(rates), "quick"))
    app = create_app(machine, defaults(), add_torch_view=no_torch)
    async with app.run_test(size=(140, 45)) as pilot:
        await pilot.press("b")
        await wait_until(pilot, lambda: app.query("#bench-table") and app.query_one("#bench-table").row_count == 6)
        await pilot.pause(0.2)
        lines_chart = app.query_one(SizeLines)
        assert [name for name, _ in lines_chart.legend] == ["fp64", "fp32", "tf32"]  # one group, not six lines
        assert str(app.query_one("#bench-legend", Static).render()).split() == [
            "━━",
            "fp64",
            "━━",
            "fp32",
            "━━",
            "tf32",
        ]
        chart = screen_text(app)
        ticks = re.findall(r"^ *([0-9.]+k?) ?┤", chart, re.M) + re.findall(r"│ *([0-9.]+k?)┤", chart)
        assert ticks and all(re.fullmatch(r"\d+(\.5)?k?", t) for t in ticks), ticks  # 0, 250, 1.5k; never 778.1
        assert "256" in chart and "1k" in chart and "4k" in chart  # sizes in powers of two
        table = app.query_one("#bench-table", DataTable)
        table.move_cursor(row=4)  # bf16: the 16-bit group
        await wait_until(pilot, lambda: [n for n, _ in lines_chart.legend] == ["fp16", "bf16"])
        assert "GFLOPS over matrix size · 16-bit" in screen_text(app)
