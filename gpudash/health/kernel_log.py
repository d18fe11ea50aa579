"""The kernel log's recent lines that health checks read: "NVRM: Xid" and PCIe "limited by".

Read from /dev/kmsg (one record per read, "PRIORITY,SEQUENCE,MICROSECONDS,FLAGS;MESSAGE", microseconds since
boot), without blocking and bounded in records and time. Where the log cannot be read (dmesg_restrict for a
user who is not root, a container without /dev/kmsg) the reason is returned and the checks say UNKNOWN.
"""

from __future__ import annotations

import errno
import os
import re
import time
from dataclasses import dataclass, field

MAX_RECORDS = 200_000  # the kernel's ring buffer holds far fewer; a bound against a runaway file
MAX_SECONDS = 2.0
# "NVRM: Xid (PCI:0000:17:00): 79, pid=..., GPU has fallen off the bus."
_XID = re.compile(r"NVRM: Xid \(PCI:([0-9A-Fa-f]+:[0-9A-Fa-f]+:[0-9A-Fa-f]+)[^)]*\): (\d+)")
# "pci 0000:17:00.0: 15.752 Gb/s available PCIe bandwidth, limited by 8.0 GT/s PCIe x2 link at 0000:00:1c.0 ..."
_LIMITED = re.compile(r"pci ([0-9A-Fa-f]+:[0-9A-Fa-f]+:[0-9A-Fa-f]+\.\d+): .*limited by (.+?) link at (\S+)")


@dataclass
class KernelLog:
    xids: list[dict] = field(default_factory=list)  # {"pci": "0000:17:00", "xid": 79, "age_s": 12.0, "line"}
    limited: list[dict] = field(default_factory=list)  # {"pci": "0000:17:00.0", "by": "8.0 GT/s PCIe x2", "line"}
    reason: str | None = None  # why it could not be read; None when it was
    records: int = 0


def read(path: str, window_s: float, now_us: float | None = None) -> KernelLog:
    """The Xid and "limited by" records of the last `window_s` seconds ("limited by" whatever its age: the
    kernel prints it once, at boot)."""
    log = KernelLog()
    now_us = time.clock_gettime(time.CLOCK_MONOTONIC) * 1e6 if now_us is None else now_us
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        log.reason = _why(path, exc)
        return log
    deadline = time.monotonic() + MAX_SECONDS
    pending = b""
    try:
        while log.records < MAX_RECORDS and time.monotonic() < deadline:
            try:
                chunk = os.read(fd, 8192)
            except BlockingIOError:  # /dev/kmsg: no more records
                break
            except OSError as exc:
                if exc.errno == errno.EPIPE:  # a record was overwritten while read: go on from the next
                    continue
                log.reason = _why(path, exc)
                return log
            if not chunk:  # a regular file (the tests' log) ends
                break
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in lines:
                _take(log, line, now_us, window_s)
        if pending:
            _take(log, pending, now_us, window_s)
    finally:
        os.close(fd)
    return log


def _take(log: KernelLog, raw: bytes, now_us: float, window_s: float) -> None:
    head, sep, message = raw.decode("utf-8", "replace").partition(";")
    if not sep:  # a continuation line (" SUBSYSTEM=...") or not a record
        return
    log.records += 1
    parts = head.split(",")
    try:
        age_s = (now_us - int(parts[2])) / 1e6
    except (IndexError, ValueError):
        return
    text = message.strip()[:300]
    xid = _XID.search(text)
    if xid and age_s <= window_s:
        log.xids.append({"pci": xid.group(1).lower(), "xid": int(xid.group(2)), "age_s": round(age_s, 1), "line": text})
    limited = _LIMITED.search(text)
    if limited:
        log.limited.append({"pci": limited.group(1).lower(), "by": limited.group(2), "line": text})


def _why(path: str, exc: OSError) -> str:
    text = f"cannot read {path}: {exc.strerror or exc}"
    if exc.errno == errno.EPERM and path == "/dev/kmsg":
        text += " (kernel.dmesg_restrict is set: run as root or with CAP_SYSLOG)"
    return text


def same_gpu(log_pci: str, bus_id: str | None) -> bool:
    """Whether the log's "0000:17:00" names the GPU NVML calls "00000000:17:00.0" (domain widths differ)."""
    if not bus_id:
        return False

    def parts(text: str) -> tuple[int, ...]:
        fields_ = re.split(r"[:.]", text.lower())
        try:
            return tuple(int(x, 16) for x in fields_[:3])
        except ValueError:
            return ()

    return bool(parts(log_pci)) and parts(log_pci) == parts(bus_id)
