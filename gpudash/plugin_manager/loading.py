"""Loading: third-party plugins are imported in a child process only (vetting), and make_plugin_manager.

Vetting imports every third-party candidate in ONE child (gpudash.plugin_manager.host.vet_plugin), one after
another, each with a time limit, and calls its register_* hooks. One that crashes or hangs there (a broken
native extension, a module that blocks) is reported as failed; when it kills the child or overruns, a new
child takes the rest. For each of the others the child sends back a catalog (gpudash.plugin_manager.catalog):
gpudash's own process takes the plugin's record and its checks, benchmarks and kernels from there and never
imports the plugin. A plugin's code therefore runs twice at most: in the vetting child, and in the child that
runs its checks and benchmarks (gpudash.plugin_manager.host).

gpudash's own built-ins are trusted and imported here, not vetted, so a machine without third-party plugins
starts no child at all. Kernels (gpudash.ops) run in the caller's process by nature, so kernels_from_plugins
asks for the plugins to be imported there (after vetting) with import_here=True; so does any child.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gpudash.errors import UsageError
from gpudash.plugin_manager.manager import GpudashPluginManager
from gpudash.plugin_manager.records import (
    ENTRY_POINT,
    FILE,
    LOAD_ENV,
    ErrorReporter,
    allowed_names,
    plugin_key,
    report_to_stderr,
    unmatched,
)
from gpudash.plugin_manager.sources import (
    child_env,
    in_plugin_child,
    is_builtin,
    load_entry_point_plugins,
    load_plugin_dir,
    plugin_files_in,
    selected_entry_points,
)

if TYPE_CHECKING:
    from gpudash.measure.runner import TaskResult


VET_TIMEOUT_S = 20.0  # per candidate: importing it and calling its register_* hooks
VET_TIMEOUT_ENV = "GPUDASH_PLUGIN_VET_TIMEOUT_S"  # overrides VET_TIMEOUT_S; meant for tests
_START_UP_S = 60.0  # the child starting python and gpudash's plugin machinery, before any plugin runs
# Set in the vetting child: a plugin that makes a plugin manager while it loads (kernels_from_plugins, say)
# must not start a vetting child of its own there, which would vet that plugin again, and so on without end.
_IN_VETTING_CHILD_ENV = "GPUDASH_IN_PLUGIN_VETTING"


@dataclass
class Verdicts:
    """What vetting found, by plugin_key: why a plugin failed, or the catalog of one that loaded."""

    failures: dict[str, str]
    catalog: dict[str, Any]


@dataclass(frozen=True)
class Candidate:
    """A third-party plugin about to be imported: what the vetting child needs to import it the same way."""

    name: str
    source: str  # ENTRY_POINT | FILE
    target: str  # the entry point's value, or the file's resolved path
    dist_name: str = ""  # entry points only
    version: str | None = None

    @property
    def key(self) -> str:
        return plugin_key(self.source, self.target)

    def task_kwargs(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "source": self.source,
            "target": self.target,
            "dist_name": self.dist_name,
            "version": self.version,
        }


def candidates(plugin_dirs, load_entry_points: bool, allowed: set[str] | None) -> list[Candidate]:
    """The plugins the loaders would import, in their order and keeping their first-of-each-name rule, less
    gpudash's built-ins. Raises UsageError for a plugin directory that does not exist, as the loader would."""
    first: dict[str, Candidate | None] = {}  # name -> the plugin that gets it (None: a trusted built-in)
    if load_entry_points:
        for dist_name, version, ep in selected_entry_points(allowed):
            if ep.name not in first:
                trusted = is_builtin(dist_name, ep)
                first[ep.name] = None if trusted else Candidate(ep.name, ENTRY_POINT, ep.value, dist_name, version)
    for directory in plugin_dirs:
        for file in plugin_files_in(str(directory), allowed):
            first.setdefault(file.stem, Candidate(file.stem, FILE, str(file.resolve())))
    return [c for c in first.values() if c is not None]


def vet_time_limit() -> float:
    value = os.environ.get(VET_TIMEOUT_ENV)
    if not value:
        return VET_TIMEOUT_S
    try:
        limit = float(value)
    except ValueError:
        limit = 0.0
    if not limit > 0:
        raise UsageError(f"{VET_TIMEOUT_ENV}={value!r}: not a positive number of seconds")
    return limit


def vet_plugins(found: list[Candidate]) -> Verdicts:
    """Try each candidate in a child process: a failure for each that crashed or hung it (or whose vetting
    broke), the catalog of each of the others."""
    verdicts = Verdicts({}, {})
    if not found or os.environ.get(_IN_VETTING_CHILD_ENV):
        return verdicts
    from gpudash.measure.runner import CRASHED, OK, TIMEOUT, Task, run_tasks
    from gpudash.plugin_manager.limits import default_settings, limits_for

    limit = vet_time_limit()
    # Importing a plugin runs its code: the vetting child runs under the shipped [plugins] limits of a CPU child
    # (no config reaches discovery), so an import that allocates without end meets the address-space limit.
    bounds = limits_for(default_settings(), "cpu")  # every task the same: they share one child
    start = "gpudash.plugin_manager.host:vetting_ready"
    tasks = [Task(start, timeout_s=_START_UP_S, name="vetting: start-up", limits=bounds)]
    tasks += [
        Task(
            "gpudash.plugin_manager.host:vet_plugin",
            c.task_kwargs(),
            timeout_s=limit,
            name=f"vetting {c.name}",
            progress=True,
            limits=bounds,
        )
        for c in found
    ]
    end = "gpudash.plugin_manager.host:end_vetting"
    tasks.append(Task(end, timeout_s=_START_UP_S, name="vetting: exit", limits=bounds))
    last = tasks[-2]
    stages: dict[int, str] = {}  # task index -> "import" | "register": how far the candidate got
    no_child_left = threading.Event()

    def on_progress(i: int, info: dict) -> None:
        stages[i] = str(info.get("stage"))

    def on_result(result: TaskResult) -> None:
        if result.task is last and result.status in (CRASHED, TIMEOUT):
            no_child_left.set()  # starting a child only to exit it would be a waste

    results = run_tasks(
        tasks,
        cancel=no_child_left,
        on_progress=on_progress,
        on_result=on_result,
        env={**child_env(), _IN_VETTING_CHILD_ENV: "1"},
    )
    for i, candidate in enumerate(found, start=1):
        result = results[i]
        step = "registration" if stages.get(i) == "register" else "import"
        if result.status == OK:
            verdicts.catalog[candidate.key] = result.value
        elif result.status in (CRASHED, TIMEOUT):
            outcome = "crashed" if result.status == CRASHED else "hung"
            verdicts.failures[candidate.key] = f"plugin {step} {outcome}: {result.error}"
        else:  # the vetting code itself raised, or never ran
            verdicts.failures[candidate.key] = f"plugin vetting failed ({result.status}): {result.error}"
    return verdicts


def make_plugin_manager(
    plugin_dirs=(),
    load_entry_points: bool = True,
    *,
    on_error: ErrorReporter | None = report_to_stderr,
    vet_failures: dict[str, str] | None = None,
    import_here: bool = False,
) -> GpudashPluginManager:
    """A fresh plugin manager (nothing is built at import time): entry points, then one-file plugins.

    Third-party plugins are vetted in a child process first (see above); those that crash or hang it are
    recorded as failed. The others are known here from their catalog, unless `import_here` (or this process
    is itself a plugin child): then they are imported here. A child process that runs plugins passes the
    parent's verdicts as `vet_failures` (plugin_key -> reason) instead of vetting again.
    `on_error(plugin, message)` hears each load error (default: one line on stderr; the TUI passes None and
    shows `pm.records` instead). Raises UsageError for a plugin directory that does not exist.
    """
    pm = GpudashPluginManager(on_error)
    pm.contained = in_plugin_child()
    pm.imports_plugins = import_here or pm.contained
    allowed = allowed_names()
    if vet_failures is None:
        verdicts = vet_plugins(candidates(plugin_dirs, load_entry_points, allowed))
        vet_failures, pm.catalog = verdicts.failures, verdicts.catalog
    pm.vet_failures = dict(vet_failures)
    if load_entry_points:
        load_entry_point_plugins(pm, allowed)
    for directory in plugin_dirs:
        load_plugin_dir(pm, str(directory), allowed)
    if allowed and on_error:
        for name in unmatched(allowed, pm.records.values()):
            on_error(name, f"named in {LOAD_ENV} but not found")
    return pm
