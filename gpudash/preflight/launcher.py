"""Who launched this process, and how the ranks find rank 0.

torchrun sets RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and MASTER_PORT: used as they are, even under srun
(`srun torchrun ...`). srun alone sets SLURM_PROCID, SLURM_STEP_NUM_TASKS (this step's tasks; SLURM_NTASKS
is the allocation's, and a batch script sees it too), SLURM_LOCALID and SLURM_STEP_NODELIST: rank 0 is on
the step's first node, at MASTER_ADDR/MASTER_PORT if the job script exported them, else at a port derived
from the job and step ids. Anything else is a single process: world size 1.

A rank's node (node_name): GPUDASH_PREFLIGHT_NODE where set, else Slurm's name for the node (SLURMD_NODENAME),
else the hostname. The within-node all_reduce groups the ranks of one node.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field

from gpudash.errors import UsageError
from gpudash.preflight.slurm import first_host, job_port


@dataclass(frozen=True)
class World:
    launcher: str  # "torchrun" | "srun" | "none"
    rank: int
    world_size: int
    local_rank: int
    master_addr: str | None = None
    master_port: int | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def distributed(self) -> bool:
        return self.world_size > 1


NODE_VARIABLE = "GPUDASH_PREFLIGHT_NODE"


def node_name(env: Mapping[str, str] | None = None) -> str:
    """The node this rank runs on, as the within-node all_reduce groups ranks: GPUDASH_PREFLIGHT_NODE (to name
    nodes whose hostnames are alike, such as containers, or to split one host), else SLURMD_NODENAME (the name
    Slurm gives the node, which srun sets for each task), else the hostname."""
    env = os.environ if env is None else env
    for name in (NODE_VARIABLE, "SLURMD_NODENAME"):
        value = (env.get(name) or "").strip()
        if value:
            return value
    return socket.gethostname()


def _int(env: Mapping[str, str], name: str) -> int:
    value = env.get(name, "")
    try:
        return int(value)
    except ValueError:
        raise UsageError(f"{name}={value!r}: expected a whole number (set by the launcher)") from None


def _port(env: Mapping[str, str], default: int | None) -> int | None:
    if env.get("MASTER_PORT"):
        port = _int(env, "MASTER_PORT")
        if not 0 < port < 65536:
            raise UsageError(f"MASTER_PORT={port}: expected a port from 1 to 65535")
        return port
    return default


def detect(env: Mapping[str, str] | None = None) -> World:
    env = os.environ if env is None else env
    if "RANK" in env and "WORLD_SIZE" in env:
        world = World(
            "torchrun",
            _int(env, "RANK"),
            _int(env, "WORLD_SIZE"),
            _int(env, "LOCAL_RANK") if env.get("LOCAL_RANK") else 0,
            env.get("MASTER_ADDR") or None,
            _port(env, None),
        )
        if world.distributed and not (world.master_addr and world.master_port):
            raise UsageError("RANK/WORLD_SIZE are set but MASTER_ADDR/MASTER_PORT are not: launch with torchrun")
    elif "SLURM_PROCID" in env and "SLURM_STEP_NUM_TASKS" in env:
        nodes = env.get("SLURM_STEP_NODELIST") or env.get("SLURM_JOB_NODELIST") or ""
        addr = env.get("MASTER_ADDR") or first_host(nodes)
        world = World(
            "srun",
            _int(env, "SLURM_PROCID"),
            _int(env, "SLURM_STEP_NUM_TASKS"),
            _int(env, "SLURM_LOCALID") if env.get("SLURM_LOCALID") else 0,
            addr,
            _port(env, job_port(env.get("SLURM_JOB_ID"), env.get("SLURM_STEP_ID"))),
        )
        if world.distributed and not world.master_addr:
            raise UsageError(f"SLURM_STEP_NODELIST={nodes!r}: cannot find the first node; export MASTER_ADDR")
    else:
        notes = []
        if env.get("SLURM_NTASKS", "1") not in ("", "1") and "SLURM_JOB_ID" in env:
            notes.append(
                f"SLURM_NTASKS={env['SLURM_NTASKS']} but this is not an srun step: checking this process only "
                "(run `srun gpudash preflight` to check every task)"
            )
        world = World("none", 0, 1, 0, notes=tuple(notes))
    if not 0 <= world.rank < world.world_size:
        raise UsageError(f"rank {world.rank} is outside the world of {world.world_size} (launcher {world.launcher})")
    return world
