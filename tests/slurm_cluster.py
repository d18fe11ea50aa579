"""A real Slurm on localhost for the tests: munged, slurmctld and slurmd from Debian's slurm-wlm, with a
generated slurm.conf in a temporary folder. One node named as the host, or (nodes=N) N nodes n1..nN, each its
own slurmd (-N name) on its own port, all on this host, so srun -N 2 spreads a step over two Slurm nodes.

The settings that let slurmd run in a container without systemd or a writable cgroup tree:
ProctrackType=proctrack/linuxproc (processes tracked by their parent ids), TaskPlugin=task/none,
JobAcctGatherType=jobacct_gather/none; everything runs as root with its state, logs and sockets in the folder.
Ports are below the ephemeral range (32768-60999 here) and checked free. Every daemon is started by its own
handle and killed by it on the way out.

MinJobAge=0 (finished jobs are never purged; a test cluster holds few): `sbatch --wait` sleeps 2 s, then 4 times
longer each time while that stays below MinJobAge/2 and 32 s (Slurm's sbatch.c _job_wait): with the default 300 s
it looks at 2, 10 and 42 s, so a job done in 3 s was seen after 10 s, and one that takes 11 s on a loaded
machine after 42; with 0 it looks every 2 s (a 3 s job: 6.0 s instead of 10.0 s here).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

DAEMONS = ("munged", "slurmctld", "slurmd", "srun", "sinfo")


def missing() -> str | None:
    """Why no cluster can start here, or None."""
    lost = [d for d in DAEMONS if not (shutil.which(d) or Path(f"/usr/sbin/{d}").exists())]
    if lost:
        return f"{', '.join(lost)} not installed (apt-get install slurm-wlm munge; .ci/run does)"
    if os.geteuid() != 0:
        return "slurmd and munged are started as root here (CI runs as root)"
    return None


def _free_low_ports(count: int) -> list[int]:
    """Free ports below the ephemeral range (bind-tested), chosen from the process id to spread test runs."""
    ports: list[int] = []
    start = 21000 + (os.getpid() * 7) % 9000
    for port in range(start, start + 2000):
        with socket.socket() as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        ports.append(port)
        if len(ports) == count:
            return ports
    raise RuntimeError("no free ports below the ephemeral range")


def _sbin(name: str) -> str:
    return shutil.which(name) or f"/usr/sbin/{name}"


def _wait(condition, timeout_s: float, what: str, logs: list[Path]) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.2)
    tails = "\n".join(f"--- {p}\n{p.read_text()[-2000:] if p.exists() else '(none)'}" for p in logs)
    raise RuntimeError(f"{what} within {timeout_s:g} s\n{tails}")


@contextlib.contextmanager
def cluster_or_skip(folder: Path, nodes: int = 1) -> Iterator[dict[str, str]]:
    """cluster(), or the calling test skipped with the reason no cluster can start here."""
    import pytest

    why = missing()
    if why:
        pytest.skip(f"no Slurm here: {why}")
    with cluster(folder, nodes=nodes) as env:
        yield env


@contextlib.contextmanager
def cluster(folder: Path, cpus: int = 2, nodes: int = 1) -> Iterator[dict[str, str]]:
    """Start munged, slurmctld and a slurmd per node; yield the environment srun needs (SLURM_CONF)."""
    folder.mkdir(parents=True, exist_ok=True)
    os.chmod(folder, 0o700)
    host = socket.gethostname().split(".")[0]
    ctld_port, d_port, *node_ports = _free_low_ports(2 + (nodes if nodes > 1 else 0))
    names = [host] if nodes == 1 else [f"n{i + 1}" for i in range(nodes)]
    # Several slurmd on one host: each its own port, and its spool, pid and log files by node name (%n).
    per = "" if nodes == 1 else "-%n"
    node_lines = (
        f"NodeName={host} NodeAddr=127.0.0.1 CPUs={cpus} State=UNKNOWN"
        if nodes == 1
        else "\n".join(
            f"NodeName={n} NodeHostname={host} NodeAddr=127.0.0.1 Port={p} CPUs={cpus} State=UNKNOWN"
            for n, p in zip(names, node_ports, strict=True)
        )
    )
    key = folder / "munge.key"
    key.write_bytes(os.urandom(1024))
    os.chmod(key, 0o400)
    munge_socket = folder / "munge.sock"
    for sub in ["state", "spool"] + ([f"spool-{n}" for n in names] if nodes > 1 else []):
        (folder / sub).mkdir(exist_ok=True)
    # Job ids from the process id: two test clusters on one host (a second copy of the suite beside CI's) both
    # counted from 1, so their steps derived the same store port (gpudash.preflight.slurm.job_port) at once.
    first_job_id = 1 + (os.getpid() % 4000) * 100
    conf = folder / "slurm.conf"
    conf.write_text(
        f"""ClusterName=gpudashtest
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={d_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={munge_socket}
CredType=cred/munge
StateSaveLocation={folder}/state
SlurmdSpoolDir={folder}/spool{per}
SlurmctldPidFile={folder}/slurmctld.pid
SlurmdPidFile={folder}/slurmd{per}.pid
SlurmctldLogFile={folder}/slurmctld.log
SlurmdLogFile={folder}/slurmd{per}.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
SlurmdTimeout=60
InactiveLimit=0
KillWait=5
MinJobAge=0
FirstJobId={first_job_id}
{node_lines}
PartitionName=debug Nodes={",".join(names)} Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
"""
    )
    env = dict(os.environ, SLURM_CONF=str(conf))
    logs = [folder / "munged.log", folder / "slurmctld.log"] + [
        folder / f"slurmd{per.replace('%n', n)}.log" for n in names
    ]
    procs: list[subprocess.Popen] = []

    def start(command: list[str], log: Path) -> None:
        out = log.with_suffix(".out").open("w")
        procs.append(subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT,
                                      start_new_session=True))  # fmt: skip

    try:
        start([_sbin("munged"), "-F", f"--socket={munge_socket}", f"--key-file={key}", f"--pid-file={folder}/munged.pid",
               f"--log-file={folder}/munged.log", f"--seed-file={folder}/munged.seed", "--force"],
              folder / "munged.log")  # fmt: skip
        _wait(munge_socket.exists, 20, "munged did not open its socket", logs)
        start([_sbin("slurmctld"), "-D", "-i", "-f", str(conf)], folder / "slurmctld.log")
        for name, log in zip(names, logs[2:], strict=True):
            start([_sbin("slurmd"), "-D", "-f", str(conf), "-N", name], log)

        def idle() -> bool:
            run = subprocess.run(["sinfo", "-h", "-N", "-o", "%t"], env=env, capture_output=True, text=True, timeout=20)
            states = run.stdout.split()
            return len(states) == len(names) and all(s in ("idle", "mix", "alloc") for s in states)

        _wait(idle, 60, "the nodes did not come up idle", logs + [p.with_suffix(".out") for p in logs])
        yield env
    finally:
        for proc in reversed(procs):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, 9)
            proc.wait()
