"""Numerics: the remembered probe's verdicts (gpudash probe) become checks, but only for the precisions the
device's spec says it has. A precision the spec calls absent (tf32 on a CPU, fp4 before Blackwell) is not
applicable: its failure is the expected answer, never a fault."""

from __future__ import annotations

from gpudash.health.catalog import CRITICAL, OK, WARN, HealthResult, result
from gpudash.knowledge import NATIVE, arch_for
from gpudash.knowledge.levels import ABSENT
from gpudash.models import DeviceInfo


def judge(device: DeviceInfo, matrix) -> list[HealthResult]:
    """One result for the device: the precisions it has that the probe failed, or OK; not applicable when no
    probe of this device is remembered."""
    levels = arch_for(device).precisions
    has = [p for p, level in levels.items() if level != ABSENT]
    if matrix is None or getattr(matrix, "provenance", None) != "measured":
        return [result("numerics.precision", device.key, None, "not probed here (gpudash probe)", {"has": has})]
    verdicts = {p: r.verified for p, r in matrix.results.items() if p in has and r.verified is not None}
    failed = sorted(p for p, ok in verdicts.items() if ok is False)
    evidence = {"verified": sorted(p for p, ok in verdicts.items() if ok), "failed": failed, "has": has}
    if not verdicts:
        return [result("numerics.precision", device.key, None, "no precision of this device was probed", evidence)]
    native_failed = [p for p in failed if levels.get(p) == NATIVE]
    if native_failed:
        summary = f"wrong numbers from native {', '.join(native_failed)}"
        return [result("numerics.precision", device.key, CRITICAL, summary, evidence)]
    if failed:
        return [result("numerics.precision", device.key, WARN, f"wrong numbers from {', '.join(failed)}", evidence)]
    return [result("numerics.precision", device.key, OK, f"{len(verdicts)} precisions verified", evidence)]
