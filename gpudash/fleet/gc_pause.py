"""The cyclic garbage collector held off while a fleet round decodes and merges its answers, and kept off the
fleet's long-lived objects once they are built.

A round at 1,024 hosts x 8 GPUs makes some 200,000 short-lived containers (the answers' rows), all freed by
reference counting when it ends. While they are alive they push the collector into full (generation 2)
collections, which walk the whole heap: the 280,000 label sets the fleet keeps between rounds included. They
found nothing to free, twice a round, and took about half of a steady round's CPU (docs/performance.md, "Fleet
at 1,024 hosts through Prometheus"). Holding the collector off for the round, and letting it run again after
the round's garbage is gone, keeps the same memory and skips those walks. Nested and threaded pauses nest: the
collector runs again only when the last one ends, and never if it was off before the first.

Even so, a full collection still came every few rounds, walking the 650,000 objects the fleet keeps (the label
sets, their devices, the program's own), 240 ms in the engine and up to 850 ms in the dashboard, whichever
thread it fell on: a key pressed then waited for it. `settle()`, called once a source has made two rounds (its
label sets built), collects once and freezes what is alive (gc.freeze): later full collections walk only what
was made after. What was frozen and later becomes garbage is still freed by reference counting; only a
reference cycle among frozen objects would stay, and the fleet's objects hold none.

Each later round makes its own long-lived objects (its hosts and devices, which replace the last round's), and
those alone brought a full collection every round or two in the Fleet tab: 370-690 ms on whichever thread it
fell, the UI thread's included, with the key then pressed waiting for it. `refreeze()`, after every round from
the third, collects the young generations (a few ms: they hold the round's new objects) and freezes what
survives. The Fleet tab does it after every round, the first included (its worker thread, once the round is
prepared, with the collector held off from the round's start until the freeze; at the first round it freezes
without collecting: see refreeze). What a round froze is freed by reference counting when the next replaces
it. The cost is that a reference cycle that becomes garbage after being frozen is never collected; the Fleet
tab's own objects that live that long are its widgets, which live as long as the dashboard
(docs/performance.md, "Fleet at 1,024 hosts through Prometheus", measures what stays).

Some do become such garbage: what is alive when a round's worker freezes, and dies after, with a cycle in it. In
the Fleet tab that is each round's Textual worker (its thread's context holds the worker itself) and some of the
dashboard's drawn lines (textual.strip.Strip with its caches): some 57 objects a round at 128 hosts, so what
is frozen grew with the rounds (docs/performance.md, "Fleet soak", benchmarks/fleet_gc_soak.py). `reclaim()`
unfreezes, runs one full collection, which frees them, and freezes again; the Fleet tab calls it instead of
`refreeze()` once every RECLAIM_EVERY_S while no key has come for a few seconds, and regardless once keys have
put it off for a bounded time (gpudash.tui.screens.fleet_view.reclaim_due). The engine's own rounds make no
such garbage (measured the same way).
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

_lock = threading.Lock()
_held = 0
_was_enabled = False
_settled = False


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    global _held, _was_enabled
    with _lock:
        if _held == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _held += 1
    try:
        yield
    finally:
        with _lock:
            _held -= 1
            if _held == 0 and _was_enabled:
                gc.enable()


def _on() -> bool:
    """Whether the collector runs, or will once the pauses in flight end (under _lock). refreeze and reclaim may
    run inside a pause: the Fleet tab freezes a round's objects before the collector is on again."""
    return gc.isenabled() or (_held > 0 and _was_enabled)


def settle() -> None:
    """Once per process: collect, then freeze what is alive, so full collections stop walking it."""
    global _settled
    with _lock:
        if _settled or not _on():
            return
        _settled = True
    gc.collect()
    gc.freeze()


def refreeze(first: bool = False) -> None:
    """After a round, once settled: collect the young generations and freeze what survives (cheap), so no full
    collection walks the round's long-lived objects. first: settle here by freezing alone, with no collection
    (the Fleet tab, from its first round: a full collection there held its UI thread for 290-600 ms, and found
    1,670 objects to free at the first round of 1,024 hosts; and the young generations then hold nearly all the
    round made, some 650,000 objects, whose collection held the GIL 240-350 ms). The cyclic garbage frozen so
    stays until the Fleet tab's first reclaim."""
    global _settled
    with _lock:
        if not _on() or not (_settled or first):
            return
        settled, _settled = _settled, True
    if settled:
        gc.collect(1)
    gc.freeze()  # which also sets the youngest generation's count back to 0: no collection is due after it


def after_round(rounds: int, refreezes: bool = False) -> None:
    """What a fleet source does after its round number `rounds` (the first is 1): settle after the second, its
    label sets built; after each later one, refreeze when the source asks (the engine's Prometheus source)."""
    if rounds == 2:
        settle()
    elif rounds > 2 and refreezes:
        refreeze()


def reclaim(first: bool = False) -> int:
    """Once settled (first: as refreeze's): unfreeze, one full collection (which frees the reference cycles that
    became garbage after being frozen), and freeze again. Its cost is a full collection's: 112-120 ms at 128
    hosts in the soak, 290-690 ms at 1,024 (the GIL held throughout), so its caller picks a moment no one waits
    on. Returns the unreachable objects found (0 when not settled or while the collector is off)."""
    global _settled
    with _lock:
        if not _on() or not (_settled or first):
            return 0
        _settled = True
    gc.unfreeze()
    found = gc.collect()
    gc.freeze()
    return found
