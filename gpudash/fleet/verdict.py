"""Whether an answering host is up: "up" means its GPUs are there, not just that an endpoint answered.

An endpoint that serves no device series (a wrong port, Prometheus's own /metrics, a page of another program)
answered, yet shows nothing: it is `empty`, unless the host is expected to have no GPUs (`--expect-gpus 0` or a
hostfile's 0). A host with a lost GPU (gpudash serve's gpudash_device_lost) or with fewer GPUs than expected is
`degraded`. Both make `gpudash fleet` exit 1 (issue 26 item 4, issue 23's fleet face). The health checks'
worst severity is shown beside the status, never turned into one: a WARN is the operator's to weigh.

Only a host that answered is judged: a stale or unreachable host keeps that status, with its problems listed.
"""

from __future__ import annotations

from gpudash.fleet.model import DEGRADED, EMPTY, UP, Host

NO_DEVICES = "serves no device series (a wrong port, or another program's /metrics?)"


def judge(host: Host, expected_gpus: int | None) -> None:
    """Set `host.problems` and, for a host that answered, its status (up, degraded or empty)."""
    host.expected_gpus = expected_gpus
    problems = []
    lost = [d.id for d in host.devices if d.lost]
    if lost:
        problems.append(f"lost GPU{'s' if len(lost) > 1 else ''}: {', '.join(lost)}")
    gpus = host.gpus
    if expected_gpus is not None and gpus < expected_gpus:
        problems.append(f"{gpus} GPU{'s' if gpus != 1 else ''} of {expected_gpus} expected")
    answered = host.status == UP  # an unreachable host shows nothing because it did not answer: its error says so
    empty = answered and not host.devices and expected_gpus is None
    if answered and not host.devices and expected_gpus != 0:
        problems.append(NO_DEVICES)
    host.problems = problems
    if host.status == UP and problems:
        host.status = EMPTY if empty else DEGRADED
