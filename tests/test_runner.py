"""The child-process runner turns crashes, hangs and exceptions into results."""

import threading
from pathlib import Path

import pytest

from gpudash.measure.runner import Task, run_one, run_tasks

TASKS = "tasks.faults"
ENV = {**__import__("os").environ, "PYTHONPATH": str(Path(__file__).parent)}


def t(name, timeout=20.0, **kwargs):
    return Task(f"{TASKS}:{name}", kwargs, timeout_s=timeout, name=name)


def test_value_returned_and_prints_do_not_corrupt():
    res = run_one(t("add", a=2, b=3), env=ENV)
    assert res.ok and res.value == {"sum": 5}
    assert "noise on stdout" in res.output_tail


def test_each_fault_gives_its_verdict_and_the_rest_still_run():
    tasks = [t("boom"), t("segfault"), t("hang", timeout=1.5), t("abort"), t("exit_hard"), t("add", a=1, b=1)]
    results = run_tasks(tasks, env=ENV)
    by = {r.task.name: r for r in results}
    assert by["boom"].status == "error" and "kernel exploded" in by["boom"].error
    assert by["segfault"].status == "crashed" and "SIGSEGV" in by["segfault"].error
    assert by["hang"].status == "timeout" and "1.5 s" in by["hang"].error
    assert by["abort"].status == "crashed" and "SIGABRT" in by["abort"].error
    assert by["exit_hard"].status == "crashed" and "code 3" in by["exit_hard"].error
    assert by["add"].ok and by["add"].value == {"sum": 2}


def test_progress_reaches_the_parent():
    seen = []
    res = run_one(
        Task(f"{TASKS}:with_progress", progress=True, timeout_s=20),
        env=ENV,
        on_progress=lambda i, info: seen.append(info["step"]),
    )
    assert res.ok and seen == [0, 1, 2]


def test_cancel_stops_a_hanging_task():
    cancel = threading.Event()
    timer = threading.Timer(0.5, cancel.set)
    timer.start()
    results = run_tasks([t("hang", timeout=30), t("add", a=1, b=2)], cancel=cancel, env=ENV)
    assert [r.status for r in results] == ["cancelled", "cancelled"]


def test_file_target(tmp_path):
    plugin = tmp_path / "myplug.py"
    plugin.write_text("def run(x):\n    return x * 2\n")
    res = run_one(Task(f"{plugin}:run", {"x": 21}), env=ENV)
    assert res.ok and res.value == 42


def test_interrupt_in_parent_kills_the_child(monkeypatch):
    import gpudash.measure.runner as runner

    children = []
    real = runner._Child

    class Spy(real):
        def __init__(self, *a, **k):
            super().__init__(*a, **k)
            children.append(self)

    monkeypatch.setattr(runner, "_Child", Spy)

    def interrupt_soon(index, info):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_tasks([Task(f"{TASKS}:with_progress", progress=True, timeout_s=20)], env=ENV, on_progress=interrupt_soon)
    assert children and children[0].proc.poll() is not None  # the child is gone, not orphaned


def test_messages_a_task_forges_on_the_channel_are_ignored_or_fail_that_task_only():
    results = run_tasks([t("forges_messages"), t("add", a=1, b=2)], env=ENV)
    assert results[0].status == "error"
    assert results[0].error == "it sent a message gpudash cannot read (RecursionError)"
    assert results[1].ok and results[1].value == {"sum": 3}


def test_the_output_tail_is_bounded_in_bytes():
    from gpudash.measure.runner import TAIL_BYTES

    res = run_one(t("shouts", megabytes=4), env=ENV)
    assert res.ok and res.value == "shouted"
    assert len(res.output_tail.encode()) <= TAIL_BYTES + 3 and res.output_tail.endswith("!")
