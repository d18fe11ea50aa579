"""The snapshot file: read with strict checks, write atomically.

A snapshot is a whole machine. Everything in it is checked here so that a corrupt, foreign or hostile file
stops with one line naming the file and the field (exit code 2), never a traceback deep in the UI: a regular
file of bounded size (gpudash.fileio), strict JSON of bounded depth with every string safe for the terminal
(gpudash.strict_json), the snapshot contract (gpudash/contracts/snapshot.schema.json), and every field's type
and range as the replay will use it (gpudash.field_checks).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpudash import strict_json
from gpudash.devices.target_id import split_target_id
from gpudash.errors import UsageError
from gpudash.field_checks import FieldProblem, build
from gpudash.fileio import read_user_file
from gpudash.models import (
    COMPUTE,
    COMPUTE_AND_GRAPHICS,
    GRAPHICS,
    LOST,
    OK,
    VENDORS,
    DeviceInfo,
    Host,
    Runtime,
    Sample,
)

FORMAT = "gpudash-snapshot"
VERSION = 1

_DEVICE_KEYS: dict[str, tuple[type, ...]] = {
    "vendor": (str,),
    "index": (int,),
    "name": (str,),
    "compute_capability": (str, type(None)),
    "gfx_target": (str, type(None)),
    "memory_total_bytes": (int, type(None)),
    "samples": (list,),
}


def _fail(path: Path, where: str, problem: str) -> UsageError:
    return UsageError(f"{path}: {where}: {problem}" if where else f"{path}: {problem}")


MAX_DEVICES = 1024  # a whole machine; a file with more is not one (and would never draw a first frame)
# Values a field may take, wherever it appears in a device or a sample.
CHOICES: dict[str, tuple[Any, ...]] = {
    "vendor": VENDORS,
    "status": (OK, LOST),
    "type": (COMPUTE, GRAPHICS, COMPUTE_AND_GRAPHICS),
}
_NOT_FROM_FILES = frozenset({"sources", "extra"})  # set by gpudash itself, never taken from a file...
# ...but for the CPU facts the architecture tables read (gpudash.knowledge.cpu: vendor_of, microarch), which a
# snapshot keeps under "extra" so a replay places the CPU as the live machine does.
TABLE_EXTRAS = ("cpu_vendor", "cpu_family", "cpu_model")
GFX_FEATURES = "gfx_features"  # an AMD target's feature flags: {"sramecc": True, "xnack": False}


@dataclass
class RecordedDevice:
    info: DeviceInfo
    samples: list[Sample]
    torch: dict[str, bool | None] | None = None  # torch's view, when the snapshot recorded it
    health: dict[str, Any] | None = None  # the GPU's health counters, when recorded ({"counters", "unavailable"})


@dataclass
class RecordedMachine:
    host: Host
    runtime: Runtime
    devices: list[RecordedDevice] = field(default_factory=list)
    origin: str | None = None


def read_snapshot(path: str | Path) -> dict[str, Any]:
    """The snapshot's document, checked (see the module's docstring); UsageError naming file and field."""
    path = Path(path)
    text = read_user_file(path, "snapshot file", UsageError)
    try:
        data = strict_json.loads(text, lines=False)  # names, ids: one line each
    except strict_json.JsonProblem as exc:
        raise UsageError(f"{path}: {exc}") from None
    validate(path, data)
    from gpudash.contracts.validation import problems

    for problem in problems("snapshot", data):
        raise UsageError(f"{path}: {problem} (the snapshot contract)")
    return data


def read_machine(path: str | Path) -> RecordedMachine:
    """The recorded machine, every field checked as the replay will use it."""
    path = Path(path)
    data = read_snapshot(path)
    try:
        return _machine(data)
    except FieldProblem as exc:
        raise UsageError(f"{path}: {exc}") from None


def _machine(data: dict[str, Any]) -> RecordedMachine:
    machine = RecordedMachine(
        host=build(Host, data["host"], "host"),
        runtime=build(Runtime, data["runtime"], "runtime"),
        origin=data.get("origin") if isinstance(data.get("origin"), str) else None,
    )
    seen: set[str] = set()
    for i, raw in enumerate(data["devices"]):
        where = f"devices[{i}]"
        info = build(DeviceInfo, raw, where, skip=_NOT_FROM_FILES, choices=CHOICES)
        extra = raw.get("extra")
        if isinstance(extra, dict):
            info.extra.update({k: v for k, v in extra.items() if k in TABLE_EXTRAS and isinstance(v, str)})
        _settle_gfx_target(info, extra.get(GFX_FEATURES) if isinstance(extra, dict) else None)
        if info.key in seen:
            raise FieldProblem(f"{where}: a second device {info.key} (vendor and index name one device)")
        seen.add(info.key)
        samples = [build(Sample, s, f"{where}.samples[{j}]", choices=CHOICES) for j, s in enumerate(raw["samples"])]
        torch = raw.get("torch")
        health = raw.get("health_counters")  # its shape is the contract's (nvidia/amd_health_counters)
        machine.devices.append(
            RecordedDevice(
                info, samples, torch if isinstance(torch, dict) else None, health if isinstance(health, dict) else None
            )
        )
    return machine


def _settle_gfx_target(info: DeviceInfo, recorded: Any) -> None:
    """A gfx target as any tool prints it ("gfx906:sramecc+:xnack-" from torch, "amdgcn-amd-amdhsa--gfx90a:xnack-"
    from rocminfo) becomes the canonical "gfx906" every table keys on; its feature suffixes stay as facts under
    extra["gfx_features"], with those recorded there (as `snapshot` writes them)."""
    features = {k: v for k, v in recorded.items() if isinstance(v, bool)} if isinstance(recorded, dict) else {}
    if info.gfx_target:
        info.gfx_target, flags = split_target_id(info.gfx_target)
        features.update(flags)
    if features:
        info.extra[GFX_FEATURES] = features


def validate(path: Path, data: Any) -> None:
    if not isinstance(data, dict):
        raise _fail(path, "", "a snapshot must be a JSON object")
    if data.get("format") != FORMAT:
        raise _fail(path, "format", f"expected {FORMAT!r}, got {data.get('format')!r} (not a gpudash snapshot)")
    version = data.get("version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise _fail(path, "version", f"expected an integer, got {version!r}")
    if version > VERSION:
        raise _fail(path, "version", f"snapshot version {version} is newer than this gpudash reads ({VERSION})")
    for key in ("host", "runtime"):
        if not isinstance(data.get(key), dict):
            raise _fail(path, key, "missing or not an object")
    devices = data.get("devices")
    if not isinstance(devices, list):
        raise _fail(path, "devices", "missing or not a list")
    if len(devices) > MAX_DEVICES:
        raise _fail(path, "devices", f"{len(devices)} devices, more than the {MAX_DEVICES} gpudash replays")
    for i, dev in enumerate(devices):
        where = f"devices[{i}]"
        if not isinstance(dev, dict):
            raise _fail(path, where, "not an object")
        for key, kinds in _DEVICE_KEYS.items():
            if key not in dev:
                raise _fail(path, f"{where}.{key}", "missing")
            value = dev[key]
            if isinstance(value, bool) or not isinstance(value, kinds):
                raise _fail(path, f"{where}.{key}", f"wrong type {type(value).__name__}")
        if dev["vendor"] not in VENDORS:
            raise _fail(path, f"{where}.vendor", f"expected one of {', '.join(VENDORS)}, got {dev['vendor']!r}")
        for j, sample in enumerate(dev["samples"]):
            if not isinstance(sample, dict):
                raise _fail(path, f"{where}.samples[{j}]", "not an object")
            _check_processes(path, f"{where}.samples[{j}]", sample)
            instances = sample.get("mig_instances")
            if instances is None:
                continue
            if not isinstance(instances, list):
                raise _fail(path, f"{where}.samples[{j}].mig_instances", "not a list")
            for k, instance in enumerate(instances):
                at = f"{where}.samples[{j}].mig_instances[{k}]"
                if not isinstance(instance, dict):
                    raise _fail(path, at, "not an object")
                if not _is_int(instance.get("index")):
                    raise _fail(path, f"{at}.index", "missing or not an integer")
                _check_processes(path, at, instance)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_processes(path: Path, where: str, holder: dict[str, Any]) -> None:
    """Processes are optional; when present each needs an integer pid (replay builds records from them)."""
    procs = holder.get("processes")
    if procs is None:
        return
    if not isinstance(procs, list):
        raise _fail(path, f"{where}.processes", "not a list")
    for i, proc in enumerate(procs):
        if not isinstance(proc, dict):
            raise _fail(path, f"{where}.processes[{i}]", "not an object")
        if not _is_int(proc.get("pid")):
            raise _fail(path, f"{where}.processes[{i}].pid", "missing or not an integer")
