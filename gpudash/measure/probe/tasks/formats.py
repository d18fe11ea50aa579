"""Bit layouts of the small float formats, an exact decoder, and the known values the probes convert.

The decoder works on integer codes with integer and power-of-two arithmetic in float64, so it shares no
code with the conversion kernels under test: it is the reference every conversion is compared against.
All these formats fit in float32 exactly (bf16 subnormals are fp32 subnormals), so decode -> fp32 is exact.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

IEEE, FN, FNUZ = "ieee", "fn", "fnuz"  # NaN/Inf conventions (see Format.style)


@dataclass(frozen=True)
class Format:
    name: str  # torch dtype attribute name
    bits: int
    exp_bits: int
    man_bits: int
    bias: int
    # ieee: all-ones exponent holds inf (mantissa 0) and NaNs; fn: only S.1111.111 is NaN, no inf;
    # fnuz: the negative-zero code is the only NaN, no inf and no -0 (AMD MI300 flavour).
    style: str

    @property
    def dtype(self) -> torch.dtype:
        return getattr(torch, self.name)

    @property
    def int_dtype(self) -> torch.dtype:
        """The same-width integer type to view the codes through."""
        return torch.int16 if self.bits == 16 else torch.uint8

    @property
    def sign_bit(self) -> int:
        return 1 << (self.bits - 1)

    @property
    def exp_max(self) -> int:
        return (1 << self.exp_bits) - 1

    @property
    def man_max(self) -> int:
        return (1 << self.man_bits) - 1


FORMATS = {
    f.name: f
    for f in (
        Format("bfloat16", 16, 8, 7, 127, IEEE),
        Format("float16", 16, 5, 10, 15, IEEE),
        Format("float8_e4m3fn", 8, 4, 3, 7, FN),
        Format("float8_e5m2", 8, 5, 2, 15, IEEE),
        Format("float8_e4m3fnuz", 8, 4, 3, 8, FNUZ),
        Format("float8_e5m2fnuz", 8, 5, 2, 16, FNUZ),
    )
}


def fields(codes: torch.Tensor, fmt: Format) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(sign, exponent field, mantissa field) of int64 codes."""
    sign = (codes >> (fmt.bits - 1)) & 1
    exp = (codes >> fmt.man_bits) & fmt.exp_max
    man = codes & fmt.man_max
    return sign, exp, man


def is_nan(codes: torch.Tensor, fmt: Format) -> torch.Tensor:
    _, exp, man = fields(codes, fmt)
    if fmt.style == IEEE:
        return (exp == fmt.exp_max) & (man != 0)
    if fmt.style == FN:
        return (exp == fmt.exp_max) & (man == fmt.man_max)
    return codes == fmt.sign_bit


def is_inf(codes: torch.Tensor, fmt: Format) -> torch.Tensor:
    _, exp, man = fields(codes, fmt)
    if fmt.style == IEEE:
        return (exp == fmt.exp_max) & (man == 0)
    return torch.zeros_like(codes, dtype=torch.bool)


def decode(codes: torch.Tensor, fmt: Format) -> torch.Tensor:
    """int64 codes -> exact float64 values (inf and NaN where the format says so)."""
    sign, exp, man = fields(codes, fmt)
    man_f = man.to(torch.float64)
    subnormal = man_f * 2.0 ** (1 - fmt.bias - fmt.man_bits)
    normal = (man_f + 2**fmt.man_bits) * torch.pow(2.0, (exp - fmt.bias - fmt.man_bits).to(torch.float64))
    mag = torch.where(exp == 0, subnormal, normal)
    mag = torch.where(is_inf(codes, fmt), torch.full_like(mag, float("inf")), mag)
    mag = torch.where(is_nan(codes, fmt), torch.full_like(mag, float("nan")), mag)
    return torch.where(sign.bool(), -mag, mag)


def encode_exact(values: torch.Tensor, fmt: Format) -> torch.Tensor:
    """float64 values that the format holds exactly (finite) -> int64 codes. Raises if one is not exact."""
    values = values.to(torch.float64)
    mag = values.abs()
    mant, e = torch.frexp(mag)  # mag = mant * 2**e, mant in [0.5, 1)
    field = e.to(torch.int64) - 1 + fmt.bias
    normal_man = (mant * 2 - 1) * 2**fmt.man_bits
    sub_man = mag / 2.0 ** (1 - fmt.bias - fmt.man_bits)
    is_normal = (field >= 1) & (mag > 0)
    man = torch.where(is_normal, normal_man, sub_man).round().to(torch.int64)
    exp = torch.where(is_normal, field, torch.zeros_like(field))
    sign = torch.signbit(values)
    if fmt.style == FNUZ:  # no negative zero: -0.0 is stored as +0
        sign = sign & (mag > 0)
    sign = sign.to(torch.int64)
    codes = (sign << (fmt.bits - 1)) | (exp << fmt.man_bits) | man
    if not torch.equal(decode(codes, fmt), values):
        raise ValueError(f"values not exactly representable in {fmt.name}")
    return codes


def _codes(fmt: Format, sign: int, exp: torch.Tensor | int, man: torch.Tensor | int) -> torch.Tensor:
    exp = torch.as_tensor(exp, dtype=torch.int64)
    man = torch.as_tensor(man, dtype=torch.int64)
    return (sign << (fmt.bits - 1)) | (exp << fmt.man_bits) | man


def known_values(fmt: Format, seed: int = 0) -> dict[str, torch.Tensor]:
    """Groups of int64 codes: zeros, subnormals, normals, large, inf, arange. NaN codes are left out
    (a NaN's payload need not survive a conversion)."""
    gen = torch.Generator().manual_seed(seed)
    signs = (0,) if fmt.style == FNUZ else (0, 1)
    mans = torch.arange(1, fmt.man_max + 1)
    groups = {
        "zeros": torch.tensor([_codes(fmt, s, 0, 0).item() for s in signs]),
        "subnormals": torch.cat([_codes(fmt, s, 0, mans) for s in (0, 1)]),
    }
    if fmt.bits == 8:  # every normal code
        every = torch.arange(256)
        _, exp, _ = fields(every, fmt)
        keep = (exp > 0) & ~is_nan(every, fmt) & ~is_inf(every, fmt)
        groups["normals"] = every[keep]
    else:  # a seeded sample of normal codes with every exponent
        exps = torch.randint(1, fmt.exp_max, (4096,), generator=gen)
        man = torch.randint(0, fmt.man_max + 1, (4096,), generator=gen)
        sign = torch.randint(0, 2, (4096,), generator=gen)
        groups["normals"] = (sign << (fmt.bits - 1)) | (exps << fmt.man_bits) | man
    top_exp = fmt.exp_max - 1 if fmt.style == IEEE else fmt.exp_max
    top_man = fmt.man_max - 1 if fmt.style == FN else fmt.man_max
    largest = torch.arange(max(0, top_man - 15), top_man + 1)
    groups["large"] = torch.cat([_codes(fmt, s, top_exp, largest) for s in (0, 1)])
    if fmt.style == IEEE:
        groups["inf"] = torch.stack([_codes(fmt, s, fmt.exp_max, 0) for s in (0, 1)])
    span = 2 ** (fmt.man_bits + 1)  # every integer in [-span/2, span/2) is exact
    groups["arange"] = encode_exact(torch.arange(span, dtype=torch.float64) - span // 2, fmt)
    return {name: codes.reshape(-1).to(torch.int64) for name, codes in groups.items()}


def pool(fmt: Format, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor, list[str]]:
    """(codes, group index per code, group names), shuffled with a fixed seed; the first three codes are a
    subnormal, a signed zero and the largest finite value, so even sizes 1 and 3 meet the hard cases."""
    groups = known_values(fmt, seed)
    names = list(groups)
    codes = torch.cat(list(groups.values()))
    group = torch.cat([torch.full((len(c),), i, dtype=torch.int64) for i, c in enumerate(groups.values())])
    order = torch.randperm(len(codes), generator=torch.Generator().manual_seed(seed + 1))
    codes, group = codes[order], group[order]
    firsts = [groups["subnormals"][0], groups["zeros"][-1], groups["large"][len(groups["large"]) // 2 - 1]]
    head = torch.stack(firsts)
    head_group = torch.tensor([names.index("subnormals"), names.index("zeros"), names.index("large")])
    return torch.cat([head, codes]), torch.cat([head_group, group]), names


def tile(values: torch.Tensor, size: int) -> torch.Tensor:
    """values repeated (and cut) to exactly `size` elements."""
    reps = -(-size // len(values))
    return values.repeat(reps)[:size]


def to_storage(codes: torch.Tensor, fmt: Format) -> torch.Tensor:
    """int64 codes -> a tensor of `fmt.dtype` holding exactly those bits."""
    if fmt.bits == 16:
        signed = torch.where(codes >= 0x8000, codes - 0x10000, codes)
        return signed.to(torch.int16).view(fmt.dtype)
    return codes.to(torch.uint8).view(fmt.dtype)


def codes_of(x: torch.Tensor, fmt: Format) -> torch.Tensor:
    """A CPU tensor of `fmt.dtype` -> its int64 codes."""
    raw = x.contiguous().view(fmt.int_dtype).to(torch.int64)
    return raw & ((1 << fmt.bits) - 1)


def describe(code: int, fmt: Format) -> str:
    """'0x3f80 (1.0)' for messages."""
    value = decode(torch.tensor([code]), fmt).item()
    width = fmt.bits // 4
    return f"0x{code:0{width}x} ({value:g})"
