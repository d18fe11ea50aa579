"""The snapshot file: read with strict checks, write atomically.

A snapshot is a whole machine. The required keys are checked here so that a corrupt or foreign file
stops with one line naming the file and the key, never a traceback deep in the UI.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gpudash.errors import UsageError
from gpudash.fileio import read_user_file
from gpudash.models import VENDORS

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


def read_snapshot(path: str | Path) -> dict[str, Any]:
    path = Path(path)
    text = read_user_file(path, "snapshot file", UsageError)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path}: not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from None
    validate(path, data)
    return data


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
