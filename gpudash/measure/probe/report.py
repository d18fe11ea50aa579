"""The probe JSON contract (probe.schema.json): `gpudash probe --json`, also the rows the precision view shows."""

from __future__ import annotations

from typing import Any

from gpudash.devices import Machine
from gpudash.knowledge import arch_for
from gpudash.measure.schema import PrecisionCapabilityMatrix, PrecisionTestResult

PROBE_VERSION = 1


def precision_json(result: PrecisionTestResult) -> dict[str, Any]:
    details = result.details or {}
    return {
        "spec": result.spec == "native",
        "support": result.spec,
        "torch": result.torch,
        "verified": result.verified,
        "verdict": result.verdict,
        "max_rel_error": result.max_rel_error,
        "max_abs_error": result.max_abs_error,
        "failure_reason": result.failure_reason,
        "note": details.get("note"),
        "rate_vs_fp32": details.get("rate_vs_fp32"),
        "rate_range": details.get("rate_range"),
        "rate_basis": details.get("rate_basis"),
        "torch_basis": details.get("torch_basis"),
        "checks": details.get("checks", []),
    }


def probe_json(machine: Machine, matrices: dict[str, PrecisionCapabilityMatrix]) -> dict[str, Any]:
    by_key = {d.key: d for d in machine.devices}
    devices = []
    for key, matrix in matrices.items():
        device = by_key.get(key)
        devices.append(
            {
                "index": device.index if device else None,
                "key": key,
                "vendor": device.vendor if device else None,
                "name": matrix.hardware_name,
                "arch": arch_for(device).family if device else None,
                "provenance": matrix.provenance,
                "measured_at": matrix.measured_at,
                "precisions": {p: precision_json(r) for p, r in matrix.results.items()},
            }
        )
    return {"version": PROBE_VERSION, "replayed": machine.replayed, "source": machine.label, "devices": devices}
