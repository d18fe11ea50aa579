"""Redaction for public bug reports: a snapshot, an info document or a calibration profile with what identifies
a machine or its users replaced by stable placeholders.

Replaced: the hostname; every UUID (GPU-..., MIG-...), serial and PCI bus id; and of every process (any
object with a "pid") its pid, name, command and user, and its job's IDs, user, partition, pod and namespace. Stable within one document: the same UUID becomes the
same placeholder wherever it appears, so a reader can still tell that a MIG device's processes belong to one
GPU. An identifier that also appears inside other text (a reason, a note, the origin) is replaced there too, and
so is the home directory of whoever redacts (as "~": error text from a child can hold a path under it).
Kept: device models, architectures, memory, readings, versions; everything a bug report needs. The result has
the same shape and types as the input, so a redacted snapshot replays like any other.
"""

from __future__ import annotations

import os
import re
from typing import Any

# Keys whose string values identify a machine wherever they appear, and the stem of their placeholders.
_IDENTIFIERS = {"hostname": "host", "uuid": "uuid", "serial": "serial", "serial_number": "serial", "pci_bus_id": "pci"}
# Keys of a process record (an object with a pid) that identify a user or what they run.
_PROCESS_FIELDS = {"name": "process", "command": "command", "user": "user"}
# Keys of a process's job (its Slurm job or Kubernetes pod) that identify a user, a cluster's work or a pod.
_JOB_FIELDS = {"job_id": "job", "user": "user", "partition": "partition", "pod_uid": "pod-uid", "pod": "pod",
               "namespace": "namespace", "container_id": "container"}  # fmt: skip
_PREFIX = re.compile(r"^([A-Za-z]{2,8})-")  # GPU-, MIG-: kept, so the kind of id stays readable
FIRST_PID = 10001  # placeholders for pids count up from here (pid 1 would read as init)
_MIN_TEXT = 3  # shorter identifiers are not searched for inside other text
_NOT_IN_TEXT = ("process", "command", "job", "partition", "namespace")  # short common words: never searched in text
HOME = "~"  # what the home directory becomes inside text


def _home() -> str | None:
    """The home directory as it appears in paths, or None where it would match too much ("/", unset)."""
    home = os.path.expanduser("~").rstrip("/")
    return home if len(home) >= _MIN_TEXT and home != "~" else None


class Redactor:
    """Placeholders handed out so far; one Redactor per document keeps them stable within it."""

    def __init__(self) -> None:
        self._names: dict[tuple[str, str], str] = {}
        self._counts: dict[str, int] = {}
        self._pids: dict[int, int] = {}

    def placeholder(self, stem: str, original: str) -> str:
        key = (stem, original)
        if key not in self._names:
            prefix = _PREFIX.match(original) if stem == "uuid" else None
            label = f"{prefix.group(1)}-redacted" if prefix else f"{stem}-redacted"
            self._counts[label] = self._counts.get(label, 0) + 1  # GPU-redacted-1, MIG-redacted-1: counted apart
            self._names[key] = f"{label}-{self._counts[label]}"
        return self._names[key]

    def pid(self, original: int) -> int:
        return self._pids.setdefault(original, FIRST_PID + len(self._pids))

    def redact(self, document: Any) -> Any:
        """A redacted copy of `document` (the input is not changed)."""
        replaced = self._walk(document)
        # Identifiers inside other text too; process names and commands aside: a process called `python` must
        # not blank out every mention of python.
        in_text = {o: n for (stem, o), n in self._names.items() if stem not in _NOT_IN_TEXT and len(o) >= _MIN_TEXT}
        alternatives = [re.escape(o) for o in sorted(in_text, key=len, reverse=True)]
        home = _home()
        if home is not None:  # a whole path component only: /home/al must not cut /home/alice to ~ice
            in_text[home] = HOME
            alternatives.insert(0, re.escape(home) + r"(?![\w-]|\.\w)")
        if not in_text:
            return replaced
        pattern = re.compile("|".join(alternatives))
        return self._in_text(replaced, pattern, in_text, set(self._names.values()))

    def _walk(self, node: Any) -> Any:
        if isinstance(node, list):
            return [self._walk(v) for v in node]
        if not isinstance(node, dict):
            return node
        is_process = isinstance(node.get("pid"), int) and not isinstance(node.get("pid"), bool)
        out: dict[str, Any] = {}
        for key, value in node.items():
            if isinstance(value, str) and key in _IDENTIFIERS:
                out[key] = self.placeholder(_IDENTIFIERS[key], value)
            elif is_process and isinstance(value, str) and key in _PROCESS_FIELDS:
                out[key] = self.placeholder(_PROCESS_FIELDS[key], value)
            elif is_process and key == "pid":
                out[key] = self.pid(value)
            elif is_process and key == "job" and isinstance(value, dict):
                out[key] = {
                    k: self.placeholder(_JOB_FIELDS[k], v) if isinstance(v, str) and k in _JOB_FIELDS else v
                    for k, v in value.items()
                }
            else:
                out[key] = self._walk(value)
        return out

    def _in_text(self, node: Any, pattern: re.Pattern[str], names: dict[str, str], placeholders: set[str]) -> Any:
        if isinstance(node, str):
            return node if node in placeholders else pattern.sub(lambda m: names[m.group()], node)
        if isinstance(node, list):
            return [self._in_text(v, pattern, names, placeholders) for v in node]
        if isinstance(node, dict):
            return {k: self._in_text(v, pattern, names, placeholders) for k, v in node.items()}
        return node


def redact(document: Any) -> Any:
    """`document` (a snapshot or an info JSON) with its identifiers replaced; see the module docstring."""
    return Redactor().redact(document)


# Environment variables whose values are credentials: shown by name, never by value (the process screen).
SECRET_WORDS = ("TOKEN", "KEY", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH")
REDACTED_VALUE = "<redacted>"


def looks_secret(name: str) -> bool:
    """True for HF_TOKEN, AWS_SECRET_ACCESS_KEY, WANDB_API_KEY, PGPASSWORD...: any name holding a secret word."""
    upper = name.upper()
    return any(word in upper for word in SECRET_WORDS)


def redact_environment(environ: dict[str, str]) -> dict[str, str]:
    """A process environment with the values of secret-looking names replaced."""
    return {name: REDACTED_VALUE if looks_secret(name) else value for name, value in environ.items()}
