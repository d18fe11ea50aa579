"""A vendor adapter seen through its child process: the same face as NvmlBackend / AmdSmiBackend (name,
devices(), sample(index), close(), driver versions), with failures turned into n/a readings that say why."""

from __future__ import annotations

import threading
import time
from typing import Any

from gpudash.devices.contained.process import DriverError, DriverFailed, DriverProcess, Opener, fork_available
from gpudash.field_checks import FieldProblem, build
from gpudash.models import COMPUTE, COMPUTE_AND_GRAPHICS, GRAPHICS, LOST, OK, VENDORS, DeviceInfo, Sample

OPEN_LIMIT_S = 30.0  # loading the library and nvmlInit: seconds on a cold driver without persistence mode
DEVICES_LIMIT_S = 30.0  # describing every device once
SAMPLE_LIMIT_S = 2.0  # one device's reading: normally milliseconds
HEALTH_LIMIT_S = 5.0  # one device's health counters: some 60 NVML calls, normally milliseconds
RESTART_DELAY_S = 5.0  # after a failure, the driver is left alone this long before a new child tries
MAX_FAILURES = 3  # then the vendor's devices stay n/a
NOT_DESCRIBED = "the driver's devices were not described yet"
_CHOICES: dict[str, tuple[Any, ...]] = {
    "vendor": VENDORS,
    "status": (OK, LOST),
    "type": (COMPUTE, GRAPHICS, COMPUTE_AND_GRAPHICS),
}


def contained(
    name: str, opener: Opener, unavailable: type[Exception], *, wait: bool = True, read_ahead: tuple[str, ...] = ()
) -> Any:
    """The adapter `opener(wrap)` opens, run in a child (ContainedBackend); in-process where there is no fork.

    Raises `unavailable` (the adapter's own "no such driver here") as the adapter would: at once, or with
    `wait=False` from the backend's `wait_open()`, the child opening the driver meanwhile. `read_ahead`
    ("sample", "health"): the child reads those of every device as soon as it has described them."""
    if not fork_available():
        return opener(lambda module: module)
    return ContainedBackend(name, opener, unavailable, wait=wait, read_ahead=read_ahead)


class ContainedBackend:
    def __init__(
        self,
        name: str,
        opener: Opener,
        unavailable: type[Exception],
        *,
        wait: bool = True,
        read_ahead: tuple[str, ...] = (),
    ) -> None:
        """Fork the child and ask it to open the driver and describe its devices, both at once; with
        `wait=False` the answers are read by `wait_open()` and `devices()`, so that the caller works meanwhile
        (the dashboard imports Textual while the child loads the vendor library on the other core). With
        `read_ahead`, the child then reads each device's sample and/or health at once, and the first
        requests for them are answered from that (gpudash info: its imports and the driver's work overlap)."""
        self.name = name
        self._opener = opener
        self._unavailable = unavailable
        self._lock = threading.Lock()  # the dashboard samples from a worker thread
        self._failures = 0
        self._failed_at = 0.0
        self._last_failure: str | None = None
        self._count: int | None = None  # devices the adapter reported
        self.driver_version: str | None = None
        self.cuda_driver_version: str | None = None
        self.unavailable: dict[str, str] = {}
        self._child: DriverProcess | None = DriverProcess(opener)
        self._opening = True  # `open` is asked, its answer not read yet
        self._devices_asked = False  # `devices` is asked, its answer not read yet
        self._read_ahead = [op for op in ("health", "sample") if op in read_ahead]  # the child's order
        self._ahead: list[tuple[str, int]] = []  # (op, index) the child answers unasked, in order, not read yet
        self._kept: dict[tuple[str, int], tuple[str, Any]] = {}  # read from the child, not asked for yet
        try:
            self._child.send({"op": "open"})
            self._child.send({"op": "devices", **({"read_ahead": self._read_ahead} if self._read_ahead else {})})
            self._devices_asked = True
        except DriverFailed:
            pass  # wait_open() reads the failure
        if wait:
            self.wait_open()

    def wait_open(self) -> None:
        """Read the child's answer to `open` (once); raises the adapter's `unavailable` saying why."""
        if not self._opening:
            return
        self._opening = False
        child = self._child
        try:
            if child is None:
                raise DriverFailed("closed")
            opened = child.receive(OPEN_LIMIT_S)
        except (DriverFailed, DriverError) as exc:
            self.close()
            raise self._unavailable(f"the driver failed while starting: {exc}") from None
        if not isinstance(opened, dict) or opened.get("unavailable"):
            self.close()
            raise self._unavailable(str(opened.get("unavailable") if isinstance(opened, dict) else "no answer"))
        self.driver_version = _text(opened.get("driver_version"))
        self.cuda_driver_version = _text(opened.get("cuda_driver_version"))
        reasons = opened.get("field_reasons")
        self.unavailable = {str(k): str(v) for k, v in reasons.items()} if isinstance(reasons, dict) else {}

    def devices(self) -> list[DeviceInfo]:
        """Every device, described by the adapter; RuntimeError saying why when the driver fails."""
        with self._lock:
            self.wait_open()
            if self._child is None:
                raise RuntimeError(self._last_failure or "closed")
            try:
                if self._devices_asked:  # asked with `open`: the answer is likely waiting
                    self._devices_asked = False
                    ahead, self._read_ahead = self._read_ahead, []
                    found = self._child.receive(DEVICES_LIMIT_S)
                    if ahead and isinstance(found, list):  # the child reads these for every device now
                        self._ahead = [(op, i) for op in ahead for i in range(len(found))]
                        self._child.expect(len(self._ahead))
                else:
                    found = self._child.request({"op": "devices"}, DEVICES_LIMIT_S)
                devices = [build(DeviceInfo, d, f"devices[{i}]", choices=_CHOICES) for i, d in enumerate(found)]
            except (DriverFailed, DriverError) as exc:
                raise RuntimeError(str(exc)) from None
            except (FieldProblem, TypeError) as exc:
                raise RuntimeError(f"the driver's answer was not understood: {exc}") from None
            self._count = len(devices)
            return devices

    def sample(self, index: int) -> Sample:
        """One reading of device `index`; n/a with the reason when the driver hangs, crashes or was given up."""
        with self._lock:
            if self._unread():
                return _not_read(NOT_DESCRIBED)
            child = self._usable_child()
            if child is None:
                return _not_read(self._why_not())
            try:
                return _sample_of(self._ask(child, "sample", index, SAMPLE_LIMIT_S))
            except DriverFailed as exc:
                self._failed(str(exc))
                return _not_read(str(exc))
            except DriverError as exc:  # the adapter raised, as Machine.sample would report it in-process
                return _not_read(f"sampling failed: {exc}")

    def samples(self, indices: list[int]) -> list[Sample]:
        """The readings of several devices, as sample() gives each, asked in one request: the child writes
        their answers, a line each, together once it has read them (gpudash.devices.contained.process:
        `samples`), so that a round wakes each side once instead of once a device (the dashboard's polls).
        Each line is still read under SAMPLE_LIMIT_S."""
        with self._lock:
            if not (self._unread() or self._ahead or self._kept) and len(indices) > 1:
                child = self._usable_child()
                if child is None:
                    return [_not_read(self._why_not()) for _ in indices]
                return self._round(child, indices)
        return [self.sample(i) for i in indices]

    def _round(self, child: DriverProcess, indices: list[int]) -> list[Sample]:
        out: list[Sample] = []
        try:
            child.send({"op": "samples", "indices": indices})
            child.expect(len(indices) - 1)
            for _ in indices:
                try:
                    out.append(_sample_of(child.receive(SAMPLE_LIMIT_S)))
                except DriverError as exc:
                    out.append(_not_read(f"sampling failed: {exc}"))
        except DriverFailed as exc:
            self._failed(str(exc))
            out.append(_not_read(str(exc)))
            out += [_not_read(self._why_not()) for _ in indices[len(out) :]]
        return out

    def health(self, index: int) -> dict[str, Any]:
        """Device `index`'s health counters ({"counters", "unavailable"}); a hang or crash in the driver is
        {"unavailable": {"all": why}}, which the health checks report as UNKNOWN."""
        with self._lock:
            if self._unread():
                return _no_counters(NOT_DESCRIBED)
            child = self._usable_child()
            if child is None:
                return _no_counters(self._why_not())
            try:
                raw = self._ask(child, "health", index, HEALTH_LIMIT_S)
            except DriverFailed as exc:
                self._failed(str(exc))
                return _no_counters(str(exc))
            except DriverError as exc:
                return _no_counters(f"reading the health counters failed: {exc}")
            if not isinstance(raw, dict) or not isinstance(raw.get("counters"), dict):
                return _no_counters("the driver's answer was not understood")
            unavailable = raw.get("unavailable")
            return {
                "counters": raw["counters"],
                "unavailable": {str(k): str(v) for k, v in unavailable.items()}
                if isinstance(unavailable, dict)
                else {},
            }

    def _ask(self, child: DriverProcess, op: str, index: int, limit_s: float) -> Any:
        """The child's answer to `op` for device `index`: the one it read ahead, once (the answers it sends
        before it, read and kept until asked for, each under its own limit), else asked now."""
        while self._ahead and (op, index) not in self._kept:
            ahead = self._ahead.pop(0)
            try:
                limit = SAMPLE_LIMIT_S if ahead[0] == "sample" else HEALTH_LIMIT_S
                self._kept[ahead] = ("ok", child.receive(limit))
            except DriverError as exc:
                self._kept[ahead] = ("error", str(exc))
        kept = self._kept.pop((op, index), None)
        if kept is None:
            return child.request({"op": op, "index": index}, limit_s)
        if kept[0] == "error":
            raise DriverError(kept[1])
        return kept[1]

    def _unread(self) -> bool:
        """The answers asked for at the start are not read yet: devices() reads them, and an index means
        nothing before it (and the next answer would be theirs)."""
        return self._opening or self._devices_asked

    def _usable_child(self) -> DriverProcess | None:
        """The child, or a new one once RESTART_DELAY_S has passed since a failure (up to MAX_FAILURES)."""
        if self._child is not None and self._child.failure is None:
            return self._child
        if self._failures >= MAX_FAILURES or time.monotonic() - self._failed_at < RESTART_DELAY_S:
            return None
        try:
            self._child = DriverProcess(self._opener)
            opened = self._child.request({"op": "open"}, OPEN_LIMIT_S)
            if not isinstance(opened, dict) or opened.get("unavailable"):
                raise DriverFailed(f"the driver is no longer available: {_reason(opened)}")
            found = self._child.request({"op": "devices"}, DEVICES_LIMIT_S)
            if not isinstance(found, list) or len(found) != self._count:  # indices would no longer match
                raise DriverFailed(f"the driver now reports {_length(found)} devices, not {self._count}")
        except (DriverFailed, DriverError) as exc:
            self._failed(str(exc))
            return None
        return self._child

    def _failed(self, reason: str) -> None:
        self._ahead, self._kept = [], {}  # a new child reads nothing ahead
        if self._child is not None:
            self._child.end()
            self._child.failure = self._child.failure or reason
        self._failures += 1
        self._failed_at = time.monotonic()
        self._last_failure = reason

    def _why_not(self) -> str:
        last = self._last_failure or "the driver failed"
        if self._failures >= MAX_FAILURES:
            return f"sampling stopped after {self._failures} driver failures; the last: {last}"
        wait = max(0.0, RESTART_DELAY_S - (time.monotonic() - self._failed_at))
        return f"{last}; the driver is tried again in {wait:.0f} s"

    def close(self) -> None:
        child, self._child = getattr(self, "_child", None), None
        if child is not None:
            child.close()


def _sample_of(raw: Any) -> Sample:
    try:
        return build(Sample, raw, "sample", choices=_CHOICES, ranges=False)
    except (FieldProblem, TypeError) as exc:
        return _not_read(f"the driver's answer was not understood: {exc}")


def _no_counters(reason: str) -> dict[str, Any]:
    return {"counters": {}, "unavailable": {"all": reason}}


def _not_read(reason: str) -> Sample:
    return Sample(timestamp=time.time(), unavailable={"all": reason})


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _reason(opened: Any) -> str:
    return str(opened.get("unavailable")) if isinstance(opened, dict) else "no answer"


def _length(found: Any) -> str:
    return str(len(found)) if isinstance(found, list) else "no"
