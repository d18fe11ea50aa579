"""Find and load gpudash plugins, tolerating broken ones; collect and run their checks and benchmarks.

Plugins come from the entry-point group "gpudash" (installed packages, gpudash's own built-ins included) and
from one-file plugins in plugin directories (`--plugins-dir DIR`, the `plugin_dirs` config key).
GPUDASH_LOAD_PLUGINS=name1,name2 loads only those (entry-point name, distribution name or file stem; an empty
value loads none). A plugin that fails to import, uses an unknown hook name, or raises while registering is
recorded with its error, reported on stderr, and left out; the others load.

Only registration runs in this process. Checks and benchmarks run in the child-process runner
(gpudash.measure.runner) with a time limit: the child re-creates the plugin manager from the same sources
and runs one named check or benchmark (gpudash.plugin_host), so a plugin that raises, hangs or kills its
process becomes a result with its error.
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import re
import sys
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

import pluggy

from gpudash import hookspecs
from gpudash.errors import UsageError
from gpudash.plugins_api import (
    ENTRY_POINT_GROUP, ERROR, NOT_RUN_REPLAYED, PROJECT, SKIP, CheckResult, Device, Kernel,
)

LOAD_ENV = "GPUDASH_LOAD_PLUGINS"
HOOKS = ("register_benchmarks", "register_checks", "register_kernels")
ENTRY_POINT, FILE, IN_PROCESS = "entry point", "file", "registered in-process"
DEFAULT_CHECK_TIMEOUT_S = 60.0
DEFAULT_BENCH_TIMEOUT_S = 600.0

ErrorReporter = Callable[[str, str], None]


def report_to_stderr(plugin: str, message: str) -> None:
    print(f"gpudash: plugin {plugin!r}: {message}", file=sys.stderr)


@dataclass
class PluginRecord:
    """What `gpudash plugins` shows for one plugin."""

    name: str
    source: str  # ENTRY_POINT | FILE | IN_PROCESS
    origin: str  # the distribution ("gpudash 0.1.0"), the file path, or the object's module
    version: str | None = None
    target: str | None = None  # the entry point's value, e.g. "plugins.rocm_checks.hooks"
    loaded: bool = False
    hooks: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    provides: dict[str, list[str]] = field(  # what its register_* hooks registered, by name
        default_factory=lambda: {"checks": [], "benchmarks": [], "kernels": []})

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Registered:
    """A check, benchmark or kernel and the plugin that registered it."""

    plugin: str
    name: str
    obj: Any


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def allowed_names(environ: dict[str, str] | None = None) -> set[str] | None:
    """GPUDASH_LOAD_PLUGINS as a set of canonical names; None when unset (load everything)."""
    value = (os.environ if environ is None else environ).get(LOAD_ENV)
    if value is None:
        return None
    return {_canonical(n.strip()) for n in value.split(",") if n.strip()}


class GpudashPluginManager(pluggy.PluginManager):
    def __init__(self, on_error: ErrorReporter | None = report_to_stderr) -> None:
        super().__init__(PROJECT)
        self.add_hookspecs(hookspecs)
        self.records: dict[str, PluginRecord] = {}
        self.plugin_dirs: list[str] = []
        self.load_entry_points = False
        self.on_error = on_error
        self._collected: dict[str, list[Registered]] = {}

    # Loading ------------------------------------------------------------------------------------

    def fail(self, record: PluginRecord, message: str) -> None:
        message = " ".join(message.split())  # pluggy's messages span lines; one line each here
        record.errors.append(message)
        if self.on_error:
            self.on_error(record.name, message)

    def register(self, plugin: Any, name: str | None = None) -> str | None:
        """pluggy's register, also recording plugins registered by hand (tests, embedding)."""
        registered = super().register(plugin, name)
        if registered and registered not in self.records:
            origin = getattr(plugin, "__name__", None) or type(plugin).__module__
            self.records[registered] = PluginRecord(registered, IN_PROCESS, origin, loaded=True)
        if registered:
            self.records[registered].hooks = sorted(c.name for c in self.get_hookcallers(plugin) or [])
        self._collected.clear()
        return registered

    def add(self, plugin: Any, record: PluginRecord) -> bool:
        """Register a loaded plugin object, or reject it (recording why) when pluggy refuses it or one of its
        hooks is not in the spec (check_pending: a typo such as register_chekcs)."""
        self.records[record.name] = record
        try:
            self.register(plugin, name=record.name)
        except pluggy.PluginValidationError as exc:
            self.fail(record, f"rejected: {exc}")
            return False
        except ValueError as exc:  # the same module registered twice under two names
            self.fail(record, f"rejected: {exc}")
            return False
        try:
            self.check_pending()
        except pluggy.PluginValidationError:
            unknown = [c.name for c in self.get_hookcallers(plugin) or [] if not c.has_spec()]
            self.unregister(name=record.name)
            record.hooks = []
            for hook in unknown:
                close = difflib.get_close_matches(hook, HOOKS, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else f" (hooks are {', '.join(HOOKS)})"
                self.fail(record, f"unknown hook {hook!r}{hint}")
            return False
        record.loaded = True
        return True

    def load_from_entry_points(self, allowed: set[str] | None) -> None:
        self.load_entry_points = True
        for dist, ep in _entry_points():
            dist_name = dist.metadata["Name"] or "unnamed distribution"  # broken metadata must not stop the rest
            if allowed is not None and _canonical(ep.name) not in allowed and _canonical(dist_name) not in allowed:
                continue
            existing = self.records.get(ep.name)
            if existing is not None:
                if existing.target != ep.value:  # the same distribution seen twice on sys.path is fine
                    self.fail(existing, f"another entry point also named {ep.name!r} ({ep.value}) was ignored")
                continue
            record = PluginRecord(ep.name, ENTRY_POINT, f"{dist_name} {dist.version}", version=dist.version,
                                  target=ep.value)
            self.records[ep.name] = record
            try:
                with _stdout_to_stderr():
                    plugin = ep.load()
            except KeyboardInterrupt:
                raise
            except BaseException as exc:  # ImportError, a raise at import, even SystemExit
                self.fail(record, f"failed to import {ep.value}: {type(exc).__name__}: {exc}")
                continue
            self.add(plugin, record)

    def load_from_dir(self, directory: str, allowed: set[str] | None) -> None:
        path = Path(directory).expanduser()
        if not path.is_dir():
            raise UsageError(f"plugin directory {directory}: not a directory")
        self.plugin_dirs.append(str(path.resolve()))
        for file in sorted(path.glob("*.py")):
            name = file.stem
            if name.startswith("_") or (allowed is not None and _canonical(name) not in allowed):
                continue
            if name in self.records:
                self.fail(self.records[name], f"one-file plugin {file} has the same name and was ignored")
                continue
            record = PluginRecord(name, FILE, str(file.resolve()))
            self.records[name] = record
            module = _import_file(file, record, self)
            if module is not None:
                record.version = getattr(module, "__version__", None)
                self.add(module, record)

    # Where a child process can load the same plugins from ---------------------------------------------

    def sources(self) -> dict[str, Any]:
        return {"plugin_dirs": list(self.plugin_dirs), "load_entry_points": self.load_entry_points}

    def runs_in_child(self, plugin: str) -> bool:
        record = self.records.get(plugin)
        return record is not None and record.source in (ENTRY_POINT, FILE)


def _entry_points():
    """(distribution, entry point) for the group, from every distribution on sys.path.

    Not importlib.metadata.entry_points(): it keeps only the first distribution of each name, so a stale
    gpudash.egg-info in a checkout (on sys.path as the current directory) would hide the installed metadata
    and with it gpudash's own plugins. Duplicates are dropped by the caller (same name, same target).
    """
    for dist in importlib.metadata.distributions():
        for ep in dist.entry_points:
            if ep.group == ENTRY_POINT_GROUP:
                yield dist, ep


def _stdout_to_stderr():
    """Plugin code runs here while gpudash may be printing JSON: its prints go to stderr instead."""
    return contextlib.redirect_stdout(sys.stderr)


def _import_file(file: Path, record: PluginRecord, pm: GpudashPluginManager):
    module_name = f"gpudash_plugin_file_{file.stem}_{hashlib.sha1(str(file.resolve()).encode()).hexdigest()[:8]}"
    try:
        spec = importlib.util.spec_from_file_location(module_name, file)
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module  # dataclasses and pickling look modules up by name
        with _stdout_to_stderr():
            spec.loader.exec_module(module)
        return module
    except KeyboardInterrupt:
        raise
    except BaseException as exc:
        sys.modules.pop(module_name, None)
        pm.fail(record, f"failed to import {file}: {type(exc).__name__}: {exc}")
        return None


def make_plugin_manager(plugin_dirs=(), load_entry_points: bool = True, *,
                        on_error: ErrorReporter | None = report_to_stderr) -> GpudashPluginManager:
    """A fresh plugin manager (nothing is built at import time): entry points, then one-file plugins.

    `on_error(plugin, message)` hears each load error (default: one line on stderr; the TUI passes None and
    shows `pm.records` instead). Raises UsageError for a plugin directory that does not exist.
    """
    pm = GpudashPluginManager(on_error)
    allowed = allowed_names()
    if load_entry_points:
        pm.load_from_entry_points(allowed)
    for directory in plugin_dirs:
        pm.load_from_dir(str(directory), allowed)
    if allowed and on_error:
        for name in sorted(allowed - {_canonical(n) for n in pm.records} - _distribution_names(pm)):
            on_error(name, f"named in {LOAD_ENV} but not found")
    return pm


def _distribution_names(pm: GpudashPluginManager) -> set[str]:
    return {_canonical(r.origin.rsplit(" ", 1)[0]) for r in pm.records.values() if r.source == ENTRY_POINT}


# Collecting what plugins register ---------------------------------------------------------------


def _is_runnable(obj: Any) -> bool:
    return isinstance(getattr(obj, "name", None), str) and bool(obj.name) and callable(getattr(obj, "run", None))


_KINDS = {
    "register_checks": ("check", "checks", _is_runnable),
    "register_benchmarks": ("benchmark", "benchmarks", _is_runnable),
    "register_kernels": ("kernel", "kernels", lambda obj: isinstance(obj, Kernel)),
}


def _collect(pm: GpudashPluginManager, hook: str) -> list[Registered]:
    """Call one register_* hook of every plugin separately, so one raising plugin costs only itself."""
    if hook in pm._collected:
        return pm._collected[hook]
    kind, plural, valid = _KINDS[hook]
    order = {name: i for i, name in enumerate(pm.records)}
    impls = sorted(getattr(pm.hook, hook).get_hookimpls(), key=lambda impl: order.get(impl.plugin_name, len(order)))
    found: list[Registered] = []
    for impl in impls:
        plugin = impl.plugin_name
        record = pm.records[plugin]
        names: list[str] = []

        def register(*items: Any, _plugin=plugin, _record=record, _names=names) -> None:
            for item in items:
                if isinstance(item, type):  # a class: instantiate it, as a convenience
                    item = item()
                if not valid(item):
                    pm.fail(_record, f"{hook}: {item!r} is not a {kind} (see gpudash.plugins_api)")
                    continue
                label = item.name if kind != "kernel" else f"{item.op}:{item.name}"
                if label in _names:
                    pm.fail(_record, f"{hook}: a second {kind} named {label!r} was ignored")
                    continue
                _names.append(label)
                found.append(Registered(_plugin, label, item))

        try:
            with _stdout_to_stderr():
                impl.function(**({"register": register} if "register" in impl.argnames else {}))
        except KeyboardInterrupt:
            raise
        except BaseException as exc:
            pm.fail(record, f"{hook} raised {type(exc).__name__}: {exc}")
        record.provides[plural] = names
    pm._collected[hook] = found
    return found


def collect_checks(pm: GpudashPluginManager) -> list[Registered]:
    return _collect(pm, "register_checks")


def collect_benchmarks(pm: GpudashPluginManager) -> list[Registered]:
    return _collect(pm, "register_benchmarks")


def collect_kernels(pm: GpudashPluginManager) -> list[Registered]:
    return _collect(pm, "register_kernels")


def list_plugins(pm: GpudashPluginManager) -> list[PluginRecord]:
    """Every plugin tried, loaded or not, with what it provides. Runs the register hooks, nothing more."""
    for hook in HOOKS:
        _collect(pm, hook)
    return list(pm.records.values())


_kernel_cache: list[Kernel] | None = None
_kernel_lock = threading.Lock()


def kernels_from_plugins() -> list[Kernel]:
    """Kernels from the installed plugins (entry points only), gathered once per process."""
    global _kernel_cache
    with _kernel_lock:
        if _kernel_cache is None:
            _kernel_cache = [r.obj for r in collect_kernels(make_plugin_manager())]
        return list(_kernel_cache)


# Running checks and benchmarks in the child-process runner ---------------------------------------


def plugin_device(device, machine) -> Device:
    """gpudash's DeviceInfo as the plain Device a plugin receives (JSON-safe: it crosses into the child)."""
    rt = machine.runtime
    extra = json.loads(json.dumps(device.extra or {}, default=str))
    return Device(
        vendor=device.vendor, index=device.index, name=device.name,
        compute_capability=device.compute_capability, gfx_target=device.gfx_target,
        torch_index=device.torch_index, memory_total_bytes=device.memory_total_bytes,
        multiprocessors=device.multiprocessors, max_clock_mhz=device.max_clock_mhz,
        cpu_features=list(device.cpu_features or []),
        runtime={"torch": rt.torch, "cuda": rt.cuda, "hip": rt.hip, "driver": rt.driver},
        replayed=bool(machine.replayed), extra=extra,
    )


def child_env() -> dict[str, str]:
    """The child sees this process's sys.path, so it finds the same plugins (e.g. a target dir a test added)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    return env


def _broken_result(status: str, error: str | None, kind: str) -> tuple[str, str]:
    """The runner's verdict on a task that did not return (error, timeout, crash), as a status and summary."""
    if status == "cancelled":
        return SKIP, "cancelled"
    if status == "error":  # the runner gives "Type: message"
        kind_of, _, message = (error or "").partition(": ")
        return ERROR, f"the {kind} raised {kind_of}: {message}" if message else f"the {kind} raised {error}"
    what = {"timeout": "did not finish", "crashed": "killed its process"}.get(status, status)
    return ERROR, f"the {kind} {what}: {error}"


def run_checks(machine, pm: GpudashPluginManager | None = None, plugin_dirs=(), timeout_s: float | None = None,
               devices=None, cancel: threading.Event | None = None,
               on_result: Callable[[CheckResult], None] | None = None,
               on_error: ErrorReporter | None = report_to_stderr) -> list[CheckResult]:
    """Run every registered check on every device (or `devices`), each in the child-process runner.

    Checks that need the device are skipped on a replayed machine, and checks limited to other vendors are
    skipped, without starting anything. `timeout_s`
    overrides each check's own limit (default DEFAULT_CHECK_TIMEOUT_S). Results come back in device order,
    then plugin order; `on_result` hears each one as it finishes. Without `pm`, one is made from
    `plugin_dirs` with `on_error` (pass None inside the TUI: stderr would tear the screen).
    """
    from gpudash.measure.runner import Task, run_tasks

    pm = pm if pm is not None else make_plugin_manager(plugin_dirs, on_error=on_error)
    checks = collect_checks(pm)
    results: list[CheckResult | None] = []
    tasks: list[Task] = []
    slots: list[int] = []
    for dev in (machine.devices if devices is None else devices):
        device = plugin_device(dev, machine)
        for reg in checks:
            check = reg.obj
            base = CheckResult(reg.plugin, reg.name, device.key, SKIP, "")
            vendors = getattr(check, "vendors", None)
            if vendors and device.vendor not in vendors:
                base.summary = f"not run: for {', '.join(vendors)} devices only"
            elif device.replayed and getattr(check, "needs_device", True):
                base.summary = NOT_RUN_REPLAYED
            elif not pm.runs_in_child(reg.plugin):
                base.status, base.summary = ERROR, "registered in-process: a child process cannot load it"
            else:
                limit = timeout_s or getattr(check, "timeout_s", None) or DEFAULT_CHECK_TIMEOUT_S
                tasks.append(Task("gpudash.plugin_host:run_check", {
                    "sources": pm.sources(), "plugin": reg.plugin, "check": reg.name, "device": device.to_dict(),
                }, timeout_s=float(limit), name=f"{reg.plugin}/{reg.name} on {device.key}"))
                slots.append(len(results))
                results.append(None)
                continue
            results.append(base)
            if on_result:
                on_result(base)

    def finished(task_result) -> None:
        index = slots[position[id(task_result.task)]]
        kw = task_result.task.kwargs
        if task_result.ok:
            result = CheckResult.from_dict(task_result.value)
        else:
            status, summary = _broken_result(task_result.status, task_result.error, "check")
            result = CheckResult(kw["plugin"], kw["check"], Device.from_dict(kw["device"]).key, status, summary,
                                 details={"output_tail": task_result.output_tail})
        results[index] = result
        if on_result:
            on_result(result)

    position = {id(task): i for i, task in enumerate(tasks)}
    done: set[int] = set()
    for task_result in run_tasks(tasks, cancel=cancel, on_result=lambda r: (done.add(id(r.task)), finished(r)),
                                 env=child_env()) if tasks else []:
        if id(task_result.task) not in done:  # cancelled before it started: the runner reports these only here
            finished(task_result)
    return [r for r in results if r is not None]


@dataclass
class BenchmarkRun:
    """One plugin benchmark on one device: its bench-style results, or why there are none."""

    plugin: str
    benchmark: str
    device: str
    status: str  # "ok" | SKIP | ERROR
    summary: str = ""
    results: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def run_benchmarks(machine, pm: GpudashPluginManager | None = None, plugin_dirs=(), devices=None,
                   budget_s: float = 2.0, timeout_s: float | None = None, cancel: threading.Event | None = None,
                   on_result: Callable[[BenchmarkRun], None] | None = None,
                   on_error: ErrorReporter | None = report_to_stderr) -> list[BenchmarkRun]:
    """Run every registered benchmark on every live device, each in the child-process runner.

    Each result dict has the bench contract keys (precision, op, shape, gflops, median_s, efficiency) plus
    "plugin", "benchmark" and "details"; efficiency is filled from gpudash's peak tables when the plugin left
    it out. A replayed machine is never measured: every run is a skip with "not run: replayed". `pm`,
    `plugin_dirs` and `on_error` as for run_checks.
    """
    from gpudash.knowledge import peaks_for
    from gpudash.measure.runner import Task, run_tasks

    pm = pm if pm is not None else make_plugin_manager(plugin_dirs, on_error=on_error)
    benchmarks = collect_benchmarks(pm)
    runs: list[BenchmarkRun] = []
    tasks: list[Task] = []
    owners: list[tuple[int, Any]] = []
    for dev in (machine.devices if devices is None else devices):
        device = plugin_device(dev, machine)
        for reg in benchmarks:
            run = BenchmarkRun(reg.plugin, reg.name, device.key, SKIP)
            runs.append(run)
            if device.replayed:
                run.summary = NOT_RUN_REPLAYED
            elif not pm.runs_in_child(reg.plugin):
                run.status, run.summary = ERROR, "registered in-process: a child process cannot load it"
            else:
                limit = timeout_s or getattr(reg.obj, "timeout_s", None) or DEFAULT_BENCH_TIMEOUT_S
                tasks.append(Task("gpudash.plugin_host:run_benchmark", {
                    "sources": pm.sources(), "plugin": reg.plugin, "benchmark": reg.name,
                    "device": device.to_dict(), "budget_s": budget_s,
                }, timeout_s=float(limit), name=f"{reg.plugin}/{reg.name} on {device.key}"))
                owners.append((len(runs) - 1, dev))
                continue
            if on_result:
                on_result(run)

    def finished(task_result) -> None:
        index, dev = owners[position[id(task_result.task)]]
        run = runs[index]
        if task_result.ok:
            run.status, run.results = "ok", list(task_result.value)
            peaks = peaks_for(dev)
            for item in run.results:
                peak = peaks.get(item.get("precision"))
                if item.get("efficiency") is None and peak and item.get("gflops"):
                    item["efficiency"] = item["gflops"] / peak.gflops
        else:
            run.status, run.summary = _broken_result(task_result.status, task_result.error, "benchmark")
        if on_result:
            on_result(run)

    position = {id(task): i for i, task in enumerate(tasks)}
    done: set[int] = set()
    for task_result in run_tasks(tasks, cancel=cancel, on_result=lambda r: (done.add(id(r.task)), finished(r)),
                                 env=child_env()) if tasks else []:
        if id(task_result.task) not in done:
            finished(task_result)
    return runs


def benchmark_results(runs: list[BenchmarkRun]) -> dict[str, list[dict[str, Any]]]:
    """Successful plugin benchmark results per device key, ready for the bench JSON `results` list."""
    out: dict[str, list[dict[str, Any]]] = {}
    for run in runs:
        out.setdefault(run.device, []).extend(run.results)
    return out


__all__ = [
    "HOOKS", "LOAD_ENV", "BenchmarkRun", "GpudashPluginManager", "PluginRecord", "Registered", "allowed_names",
    "benchmark_results", "collect_benchmarks", "collect_checks", "collect_kernels", "kernels_from_plugins",
    "list_plugins", "make_plugin_manager", "plugin_device", "run_benchmarks", "run_checks",
]
