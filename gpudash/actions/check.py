"""Every plugin check (the built-in ROCm checks among them) on the session's devices, each in a child
process with a time limit. On a replayed machine, checks that need the device are skipped; table-based
checks still run. A warning or a failing check is a finding, not an error."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gpudash.actions.session import Session

if TYPE_CHECKING:
    from gpudash.devices import Machine
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

    def to_json(self) -> dict[str, Any]:
        return {
            "version": CHECK_VERSION,
            "replayed": self.machine.replayed,
            "source": self.machine.label,
            "checks": [r.to_dict() for r in self.results],
            "plugin_errors": self.plugin_errors,
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
) -> CheckRun:
    """Run the checks on every device (or `device`); `on_result` hears each result as it arrives.

    `timeout_s` overrides each check's own limit. With `add_torch`, torch's view is merged first when a GPU
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
    return CheckRun(machine, devices, results, len(collect_checks(pm)), failed)
