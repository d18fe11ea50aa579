"""Recommended training settings for one device: gather its facts, recommend, write the file.

`gpudash export` and the TUI's Recommendations view both call `export_settings` and `write_export`, so they
write the same file (its text: gpudash.render.export). Anything that runs device code goes through the
child-process runner: probes (gpudash.measure.probe), the quick benchmark (gpudash.measure.bench), plugin
checks (gpudash.plugin_manager), and the model-memory trace or GPU batch trials (gpudash.recommend.memory_task).
`bench="none"` runs none of them: spec facts, what earlier probes, benchmarks and exports remembered for the
device, and the analytic memory formula. Whatever a live export measures is remembered (the probe store and the
bench history), so the Benchmarks view and a later gpudash.amp.AmpConfig.auto() see it and answer the same.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpudash import __version__
from gpudash.actions.session import Session
from gpudash.devices import Machine
from gpudash.errors import GpudashError, UsageError
from gpudash.fileio import REPLACED, write_output
from gpudash.models import NOT_RUN_REPLAYED, DeviceInfo, now_iso
from gpudash.recommend import Facts, Settings, decisions, recommend
from gpudash.recommend.facts import BatchTrial, check_as_dict
from gpudash.recommend.machine_facts import add_remembered, available_memory, machine_facts
from gpudash.recommend.model_spec import analytic_memory, describe, model_spec, traced_memory
from gpudash.render.export import render

if TYPE_CHECKING:
    from gpudash.plugin_manager import ErrorReporter

BENCH_MODES = ("none", "quick", "full")
DEFAULT_OUTPUT = {"toml": "gpudash.toml", "json": "gpudash.json"}
MEMORY_TIMEOUT_S = 120.0
TRIAL_TIMEOUT_S = 600.0

Status = Callable[[str], None]
# What the AMP rules compare in a quick export: fp32 against the autocast candidates (never fp16 on a CPU).
AMP_CANDIDATES = {True: ["fp32", "bf16"], False: ["fp32", "bf16", "fp16"]}


@dataclass
class Gathered:
    """What the export learned beyond the settings (for the CLI's stderr and the TUI)."""

    facts: Facts
    settings: Settings
    timings: dict[str, float] = field(default_factory=dict)


def select_device(machine: Machine, selector: str | int | None) -> DeviceInfo:
    """None: the first GPU, else the CPU. Otherwise as `gpudash probe --device`: a key ("nvidia:1", "cpu:0"),
    "cpu", "cuda:N", or a bare index N (GPU N, or device N on a machine without GPUs)."""
    devices = machine.devices
    if not devices:
        raise GpudashError("no devices found on this machine")
    if selector is None or selector == "":
        return next((d for d in devices if d.vendor != "cpu"), devices[0])
    from gpudash.measure.device_names import find_device

    return find_device(machine, str(selector))


def _quiet(_: str) -> None:
    pass


def base_facts(machine: Machine, device: DeviceInfo, config: dict[str, Any], bench: str) -> Facts:
    return machine_facts(
        machine,
        device,
        config=config,
        memory_available_bytes=available_memory(machine, device),
        bench_mode=bench,
        generated=now_iso(),
        gpudash_version=__version__,
    )


def _probe(machine: Machine, device: DeviceInfo, config: dict[str, Any], facts: Facts, status: Status) -> None:
    try:
        from gpudash.measure.probe import probe_machine, remember
    except ImportError:
        facts.not_run["probe"] = "the probe module (gpudash.measure.probe) is not installed"
        return
    status(f"probing the precisions of {device.key}")
    found = probe_machine(machine, devices=[device], timeout_s=config["probe"]["timeout_s"])
    matrix = facts.probe = _matrix_for(found, device)
    if matrix is None:
        facts.not_run["probe"] = "the probe returned nothing for this device"
        return
    _keep(facts, "probe", lambda: remember(machine, {device.key: matrix}))


def _bench(
    machine: Machine, device: DeviceInfo, config: dict[str, Any], facts: Facts, mode: str, status: Status
) -> None:
    try:
        from gpudash.measure.bench import bench_json, bench_machine
        from gpudash.measure.bench.store import append_run
    except ImportError:
        facts.not_run["bench"] = "the benchmark module (gpudash.measure.bench) is not installed"
        return
    precisions = None if mode == "full" else AMP_CANDIDATES[device.vendor == "cpu"]
    status(f"benchmarking {device.key} ({mode}{': ' + ', '.join(precisions) if precisions else ''})")
    found = bench_machine(
        machine,
        devices=[device],
        precisions=precisions,
        mode=mode,
        case_budget_s=config["bench"]["case_budget_s"],
        timeout_s=config["bench"]["timeout_s"],
    )
    report = _matrix_for(found, device)
    facts.bench = getattr(report, "matrix", report)
    if facts.bench is None:
        facts.not_run["bench"] = "the benchmark returned nothing for this device"
        return
    # Kept in the bench history like any `gpudash bench` run: the Benchmarks view and gpudash.amp see it.
    _keep(facts, "bench", lambda: append_run(machine, bench_json(machine, {device.key: report}, mode)))


def _keep(facts: Facts, what: str, save: Callable[[], Any]) -> None:
    """Remember a measurement; a store that cannot be written costs the memory, not the export."""
    try:
        save()
    except (OSError, GpudashError) as exc:  # GpudashError: fileio refused the path (a symbolic link, ...)
        facts.not_run[f"remembering the {what}"] = f"could not be saved ({exc}); this export still uses it"


def _matrix_for(found: Any, device: DeviceInfo) -> Any:
    return found.get(device.key) if isinstance(found, dict) else None


def _checks(
    machine: Machine,
    device: DeviceInfo,
    session: Session,
    facts: Facts,
    status: Status,
    on_plugin_error: ErrorReporter | None,
) -> None:
    try:
        from gpudash.actions.plugins import plugin_manager
        from gpudash.plugin_manager import run_checks
    except ImportError:
        facts.not_run["checks"] = "the plugin manager (gpudash.plugin_manager) is not installed"
        return
    status("running plugin checks")
    pm = plugin_manager(session, on_plugin_error)  # the session's plugin folders, and the user's [plugins] limits
    found = run_checks(machine, pm, devices=[device], on_error=on_plugin_error)
    facts.checks = [check_as_dict(r) for r in found]


def _memory(machine: Machine, device: DeviceInfo, facts: Facts, status: Status) -> None:
    """Trials on a live GPU torch can see; else a CPU trace of the model; the formula if the trace fails."""
    from gpudash.measure.runner import Task, run_one

    spec = model_spec(facts.config)
    dtype = decisions.amp_dtype(facts).dtype
    target = int(facts.config["export"]["target_effective_batch"])
    if not machine.replayed and device.vendor != "cpu" and device.torch_index is not None:
        status(f"finding the largest batch on {device.key} by trial steps")
        res = run_one(
            Task(
                "gpudash.recommend.memory_task:trial_batch",
                {
                    "spec": spec,
                    "dtype": dtype,
                    "device_type": "cuda",
                    "device_index": device.torch_index,
                    "limit": target,
                },
                timeout_s=TRIAL_TIMEOUT_S,
                name="batch trials",
            )
        )
        if res.ok:
            v = res.value
            facts.batch_trial = BatchTrial(
                v["largest_ok"],
                v["first_oom"],
                tuple((n, ok) for n, ok in v["trials"]),
                v["limit"],
                v["dtype"],
                describe(spec),
            )
            return
        facts.not_run["batch trials"] = f"{res.status}: {res.error}; estimating instead"
    status("tracing the model's memory on the CPU")
    traced, why = traced_memory(spec, dtype, MEMORY_TIMEOUT_S)
    if traced is not None:
        facts.model_memory = traced
        return
    _formula(facts, spec, dtype, why)


def _formula(facts: Facts, spec: dict, dtype: str, why: str) -> None:
    if spec["kind"] == "reference":
        facts.model_memory = analytic_memory(spec, dtype)
        facts.not_run["memory"] = f"{why}; activation memory from the analytic formula"
    else:
        facts.not_run["memory"] = f"{why}; a factory model cannot be sized without running it"


def export_settings(
    session: Session,
    *,
    device: str | int | None = None,
    bench: str | None = None,
    status: Status = _quiet,
    on_plugin_error: ErrorReporter | None = None,
) -> Gathered:
    """Gather the facts (running what `bench` allows) and recommend. Never writes anything.

    `status(message)` hears each step as it starts; `on_plugin_error(plugin, message)` each plugin load error.
    """
    machine, config = session.machine(), session.config
    bench = bench or config["export"]["bench"]
    if bench not in BENCH_MODES:
        raise UsageError(f"--bench {bench}: expected one of {', '.join(BENCH_MODES)}")
    dev = select_device(machine, device)
    facts = base_facts(machine, dev, config, bench)
    timings: dict[str, float] = {}

    def step(name: str, fn: Callable[..., None], *args: Any) -> None:
        start = time.perf_counter()
        fn(*args)
        timings[name] = round(time.perf_counter() - start, 2)

    if bench == "none":
        nothing = "--bench none runs nothing, and nothing was remembered for this device"
        facts.not_run.setdefault("probe", nothing)
        facts.not_run.setdefault("bench", nothing)
        facts.not_run.setdefault("checks", "--bench none: no checks run")
        add_remembered(facts, machine)  # what probe, bench and earlier exports measured here still counts
        _formula(facts, model_spec(config), decisions.amp_dtype(facts).dtype, "--bench none runs no model")
    else:
        if machine.replayed:
            facts.not_run["probe"] = facts.not_run["bench"] = NOT_RUN_REPLAYED
        else:
            step("probe", _probe, machine, dev, config, facts, status)
            step("bench", _bench, machine, dev, config, facts, bench, status)
        # Decide from what is remembered now: this run's measurements merged with earlier ones, the same
        # facts a later AmpConfig.auto() reads.
        add_remembered(facts, machine)
        step("checks", _checks, machine, dev, session, facts, status, on_plugin_error)
        step("memory", _memory, machine, dev, facts, status)
    return Gathered(facts, recommend(facts), timings)


# Writing ------------------------------------------------------------------------------------------


def describe_existing(path: str | Path) -> str | None:
    """What an existing export at `path` was (device, time), for the "replaced" message."""
    from gpudash.apply import read_tree

    try:
        head = read_tree(path).get("gpudash") or {}
    except Exception:
        return None
    if not isinstance(head, dict) or not head.get("device"):
        return None
    return f"{head.get('device')}, generated {head.get('generated', '?')}"


def write_export(settings: Settings, output: str, fmt: str = "toml") -> str:
    """Write the file atomically; returns the one-line message saying what was written or replaced."""
    text = render(settings, fmt)
    previous = describe_existing(output) if Path(output).is_file() else None
    replaced = write_output(output, text) == REPLACED  # a file, or a stream the user named (a pipe, /dev/null)
    if replaced:
        return f"replaced {output}" + (f" (was: {previous})" if previous else " (it was not a gpudash export)")
    return f"wrote {output}"
