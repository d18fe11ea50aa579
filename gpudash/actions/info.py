"""The devices of the session's machine once: identity, architecture, spec precisions, one reading each.

Returns the info JSON contract (gpudash.info.info_json); `gpudash info` prints it or draws it
(gpudash.render.info), and other faces serve it as it is.
"""

from __future__ import annotations

from typing import Any

from gpudash.actions.session import Session


def info(
    session: Session,
    include_torch: bool | None = True,
    with_samples: bool = True,
    redact: bool = False,
    health: bool = True,
    idle: Any = None,
) -> dict[str, Any]:
    """The info document. With `include_torch` torch's own view of the GPUs is merged in (importing torch costs
    a second or more); without it it is left out; with None it is merged only when it is the only view there
    can be (no NVML or amdsmi GPU, but a GPU device node torch could use), and torch's versions are otherwise
    read from its files. With `redact`, the hostname, UUIDs, PCI ids and processes are stable placeholders
    (gpudash.redaction). With `health`, each GPU's worst health from its driver counters
    (gpudash.health.device_summary: one request per GPU to the driver child; the recorded counters on a replay).
    `idle` (a gpudash.allocation.idle.IdleWatch), kept by a caller that reads again and again, judges
    allocated-but-idle over its readings; a single reading judges nothing (`allocated_idle` null)."""
    from gpudash.info import info_json

    machine = session.machine(include_torch=bool(include_torch))
    if include_torch is None and not machine.replayed and machine.runtime.torch is None:
        from gpudash.devices import add_torch_versions, add_torch_view

        if any(d.vendor != "cpu" for d in machine.devices + machine.hidden):
            add_torch_versions(machine)  # the vendor libraries saw the GPUs: torch's versions are enough
        else:
            add_torch_view(
                machine
            )  # torch's view is the only one there can be (it imports torch only if a GPU node exists)
    judged = None
    if health:
        judged = {key: h.to_json() for key, h in device_health(session, machine).items()}
    document = info_json(machine, with_samples=with_samples, health=judged, idle=idle)
    if not redact:
        return document
    from gpudash.redaction import redact as redacted

    return redacted(document)


def device_health(session: Session, machine: Any = None) -> dict[str, Any]:
    """Device key -> its DeviceHealth (gpudash.health.device_summary), for every GPU of `machine` (default: the
    session's): the worst of its driver-counter checks, the findings with their actions and what was remembered
    failing on it. What `gpudash info` shows beside each GPU and the dashboard marks each device line with; one
    request per GPU to the driver child, the recorded counters on a replay."""
    from gpudash.health.device_summary import device_health as judged
    from gpudash.health.thresholds import Thresholds

    found = machine if machine is not None else session.machine(include_torch=False)
    return judged(found, Thresholds.from_config(session.config))
