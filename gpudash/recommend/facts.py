"""The recommender's input: plain facts about one device and what was measured on it.

Everything here is data. The export action (gpudash/actions/export.py) gathers it (discovery, probes, benchmarks,
checks, the model's memory); tests build it by hand. `recommend(facts)` reads nothing else.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any, TypeGuard

from gpudash.config import defaults
from gpudash.knowledge import ArchInfo, arch_for
from gpudash.measure.schema import PrecisionCapabilityMatrix, PrecisionTestResult
from gpudash.models import DeviceInfo, Runtime, to_dict
from gpudash.recommend.speed import Comparison, Figure, compare, figure


@dataclass(frozen=True)
class ModelMemory:
    """Memory of one training step of the model, split into what grows with the batch and what does not."""

    description: str  # "reference transformer (12 layers, hidden 768, ...)" or "mypkg.models:make"
    param_count: int
    activation_bytes_per_sample: int  # activations + backward temporaries per sample, at `dtype`
    dtype: str  # the autocast dtype it was traced with: "bfloat16" | "float16" | "float32"
    method: str  # "traced" (FakeTensor + MemTracker on the CPU) | "analytic" (formula, nothing ran)
    provenance: str  # "measured" for a trace, "estimated" for the formula
    fixed_bytes: int = 0  # batch-independent memory the trace saw beyond parameters (buffers, masks)


@dataclass(frozen=True)
class BatchTrial:
    """Trial steps on the device itself: the largest batch that ran without running out of memory."""

    largest_ok: int  # 0: not even one sample fitted
    first_oom: int | None  # smallest batch that ran out of memory, None if none did
    trials: tuple[tuple[int, bool], ...]  # (batch, fitted) in the order tried
    limit: int  # the search stopped here at the latest (no need to go past the target batch)
    dtype: str
    description: str = ""


@dataclass
class Facts:
    device: DeviceInfo
    arch: ArchInfo
    replayed: bool = False
    source: str = "live"  # the machine's label ("live", "replayed from h100.json")
    runtime: Runtime = field(default_factory=Runtime)
    probe: PrecisionCapabilityMatrix | None = None
    bench: PrecisionCapabilityMatrix | None = None
    checks: list[dict[str, Any]] | None = None  # CheckResult-shaped dicts for this device (None: not run)
    config: dict[str, Any] = field(default_factory=defaults)
    host_logical_cores: int | None = None  # None: unknown (a snapshot without a CPU record)
    accelerators_on_host: int = 0  # GPUs sharing the host's cores and its dataloader workers
    memory_available_bytes: int | None = None  # free device memory now (live); None: use the total
    model_memory: ModelMemory | None = None
    batch_trial: BatchTrial | None = None
    bench_mode: str = "none"  # "none" | "quick" | "full": why measurements may be missing
    not_run: dict[str, str] = field(default_factory=dict)  # "probe"/"bench"/"checks"/"memory" -> why not
    remembered: dict[str, str] = field(default_factory=dict)  # "probe"/"bench" -> when the newest one was measured
    generated: str | None = None  # ISO time of the export (passed in: recommend() reads no clock)
    gpudash_version: str | None = None

    @property
    def is_cpu(self) -> bool:
        return self.device.vendor == "cpu"

    def probe_result(self, precision: str) -> PrecisionTestResult | None:
        return self.probe.results.get(precision) if self.probe is not None else None

    def speed_figures(self, precision: str) -> list[Figure]:
        """Reliable measured speeds of `precision` over fp32 here, newest first: the benchmark's (and the older
        reliable ones its history kept), then the probe's timing, which times each precision against fp32 in
        alternation (rate_vs_fp32). A figure marked unreliable (contention) or implausible is left out, and so
        is every figure of a benchmark whose fp32 figure was."""
        out: list[Figure] = []
        if self.bench is not None:
            out += _bench_figures(self.bench, precision)
        result = self.probe_result(precision) if self.probe is not None else None
        if result is not None and result.verified is not None:
            details = result.details or {}
            value = details.get("rate_vs_fp32")
            if _positive(value):
                out.append(figure(float(value), details.get("rate_range"), "probe timing", details.get("measured_at")))
        return out

    def speed(self, precision: str) -> tuple[float, str] | None:
        """(the newest reliable measured speed of `precision` over fp32 here, which measurement said so)."""
        found = self.speed_figures(precision)
        return (found[0].value, found[0].source) if found else None

    def compare_speed(self, precision: str, threshold: float) -> Comparison:
        """Is `precision` measured at least `threshold` x fp32 here, beyond the noise (recommend/speed.py)."""
        return compare(self.speed_figures(precision), threshold)

    def passed_over(self, precision: str) -> list[str]:
        """Benchmark figures of `precision` left out as unreliable or implausible, newest first, one line each."""
        result = self.bench.results.get(precision) if self.bench is not None else None
        details = (result.details or {}) if result is not None else {}
        out = [str(line) for line in details.get("passed_over") or []]
        out += [str(details[k]) for k in ("unreliable_reason", "implausible_reason") if details.get(k)]
        return out

    def speedup(self, precision: str) -> float | None:
        """Measured throughput of `precision` over fp32 on this device (see `speed`), None when not measured."""
        found = self.speed(precision)
        return found[0] if found else None

    def device_checks(self) -> list[dict[str, Any]]:
        """Check results that concern this device (or the whole machine)."""
        out = []
        for check in self.checks or []:
            where = check.get("device")
            if where in (None, "", self.device.key, self.device.index, str(self.device.index)):
                out.append(check)
        return out

    def checks_flagging(self, precision: str, statuses: tuple[str, ...] = ("fail",)) -> list[dict[str, Any]]:
        """Checks with one of `statuses` that name `precision` (in details, or as a word of the check name)."""
        return [c for c in self.device_checks() if c.get("status") in statuses and _names(c, precision)]


def _positive(value: Any) -> TypeGuard[float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0


def _trusted(result: PrecisionTestResult | None) -> bool:
    details = (result.details or {}) if result is not None else {}
    return not (
        details.get("reliable") is False or details.get("unreliable_reason") or details.get("implausible_reason")
    )


def _bench_figures(matrix: PrecisionCapabilityMatrix, precision: str) -> list[Figure]:
    """A benchmark's speed of `precision` with its spread, then the older reliable figures the history kept."""
    result = matrix.results.get(precision)
    if not _trusted(result) or not _trusted(matrix.results.get("fp32")):
        return []
    value = matrix.speedup_vs_fp32.get(precision)
    if value is None and result is not None:
        value = result.speedup_vs_fp32
    if not _positive(value):
        return []
    details = (result.details or {}) if result is not None else {}
    out = [figure(float(value), details.get("speedup_range"), "benchmark", details.get("measured_at"))]
    for old in details.get("history") or []:
        if isinstance(old, dict) and _positive(old.get("value")):
            out.append(figure(float(old["value"]), old.get("range"), "benchmark", old.get("measured_at")))
    return out


def _names(check: dict[str, Any], precision: str) -> bool:
    details = check.get("details") or {}
    if isinstance(details, dict):
        if details.get("precision") == precision:
            return True
        listed = details.get("precisions")
        if isinstance(listed, (list, tuple)) and precision in listed:
            return True
    words = re.split(r"[^a-z0-9]+", f"{check.get('plugin') or ''} {check.get('check') or ''}".lower())
    return precision in words


def check_as_dict(check: Any) -> dict[str, Any]:
    """A CheckResult (dataclass or object) or a dict -> a plain dict."""
    if isinstance(check, dict):
        return dict(check)
    if dataclasses.is_dataclass(check) and not isinstance(check, type):
        return to_dict(check)
    names = ("plugin", "check", "device", "status", "summary", "remediation", "env", "details")
    return {n: getattr(check, n, None) for n in names}


def facts_for(device: DeviceInfo, **kwargs: Any) -> Facts:
    """Facts with the architecture looked up from the device (the usual way to build them)."""
    if kwargs.get("checks") is not None:
        kwargs["checks"] = [check_as_dict(c) for c in kwargs["checks"]]
    return Facts(device=device, arch=arch_for(device), **kwargs)
