"""Health verdicts per check ID and device (docs/health.md), a lost GPU, and when the counters were read.

`gpudash_health_check_status{check_id, severity}` follows Prometheus's pattern for an enum (node_exporter's
node_systemd_unit_state): one series per severity, 1 for the result's severity and 0 for the other three, so
`gpudash_health_check_status{severity="CRITICAL"} == 1` alerts and a change of severity is no new series. A
check that does not apply to a device has no series. Checks of the whole machine carry `device_key="host"`.
The action recommended for a failed check is `gpudash_health_check_action_info{check_id, action}`.
"""

from __future__ import annotations

from gpudash.exporter.family import Family, info
from gpudash.exporter.health_cache import HealthReading
from gpudash.exporter.scrape import Scrape
from gpudash.health.catalog import NONE, SEVERITIES
from gpudash.models import LOST


def families(scrape: Scrape, reading: HealthReading) -> list[Family]:
    status = Family(
        "gpudash_health_check_status",
        "Health check result by check ID (docs/health.md): 1 for its severity (OK, WARN, CRITICAL, UNKNOWN), "
        "0 for the others; absent where the check does not apply",
    )
    action = info(
        "gpudash_health_check_action_info",
        "The action a failed health check recommends: reset_gpu, reboot, drain or service (value 1)",
    )
    lost = Family("gpudash_device_lost", "1 when the driver can no longer reach the GPU (lost, fallen off the bus)")
    when = Family("gpudash_health_timestamp_seconds", "When the health counters were last read, Unix seconds")
    for r in reading.results:
        if r.severity is None:
            continue
        labels = scrape.with_labels(r.device, check_id=r.id)
        for severity in SEVERITIES:
            status.add({**labels, "severity": severity}, r.severity == severity)
        if r.action != NONE and r.failed:
            action.add({**labels, "action": r.action}, 1)
    lost_now = {r.device for r in reading.results if r.id == "gpu.lost" and r.severity == "CRITICAL"}
    for device in scrape.devices:
        if device.vendor == "cpu":
            continue
        lost.add(scrape.with_labels(device), device.status == LOST or device.key in lost_now)
        if device.key in reading.counters:
            when.add(scrape.with_labels(device), reading.read_at)
    return [status, action, lost, when]
