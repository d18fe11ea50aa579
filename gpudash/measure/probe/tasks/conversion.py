"""Conversion round trips, bit for bit, on known values (the ROCm "bf16 -> fp32 gives zeros" class).

For each size (1, 3, 4097, 2^20+3: scalar, tiny, vector tail, large tail) and for contiguous, strided and
transposed views, three steps run:
  transfer   codes copied CPU -> device -> CPU come back unchanged
  to fp32    the dtype converted to float32 on the device equals the bit-level reference
  from fp32  the reference float32 values converted to the dtype on the device give the codes back
The reference is `formats.decode`, integer arithmetic that shares nothing with torch's conversion kernels;
on a GPU the CPU's own conversion is checked against it too, since the issue compares with the CPU.
"""

from __future__ import annotations

import time

import torch

from gpudash.measure.probe.tasks import formats

SIZES = (1, 3, 4097, 2**20 + 3)
STRIDED_SIZES = (4097, 2**20 + 3)
TRANSPOSED_SHAPE = (67, 61)


def device_convert(x: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """The conversion under test: one .to() on whatever device x lives on."""
    return x.to(dtype)


def _view(base: torch.Tensor, kind: str) -> torch.Tensor:
    """The view a case converts: the whole tensor, every second element, or a transposed 2-D view."""
    if kind == "strided":
        return base[::2]
    if kind == "transposed":
        return base.reshape(TRANSPOSED_SHAPE).t()
    return base


def _flat(x: torch.Tensor) -> torch.Tensor:
    """A CPU copy in logical order, contiguous and 1-D (so it can be viewed as raw bits)."""
    return x.to("cpu").reshape(-1).contiguous()


def _cases():
    for size in SIZES:
        yield "contiguous", size, size
    for size in STRIDED_SIZES:
        yield "strided", size, 2 * size
    rows, cols = TRANSPOSED_SHAPE
    yield "transposed", rows * cols, rows * cols


def _mismatch(
    got: torch.Tensor,
    want: torch.Tensor,
    codes: torch.Tensor,
    group: torch.Tensor,
    names: list[str],
    fmt: formats.Format,
    step: str,
    where: str,
) -> tuple[int, str] | None:
    """None when got == want bit for bit, else (wrong values, what went wrong in one line)."""
    bad = got != want
    if not bad.any():
        return None
    count, total = int(bad.sum()), bad.numel()
    first = int(bad.nonzero()[0, 0])
    if step == "from fp32":
        got_txt = formats.describe(int(got[first]), fmt)
        want_txt = formats.describe(int(want[first]), fmt)
        zeros = int(((got == 0) & bad).sum())
    else:  # got/want hold float32 bits (or raw codes for transfer)
        got_txt, want_txt = _fmt_bits(got[first], step, fmt), _fmt_bits(want[first], step, fmt)
        zeros = int((((got & 0x7FFFFFFF) == 0) & bad).sum()) if step == "to fp32" else int(((got == 0) & bad).sum())
    groups = sorted({names[int(g)] for g in group[bad].unique()})
    zero_txt = f", {zeros} became 0" if zeros else ""
    return count, (
        f"{fmt.name} {step} {where}: {count} of {total} values wrong{zero_txt} "
        f"(in {', '.join(groups)}; e.g. {formats.describe(int(codes[first]), fmt)}: got {got_txt}, "
        f"expected {want_txt})"
    )


def _fmt_bits(bits: torch.Tensor, step: str, fmt: formats.Format) -> str:
    if step == "to fp32":
        value = torch.tensor([int(bits)], dtype=torch.int32).view(torch.float32).item()
        return f"{value:g}"
    return formats.describe(int(bits), fmt)


def check_float_conversion(device: str, dtype_name: str) -> dict:
    """All three steps for one small float format on one device."""
    fmt = formats.FORMATS[dtype_name]
    started = time.perf_counter()
    pool_codes, pool_group, names = formats.pool(fmt)
    pool32 = formats.decode(pool_codes, fmt).to(torch.float32)  # decoded once, tiled per size
    problems: list[tuple[int, str]] = []
    if not device.startswith("cpu"):  # the CPU result is the baseline on a GPU: check it first
        cpu = formats.to_storage(pool_codes, fmt).to(torch.float32)
        problem = _mismatch(
            cpu.view(torch.int32),
            pool32.view(torch.int32),
            pool_codes,
            pool_group,
            names,
            fmt,
            "to fp32",
            "on the CPU (the baseline itself)",
        )
        if problem:
            problems.append(problem)
    cases = 0
    for kind, size, base_size in _cases():
        codes, group = formats.tile(pool_codes, base_size), formats.tile(pool_group, base_size)
        where = f"on {device} [{kind}, {size} values]"
        want32 = formats.tile(pool32, base_size)
        x_dev = formats.to_storage(codes, fmt).to(device)
        view_codes, view_group = _flat(_view(codes, kind)), _flat(_view(group, kind))
        to32 = device_convert(_view(x_dev, kind), torch.float32)
        from32 = device_convert(_view(want32.to(device), kind), fmt.dtype)
        steps = (
            ("transfer", formats.codes_of(x_dev.to("cpu"), fmt), codes),
            ("to fp32", _flat(to32).view(torch.int32), _flat(_view(want32, kind)).view(torch.int32)),
            ("from fp32", formats.codes_of(_flat(from32), fmt), view_codes),
        )
        for step, got, want in steps:
            cases += 1
            step_codes, step_group = (codes, group) if step == "transfer" else (view_codes, view_group)
            problem = _mismatch(got, want, step_codes, step_group, names, fmt, step, where)
            if problem:
                problems.append(problem)
    return _result(problems, cases, started, dtype_name)


def check_int8_conversion(device: str) -> dict:
    """int8 <-> fp32 on the device for every int8 value, at every size and view."""
    started = time.perf_counter()
    values = torch.arange(-128, 128, dtype=torch.int64)
    problems: list[tuple[int, str]] = []
    cases = 0
    for kind, size, base_size in _cases():
        ints = formats.tile(values, base_size).to(torch.int8)
        where = f"on {device} [{kind}, {size} values]"
        want = _flat(_view(ints, kind)).to(torch.int64)
        x_dev = ints.to(device)
        to32 = _flat(device_convert(_view(x_dev, kind), torch.float32))
        exact32 = ints.to(torch.float32).to(device)  # converted on the CPU, then copied over
        back = _flat(device_convert(_view(exact32, kind), torch.int8))
        for step, got in (("transfer", x_dev.to("cpu").to(torch.int64)), ("to fp32", to32), ("from fp32", back)):
            cases += 1
            expect = ints.to(torch.int64) if step == "transfer" else want
            wrong = got.to(torch.float64) != expect.to(torch.float64)
            if wrong.any():
                i = int(wrong.nonzero()[0, 0])
                problems.append(
                    (
                        int(wrong.sum()),
                        f"int8 {step} {where}: {int(wrong.sum())} of {wrong.numel()} "
                        f"values wrong (e.g. {int(expect[i])} -> {got[i].item():g})",
                    )
                )
    return _result(problems, cases, started, "int8")


def _result(problems: list[tuple[int, str]], cases: int, started: float, dtype_name: str) -> dict:
    """The headline reason is the case with the most wrong values, prefixed by how many cases failed."""
    worst = sorted(problems, key=lambda p: -p[0])
    reason = f"{len(problems)} of {cases} conversion cases failed; worst: {worst[0][1]}" if problems else None
    return {
        "check": "conversion",
        "dtype": dtype_name,
        "ok": not problems,
        "reason": reason,
        "problems": [text for _, text in worst[:8]],
        "cases": cases,
        "sizes": list(SIZES),
        "seconds": time.perf_counter() - started,
    }
