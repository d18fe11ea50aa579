"""Run device code in a child process with a time limit, so a crash or a hang becomes a result.

Tasks run in order in one child (torch is imported once). If the child dies or a task overruns its
limit, that task is marked crashed/timeout, the child is killed, and a new child takes the rest. Tasks with
resource limits (gpudash.measure.limits) run in a child of their own limits: consecutive tasks with the same
limits share one.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO, Any

from gpudash import lifetime
from gpudash.measure import lifeline
from gpudash.measure.child import MARK
from gpudash.measure.limits import ChildLimits, reached
from gpudash.plain_text import clean

OK, ERROR, TIMEOUT, CRASHED, CANCELLED = "ok", "error", "timeout", "crashed", "cancelled"

# `python -m` and `python -c` put the working directory first on sys.path, so a json.py or a plugins/ package
# lying there would be imported by the child. The child drops that entry before it imports anything else.
CHILD_COMMAND = (
    "import sys; del sys.path[0]; import runpy; "
    "runpy.run_module('gpudash.measure.child', run_name='__main__', alter_sys=True)"
)


def import_path_without_cwd() -> list[str]:
    """This process's sys.path less the working directory (as '' or spelled out), for a child's PYTHONPATH."""
    cwd = os.path.realpath(os.getcwd())
    return [p for p in sys.path if p and os.path.realpath(p) != cwd]


@dataclass
class Task:
    target: str  # "pkg.module:function" or "/path/file.py:function"; must return JSON-able data
    kwargs: dict[str, Any] = field(default_factory=dict)
    timeout_s: float = 60.0
    name: str = ""
    progress: bool = False  # pass a progress(**info) callback to the function
    limits: ChildLimits | None = None  # address space and CPU time of the child it runs in


@dataclass
class TaskResult:
    task: Task
    status: str  # ok | error | timeout | crashed | cancelled
    value: Any = None
    error: str | None = None
    duration_s: float = 0.0
    output_tail: str = ""  # the last lines the child printed, at most TAIL_BYTES (for crash reports)
    limit: str | None = None  # the resource limit it reached ("memory limit (8192 MiB)"), when that ended it

    @property
    def ok(self) -> bool:
        return self.status == OK


def _describe_exit(code: int) -> str:
    if code < 0:
        try:
            return f"process killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"process killed by signal {-code}"
    return f"process exited with code {code}"


TAIL_BYTES = 8192  # of what a child printed, kept for its results: a noisy child must not fill memory
TAIL_LINES = 20
EVENT_BYTES = 16 * 2**20  # one message from the child; a larger one is refused, not read into memory


class _Tail:
    """The last TAIL_BYTES bytes a child wrote to its stderr (and stdout, which the child sends there)."""

    def __init__(self) -> None:
        self._data = bytearray()
        self._lock = threading.Lock()

    def add(self, chunk: bytes) -> None:
        with self._lock:
            self._data += chunk
            del self._data[:-TAIL_BYTES]

    def text(self) -> str:
        with self._lock:
            raw = bytes(self._data)
        lines = raw.decode("utf-8", errors="replace").rstrip("\n").split("\n")[-TAIL_LINES:]
        return clean("\n".join(lines), TAIL_BYTES, lines=True, keep_end=True)

    def last_line(self) -> str:
        tail = self.text()
        return tail.rsplit("\n", 1)[-1] if tail else ""


class _Child:
    def __init__(self, tasks: list[Task], env: dict[str, str] | None):
        listed = [{"target": t.target, "kwargs": t.kwargs, "progress": t.progress} for t in tasks]
        limits = tasks[0].limits if tasks else None
        payload = json.dumps({"tasks": listed, "limits": limits.to_json()} if limits else listed)
        self.cpu_s: float | None = None  # CPU seconds the child used in all, once it is reaped
        read_end, self._lifeline = lifeline.open_lifeline()
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-c", CHILD_COMMAND],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=lifeline.child_environment(dict(os.environ) if env is None else env, read_end),
                pass_fds=(read_end,),
                start_new_session=True,  # own process group: a kill takes grandchildren too
            )
        except BaseException:
            os.close(self._lifeline)
            raise
        finally:
            os.close(read_end)
        lifetime.track(self.proc.pid)
        stdin, stdout, stderr = self.proc.stdin, self.proc.stdout, self.proc.stderr
        assert stdin is not None and stdout is not None and stderr is not None  # all three were asked for
        self.events: queue.Queue = queue.Queue()
        self.output = _Tail()
        threading.Thread(target=self._read_events, args=(stdout,), daemon=True).start()
        self._output_reader = threading.Thread(target=self._read_output, args=(stderr.fileno(),), daemon=True)
        self._output_reader.start()
        stdin.write(payload.encode("utf-8"))
        stdin.close()

    def _read_events(self, stdout: IO[bytes]) -> None:
        mark = MARK.encode()
        try:
            while line := stdout.readline(EVENT_BYTES + 1):
                if len(line) > EVENT_BYTES:  # skip the rest of it without keeping it
                    while (rest := stdout.readline(EVENT_BYTES)) and not rest.endswith(b"\n"):
                        pass
                    self.events.put({"event": "unreadable", "why": f"larger than {EVENT_BYTES // 2**20} MiB"})
                elif line.startswith(mark):
                    try:
                        self.events.put(json.loads(line[len(mark) :]))
                    except (ValueError, RecursionError) as exc:  # not JSON, not UTF-8, nested too deep
                        self.events.put({"event": "unreadable", "why": type(exc).__name__})
        finally:
            self.events.put({"event": "eof"})

    def _read_output(self, fd: int) -> None:
        while chunk := os.read(fd, 65536):
            self.output.add(chunk)

    def drain_output(self) -> str:
        """All the child printed, once it has exited: output and events come through separate pipes,
        so the last lines may still be in flight when the last event arrives."""
        self._output_reader.join(timeout=2.0)
        return self.output.text()

    def kill(self) -> None:
        """End the child and everything in its group. Its group id stays safe to use until the wait below
        reaps the child: that is why the group is killed first, even when the child has already exited."""
        lifetime.kill_group(self.proc.pid)
        lifetime.forget(self.proc.pid)
        self._reap()
        if self._lifeline >= 0:
            os.close(self._lifeline)
            self._lifeline = -1

    def _reap(self) -> None:
        """Wait for the child, keeping its CPU time (what a CPU limit is judged by), which Popen.wait drops."""
        if self.proc.returncode is None:
            try:
                _, status, usage = os.wait4(self.proc.pid, 0)
            except ChildProcessError:  # reaped elsewhere already
                self.proc.wait()
            else:
                self.proc.returncode = os.waitstatus_to_exitcode(status)
                self.cpu_s = usage.ru_utime + usage.ru_stime

    def finish(self, grace_s: float = 5.0) -> int:
        """Once its channel closed: let the child exit (up to `grace_s`), then end what it left running (a
        plugin's own processes) with kill(). Returns its exit code, as Popen gives it."""
        deadline = time.monotonic() + grace_s
        while time.monotonic() < deadline and not self._exited():
            time.sleep(0.01)
        self.kill()
        return self.proc.returncode

    def _exited(self) -> bool:
        """Whether the child has exited, without reaping it (so its group id stays reserved)."""
        try:
            return os.waitid(os.P_PID, self.proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
        except ChildProcessError:  # already reaped
            return True


def run_tasks(
    tasks: list[Task],
    *,
    cancel: threading.Event | None = None,
    on_progress: Callable[[int, dict], None] | None = None,
    on_result: Callable[[TaskResult], None] | None = None,
    env: dict[str, str] | None = None,
) -> list[TaskResult]:
    """Run every task; always returns one result per task, in order."""
    results: list[TaskResult | None] = [None] * len(tasks)
    start = 0
    while start < len(tasks):
        if cancel is not None and cancel.is_set():
            break
        start = _run_child(tasks, start, results, cancel, on_progress, on_result, env)
    for i, task in enumerate(tasks):
        if results[i] is None:
            results[i] = TaskResult(task, CANCELLED, error="cancelled")
    return results  # type: ignore[return-value]


def _run_child(tasks, start, results, cancel, on_progress, on_result, env) -> int:
    """Run tasks[start:] in one child, up to the first task with other limits; return the index to resume from."""
    stop = next((i for i in range(start + 1, len(tasks)) if tasks[i].limits != tasks[start].limits), len(tasks))
    child = _Child(tasks[start:stop], env)
    try:
        return _supervise(child, tasks[:stop], start, results, cancel, on_progress, on_result)
    except BaseException:  # Ctrl-C in the parent: the child is in its own session and would live on
        child.kill()
        raise


def _supervise(child, tasks, start, results, cancel, on_progress, on_result) -> int:
    current, began = None, time.monotonic()
    last_done = None
    cpu_at_start: float | None = None  # the child's CPU seconds as the current task started (it says)

    def finish(i: int, status: str, value=None, error=None, exit_code=None) -> None:
        used = None if child.cpu_s is None or cpu_at_start is None else child.cpu_s - cpu_at_start
        limit = reached(tasks[i].limits, error, exit_code, used) if status in (ERROR, CRASHED) else None
        results[i] = TaskResult(tasks[i], status, value, error, time.monotonic() - began, child.output.text(), limit)
        if on_result:
            on_result(results[i])

    while True:
        limit = tasks[current].timeout_s if current is not None else 120.0  # start-up: python + imports
        remaining = began + limit - time.monotonic()
        try:
            msg = child.events.get(timeout=max(0.0, min(remaining, 0.1)))
        except queue.Empty:
            if cancel is not None and cancel.is_set():
                child.kill()
                if current is not None:
                    finish(current, CANCELLED, error="cancelled")
                return len(tasks)
            if time.monotonic() - began >= limit:
                child.kill()
                if current is None:  # the child never got going; blame the first task
                    current = start
                finish(current, TIMEOUT, error=f"timed out after {limit:g} s")
                return current + 1
            continue
        # Code in the child could write to the channel too: a message that names no task of this child, or
        # one already finished, is ignored rather than trusted.
        event = msg.get("event") if isinstance(msg, dict) else None
        index = _task_index(msg, start, len(tasks))
        if event == "start" and index is not None:
            current, began = index, time.monotonic()
            cpu = msg.get("cpu_s")
            cpu_at_start = float(cpu) if isinstance(cpu, (int, float)) and not isinstance(cpu, bool) else None
        elif event == "progress" and on_progress and current is not None:
            info = msg.get("info")
            on_progress(current, info if isinstance(info, dict) else {})
        elif event in ("done", "error") and index is not None and results[index] is None:
            last_done = index
            if event == "done":
                finish(index, OK, value=msg.get("value"))
            else:
                finish(index, ERROR, error=str(msg.get("error")))
            current = None
        elif event == "unreadable" and current is not None:
            last_done = current
            finish(current, ERROR, error=f"it sent a message gpudash cannot read ({msg.get('why')})")
            current = None
        elif event == "eof":
            code = child.finish()
            tail = child.drain_output()
            if last_done is not None:  # what it printed may have arrived after its "done"
                results[last_done].output_tail = tail
            if current is not None:
                finish(current, CRASHED, error=_describe_exit(code), exit_code=code)
                return current + 1
            done = next((i for i in range(start, len(tasks)) if results[i] is None), len(tasks))
            if done < len(tasks):  # the child died between tasks or before starting
                finish(done, CRASHED, error=_describe_exit(code) + _last_line(child))
                return done + 1
            return len(tasks)


def _task_index(msg: Any, start: int, count: int) -> int | None:
    task = msg.get("task") if isinstance(msg, dict) else None
    if isinstance(task, int) and not isinstance(task, bool) and 0 <= task < count - start:
        return start + task
    return None


def _last_line(child: _Child) -> str:
    line = child.output.last_line()
    return f": {line}" if line else ""


def run_one(task: Task, **kwargs) -> TaskResult:
    return run_tasks([task], **kwargs)[0]
