"""Checks that run bf16 experiments on a live ROCm device (skipped elsewhere, and on replayed machines)."""

from __future__ import annotations

from typing import Any

from gpudash.plugins_api import Check, CheckResult, Device

from . import probes
from .gates import RocmDeviceCheck

CPU_CONVERT_FIX = (
    "Convert bf16 to fp32 on the CPU (t.cpu().float()) instead of on the GPU, and load bf16 "
    "caches with dtype=torch.float32."
)


def with_advice(device: Device, finding: str, remediation: str, report: dict[str, Any]) -> str:
    """The fix, then what to train in now that bf16 was found broken here: gpudash's decision with this
    finding as a failing check, the answer `gpudash export` gives once it has run this check."""
    from gpudash.amp import precision_advice

    advice = precision_advice(device, broken={"bf16": finding})
    report["amp_dtype"] = advice.dtype
    return f"{remediation} {advice.text}"


def _verdict(check: Check, device: Device, report: dict[str, Any], what: str, remediation: str) -> CheckResult:
    report = {**report, "precision": "bf16"}  # names the precision these results vouch for (or against)
    if report["mismatches"] == 0:
        return check.passed(
            f"{what}: {report['elements']} values in {report['cases']} cases match the CPU bit for bit", details=report
        )
    zeros = f", {report['zeros_where_nonzero']} became zero" if report["zeros_where_nonzero"] else ""
    summary = (
        f"{what}: {report['mismatches']} of {report['elements']} values differ from the CPU{zeros} "
        f"(first: {report['first_failure']})"
    )
    return check.failed(summary, remediation=with_advice(device, summary, remediation, report), details=report)


class Bf16ToFp32(RocmDeviceCheck):
    name = "bf16_to_fp32"
    description = "bf16 -> fp32 conversion on the device with known values, against the CPU"

    def run_on_torch(self, torch: Any, where: str, device: Device) -> CheckResult:
        report = probes.conversion_report(torch, where)
        return _verdict(self, device, report, "bf16 -> fp32 on the GPU", CPU_CONVERT_FIX)


class Bf16CpuRoundTrip(RocmDeviceCheck):
    name = "bf16_cpu_round_trip"
    description = "bf16 between device and CPU, and fp32 -> bf16 rounding on the device"

    def run_on_torch(self, torch: Any, where: str, device: Device) -> CheckResult:
        fix = (
            "Move tensors to the CPU as fp32 (t.to(torch.float32).cpu()) and convert there; keep bf16 only on the GPU."
        )
        return _verdict(self, device, probes.round_trip_report(torch, where), "bf16 device/CPU round trip", fix)


class Bf16SaveLoad(RocmDeviceCheck):
    name = "bf16_save_load"
    description = "bf16 tensors through a saved file (safetensors if installed, else torch.save) and back"

    def run_on_torch(self, torch: Any, where: str, device: Device) -> CheckResult:
        report = probes.save_load_report(torch, where)
        return _verdict(
            self,
            device,
            report,
            f"bf16 save/load via {report['format'].split(' ')[0]}",
            "Save bf16 caches as fp32 (convert on the device before .cpu()) or load them on the CPU "
            "with dtype=torch.float32 and convert there.",
        )


class Bf16CacheNanInf(RocmDeviceCheck):
    name = "bf16_cache_nan_inf"
    description = "NaN, Inf and collapsed zeros in a bf16 latent cache made on the device"

    def run_on_torch(self, torch: Any, where: str, device: Device) -> CheckResult:
        return cache_verdict(self, probes.cache_report(torch, where), device)


def cache_verdict(check: Check, report: dict[str, Any], device: Device | None = None) -> CheckResult:
    """The cache check's verdict on a report; with the `device`, a failure also says what to train in."""
    report = {**report, "precision": "bf16"}
    fix = (
        "Before writing a cache: t = torch.nan_to_num(t) and assert torch.isfinite(t).all(); store caches as fp32 "
        "(convert on the device before .cpu()) or load them with dtype=torch.float32."
    )
    problems = []
    for path, numbers in report["paths"].items():
        if numbers["nonfinite"]:
            problems.append(f"{numbers['nonfinite']} NaN/Inf via {path}")
        if numbers["zero_fraction"] > report["reference_zero_fraction"] + 0.01:
            problems.append(f"{numbers['zero_fraction']:.0%} zeros via {path}")
        if numbers["max_rel_diff_vs_cpu"] > 2**-7:  # more than one bf16 rounding step away from the CPU
            problems.append(f"values off by up to {numbers['max_rel_diff_vs_cpu']:.1e} relative via {path}")
    if not report["mean_finite"]:
        problems.append("the cache's mean is not finite")
    if problems:
        summary = "bf16 cache: " + "; ".join(problems)
        if device is not None:
            fix = with_advice(device, summary, fix, report)
        return check.failed(summary, remediation=fix, details=report)
    return check.passed(
        "bf16 cache made on the device is finite and matches the CPU on every save path", details=report
    )


class ConversionMatrix(RocmDeviceCheck):
    name = "conversion_matrix"
    description = "every row of the ROCm guide's conversion table (bf16 <-> fp32, bf16 <-> fp16) against the CPU"

    def run_on_torch(self, torch: Any, where: str, device: Device) -> CheckResult:
        from gpudash.rocm import conversion_matrix_report  # the one implementation, public for training code

        return matrix_verdict(self, device, conversion_matrix_report(torch, where))


def matrix_verdict(check: Check, device: Device, report: dict[str, Any]) -> CheckResult:
    """Pass when every row of the guide's table matches the CPU bit for bit; else fail naming the rows."""
    report = {**report, "precision": "bf16"}
    rows, failing = len(report["rows"]), report["failing_rows"]
    if not failing:
        return check.passed(
            f"all {rows} rows of the ROCm guide's conversion table match the CPU bit for bit "
            f"({report['elements']} values)",
            details=report,
        )
    summary = f"{len(failing)} of {rows} rows of the ROCm guide's conversion table differ from the CPU: " + "; ".join(
        failing
    )
    fix = (
        "Convert bf16 through the CPU (gpudash.rocm.bf16_to_float32), load bf16 checkpoints as float32 "
        "(gpudash.rocm.load_safetensors_float32), and avoid the failing conversions on the device."
    )
    return check.failed(summary, remediation=with_advice(device, summary, fix, report), details=report)


DEVICE_CHECKS = (Bf16ToFp32, Bf16CpuRoundTrip, Bf16SaveLoad, Bf16CacheNanInf, ConversionMatrix)
