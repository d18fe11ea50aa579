"""The child side of the runner: run tasks one by one and report over a private pipe.

stdout and stderr of the child both go to the parent's stderr capture, so prints from device code or
plugins can never corrupt the protocol (or a user's piped JSON).
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import sys
import traceback
from pathlib import Path

from gpudash.measure import lifeline, limits

RESERVE = 1 << 20  # freed when a task runs out of memory, so that its error can still be written and sent

MARK = "\x1e"


def resolve(target: str):
    """'pkg.module:function' or '/path/to/file.py:function' to a callable."""
    module_name, _, func = target.rpartition(":")
    if module_name.endswith(".py"):
        path = Path(module_name)
        spec = importlib.util.spec_from_file_location(f"gpudash_task_{path.stem}", path)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load a task from {path}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
    else:
        module = importlib.import_module(module_name)
    return getattr(module, func)


def main() -> None:
    lifeline.hold()  # first: from here on this process and all it starts end when gpudash does
    channel = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # anything printed by tasks (even from C) lands on stderr
    sys.stdout = sys.stderr

    def send(**msg):
        channel.write(MARK + json.dumps(msg, default=str) + "\n")
        channel.flush()

    payload = json.loads(sys.stdin.read())
    # A list of tasks; or {"tasks": [...], "limits": {...}} when they run under resource limits (limits.py).
    tasks = payload["tasks"] if isinstance(payload, dict) else payload
    bounds = limits.ChildLimits.from_json(payload.get("limits")) if isinstance(payload, dict) else None
    if bounds:
        limits.apply(bounds, len(tasks))  # before any task's code: a plugin's import counts too
    for i, task in enumerate(tasks):
        reserve = bytearray(RESERVE) if bounds else None
        if bounds:
            limits.before_task(bounds)
        send(event="start", task=i, cpu_s=limits.cpu_used_s())
        try:
            func = resolve(task["target"])
            kwargs = dict(task.get("kwargs") or {})
            if task.get("progress"):
                kwargs["progress"] = lambda i=i, **info: send(event="progress", task=i, info=info)
            value = func(**kwargs)
            send(event="done", task=i, value=value)
        except BaseException as exc:  # report and go on with the next task
            if isinstance(exc, MemoryError):  # let go of what the task held before formatting anything
                reserve = None
                traceback.clear_frames(exc.__traceback__)
            tb = traceback.format_exc(limit=6)
            send(event="error", task=i, error=f"{type(exc).__name__}: {exc}", traceback=tb)
        del reserve
    channel.close()


if __name__ == "__main__":
    main()
