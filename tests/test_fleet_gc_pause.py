"""A fleet round holds the cyclic garbage collector off (gpudash.fleet.gc_pause): no full collection walks the
fleet's kept label sets while a round's answers are alive, the collector runs again after the last round in
flight, and a program that turned it off itself keeps it off."""

from __future__ import annotations

import gc
import threading

import pytest

from gpudash.fleet.gc_pause import collector_paused

pytestmark = pytest.mark.light


@pytest.fixture(autouse=True)
def collector_back_on():
    was = gc.isenabled()
    yield
    if was:
        gc.enable()


def test_the_collector_is_off_during_a_round_and_on_after_it():
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_rounds_in_two_threads_turn_it_back_on_only_when_both_ended():
    inside, leave = threading.Event(), threading.Event()

    def other_round() -> None:
        with collector_paused():
            inside.set()
            leave.wait(30)

    thread = threading.Thread(target=other_round)
    thread.start()
    assert inside.wait(30)
    with collector_paused():
        pass
    assert not gc.isenabled()  # the other round is still decoding
    leave.set()
    thread.join(30)
    assert gc.isenabled()


def test_an_error_in_the_round_still_turns_it_back_on():
    with pytest.raises(RuntimeError), collector_paused():
        raise RuntimeError("a round that failed")
    assert gc.isenabled()


def test_a_collector_the_program_turned_off_stays_off():
    gc.disable()
    with collector_paused():
        pass
    assert not gc.isenabled()


def test_no_full_collection_runs_while_a_round_decodes_many_rows():
    full: list[int] = []

    def count(phase: str, info: dict) -> None:
        if phase == "start" and info["generation"] == 2:
            full.append(1)

    gc.callbacks.append(count)
    try:
        with collector_paused():
            rows = [{"metric": {"i": str(i)}, "value": [0.0, "1"]} for i in range(300_000)]
        del rows
    finally:
        gc.callbacks.remove(count)
    assert full == []


def test_after_two_rounds_the_fleet_freezes_what_it_keeps_once(tmp_path):
    # In a process of its own: gc.freeze() is for the whole process, and this one runs the other tests.
    import os
    import subprocess
    import sys
    from pathlib import Path

    tests = Path(__file__).parent
    script = """
import gc
from servers import DGX, dcgm_page, exposition_server
from gpudash.fleet.scrape import Scraper
from gpudash.fleet.targets import parse_target
collections = []
gc.callbacks.append(lambda phase, info: phase == "start" and info["generation"] == 2 and collections.append(1))
with exposition_server(dcgm_page(DGX, "node-a")) as (url, _):
    scraper = Scraper([parse_target(url, "--hosts")], timeout_s=5.0)
    try:
        scraper.round()
        first = gc.get_freeze_count()
        scraper.round()
        second, full = gc.get_freeze_count(), len(collections)
    finally:
        scraper.close()
print(first, second > 0, full >= 1, gc.isenabled())
"""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(tests), os.environ.get("PYTHONPATH")])))
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["0", "True", "True", "True"]  # nothing frozen after one round (the CLI's)


def test_refreeze_freezes_each_round_without_a_full_collection():
    # In a process of its own, as above. Not settled: nothing; first=True (the Fleet tab, from its first round):
    # the young generations collected and what survives frozen, with no full collection; then every call.
    import subprocess
    import sys

    script = """
import gc
from gpudash.fleet import gc_pause
full = []
gc.callbacks.append(lambda phase, info: phase == "start" and info["generation"] == 2 and full.append(1))
kept = [[i] for i in range(50_000)]
gc_pause.refreeze()
before = gc.get_freeze_count()
gc_pause.refreeze(first=True)
first = gc.get_freeze_count()
kept += [[i] for i in range(50_000)]
gc_pause.refreeze()
print(before, first >= 50_000, gc.get_freeze_count() >= first + 50_000, len(full))
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["0", "True", "True", "0"]


def test_reclaim_frees_cycles_that_became_garbage_after_being_frozen():
    # In a process of its own, as above. Cycles frozen by refreeze and dropped after: no collection frees them
    # (full or not) until reclaim unfreezes; it finds them, and freezes what is still alive again.
    import subprocess
    import sys

    script = """
import gc, weakref
from gpudash.fleet import gc_pause
class Cycle:
    def __init__(self):
        self.me = self
print(gc_pause.reclaim())  # not settled: nothing
cycles = [Cycle() for _ in range(1000)]
alive = weakref.WeakSet(cycles)
kept = [[i] for i in range(1000)]
gc_pause.refreeze(first=True)
del cycles
gc.collect()
print(len(alive))
found = gc_pause.reclaim()
print(len(alive), found >= 1000, gc.get_freeze_count() >= 1000, gc.isenabled())
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["0", "1000", "0", "True", "True", "True"]
