"""Every row of the ROCm compatibility guide's dtype-conversion table, run on a device against the CPU.

The guide's table (bf16 -> fp32 by `.to(torch.float32)` on the GPU "produces zeros"; by `.float()` or
`.to(torch.float32)` on the CPU it works; bf16 -> fp16 `.half()`, fp32 -> bf16 and fp16 -> bf16 `.to(torch.bfloat16)`
work) is a claim about one machine. `conversion_matrix_report(torch, device)` tests each row on `device` with
known values (signed zeros, subnormals, each format's extremes, values that need rounding, out-of-range values
that must become Inf) at sizes that take the scalar, tail and vectorised paths, contiguous and strided, and
compares the bits with the same conversion on the CPU, whose conversions are the reference.

A row "works" when every value matches the CPU bit for bit; `as_guide_says` compares that with the guide.
Only the rows' conversions run on the device: sources are made on the CPU and copied there, results copied back
(for the "on the CPU" rows, the bf16 data is copied back before the conversion, as the guide's fix does).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

SIZES = (1, 3, 64, 4097, 2**18 + 5)
# Hard cases for any of the three formats (each is also taken negated by the generator below).
SPECIALS = (
    0.0,
    1.0,
    0.5,
    2.0,
    3.140625,
    2.0**-126,
    2.0**-130,
    2.0**-133,
    2.0**-14,
    2.0**-24,
    6.1e-5,
    65504.0,
    65520.0,
    1e5,
    448.0,
    3.3895313892515355e38,
    1e30,
    1e-30,
)


@dataclass(frozen=True)
class ConversionRow:
    source: str  # torch dtype name
    target: str
    method: str  # as the guide writes it
    where: str  # "device": converted on the device; "cpu": bf16 copied to the CPU first, converted there
    guide_works: bool
    guide_note: str

    @property
    def label(self) -> str:
        return f"{self.source} -> {self.target} {self.method} on {'the CPU' if self.where == 'cpu' else 'the device'}"

    def convert(self, torch: Any, tensor: Any) -> Any:
        target = getattr(torch, self.target)
        if self.where == "cpu":
            tensor = tensor.cpu()
        if self.method == ".float()":
            return tensor.float()
        if self.method == ".half()":
            return tensor.half()
        return tensor.to(target)


CONVERSION_MATRIX = (
    ConversionRow("bfloat16", "float32", ".to(torch.float32)", "device", False, "produces zeros"),
    ConversionRow("bfloat16", "float32", ".float()", "cpu", True, "recommended"),
    ConversionRow("bfloat16", "float32", ".to(torch.float32)", "cpu", True, "works, but .float() preferred"),
    ConversionRow("bfloat16", "float16", ".half()", "device", True, "works"),
    ConversionRow("float32", "bfloat16", ".to(torch.bfloat16)", "device", True, "works"),
    ConversionRow("float16", "bfloat16", ".to(torch.bfloat16)", "device", True, "works"),
)


def known_values(torch: Any, dtype_name: str, size: int) -> Any:
    """`size` values of `dtype_name` on the CPU: the specials (both signs) that the format can hold, a ramp, and
    seeded normals over many magnitudes (out-of-range ones become +/-Inf in fp16, as a conversion would)."""
    dtype = getattr(torch, dtype_name)
    gen = torch.Generator().manual_seed(20240)
    specials = torch.tensor(SPECIALS, dtype=torch.float64)
    ramp = torch.arange(-512, 512, dtype=torch.float64) * 0.37
    spread = torch.randn(2048, generator=gen, dtype=torch.float64) * torch.logspace(-30, 30, 2048, dtype=torch.float64)
    base = torch.cat([specials, -specials, ramp, spread]).to(dtype)
    reps = -(-size // base.numel())
    return base.repeat(reps)[:size].contiguous()


def _bits(torch: Any, t: Any) -> Any:
    t = t.contiguous()
    return t.view({2: torch.int16, 4: torch.int32}[t.element_size()])


def check_row(
    torch: Any, row: ConversionRow, to_device: Callable[[Any], Any], sizes: tuple[int, ...] = SIZES
) -> dict[str, Any]:
    """One row on the device: elements compared, how many differ from the CPU, how many became zero."""
    cases = elements = mismatches = zeros = 0
    first: str | None = None
    for size in sizes:
        source = known_values(torch, row.source, size)
        want = row.convert(torch, source)  # the CPU: the reference
        on_device = to_device(source)
        for layout, view, ref in (("contiguous", on_device, want), ("strided", on_device[::2], want[::2])):
            got = row.convert(torch, view).cpu()
            differ = int((_bits(torch, got) != _bits(torch, ref)).sum())
            became_zero = int(((got == 0) & (ref != 0)).sum())
            cases, elements = cases + 1, elements + ref.numel()
            mismatches, zeros = mismatches + differ, zeros + became_zero
            if differ and first is None:
                first = f"{layout} n={size}: {differ} of {ref.numel()} differ ({became_zero} became zero)"
    works = mismatches == 0
    return {
        **asdict(row),
        "label": row.label,
        "cases": cases,
        "elements": elements,
        "mismatches": mismatches,
        "zeros_where_nonzero": zeros,
        "first_failure": first,
        "works": works,
        "as_guide_says": works == row.guide_works,
    }


def conversion_matrix_report(
    torch: Any,
    device: str,
    to_device: Callable[[Any], Any] | None = None,
    sizes: tuple[int, ...] = SIZES,
) -> dict[str, Any]:
    """Every row of the guide's table on `device` ("cuda:0"; "cpu" tests the CPU against itself).
    `to_device` places a CPU tensor on the device (default: tensor.to(device)). Plain data, for a check's
    details: {"device", "rows": [...], "failing_rows": [labels], "mismatches", "elements"}."""
    place = to_device or (lambda t: t.to(device))
    rows = [check_row(torch, row, place, sizes) for row in CONVERSION_MATRIX]
    return {
        "device": str(device),
        "rows": rows,
        "failing_rows": [r["label"] for r in rows if not r["works"]],
        "mismatches": sum(r["mismatches"] for r in rows),
        "elements": sum(r["elements"] for r in rows),
    }
