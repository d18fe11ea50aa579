"""One device's benchmark as a record (`BenchReport`), and the bench JSON contract it goes into
(gpudash/contracts/bench.schema.json)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gpudash.measure.schema import PrecisionCapabilityMatrix, PrecisionTestResult
from gpudash.models import MEASURED


@dataclass
class BenchReport:
    device: str  # key, e.g. "cpu:0"
    index: int
    vendor: str
    name: str
    matrix: PrecisionCapabilityMatrix
    results: list[dict] = field(default_factory=list)  # one entry per measured (precision, shape)
    memory_bandwidth: list[dict] = field(default_factory=list)
    peak_provenance: dict[str, dict] = field(default_factory=dict)  # precision -> {provenance, basis}
    median_gflops_by_precision: dict[str, float] = field(default_factory=dict)
    mode: str = "quick"
    case_budget_s: float | None = None
    duration_s: float | None = None
    replayed: bool = False
    notes: list[str] = field(default_factory=list)
    torch: str | None = None

    @property
    def provenance(self) -> str:
        return self.matrix.provenance

    def to_json(self) -> dict[str, Any]:
        """The per-device object of the bench JSON contract ($defs/device in bench.schema.json)."""
        m = self.matrix
        return {
            "index": self.index,
            "key": self.device,
            "vendor": self.vendor,
            "name": self.name,
            "provenance": m.provenance,
            "replayed": self.replayed,
            "mode": self.mode,
            "measured_at": m.measured_at,
            "duration_s": self.duration_s,
            "case_budget_s": self.case_budget_s,
            "torch": self.torch,
            "precisions": {p: r.to_dict() for p, r in m.results.items()},
            "supported_precisions": list(m.supported_precisions),
            "unsupported_precisions": list(m.unsupported_precisions),
            "peak_gflops_by_precision": dict(m.peak_gflops_by_precision),
            "median_gflops_by_precision": dict(self.median_gflops_by_precision),
            "speedup_vs_fp32": dict(m.speedup_vs_fp32),
            "theoretical_peaks": dict(m.theoretical_peaks),
            "peak_provenance": {p: dict(v) for p, v in self.peak_provenance.items()},
            "results": [dict(r) for r in self.results],
            "memory_bandwidth": [dict(b) for b in self.memory_bandwidth],
            "notes": list(self.notes),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> BenchReport:
        matrix = PrecisionCapabilityMatrix(
            hardware_name=data.get("name") or "",
            supported_precisions=list(data.get("supported_precisions") or []),
            unsupported_precisions=list(data.get("unsupported_precisions") or []),
            peak_gflops_by_precision=dict(data.get("peak_gflops_by_precision") or {}),
            speedup_vs_fp32=dict(data.get("speedup_vs_fp32") or {}),
            theoretical_peaks=dict(data.get("theoretical_peaks") or {}),
            device=data.get("key"),
            results={p: PrecisionTestResult.from_dict(r) for p, r in (data.get("precisions") or {}).items()},
            measured_at=data.get("measured_at"),
            provenance=data.get("provenance") or MEASURED,
        )
        return cls(
            device=data.get("key") or "",
            index=int(data.get("index") or 0),
            vendor=data.get("vendor") or "",
            name=data.get("name") or "",
            matrix=matrix,
            results=list(data.get("results") or []),
            memory_bandwidth=list(data.get("memory_bandwidth") or []),
            peak_provenance=dict(data.get("peak_provenance") or {}),
            median_gflops_by_precision=dict(data.get("median_gflops_by_precision") or {}),
            mode=data.get("mode") or "quick",
            case_budget_s=data.get("case_budget_s"),
            duration_s=data.get("duration_s"),
            replayed=bool(data.get("replayed")),
            notes=list(data.get("notes") or []),
            torch=data.get("torch"),
        )


def bench_json(machine, reports: dict[str, BenchReport], mode: str, preset: str | None = None) -> dict[str, Any]:
    """The `gpudash bench --json` document (bench.schema.json); also what the history store keeps per run."""
    devices = {d.key: d for d in machine.devices}
    return {
        "version": 1,
        "replayed": machine.replayed,
        "source": machine.label,
        "mode": mode,
        "preset": preset,
        "devices": [_with_mamf(r.to_json(), devices.get(r.device)) for r in reports.values()],
    }


def _with_mamf(entry: dict[str, Any], device: Any) -> dict[str, Any]:
    """The device entry with its "mamf" references (the best measured on its part, published), when it has any."""
    from gpudash.measure.bench.peaks import mamf_references

    refs = mamf_references(device, entry["precisions"]) if device is not None else {}
    if refs:
        entry["mamf"] = refs
    return entry
