"""Published MAMF figures: the best matmul throughput anyone measured on a part, beside its spec peak.

MAMF ("Maximum Achievable Matmul FLOPS") is Stas Bekman's measure in ml-engineering: mamf-finder.py sweeps
matmul shapes (warm-up, then 100 timed iterations per shape with the cache flushed between them) and reports
the best shape's mean. His table (compute/accelerator/README.md, "Maximum Achievable Matmul FLOPS comparison
table") is the field's reference for what a part reaches in practice: spec peaks are never reached (H100 SXM
bf16: 794.5 of 989 TFLOPS). A benchmark here is then read two ways: % of spec peak, and % of the best measured.

Every row is one row of that table, as printed (checked against stas00/ml-engineering at commit
744d01e18b79512572f64a6bbd8b5f4a725203a7; docs/peak-sources.md, "MAMF references"). A row names the peak-table
parts it was measured on; a device gets a row only when peaks.match_parts identifies exactly that part (and,
where the source names a form factor the part row does not, the device's name says it too): an H100 PCIe is
not an H100 SXM, a partition of an MI300X is not an MI300X, a bare "A100" is no row at all.
Units: TFLOPS. Precisions: bf16, and fp8_e4m3 (the table's fp8 runs use float8_e4m3fn).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from gpudash.knowledge.levels import DeviceFacts

_REPO = "https://github.com/stas00/ml-engineering/blob/master/compute/accelerator"
SOURCE = f"{_REPO}/README.md#maximum-achievable-matmul-flops-comparison-table"
FINDER = f"{_REPO}/benchmarks/mamf-finder.py"
SOURCE_NAME = "ml-engineering MAMF table"
METHOD = "mean of 100 iterations after 50 warm-up iterations at the best shape of a sweep (mamf-finder.py)"


@dataclass(frozen=True)
class MamfRow:
    accelerator: str  # the source's name for the part it measured
    parts: tuple[str, ...]  # peak_tables Part labels the measurement applies to
    precision: str  # "bf16" or "fp8_e4m3"
    tflops: float  # the MAMF
    theory_tflops: float  # the spec figure the source divides by (its "Theory" column)
    shape: tuple[int, int, int]  # best shape M x N x K
    torch: str  # torch version of the run
    notes: str = ""  # the source's notes column: TunableOp on AMD, power, memory version
    form: str = ""  # regex the normalised device name must also match (the source names a form factor)
    also: str = ""  # why a part other than the one measured is in `parts` (the source says so)


_A100_40 = "NVIDIA A100 40GB"  # the peak table's 40 GB row covers the SXM and the PCIe card
_TUNABLE_ON, _TUNABLE_OFF = "PYTORCH_TUNABLEOP_ENABLED=1", "PYTORCH_TUNABLEOP_ENABLED=0"

ROWS: tuple[MamfRow, ...] = (
    # BF16
    MamfRow("NVIDIA A100 SXM", (_A100_40, "NVIDIA A100 80GB SXM"), "bf16", 271.2, 312, (1024, 10240, 5120),
            "2.6.0+cu126", form=r"\bsxm"),
    MamfRow("NVIDIA GH200 SXM", ("NVIDIA GH200 (144GB HBM3e)",), "bf16", 828.6, 989, (1024, 15360, 4096),
            "2.6.0+cu126", "900W 141GiB HBM3e version"),
    MamfRow("NVIDIA A100 PCIe", (_A100_40, "NVIDIA A100 80GB PCIe"), "bf16", 252.9, 312, (2048, 5120, 6144),
            "2.5.1+cu124", form=r"\bpcie\b"),
    MamfRow("NVIDIA H100 SXM", ("NVIDIA H100 SXM",), "bf16", 794.5, 989, (2048, 2048, 13312), "2.7.0+cu126",
            "H200 is the same"),
    MamfRow("NVIDIA H100 SXM", ("NVIDIA H200 SXM",), "bf16", 794.5, 989, (2048, 2048, 13312), "2.7.0+cu126",
            "H200 is the same", also="measured on an H100 SXM, applied to the H200 per that note"),
    MamfRow("NVIDIA B300 SXM", ("NVIDIA B300",), "bf16", 1769.0, 2250, (12288, 18432, 1024), "2.9.1+cu130",
            "same as B200, newer torch/cuda"),
    MamfRow("NVIDIA B200 SXM", ("NVIDIA B200",), "bf16", 1745.0, 2250, (1792, 16128, 3072), "2.7.1+cu128"),
    MamfRow("NVIDIA GB200 SXM", ("NVIDIA GB200",), "bf16", 1822.0, 2500, (4096, 9728, 2048),
            "2.10.0.dev20250916+cu130"),
    MamfRow("AMD MI355X", ("AMD Instinct MI355X",), "bf16", 1565.0, 2300, (12288, 8192, 8192),
            "2.8.0+rocm7.0.2.git245bf6ed", _TUNABLE_OFF),
    MamfRow("AMD MI325X", ("AMD Instinct MI325X",), "bf16", 784.9, 1300, (13312, 10240, 8192), "2.6.0+6.2.4",
            f"{_TUNABLE_ON}, 1000W"),
    MamfRow("AMD MI300X", ("AMD Instinct MI300X",), "bf16", 668.4, 1300, (10240, 15360, 8192), "2.5.1+6.3.42131",
            _TUNABLE_ON),
    # FP8 (float8_e4m3fn); the source's MI300X fp8 row is blank
    MamfRow("NVIDIA GH200 SXM", ("NVIDIA GH200 (144GB HBM3e)",), "fp8_e4m3", 1535.0, 1979, (1024, 14336, 14336),
            "2.6.0+cu126", "900W 141GiB HBM3e version"),
    MamfRow("NVIDIA B200 SXM", ("NVIDIA B200",), "fp8_e4m3", 3432.5, 4500, (15360, 4096, 3072), "2.7.1+cu128"),
    MamfRow("NVIDIA B300 SXM", ("NVIDIA B300",), "fp8_e4m3", 3353.3, 4500, (3072, 6144, 7168), "2.9.1+cu130"),
    MamfRow("NVIDIA H200 SXM", ("NVIDIA H200 SXM",), "fp8_e4m3", 1453.4, 1979, (1280, 4096, 12032), "2.7.1+cu128"),
    MamfRow("NVIDIA GB200 SXM", ("NVIDIA GB200",), "fp8_e4m3", 3615.6, 5000, (19456, 5120, 1536),
            "2.10.0.dev20250916+cu130"),
    MamfRow("NVIDIA H100 SXM", ("NVIDIA H100 SXM",), "fp8_e4m3", 1402.6, 1979, (1024, 9216, 14336), "2.7.0+cu126"),
)  # fmt: skip

# Words every name a row can apply to contains: other devices never load the peak tables (`gpudash info`).
_MAYBE = re.compile(r"a100|h100|h200|gh200|b200|b300|gb200|mi300x|mi325x|mi355x", re.IGNORECASE)


def conditions(row: MamfRow) -> str:
    """How the figure was measured, in one line: the method, torch, the source's notes."""
    parts = [METHOD, f"torch {row.torch}"]
    if row.notes:
        parts.append(row.notes)
    if row.also:
        parts.append(row.also)
    return "; ".join(parts)


def mamf_for(device: DeviceFacts) -> dict[str, MamfRow]:
    """precision -> the published MAMF row for this device's part, {} when none applies. Never raises."""
    try:
        vendor = (getattr(device, "vendor", None) or "").lower()
        if vendor not in ("nvidia", "amd") or not _MAYBE.search(str(getattr(device, "name", "") or "")):
            return {}
        from gpudash.knowledge.peaks import is_partition, match_parts, normalise_name

        part = match_parts(device).part
        if part is None or is_partition(device, part):
            return {}
        text = normalise_name(getattr(device, "name", ""))
        found: dict[str, list[MamfRow]] = {}
        for row in ROWS:
            if part.label in row.parts and (not row.form or re.search(row.form, text)):
                found.setdefault(row.precision, []).append(row)
        return {p: rows[0] for p, rows in found.items() if len(rows) == 1}  # two rows would be a guess
    except Exception:
        return {}


def row_json(row: MamfRow) -> dict[str, Any]:
    """One reference as the JSON contracts carry it (info's and bench's "mamf" entries)."""
    return {
        "tflops": row.tflops,
        "accelerator": row.accelerator,
        "source_spec_tflops": row.theory_tflops,
        "shape": list(row.shape),
        "torch": row.torch,
        "conditions": conditions(row),
        "source": SOURCE,
    }


def mamf_json(device: DeviceFacts) -> dict[str, dict[str, Any]]:
    """precision -> row_json, for a device with published figures ({} otherwise)."""
    return {p: row_json(row) for p, row in mamf_for(device).items()}


def of_mamf(measured_gflops: object, row: dict[str, Any] | MamfRow) -> float | None:
    """A measured figure (GFLOPS) over the best measured (a ratio; above 1 is possible with newer software)."""
    tflops = row.tflops if isinstance(row, MamfRow) else row.get("tflops")
    if isinstance(measured_gflops, bool) or not isinstance(measured_gflops, (int, float)):
        return None
    if not isinstance(tflops, (int, float)) or tflops <= 0 or measured_gflops <= 0:
        return None
    return measured_gflops / (tflops * 1000.0)
