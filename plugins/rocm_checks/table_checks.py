"""Checks answered from the gfx target and ROCm version: they run on replayed machines too."""

from __future__ import annotations

from typing import Any

from gpudash.plugins_api import CheckResult, Device, arch_of

from . import facts
from .gates import RocmTableCheck, rocm_torch


def _rocm_text(device: Device) -> str:
    return f"ROCm {facts.version_text(device.rocm_version)}"


def _torch_blas_backend(device: Device) -> str | None:
    """What this torch resolved the BLAS backend to (live ROCm device only)."""
    if device.replayed or device.vendor != "amd":
        return None
    try:
        import torch

        if not getattr(torch.version, "hip", None):
            return None
        return str(torch.backends.cuda.preferred_blas_library())
    except Exception:
        return None


class HipblasltSupport(RocmTableCheck):
    name = "hipblaslt_support"
    description = "is hipBLASLt supported (and torch's default) for this gfx target and ROCm version"

    def run_on_target(self, device: Device, gfx: str) -> CheckResult:
        rocm = device.rocm_version
        supported_since = facts.listed_since(facts.HIPBLASLT_SUPPORTED, gfx)
        preferred_since = facts.listed_since(facts.HIPBLASLT_PREFERRED, gfx)
        details: dict[str, Any] = {
            "gfx_target": gfx,
            "rocm": facts.version_text(rocm),
            "supported_since_rocm": facts.version_text(supported_since) if supported_since else None,
            "default_since_rocm": facts.version_text(preferred_since) if preferred_since else None,
            "source": facts.HIPBLASLT_SOURCE,
        }
        backend = _torch_blas_backend(device)
        if backend:
            details["torch_preferred_blas_library"] = backend
        off = {facts.BLAS_ENV: "0"}
        fallback = 'torch warns "Attempting to use hipBLASLt on an unsupported architecture!" and falls back to hipBLAS'
        if supported_since is None:
            return self.warned(
                f"hipBLASLt does not support {gfx} in any ROCm release: {fallback}",
                remediation=_with_seed_note(f"Set {facts.BLAS_ENV}=0 so torch uses hipBLAS from the start."),
                env=off,
                details=details,
            )
        since = facts.version_text(supported_since)
        if rocm is None:
            return self.warned(
                f"ROCm version unknown: hipBLASLt supports {gfx} from ROCm {since}",
                remediation=f"With an older ROCm, set {facts.BLAS_ENV}=0 (hipBLAS); with ROCm {since} "
                "or newer nothing is needed.",
                details=details,
            )
        if rocm < supported_since:
            return self.warned(
                f"hipBLASLt does not support {gfx} with ROCm {facts.version_text(rocm)} "
                f"(from ROCm {since}): {fallback}",
                remediation=_with_seed_note(
                    f"Set {facts.BLAS_ENV}=0 to use hipBLAS without the fallback, or move to ROCm {since} or newer."
                ),
                env=off,
                details=details,
            )
        for issue in facts.KNOWN_ISSUES:
            if gfx in issue.targets and issue.env.get(facts.BLAS_ENV) == "0":
                return self.warned(
                    f"hipBLASLt supports {gfx} with {_rocm_text(device)}, but {issue.summary} "
                    f"({', '.join(issue.refs)})",
                    remediation=issue.remediation,
                    env=off,
                    details=details,
                )
        if preferred_since is not None and rocm >= preferred_since:
            return self.passed(
                f"hipBLASLt supports {gfx} with {_rocm_text(device)} and torch uses it by default", details=details
            )
        return self.passed(
            f"hipBLASLt supports {gfx} with {_rocm_text(device)}; torch defaults to hipBLAS here",
            remediation=f"{facts.BLAS_ENV}=1 selects hipBLASLt: benchmark both before switching "
            "(hipBLASLt was slower on gfx1151, ROCm/legacy-rocm-build#5643; gfx110x "
            "defaults to hipBLAS for a regression, ROCm/pytorch#2167).",
            details=details,
        )


class KnownIssues(RocmTableCheck):
    name = "known_issues"
    description = "the known ROCm bf16/BLAS issues for this gfx target, with workarounds"

    def run_on_target(self, device: Device, gfx: str) -> CheckResult:
        matches = [issue for issue in facts.KNOWN_ISSUES if gfx in issue.targets]
        family = arch_of(device).family
        if not matches:
            note = facts.NOTES.get(gfx)
            summary = f"no known issue for {gfx} ({family}) in gpudash's table" + (f"; {note}" if note else "")
            return self.passed(summary, details={"gfx_target": gfx, "family": family})
        env: dict[str, str] = {}
        skipped_env: list[str] = []
        for issue in matches:
            for name, value in issue.env.items():
                if issue.needs_hipblaslt and not _hipblaslt_ok(gfx, device):
                    skipped_env.append(f"{name}={value} (hipBLASLt does not support {gfx} with {_rocm_text(device)})")
                    continue
                env[name] = value
        status = "fail" if any(i.status == "fail" for i in matches) else "warn"
        precisions = sorted({p for i in matches for p in i.precisions})
        remediation = " ".join(issue.remediation for issue in matches)
        details: dict[str, Any] = {
            "gfx_target": gfx,
            "family": family,
            "precisions": precisions,
            "issues": [{"summary": i.summary, "refs": list(i.refs), "env": i.env} for i in matches],
        }
        if precisions:  # which dtype to train in: gpudash's one decision, as the export writes it
            from gpudash.amp import precision_advice

            advice = precision_advice(device)
            remediation = f"{advice.text} {remediation}"
            details["amp_dtype"] = advice.dtype
        if skipped_env:
            remediation += " Not set: " + "; ".join(skipped_env) + "."
        summary = f"{gfx} ({family}): " + "; ".join(i.summary for i in matches)
        return self.result(status, summary, remediation=remediation, env=env, details=details)


def _with_seed_note(remediation: str) -> str:
    """The remediation, then what the widely copied "fix" for the hipBLASLt warning really does (said once, in
    gpudash.recommend.env, the rule `gpudash export` follows; read through the public gpudash.runtime)."""
    from gpudash.runtime.platform import HIPBLASLT_SEED_NOTE

    return f"{remediation} Note: {HIPBLASLT_SEED_NOTE}."


def _hipblaslt_ok(gfx: str, device: Device) -> bool:
    since = facts.listed_since(facts.HIPBLASLT_SUPPORTED, gfx)
    rocm = device.rocm_version
    return since is not None and (rocm is None or rocm >= since)


class FftStability(RocmTableCheck):
    """A table check (the RDNA1 routing comes from the table) whose measurement needs the live device."""

    name = "fft_stability"
    description = "FFTs on the device against the CPU (routed to the CPU on RDNA1)"
    timeout_s = 60

    def run_on_target(self, device: Device, gfx: str) -> CheckResult:
        if gfx in facts.FFT_ON_CPU:
            return self.warned(
                f"FFT routed to the CPU on {gfx}: {facts.FFT_ON_CPU[gfx]}",
                remediation="Run torch.fft on CPU tensors (x.cpu()) and move the result back; "
                "gpudash does not run FFTs on this GPU.",
                details={"gfx_target": gfx, "ran_on_device": False, "routing": {"fft": "cpu"}},
            )
        ready = rocm_torch(self, device)  # skips a replayed machine: "not run: replayed"
        if isinstance(ready, CheckResult):
            return ready
        torch, where = ready
        report = fft_report(torch, where)
        if report["max_rel_error"] <= 1e-4 and report["finite"]:
            return self.passed(
                f"rfft/irfft on {where} match the CPU (max relative error {report['max_rel_error']:.1e})",
                details=report,
            )
        return self.failed(
            f"FFT on {where} differs from the CPU (max relative error {report['max_rel_error']:.1e}, "
            f"finite: {report['finite']})",
            remediation="Run torch.fft on CPU tensors (x.cpu()) and move the result back.",
            # the export's [routing] and gpudash.runtime.get_optimal_device("fft") read this
            details={**report, "routing": {"fft": "cpu"}},
        )


FFT_SIZES = (1024, 4097, 65536)  # a power of two, an odd length, and a large one


def fft_report(torch, device: str) -> dict[str, Any]:
    """rfft and the irfft round trip of a known multi-tone signal on `device`, against the CPU."""
    worst, finite = 0.0, True
    for n in FFT_SIZES:
        t = torch.arange(n, dtype=torch.float32) / n
        signal = torch.sin(2 * torch.pi * 5 * t) + 0.5 * torch.cos(2 * torch.pi * 40 * t) + 0.01 * t
        want = torch.fft.rfft(signal)
        got = torch.fft.rfft(signal.to(device)).cpu()
        back = torch.fft.irfft(torch.fft.rfft(signal.to(device)), n=n).cpu()
        finite = finite and bool(torch.isfinite(torch.view_as_real(got)).all() and torch.isfinite(back).all())
        worst = max(
            worst,
            float((got - want).abs().max() / want.abs().max()),
            float((back - signal).abs().max() / signal.abs().max()),
        )
    return {"sizes": list(FFT_SIZES), "max_rel_error": worst, "finite": finite, "ran_on_device": True}


TABLE_CHECKS = (HipblasltSupport, KnownIssues, FftStability)
