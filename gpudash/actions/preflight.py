"""`gpudash preflight`, for every face: each rank checks its device, rank 0 judges them all.

Under torchrun or srun the ranks join a process group first (so a wrong MASTER_ADDR fails in seconds, not
after the probes), then each probes and checks its device in child processes, runs one all_reduce on the
training backend, and sends its result to rank 0, which judges and shares the exit code so every rank exits
alike. Without a launcher it is the same check for this process alone (world size 1).
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from gpudash.health.catalog import CATALOG, CRITICAL, WARN
from gpudash.models import now_iso
from gpudash.preflight.launcher import World
from gpudash.preflight.verdict import Limits, assess, bandwidth

PREFLIGHT_VERSION = 1
OK, FAILED = 0, 1


@dataclass
class Options:
    device: str = "auto"
    precisions: list[str] | None = None
    timeout_s: float = 120.0
    checks: bool = True
    backend: str = "auto"
    wait_s: float = 120.0  # for every rank to join
    stall_s: float = 30.0  # a rank whose heartbeat stops this long is named as stopped
    busbw_sizes: list[int] | None = None  # None: by backend and device memory (busbw_sweep)
    limits: Limits = field(default_factory=Limits)
    expect_gpus: int | None = None
    health_config: dict[str, Any] | None = None
    plugin_limits: dict[str, Any] | None = None  # the config's [plugins] table (None: as shipped)
    speed: bool = True
    plugin_dirs: list[str] = field(default_factory=list)


def report(
    world: World,
    backend: str | None,
    results: list[dict[str, Any]],
    lost: list[dict[str, Any]] | None = None,
    limits: Limits | None = None,
) -> dict[str, Any]:
    lost = sorted(lost or [], key=lambda x: x["rank"])
    for x in lost:
        x["finding"] = {"id": "preflight.lost", "severity": CRITICAL, "summary": f"{x['state']}: {x['detail']}",
                        "action": CATALOG["preflight.lost"].action, "evidence": {"state": x["state"]}}  # fmt: skip
    found = assess(results, limits)
    ranks = []
    for r in results:
        mine = found[r["rank"]]
        problems = [f["summary"] for f in mine if f["severity"] == CRITICAL]
        warnings = [f["summary"] for f in mine if f["severity"] == WARN]
        ranks.append({**r, "findings": mine, "problems": problems, "warnings": warnings, "ok": not problems})
    failed = sorted([r["rank"] for r in ranks if not r["ok"]] + [x["rank"] for x in lost])
    return {
        "version": PREFLIGHT_VERSION,
        "generated": now_iso(),
        "launcher": world.launcher,
        "world_size": world.world_size,
        "backend": backend,
        "ok": not failed,
        "failed_ranks": failed,
        "ranks": sorted(ranks, key=lambda r: r["rank"]),
        "lost": lost,
        "bandwidth": bandwidth(results),
        "notes": list(world.notes),
    }


MIB, GIB = 2**20, 2**30


def busbw_sweep(backend: str, results: dict[int, dict[str, Any]]) -> list[int]:
    """The all_reduce sizes every rank measures: the same list on every rank, from what all of them posted.
    gloo (CPU): up to 32 MiB. GPUs: up to 1 GiB, and 16 GiB (where the published floors are stated) when every
    rank's device has at least 48 GiB."""
    if backend != "nccl":
        return [256 * 1024, 4 * MIB, 32 * MIB]
    memories = [((r.get("device") or {}).get("memory_total_bytes") or 0) for r in results.values()]
    return [16 * MIB, 256 * MIB, GIB] + ([16 * GIB] if min(memories, default=0) >= 48 * GIB else [])


def node_ranks(results: dict[int, dict[str, Any]]) -> list[list[int]]:
    """The ranks of each node (rank.py's "node"), each list sorted, the lists in the order of their lowest rank:
    the same on every rank, as the process groups of the within-node all_reduce need."""
    nodes: dict[str, list[int]] = {}
    for rank in sorted(results):
        nodes.setdefault(results[rank].get("node") or results[rank]["hostname"], []).append(rank)
    return list(nodes.values())


def _remember(machine, doc: dict[str, Any], hostname: str, rank: int) -> None:
    """This host's failures per GPU UUID, written by one rank per host (preflight/memory.py)."""
    from gpudash.preflight.memory import remember_host, writer_for

    if writer_for(doc, hostname) == rank:
        remember_host(machine, doc, hostname)


def _say(world: World, text: str) -> None:
    print(f"gpudash preflight: rank {world.rank}/{world.world_size}: {text}", file=sys.stderr, flush=True)


def _hint_srun(world: World, lost: list[dict[str, Any]]) -> None:
    """srun waits for a stopped task forever (its --wait defaults to 0) unless a task's non-zero exit ends the
    step (--kill-on-bad-exit=1): say so, since this rank's exit is the only thing that can end the step."""
    from gpudash.preflight.coordinate import STOPPED

    stopped = [str(x["rank"]) for x in lost if x["state"] == STOPPED]
    if world.launcher == "srun" and stopped:
        _say(world, f"rank {', '.join(stopped)} stopped answering: srun ends the step only if launched with "
             "--kill-on-bad-exit=1 (or --wait=N); see docs/fleet.md")  # fmt: skip


def run(
    world: World, options: Options, show: Callable[[dict[str, Any], int], None] | None = None
) -> tuple[dict[str, Any] | None, int]:
    """(the report on the rank that prints it, None elsewhere; the exit code of this rank). `show(doc, code)`
    gets the report on that rank before the other ranks are told the verdict: once told, they exit, and under
    `srun --kill-on-bad-exit=1` a failing rank's exit ends the step, this rank included, possibly before a
    report shown afterwards had been printed (a drain that reads it would find nothing)."""
    from gpudash.preflight.rank import check_device, prepare

    work = partial(
        check_device,
        precisions=options.precisions,
        timeout_s=options.timeout_s,
        checks=options.checks,
        plugin_dirs=options.plugin_dirs,
        speed=options.speed,
        health_config=options.health_config,
        plugin_limits=options.plugin_limits,
        expect_gpus=options.expect_gpus,
    )
    if not world.distributed:
        machine, device, result = prepare(world, options.device)
        try:
            work(machine, device, result)
        finally:
            machine.close()
        alone = report(world, None, [result], limits=options.limits)
        code = OK if alone["ok"] else FAILED
        if show is not None:
            show(alone, code)
        _remember(machine, alone, result["hostname"], world.rank)
        return alone, code
    return _distributed(world, options, work, show)


def _distributed(
    world: World, options: Options, work, show: Callable[[dict[str, Any], int], None] | None
) -> tuple[dict[str, Any] | None, int]:
    from gpudash.lifetime import graceful
    from gpudash.preflight.collective import backend_for, run_collectives
    from gpudash.preflight.coordinate import Job
    from gpudash.preflight.rank import prepare
    from gpudash.preflight.store import Channel, StoreLost, quiet_torch_logs

    quiet_torch_logs()  # before torch loads: one line per failure, not torch's C++ stack traces
    started = time.monotonic()
    terminating = threading.Event()  # set by SIGTERM (the launcher stopping the job): name the silent ranks first
    # From before the store is reached: a rank the launcher stops while it waits for the store (rank 0 ended
    # before it started it) says which rank it is and what it waited for, in one line (exit 3).
    with graceful(terminating.set):
        channel = Channel(world, timeout_s=options.stall_s, connect_s=options.wait_s, wait_s=options.wait_s,
                          stop=terminating, say=partial(_say, world))  # fmt: skip
        job = Job(channel, options.stall_s, options.wait_s, terminating)
        try:
            machine, device, result = prepare(world, options.device)
            job.join(result["hostname"], shares_cores=options.speed and device is not None and device.vendor == "cpu")
            backend = backend_for(result["device"], options.backend)
            what = result["device"]["key"] if result["device"] else "no device"
            _say(world, f"joined ({world.launcher}, {backend}); checking {what}")
            # torchrun's SIGTERM reaches this rank's driver and check children too: a pipe to one of them that
            # breaks once the job is stopping is the stop's doing, not a failure of this rank (which still
            # reports, or names the rank that died).
            try:
                if not job.terminating.is_set():
                    work(machine, device, result, stop=job.terminating, turn=job.take_turn)
            except Exception:
                if not job.terminating.is_set():
                    raise
            finally:
                try:
                    machine.close()
                except Exception:
                    if not job.terminating.is_set():
                        raise
            if job.terminating.is_set():  # our own SIGTERM handler killed the children: their failures are ours
                result.update(precisions={}, checks=[])
                result["notes"].append("the launcher stopped the job (SIGTERM) during this rank's checks: not judged")
            results = job.collect("result", result)
            if not job.lost and not job.terminating.is_set():
                sizes = options.busbw_sizes if options.busbw_sizes is not None else busbw_sweep(backend, results)
                collective = run_collectives(
                    world, channel.raw, backend, result["device"], options.stall_s, sizes,
                    deadline_s=2 * options.stall_s + 60, nodes=node_ranks(results),
                )  # fmt: skip
                for r, c in job.collect("collective", collective).items():
                    results[r]["collective"] = c
            _say(world, f"done in {time.monotonic() - started:.1f} s")
            verdict = None if job.reporter() == world.rank else job.await_verdict()
            if verdict is not None:
                if isinstance(verdict.get("doc"), dict):
                    _remember(machine, verdict["doc"], result["hostname"], world.rank)
                job.acknowledge()
                return None, int(verdict["code"])
            lost = [x.to_json() for x in job.lost.values()]
            doc = report(world, backend, list(results.values()), lost, options.limits)
            code = OK if doc["ok"] else FAILED
            _hint_srun(world, lost)
            if show is not None:
                show(doc, code)
            _remember(machine, doc, result["hostname"], world.rank)
            job.publish({"code": code, "doc": doc})
            return doc, code
        except StoreLost:
            raise
        except BaseException as exc:
            job.leave(f"exited: {type(exc).__name__}: {exc}".splitlines()[0][:300])
            raise
        finally:
            channel.close()
