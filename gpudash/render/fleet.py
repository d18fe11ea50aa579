"""The fleet as plain text: one row per host and per device, and one host in detail (`gpudash fleet`)."""

from __future__ import annotations

import time

from gpudash.fleet.model import STATUSES, FleetRound, Host
from gpudash.render import formatting as fmt

SPARK = "▁▂▃▄▅▆▇█"


def describe_source(fleet: FleetRound) -> str:
    if fleet.source.get("kind") == "prometheus":
        return f"Prometheus {fleet.source.get('url')}"
    n = fleet.source.get("targets", 0)
    return f"{n} endpoint{'s' if n != 1 else ''}"


def headline(fleet: FleetRound) -> str:
    s = fleet.summary()
    states = ", ".join(f"{s[k]} {k}" for k in STATUSES if s[k]) or "no hosts"
    dropped = f", {len(fleet.dropped)} dropped from the round" if fleet.dropped else ""
    return (
        f"fleet from {describe_source(fleet)} · {s['hosts']} host{'s' if s['hosts'] != 1 else ''}: {states} · "
        f"{s['devices']} device{'s' if s['devices'] != 1 else ''} · round {fleet.took_s:.2f} s "
        f"(deadline {fleet.deadline_s:g} s{dropped})"
    )


def status_word(host: Host) -> str:
    return f"{host.status} (replayed)" if host.replayed else host.status


def health_word(host: Host) -> str:
    """The host's worst health severity (gpudash serve's checks), and GPUs against those expected."""
    word = host.health or "–"
    if host.expected_gpus is not None:
        word += f" {host.gpus}/{host.expected_gpus}"
    return word


def ratio(value: float | None) -> str:
    return fmt.NA if value is None else f"{value * 100:.0f}%"


def verified(device) -> str:
    ok = [p for p, v in device.verified.items() if v]
    bad = [p for p, v in device.verified.items() if not v]
    return " ".join(ok + [f"✗{p}" for p in bad]) or "–"


def device_cells(device) -> list[str]:
    shown, name = device.id, device.name or "?"
    if device.lost:
        name = f"LOST {name}"
    if device.mig_instance is not None:  # a row under its GPU (the row above): short, the profile says the slice
        shown, name = f"└ mig{device.mig_instance}", f"MIG {device.mig_profile or '?'} (GPU_I_ID {device.mig_instance})"
    return [
        shown,
        name,
        ratio(device.utilization_ratio),
        fmt.memory(
            None if device.memory_used_bytes is None else int(device.memory_used_bytes),
            None if device.memory_total_bytes is None else int(device.memory_total_bytes),
        ),
        fmt.number(device.temperature_celsius, "C"),
        fmt.number(device.power_watts, "W"),
        verified(device),
        device.amp_dtype or "–",
    ]


HEADER = ["host", "status", "health", "device", "name", "util", "memory", "temp", "power", "verified", "amp dtype"]


def host_rows(host: Host) -> list[tuple[str, list[str]]]:
    """(device id, its cells after the host, status and health columns): a row per device, or one row carrying
    the host's error (or why it shows nothing) when it has no device to show."""
    if host.devices:
        return [(d.id, device_cells(d)) for d in host.devices]
    why = "; ".join(filter(None, [host.error, *host.problems])) or "no devices"
    return [("-", ["–", why, "", "", "", "", "", ""])]


def rows(fleet: FleetRound) -> list[list[str]]:
    out = []
    for host in fleet.hosts:
        for i, (_, cells) in enumerate(host_rows(host)):
            first = i == 0
            out.append(
                [
                    host.name if first else "",
                    status_word(host) if first else "",
                    health_word(host) if first else "",
                    *cells,
                ]
            )
    return out


def fleet_text(fleet: FleetRound, operators: bool = True) -> str:
    """The table; with `operators`, a drift column and, under the table, totals by model, drift, and GPU memory
    per user and job (gpudash.fleet.totals, gpudash.fleet.drift)."""
    from gpudash.fleet.drift import drift, odd_facts

    drifts = drift(fleet) if operators else []
    table = rows(fleet)
    header = HEADER
    if drifts:
        odd = odd_facts(drifts)
        header = [*HEADER, "drift"]
        for row in table:  # the host's first line names it and carries the mark
            row.append(",".join(f"≠{f}" for f in odd.get(row[0], [])) if row[0] else "")
    lines = [headline(fleet), fmt.table(table, header)]
    for host in fleet.hosts:
        if host.error and host.devices:  # stale hosts show their last values and why they are stale
            lines.append(f"{host.name}: {host.error}")
        if host.problems and host.devices:  # a degraded host: why
            lines.append(f"{host.name}: {host.status}: {'; '.join(host.problems)}")
    if operators:
        lines += operator_lines(fleet, drifts)
    lines += [f"note: {n}" for n in fleet.notes]
    return "\n".join(lines)


def operator_lines(fleet: FleetRound, drifts) -> list[str]:
    from gpudash.fleet.totals import by_model, usage

    lines = []
    totals = by_model(fleet)
    if totals:
        table = []
        for t in totals:
            memory = fmt.memory(int(t.memory_used_bytes), int(t.memory_total_bytes)) if t.memory_reported else fmt.NA
            table.append(
                [
                    t.model,
                    str(t.gpus),
                    ratio(t.utilization_ratio) + _partial(t.utilization_reported, t.gpus),
                    memory + _partial(t.memory_reported, t.gpus),
                    (f"{t.power_watts / 1000:.2f} kW" if t.power_reported else fmt.NA)
                    + _partial(t.power_reported, t.gpus),
                ]
            )
        lines += ["", "totals over hosts up or degraded (MIG instances in their GPU):"]
        lines.append(fmt.table(table, ["model", "gpus", "mean util", "memory", "power"]))
    for d in drifts:
        said = ", ".join(f"{host} {value}" for host, value in d.odd.items())
        base = f"{d.majority} on most of {d.hosts} hosts" if d.majority else f"no majority among {d.hosts} hosts"
        lines.append(f"drift: {d.fact} ({d.vendor} hosts) {base}; odd: {said}")
    lines += remembered_lines(fleet)
    for by in ("user", "job"):
        sums = usage(fleet, by)
        if sums:
            shown = "; ".join(
                f"{u.name} {fmt.gib(int(u.memory_bytes))} GiB on {len(u.gpus)} GPU{'s' if len(u.gpus) != 1 else ''}"
                for u in sums[:20]
            )
            more = f" (+{len(sums) - 20} more)" if len(sums) > 20 else ""
            lines.append(f"GPU memory by {by}: {shown}{more}")
    return lines


def failed_before_lines(host: Host) -> list[str]:
    """The host's memory of bad GPUs: each failure under the row its GPU has now, here or on another host."""
    lines = []
    for d in host.devices:
        for f in d.failed_before:
            where = "" if f.host == host.name else f" on {f.host}"
            lines.append(f"{d.id} {d.uuid} {f.line()}{where}")
    for f in host.failed_before:
        if f.device is None:
            lines.append(f"{f.uuid} (not on this host now) {f.line()}")
    return lines


def remembered_lines(fleet: FleetRound, limit: int = 20) -> list[str]:
    """Under the fleet table: the GPUs up now that failed a check before, newest failure first, and boards
    remembered on one host that turned up on another."""
    found = []
    for host in fleet.hosts:
        for d in host.devices:
            if d.failed_before:
                newest = d.failed_before[0]
                where = "" if newest.host == host.name else f" on {newest.host}"
                more = f" (+{len(d.failed_before) - 1} more)" if len(d.failed_before) > 1 else ""
                found.append((newest.last, f"failed before: {host.name} {d.id} {d.uuid} {newest.line()}{where}{more}"))
    found.sort(key=lambda pair: -pair[0])
    lines = [line for _, line in found[:limit]]
    if len(found) > limit:
        lines.append(f"failed before: +{len(found) - limit} more GPUs (gpudash fleet --host NAME lists each)")
    return lines


def totals_line(fleet: FleetRound) -> str:
    """The totals of the hosts up or degraded in one line (the Fleet tab): every GPU, then the count by model."""
    from gpudash.fleet.totals import by_model

    totals = by_model(fleet)
    if not totals:
        return "totals: no GPUs up"
    every = totals[-1]
    memory = (
        fmt.memory(int(every.memory_used_bytes), int(every.memory_total_bytes)) if every.memory_reported else fmt.NA
    )
    power = f"{every.power_watts / 1000:.2f} kW" if every.power_reported else fmt.NA
    models = ", ".join(f"{t.gpus} x {t.model}" for t in totals if t.model != "all")
    return (
        f"totals: {every.gpus} GPUs · mean util {ratio(every.utilization_ratio)}"
        f"{_partial(every.utilization_reported, every.gpus)} · memory {memory}"
        f"{_partial(every.memory_reported, every.gpus)} · power {power}{_partial(every.power_reported, every.gpus)}"
        f" · {models}"
    )


def _partial(reported: int, of: int) -> str:
    """ " (7 of 8)" when some GPUs gave no figure: the sum is over those that did."""
    return f" ({reported} of {of})" if reported != of else ""


def sparkline(values: list[float], width: int = 40) -> str:
    if not values:
        return ""
    step = max(1, len(values) // width + (1 if len(values) % width else 0))
    points = [max(values[i : i + step]) for i in range(0, len(values), step)]
    return "".join(SPARK[min(len(SPARK) - 1, max(0, int(v * len(SPARK))))] for v in points)


def host_text(fleet: FleetRound, host: Host, now: float | None = None) -> str:
    now = time.time() if now is None else now
    seen = "never" if host.last_seen is None else f"{max(0.0, now - host.last_seen):.0f} s ago"
    lines = [
        f"{host.name}: {status_word(host)} · health {health_word(host)} · last data {seen} · from "
        f"{describe_source(fleet)}",
        "targets: " + (", ".join(host.targets) or "none"),
    ]
    if host.error:
        lines.append(f"error: {host.error}")
    if host.problems:
        lines.append(f"{host.status}: {'; '.join(host.problems)}")
    checks = [f"{key} {severity}" for key, severity in sorted(host.host_checks.items()) if severity != "OK"]
    if checks:
        lines.append(f"the host's own checks: {', '.join(checks)}")
    if not host.devices:
        lines.append("no devices to show")
        return "\n".join(lines)
    table = []
    for d in host.devices:
        failed = "–" if d.checks_failed is None else str(d.checks_failed)
        table.append([*device_cells(d), d.uuid or "–", failed, ",".join(d.sources)])
    lines.append(fmt.table(table, [*HEADER[3:], "uuid", "failed checks", "sources"]))
    for d in host.devices:
        findings = ", ".join(f"{k} {v}" for k, v in sorted(d.health_checks.items()) if v != "OK")
        if findings:  # the checks not OK (the header line has the host's worst)
            lines.append(f"{d.id} health: {findings}")
    lines += failed_before_lines(host)
    for d in host.devices:
        if d.history:
            values = [v for _, v in d.history]
            span = d.history[-1][0] - d.history[0][0]
            over = f"{span / 60:.0f} min" if span >= 120 else f"{span:.0f} s"
            lines.append(
                f"{d.id} utilisation, last {over}: {sparkline(values)} "
                f"(min {min(values) * 100:.0f}%, max {max(values) * 100:.0f}%)"
            )
    return "\n".join(lines)
