"""Every plugin check (the built-in ROCm checks among them) on the session's devices, each in a child
process with a time limit. On a replayed machine, checks that need the device are skipped; table-based
checks still run. A warning or a failing check is a finding, not an error."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gpudash.actions.session import Session

if TYPE_CHECKING:
    from gpudash.devices import Machine
    from gpudash.health import HealthResult
    from gpudash.models import DeviceInfo
    from gpudash.plugin_manager import ErrorReporter
    from gpudash.plugins_api import CheckResult

CHECK_VERSION = 1


def select_devices(machine: Machine, wanted: Iterable[str] | str | None) -> list[DeviceInfo]:
    """Every device, or those named as `--device` names them everywhere (gpudash.devices.selection)."""
    from gpudash.devices.selection import find_devices

    if not wanted:
        return list(machine.devices)
    return find_devices(machine, wanted) or list(machine.devices)


@dataclass
class CheckRun:
    machine: Machine
    devices: list[DeviceInfo]  # the devices checked
    results: list[CheckResult]  # in device order, then plugin order
    check_count: int  # checks registered
    plugin_errors: list[dict[str, Any]]  # [{"plugin", "errors"}] for plugins that had load errors
    health: list[HealthResult] = field(default_factory=list)  # gpudash's own health checks (gpudash.health)
    # UUID -> the failures remembered for that GPU, this run's included (gpudash.health.memory)
    remembered: dict[str, list[Any]] = field(default_factory=dict)

    def device_of(self) -> dict[str, str]:
        """UUID -> the device key that GPU has now."""
        return {d.uuid: d.key for d in self.machine.devices + self.machine.hidden if d.uuid}

    def every_result(self) -> list[CheckResult]:
        """Plugin results, then the health results as CheckResults (plugin "gpudash", check = the ID)."""
        from gpudash.health.contract import as_check_result

        return list(self.results) + [as_check_result(h) for h in self.health]

    def severities(self) -> list[str | None]:
        from gpudash.health.contract import plugin_severity

        return [plugin_severity(r.status) for r in self.results] + [h.severity for h in self.health]

    def to_json(self) -> dict[str, Any]:
        from gpudash.health.contract import health_entry, plugin_entry

        return {
            "version": CHECK_VERSION,
            "replayed": self.machine.replayed,
            "source": self.machine.label,
            "checks": [plugin_entry(r) for r in self.results] + [health_entry(h) for h in self.health],
            "plugin_errors": self.plugin_errors,
            "remembered_failures": [
                {"uuid": uuid, "device": self.device_of().get(uuid), **f.to_json()}
                for uuid, failures in self.remembered.items()
                for f in failures
            ],
        }


def run(
    session: Session,
    *,
    device: Iterable[str] | str | None = None,
    timeout_s: float | None = None,
    cancel: threading.Event | None = None,
    on_result: Callable[[CheckResult], None] | None = None,
    on_plugin_error: ErrorReporter | None = None,
    add_torch: bool = True,
    expect_gpus: int | None = None,
    health: bool = True,
) -> CheckRun:
    """Run the checks on every device (or `device`); `on_result` hears each result as it arrives.

    `timeout_s` overrides each check's own limit. With `health`, gpudash's health checks (gpudash.health) run
    after the plugins' on the same devices; `expect_gpus` overrides the config's [health] expect_gpus. With `add_torch`, torch's view is merged first when a GPU
    is checked (GPU checks need torch's device numbering); a face that merges it itself passes False.
    """
    from gpudash.actions.plugins import plugin_manager
    from gpudash.devices import add_torch_view
    from gpudash.plugin_manager import collect_checks, run_checks
    from gpudash.plugin_manager.remembered import remember_checks

    pm = plugin_manager(session, on_plugin_error)
    machine = session.machine(include_torch=False)
    devices = select_devices(machine, device)
    if add_torch and any(d.vendor != "cpu" for d in devices):
        add_torch_view(machine)
    results = run_checks(machine, pm, timeout_s=timeout_s, devices=devices, cancel=cancel, on_result=on_result)
    if not (cancel is not None and cancel.is_set()):
        remember_checks(machine, results)  # for `gpudash serve` and the fleet view
    failed = [{"plugin": r.name, "errors": r.errors} for r in pm.records.values() if r.errors]
    found = CheckRun(machine, devices, results, len(collect_checks(pm)), failed)
    if health and not (cancel is not None and cancel.is_set()):
        from gpudash.health.run import run_health
        from gpudash.health.thresholds import Thresholds

        named = devices if device else None  # named devices get their own checks, not the whole machine's
        found.health = run_health(machine, Thresholds.from_config(session.config, expect_gpus), devices=named)
        from gpudash.health.memory import remember

        found.remembered = remember(machine, found.health)  # a run is one sighting of each failure
    return found
