"""Host checks from sysfs: memory errors the EDAC memory controllers counted, and the CPUs' thermal-throttle
counters. A machine without either (a VM, a kernel without EDAC) is "not applicable"; a file that exists but
cannot be read is UNKNOWN with the reason."""

from __future__ import annotations

from pathlib import Path

from gpudash.health.catalog import CRITICAL, HOST, OK, UNKNOWN, WARN, HealthResult, result
from gpudash.health.thresholds import Thresholds

SYS = Path("/sys/devices/system")
_MAX_FILES = 4096  # CPUs x counters; a bound


def _count(path: Path) -> int:
    text = path.read_text(encoding="ascii", errors="replace").strip()
    return int(text)


def edac(limits: Thresholds, root: Path = SYS) -> HealthResult:
    controllers = sorted((root / "edac" / "mc").glob("mc[0-9]*")) if (root / "edac" / "mc").is_dir() else []
    if not controllers:
        return result("host.edac", HOST, None, "not applicable: no EDAC memory controller (/sys/devices/system/edac)")
    counts: dict[str, dict[str, int]] = {}
    try:
        for mc in controllers[:_MAX_FILES]:
            counts[mc.name] = {"ce_count": _count(mc / "ce_count"), "ue_count": _count(mc / "ue_count")}
    except (OSError, ValueError) as exc:
        return result("host.edac", HOST, UNKNOWN, f"cannot read the EDAC counters: {exc}", {"reason": str(exc)})
    uncorrected = sum(c["ue_count"] for c in counts.values())
    corrected = sum(c["ce_count"] for c in counts.values())
    evidence = {"controllers": counts, "corrected_limit": limits.edac_corrected_max}
    if uncorrected:
        return result("host.edac", HOST, CRITICAL, f"{uncorrected} uncorrected host memory errors", evidence)
    if corrected > limits.edac_corrected_max:
        summary = f"{corrected} corrected host memory errors (limit {limits.edac_corrected_max})"
        return result("host.edac", HOST, WARN, summary, evidence)
    return result("host.edac", HOST, OK, f"{corrected} corrected, no uncorrected host memory error", evidence)


def thermal_throttle(root: Path = SYS) -> HealthResult:
    files = sorted((root / "cpu").glob("cpu[0-9]*/thermal_throttle/*_throttle_count"))[:_MAX_FILES]
    if not files:
        return result(
            "host.thermal_throttle", HOST, None, "not applicable: no thermal_throttle counters (a VM, or no such CPU)"
        )
    totals = {"core_throttle_count": 0, "package_throttle_count": 0}
    try:
        for path in files:
            if path.name in totals:
                totals[path.name] += _count(path)
    except (OSError, ValueError) as exc:
        return result("host.thermal_throttle", HOST, UNKNOWN, f"cannot read {path}: {exc}", {"reason": str(exc)})
    if any(totals.values()):
        summary = f"CPU throttled for heat since boot: {totals['core_throttle_count']} core, "
        summary += f"{totals['package_throttle_count']} package events"
        return result("host.thermal_throttle", HOST, WARN, summary, totals)
    return result("host.thermal_throttle", HOST, OK, "no CPU thermal throttling since boot", totals)
