"""`gpudash preflight`, for every face: each rank checks its device, rank 0 judges them all.

Under torchrun or srun the ranks join a process group first (so a wrong MASTER_ADDR fails in seconds, not
after the probes), then each probes and checks its device in child processes, runs one all_reduce on the
training backend, and sends its result to rank 0, which judges and shares the exit code so every rank exits
alike. Without a launcher it is the same check for this process alone (world size 1).
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from gpudash.models import now_iso
from gpudash.preflight.launcher import World
from gpudash.preflight.verdict import judge

PREFLIGHT_VERSION = 1
OK, FAILED = 0, 1


@dataclass
class Options:
    device: str = "auto"
    precisions: list[str] | None = None
    timeout_s: float = 120.0
    checks: bool = True
    backend: str = "auto"
    wait_s: float = 1800.0
    plugin_dirs: list[str] = field(default_factory=list)


def report(world: World, backend: str | None, results: list[dict[str, Any]]) -> dict[str, Any]:
    problems = judge(results)
    ranks = [{**r, "problems": problems[r["rank"]], "ok": not problems[r["rank"]]} for r in results]
    failed = [r["rank"] for r in ranks if not r["ok"]]
    return {
        "version": PREFLIGHT_VERSION,
        "generated": now_iso(),
        "launcher": world.launcher,
        "world_size": world.world_size,
        "backend": backend,
        "ok": not failed,
        "failed_ranks": failed,
        "ranks": sorted(ranks, key=lambda r: r["rank"]),
        "notes": list(world.notes),
    }


def _say(world: World, text: str) -> None:
    print(f"gpudash preflight: rank {world.rank}/{world.world_size}: {text}", file=sys.stderr, flush=True)


def run(world: World, options: Options) -> tuple[dict[str, Any] | None, int]:
    """(the report on rank 0, None elsewhere; the exit code every rank returns)."""
    from gpudash.preflight.rank import check_device, prepare

    started = time.monotonic()
    machine, device, result = prepare(world, options.device)
    work = partial(
        check_device,
        precisions=options.precisions,
        timeout_s=options.timeout_s,
        checks=options.checks,
        plugin_dirs=options.plugin_dirs,
    )
    if not world.distributed:
        try:
            work(machine, device, result)
        finally:
            machine.close()
        alone = report(world, None, [result])
        return alone, OK if alone["ok"] else FAILED

    from gpudash.preflight.collective import Group, backend_for

    backend = backend_for(result["device"], options.backend)
    group = Group(world, backend, options.wait_s)
    try:
        what = result["device"]["key"] if result["device"] else "no device"
        _say(world, f"joined ({world.launcher}, {backend}); checking {what}")
        try:
            work(machine, device, result)
        finally:
            machine.close()
        result["collective"] = group.all_reduce_check(result["device"])
        _say(world, f"done in {time.monotonic() - started:.1f} s")
        gathered = group.gather(result)
        doc: dict[str, Any] | None = None
        code: int | None = None
        if gathered is not None:  # rank 0
            doc = report(world, backend, gathered)
            code = OK if doc["ok"] else FAILED
        return doc, int(group.share(code))
    finally:
        group.close()
