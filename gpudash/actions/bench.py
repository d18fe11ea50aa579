"""A benchmark of the session's devices: the built-in sweep, the plugins' benchmarks beside it, and the
bench history, all in one place, so every face measures, shows and keeps the same run.

`plan` decides what runs (devices, sweep, a calibration preset and whether it fits this platform);
`run` measures it, each part in the child-process runner, and keeps every live run in the history
(gpudash.measure.bench.store). Plugin benchmarks go under each device's "plugin_benchmarks" key of the
bench JSON (an extension of the contract), not into "results": a plugin's "adaptive_matmul" row is not a
point of the built-in per-precision sweep, and mixing them would change what peak_gflops_by_precision means.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpudash.actions.session import Session
from gpudash.errors import GpudashError, UsageError
from gpudash.store import NotKept

if TYPE_CHECKING:
    from gpudash.devices import Machine
    from gpudash.measure.bench import BenchReport
    from gpudash.measure.calibration.presets import Preset
    from gpudash.models import DeviceInfo
    from gpudash.plugin_manager import ErrorReporter

MODES = ("quick", "full")
BenchDoc = dict[str, Any]  # the bench JSON contract document
Progress = Callable[[dict[str, Any]], None]
Status = Callable[[str], None]


@dataclass
class Mismatch:
    """A preset that does not fit the platform of a device it would measure."""

    preset: str  # the preset's name
    device: DeviceInfo
    problems: list[str]  # what does not fit, as phrases
    message: str  # the calibration seed's explanation, several lines
    fits: list[str]  # the presets that do fit this device


@dataclass
class BenchPlan:
    machine: Machine
    devices: list[DeviceInfo]
    mode: str
    case_budget_s: float
    timeout_s: float
    precisions: list[str] | None = None  # None: every precision each architecture has
    preset: Preset | None = None  # its peaks replace the tables' (efficiencies against a named part)
    plugins: bool = True  # run the plugins' benchmarks too (never with a preset: its peaks are the sweep's)
    mismatches: list[Mismatch] = field(default_factory=list)
    operations: list[str] | None = None  # "matmul", "memory" (the calibration seed's --operations); None: both


def plan(
    session: Session,
    *,
    devices: Iterable[str] | None = None,
    mode: str = "quick",
    precisions: Iterable[str] | None = None,
    preset: Preset | None = None,
    case_budget_s: float | None = None,
    timeout_s: float | None = None,
    plugins: bool = True,
    operations: Iterable[str] | None = None,
) -> BenchPlan:
    """What a run would measure. `devices` are selectors as `--device` takes them (default: every device,
    or with a preset those of the preset's kind). Budgets default to the config's bench section."""
    from gpudash.measure.calibration import platform
    from gpudash.measure.device_names import find_devices

    if mode not in MODES:
        raise UsageError(f"bench mode {mode!r}: expected one of {', '.join(MODES)}")
    from gpudash.measure.bench import job_kinds

    try:
        job_kinds(operations)
    except ValueError as exc:
        raise UsageError(f"--operations: {exc}") from None
    machine = session.machine()
    if devices:
        chosen = find_devices(machine, devices)
    elif preset is not None:  # the preset says which kind of device it describes
        chosen = [d for d in machine.devices if platform.device_type(d) == preset.device] or machine.devices[:1]
    else:
        chosen = list(machine.devices)
    if not chosen:
        raise UsageError("no devices to benchmark")
    settings = session.config["bench"]
    return BenchPlan(
        machine,
        chosen,
        mode,
        case_budget_s if case_budget_s is not None else float(settings["case_budget_s"]),
        timeout_s if timeout_s is not None else float(settings["timeout_s"]),
        list(precisions) if precisions is not None else None,
        preset,
        plugins,
        _mismatches(machine, chosen, preset) if preset is not None else [],
        list(operations) if operations is not None else None,
    )


def _mismatches(machine: Machine, devices: list[DeviceInfo], preset: Preset) -> list[Mismatch]:
    """The devices whose platform the preset was not made for, in device order."""
    from gpudash.measure.calibration import platform

    out = []
    for device in devices:
        facts = platform.platform_of(machine, device)
        problems = platform.mismatches(preset, facts)
        if problems:
            message = platform.mismatch_message(preset, facts, problems)
            out.append(Mismatch(preset.name, device, problems, message, platform.presets_that_fit(facts)))
    return out


@dataclass
class BenchRun:
    plan: BenchPlan
    reports: dict[str, BenchReport]  # device key -> the built-in sweep's report
    data: BenchDoc | None  # the bench JSON with plugin benchmarks attached; None when cancelled
    history_path: Path | None = None  # where the run was kept (None: replayed, or cancelled)
    save_error: str | None = None  # why the run could not be kept (it is still returned whole)

    @property
    def cancelled(self) -> bool:
        return self.data is None


def run(
    session: Session,
    plan: BenchPlan,
    *,
    cancel: threading.Event | None = None,
    on_progress: Progress | None = None,
    on_status: Status | None = None,
    on_plugin_error: ErrorReporter | None = None,
) -> BenchRun:
    """Measure `plan`: the sweep, then the plugin benchmarks; keep a live run in the bench history.

    `on_progress` hears the sweep's events ({"device", "kind", "precision", "shape", "done", "total"});
    `on_status` a line when a part starts; `on_plugin_error(plugin, message)` each plugin load error.
    A cancelled run (`cancel` set) keeps nothing. A replayed machine is never measured: spec peaks, labelled.
    """
    from gpudash.measure import bench as sweep
    from gpudash.measure.bench.store import append_run

    machine, preset = plan.machine, plan.preset
    if on_status and not machine.replayed:
        on_status(
            f"benchmarking {', '.join(d.key for d in plan.devices)} ({plan.mode} sweep, "
            f"case budget {plan.case_budget_s:g} s) in a child process"
        )
    reports = sweep.bench_machine(
        machine,
        devices=plan.devices,
        precisions=plan.precisions,
        mode=plan.mode,
        case_budget_s=plan.case_budget_s,
        timeout_s=plan.timeout_s,
        cancel=cancel,
        on_progress=on_progress,
        peak_overrides=preset.peaks() if preset else None,
        operations=plan.operations,
    )
    if cancel is not None and cancel.is_set():
        return BenchRun(plan, reports, None)
    data = sweep.bench_json(machine, reports, plan.mode, preset.name if preset else None)
    if plan.plugins and preset is None:
        attach(data, plugin_benchmarks(session, plan, cancel, on_status, on_plugin_error))
        if cancel is not None and cancel.is_set():
            return BenchRun(plan, reports, None)
    if machine.replayed:
        return BenchRun(plan, reports, data)
    try:
        return BenchRun(plan, reports, data, append_run(machine, data))
    except NotKept:  # the state path is not a file: store already said so, in one line
        return BenchRun(plan, reports, data)
    except GpudashError as exc:  # the state folder is not writable: the run is shown all the same
        return BenchRun(plan, reports, data, save_error=str(exc))


def plugin_benchmarks(
    session: Session,
    plan: BenchPlan,
    cancel: threading.Event | None = None,
    on_status: Status | None = None,
    on_plugin_error: ErrorReporter | None = None,
) -> dict[str, list[dict[str, Any]]]:
    """device key -> the plugin runs on it (plugin, benchmark, status, summary, results)."""
    from gpudash.actions.plugins import plugin_manager
    from gpudash.plugin_manager import collect_benchmarks, run_benchmarks

    pm = plugin_manager(session, on_plugin_error)
    if not collect_benchmarks(pm):
        return {}
    if on_status and not plan.machine.replayed:
        on_status("running plugin benchmarks")
    runs = run_benchmarks(
        plan.machine, pm, devices=plan.devices, budget_s=plan.case_budget_s, timeout_s=plan.timeout_s, cancel=cancel
    )
    out: dict[str, list[dict[str, Any]]] = {}
    for item in runs:
        out.setdefault(item.device, []).append(item.to_dict())
    return out


def attach(data: BenchDoc, by_device: dict[str, list[dict[str, Any]]]) -> None:
    """Put each device's plugin runs under its "plugin_benchmarks" key."""
    for dev in data["devices"]:
        if dev.get("key") not in by_device:
            continue
        dev["plugin_benchmarks"] = by_device[dev["key"]]
        # Where the sweep proved an estimated peak too low, an efficiency against it means nothing here either.
        too_low = {p for p, info in (dev.get("peak_provenance") or {}).items() if info.get("too_low")}
        for item in dev["plugin_benchmarks"]:
            for result in item.get("results") or []:
                if result.get("precision") in too_low:
                    result["efficiency"] = None


@dataclass
class KnownBench:
    """What the Benchmarks view can show without running anything."""

    runs: list[tuple[str, BenchDoc]]  # (saved_at, bench JSON) of the kept runs, newest first
    spec: BenchDoc | None = None  # a replayed machine: a run that never ran, its spec peaks labelled


def known(session: Session) -> KnownBench:
    from gpudash.measure import bench as sweep
    from gpudash.measure.bench.store import saved_runs

    machine = session.machine()
    if machine.replayed:  # nothing runs: bench_machine only labels the spec peaks
        return KnownBench([], sweep.bench_json(machine, sweep.bench_machine(machine), "quick"))
    return KnownBench(saved_runs(machine))
