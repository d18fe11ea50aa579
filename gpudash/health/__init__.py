"""Health verdicts a cluster acts on: GPU, CPU and host checks with stable IDs, a severity, the figures read and
a recommended action (docs/health.md lists every check, its thresholds and their public sources).

- `catalog`: the check IDs (never reused), severities, actions and the result every face shows.
- `thresholds`: the limits, from the config's [health] table.
- `nvidia`, `amd`: judge the counters the contained driver child read (gpudash.devices.nvml_health,
  gpudash.devices.amd_health); a hang there is cut by the child's time limit and judged UNKNOWN.
- `host`: EDAC memory errors and CPU thermal-throttle counters from sysfs.
- `kernel_log`: "NVRM: Xid" and PCIe "limited by" lines of the kernel log's last hours.
- `numerics`: the probe's verified precisions, for the precisions the device's spec says it has.
- `run`: every check on a machine, in device order.
"""

from __future__ import annotations

from gpudash.health.catalog import (
    ACTIONS,
    CATALOG,
    CRITICAL,
    OK,
    SEVERITIES,
    UNKNOWN,
    WARN,
    HealthResult,
    worst,
)

__all__ = ["ACTIONS", "CATALOG", "CRITICAL", "OK", "SEVERITIES", "UNKNOWN", "WARN", "HealthResult", "worst"]
