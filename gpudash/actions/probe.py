"""Run each precision on the session's devices and check its numbers; remember what was measured.

This is the one place probe results are remembered (gpudash.measure.probe.store), for the next start of
the dashboard and for gpudash.amp. A replayed machine is never run: spec and recorded torch answers only.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpudash.actions.session import Session
from gpudash.errors import GpudashError
from gpudash.store import NotKept

if TYPE_CHECKING:
    from gpudash.devices import Machine
    from gpudash.measure.schema import PrecisionCapabilityMatrix

Matrices = dict[str, "PrecisionCapabilityMatrix"]  # device key -> its probe matrix
NOT_PROBED_YET = "not run: not probed yet"


@dataclass
class ProbeRun:
    """One probe: this run's matrices, where they were remembered, and everything remembered since."""

    machine: Machine
    matrices: Matrices
    saved_to: Path | None = None  # None: replayed or cancelled, nothing remembered
    remembered: tuple[str, Matrices] | None = None  # (saved_at, matrices) after this run was saved
    save_error: str | None = None  # why this run could not be remembered (it is still returned whole)

    def to_json(self) -> dict[str, Any]:
        """The probe JSON contract."""
        from gpudash.measure.probe import probe_json

        return probe_json(self.machine, self.matrices)

    def native_failures(self) -> list[tuple[str, str]]:
        """(device key, precision) for each precision this run saw fail although the spec calls it native on
        that device: the `probe` finding that makes its exit code 1. Emulated or absent ones failing are
        answers, not findings; a precision not run (replayed, cancelled) is neither."""
        from gpudash.knowledge.levels import NATIVE
        from gpudash.measure.schema import FAILED

        return [
            (key, name)
            for key, matrix in self.matrices.items()
            for name, result in matrix.results.items()
            if result.spec == NATIVE and result.verdict == FAILED
        ]

    def known(self) -> Matrices:
        """What the machine's devices are known to do now: the remembered matrices, this run's on top."""
        merged = dict(self.remembered[1]) if self.remembered else {}
        merged.update(self.matrices)
        keys = {d.key for d in self.machine.devices}
        return {k: m for k, m in merged.items() if k in keys}

    def known_json(self) -> dict[str, Any]:
        """`known()` as the probe JSON contract."""
        from gpudash.measure.probe import probe_json

        return probe_json(self.machine, self.known())


def probe(
    session: Session,
    *,
    devices: Iterable[str] | None = None,
    precisions: Iterable[str] | None = None,
    timeout_s: float | None = None,
    cancel: threading.Event | None = None,
    on_progress: Callable[[dict[str, Any]], None] | None = None,
    on_status: Callable[[str], None] | None = None,
) -> ProbeRun:
    """Probe `precisions` (default: all) on `devices` (selectors as `--device` takes them; default: all).

    `timeout_s` limits each precision on each device (default: config probe.timeout_s). `cancel` stops the
    run (its child process is killed); a cancelled run remembers nothing. Ctrl-C in the main thread sets it.
    """
    from gpudash.measure import probe as measure
    from gpudash.measure.interruptible import run_interruptibly

    limit = timeout_s if timeout_s is not None else float(session.config["probe"]["timeout_s"])
    machine = session.machine()
    chosen = measure.find_devices(machine, devices) if devices else None
    if on_status and not machine.replayed:
        on_status(
            f"probing {len(chosen or machine.devices)} device(s) in a child process (limit {limit:g} s per precision)"
        )
    stop = cancel or threading.Event()
    wanted = list(precisions) if precisions is not None else None
    matrices = run_interruptibly(
        lambda: measure.probe_machine(
            machine, devices=chosen, timeout_s=limit, cancel=stop, on_progress=on_progress, precisions=wanted
        ),
        stop,
    )
    run = ProbeRun(machine, matrices)
    if not machine.replayed and not stop.is_set():
        try:
            run.saved_to = measure.remember(machine, matrices)
        except NotKept:  # the state path is not a file: store already said so, in one line
            pass
        except GpudashError as exc:  # what was measured is shown all the same
            run.save_error = str(exc)
        else:
            run.remembered = measure.remembered(machine)
    return run


@dataclass
class KnownProbe:
    """What is known of every device without running anything."""

    machine: Machine
    matrices: Matrices  # one per device of the machine
    saved_at: str | None  # when the remembered results were saved; None: nothing remembered

    def to_json(self) -> dict[str, Any]:
        """The probe JSON contract of what is known."""
        from gpudash.measure.probe import probe_json

        return probe_json(self.machine, self.matrices)


def known(session: Session) -> KnownProbe:
    """Remembered results (live), else spec and recorded torch answers, marked as not run and why."""
    from gpudash.measure import probe as measure

    machine = session.machine()
    if machine.replayed:
        matrices = {d.key: measure.unmeasured_matrix(d, measure.REPLAYED_REASON, "replayed") for d in machine.devices}
        return KnownProbe(machine, matrices, None)
    saved = measure.remembered(machine)
    remembered = saved[1] if saved else {}
    matrices = {
        d.key: remembered.get(d.key) or measure.unmeasured_matrix(d, NOT_PROBED_YET, "spec") for d in machine.devices
    }
    return KnownProbe(machine, matrices, saved[0] if saved else None)
