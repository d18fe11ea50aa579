"""One forked child running one vendor adapter, and the JSON-lines channel to it (both ends).

Parent -> child, one JSON object a line: {"op": "open"}, {"op": "devices"}, {"op": "sample", "index": N},
{"op": "health", "index": N} (the health counters), {"op": "samples", "indices": [N, ...]} (one answer a
device, in that order, written together: see _answers), {"op": "close"}. `devices` may carry "read_ahead", a
list of "health" and "sample": once it has answered, the child goes on as if it had been sent, in that order,
each of those requests for every device (health 0..N-1, then sample 0..N-1), and writes their answers; the
parent reads them as the answers to those requests, each under its own time limit (a driver call that hangs
there is caught as in any request), while it did other work meanwhile (`gpudash info` imports). Child -> parent, one a line: {"ok": value} or {"error": "reason"} (the adapter raised: the
child goes on). Nothing but the channel reaches the parent: the child's standard streams are /dev/null, so a
library printing on import cannot corrupt gpudash's piped output.
"""

from __future__ import annotations

import json
import os
import select
import signal
import sys
import threading
import time
import warnings
from collections.abc import Callable
from typing import Any

from gpudash import lifetime, strict_json
from gpudash.devices.contained.tracing import CallNote, TracedBinding
from gpudash.devices.fields import error_reason
from gpudash.models import to_dict

REPLY_BYTES = 16 * 2**20  # one reply; a device with thousands of processes is well below this
SAMPLES_HELD_S = 0.1  # `samples`: answers are held back at most this long, to be written together
READ_AHEAD_OPS = ("sample", "health")  # what `devices` may ask the child to read for every device at once
_PR_SET_PDEATHSIG = 1  # linux/prctl.h


class DriverFailed(Exception):
    """The child hung past its limit or died: the message says which, and in which binding call."""


class DriverError(Exception):
    """The adapter in the child raised (the child is fine): the message is its reason."""


Opener = Callable[[Callable[[Any], Any]], Any]  # wrap -> an opened adapter (NvmlBackend(wrap=...))


def fork_available() -> bool:
    return hasattr(os, "fork")


class DriverProcess:
    def __init__(self, opener: Opener) -> None:
        self.note = CallNote()
        requests_read, self._requests = os.pipe()
        self._replies, replies_write = os.pipe()
        parent = os.getpid()
        with warnings.catch_warnings():  # Python 3.12+ warns of forking with threads; see _child for why it is safe
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
        if pid == 0:
            _child(opener, requests_read, replies_write, self.note, parent)  # never returns
        os.close(requests_read)
        os.close(replies_write)
        try:
            os.setpgid(pid, pid)  # the child does the same: whichever runs first, the group exists
        except OSError:
            pass
        lifetime.track(pid)
        self.pid = pid
        self.failure: str | None = None
        self._buffer = b""
        self._unanswered = 0  # requests sent whose answers are not read yet

    def request(self, message: dict[str, Any], limit_s: float) -> Any:
        """The child's answer to `message`; DriverFailed when it hangs past `limit_s` or dies (it is then
        ended), DriverError when the adapter raised."""
        self.send(message)
        return self.receive(limit_s)

    def send(self, message: dict[str, Any]) -> None:
        """Ask without waiting: the child answers requests in order, so several may be sent before their
        answers are read (discovery asks `open` and `devices` at once, then imports Textual meanwhile)."""
        if self.failure is not None:
            raise DriverFailed(self.failure)
        if not self._unanswered:  # else the child may be in the call of an earlier request: keep its name
            self.note.clear()
        try:
            _write_all(self._requests, (json.dumps(message) + "\n").encode())
        except OSError:  # the child is gone
            raise self._fail("") from None
        self._unanswered += 1

    def expect(self, count: int) -> None:
        """`count` answers the child sends without being asked (read ahead: see the module docstring)."""
        self._unanswered += count

    def receive(self, limit_s: float) -> Any:
        """The answer to the oldest request sent and not yet answered (see `request`)."""
        if self.failure is not None:
            raise DriverFailed(self.failure)
        reply = self._read_line(limit_s)
        self._unanswered -= 1
        if not isinstance(reply, dict) or not ("ok" in reply or "error" in reply):
            raise self._fail(" (it sent something that is not a reply)")
        if "error" in reply:
            raise DriverError(str(reply["error"]))
        return reply["ok"]

    def _read_line(self, limit_s: float) -> Any:
        deadline = time.monotonic() + limit_s
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            ready = select.select([self._replies], [], [], max(0.0, remaining))[0] if remaining > 0 else []
            if not ready:
                raise self._fail(f"timed out after {limit_s:g} s")
            chunk = os.read(self._replies, 65536)
            if not chunk:
                raise self._fail("")
            self._buffer += chunk
            if len(self._buffer) > REPLY_BYTES:
                raise self._fail(f"sent a reply larger than {REPLY_BYTES // 2**20} MiB")
        line, self._buffer = self._buffer.split(b"\n", 1)
        try:
            return strict_json.loads(line.decode("utf-8", "replace"), lines=False)
        except strict_json.JsonProblem as exc:
            raise self._fail(f"sent an unreadable reply ({exc})") from None

    def _fail(self, what: str) -> DriverFailed:
        """End the child; DriverFailed saying how it failed and in which call."""
        call = self.note.read()
        status = self.end()
        how = what or (f"crashed ({status})" if status else "crashed")
        self.failure = f"driver call {how}" + (f" in {call}" if call else "")
        return DriverFailed(self.failure)

    def close(self) -> None:
        """Ask the child to shut the adapter down (briefly), then end it whatever it does."""
        if self.failure is None:
            try:
                _write_all(self._requests, b'{"op": "close"}\n')
                select.select([self._replies], [], [], 0.5)
            except OSError:
                pass
            self.failure = "closed"
        self.end()

    def end(self) -> str:
        """Kill the child's group, reap it, close the channel; how it ended ("" if still unknown)."""
        lifetime.kill_group(self.pid)
        status = _reap(self.pid)
        for fd in (self._requests, self._replies):
            try:
                os.close(fd)
            except OSError:
                pass
        self._requests = self._replies = -1
        return status


def _write_all(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data) :]


def _reap(pid: int) -> str:
    """Reap the killed child; one stuck in the kernel (a driver in uninterruptible sleep) is left to a thread,
    so that gpudash never waits for it."""
    deadline = time.monotonic() + 0.5
    while time.monotonic() < deadline:
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            lifetime.forget(pid)
            return ""
        if done:
            lifetime.forget(pid)
            return _describe(status)
        time.sleep(0.001)
    threading.Thread(target=_wait_then_forget, args=(pid,), daemon=True).start()
    return "not ending: stuck in the driver"


def _wait_then_forget(pid: int) -> None:
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass
    lifetime.forget(pid)


def _describe(status: int) -> str:
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            return f"process killed by {signal.Signals(number).name}"
        except ValueError:
            return f"process killed by signal {number}"
    return f"process exited with code {os.waitstatus_to_exitcode(status)}"


# The child ------------------------------------------------------------------------------------------------


def _child(opener: Opener, requests: int, replies: int, note: CallNote, parent: int) -> None:
    """The forked child: alone with its two pipes, it serves requests until the parent closes them.

    Safe although the parent may have threads (the dashboard's): the child runs only this function, which
    takes no lock those threads could hold (no logging, no stdio, no lazy import before the adapter's own),
    and ends with os._exit, never running the parent's atexit handlers or flushing its buffers."""
    try:
        os.setpgid(0, 0)
        _die_with_parent(parent)
        for signum in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is for gpudash, which then ends this child
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        keep = sorted({0, 1, 2, requests, replies})
        for low, high in zip(keep, keep[1:] + [_max_fd()]):
            os.closerange(low + 1, high)
        _serve(opener, requests, replies, note)
    except BaseException:
        pass
    finally:
        os._exit(0)


def _die_with_parent(parent: int) -> None:
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:  # the parent went before the request above took effect
        os._exit(0)


def _max_fd() -> int:
    try:
        return int(os.sysconf("SC_OPEN_MAX"))
    except (OSError, ValueError):
        return 65536


def _serve(opener: Opener, requests: int, replies: int, note: CallNote) -> None:
    adapter = None
    with os.fdopen(requests, "rb") as incoming:
        for line in incoming:
            ahead: list[str] = []
            value: Any = None
            try:
                request = json.loads(line)
                op = request.get("op")
                if op == "close":
                    break
                if op == "open":
                    adapter, value = _open(opener, note)
                elif adapter is None:
                    raise RuntimeError("not open")
                elif op == "devices":
                    value = [to_dict(d) for d in adapter.devices()]
                    ahead = [name for name in request.get("read_ahead") or () if name in READ_AHEAD_OPS]
                elif op in READ_AHEAD_OPS:
                    value = _read(adapter, op, int(request["index"]))
                elif op == "samples":  # one line a device, in one write (see _answers)
                    _answers(adapter, [int(i) for i in request["indices"]] or [-1], replies)
                    continue
                else:
                    raise RuntimeError(f"unknown request {op!r}")
                reply: dict[str, Any] = {"ok": value}
            except Exception as exc:  # the adapter's own failure: reported, and the child goes on
                reply = {"error": error_reason(exc)}
            _write_all(replies, _encoded(reply))
            if ahead and "ok" in reply:  # the answers to requests the parent will send: see the docstring
                for op, index in [(op, index) for op in ahead for index in range(len(value))]:
                    _write_all(replies, _answer(adapter, op, index))
    if adapter is not None:
        adapter.close()


def _read(adapter: Any, op: str, index: int) -> Any:
    return to_dict(adapter.sample(index)) if op == "sample" else adapter.health(index)


def _answers(adapter: Any, indices: list[int], replies: int) -> None:
    """Each device's sample, a line each, written together once all are read: one wake-up of the parent a
    round. Once the round has taken SAMPLES_HELD_S, those read so far are written before each next read, so
    that a call hanging then costs the devices from it on; one hanging sooner costs the round's readings
    before it too (the parent's limit for the first line runs out first), at most SAMPLES_HELD_S of them."""
    pending, began = b"", time.monotonic()
    for index in indices:
        if pending and time.monotonic() - began > SAMPLES_HELD_S:
            _write_all(replies, pending)
            pending = b""
        pending += _answer(adapter, "sample", index)
    _write_all(replies, pending)


def _answer(adapter: Any, op: str, index: int) -> bytes:
    try:
        reply: dict[str, Any] = {"ok": _read(adapter, op, index)}
    except Exception as exc:
        reply = {"error": error_reason(exc)}
    return _encoded(reply)


def _encoded(reply: dict[str, Any]) -> bytes:
    return (strict_json.dumps(reply, indent=None, default=str) + "\n").encode()


def _open(opener: Opener, note: CallNote) -> tuple[Any, dict[str, Any]]:
    """The adapter, opened with its binding traced; or None and why it is unavailable."""
    try:
        adapter = opener(lambda module: TracedBinding(module, note))
    except Exception as exc:  # NvmlUnavailable, AmdSmiUnavailable: no such driver here
        return None, {"unavailable": str(exc) or type(exc).__name__}
    return adapter, {
        "unavailable": None,
        "driver_version": getattr(adapter, "driver_version", None),
        "cuda_driver_version": getattr(adapter, "cuda_driver_version", None),
        "field_reasons": dict(getattr(adapter, "unavailable", {}) or {}),
    }
