"""Theoretical peaks (dense, no sparsity): named parts (datasheets), per-architecture rates, and a CPU formula.

Order of trust, each Peak saying which it is:
  "spec"          a figure the vendor's datasheet/whitepaper prints for the named part;
  "spec-derived"  the part's architecture rate x the SM/CU count and clock the vendor specifies for that part;
  "estimated"     the architecture rate x the SM/CU count and max clock the driver reports (VMs and boost behaviour
                  make that clock differ from the vendor's: H100 SXM reports 1980 MHz, its tensor peak uses 1830).
Only precisions the architecture has natively get a peak (an emulated path has no meaningful one).

A device name that covers several products ("AMD Instinct MI250X/MI250", pci.ids' "Navi 10 [Radeon RX 5600 OEM/
5600 XT / 5700/5700 XT]", a bare "NVIDIA A100" or Jetson's "Orin") is never read as one of them: match_parts()
returns every candidate; peaks_for() keeps only figures every candidate shares, and marks every peak of such a
device with the candidates (Peak.candidates); peak_candidates() lists each candidate's own figures.
Units: GFLOPS; int8 in GOPS. For memory bandwidth, `Peak.gflops` holds GB/s.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

from gpudash.knowledge.arch import arch_for
from gpudash.knowledge.cpu import features, microarch, vendor_of
from gpudash.knowledge.levels import NATIVE, ArchInfo, DeviceFacts
from gpudash.knowledge.nvidia import parse_cc
from gpudash.knowledge.peak_tables import (
    AMD_RATES,
    GEFORCE_HALVED,
    MOBILE_WORDS,
    NV_RATES,
    NV_RATES_NO_TC,
    PARTS,
    Part,
)
from gpudash.precisions import PRECISIONS

SPEC, DERIVED, ESTIMATED = "spec", "spec-derived", "estimated"


@dataclass(frozen=True)
class Peak:
    gflops: float  # dense, no sparsity; int8 in GOPS (GB/s for memory bandwidth)
    provenance: str  # "spec", "spec-derived" or "estimated"
    basis: str
    candidates: tuple[str, ...] = ()  # the products the device name covers, when it covers several


@dataclass(frozen=True)
class PartMatch:
    """The named parts a device name can be. One part and nothing else: identified. More: ambiguous."""

    parts: tuple[Part, ...] = ()
    others: tuple[str, ...] = ()  # further products the name lists that the tables have no row for

    @property
    def part(self) -> Part | None:
        return self.parts[0] if len(self.parts) == 1 and not self.others else None

    @property
    def ambiguous(self) -> bool:
        return bool(self.parts) and len(self.parts) + len(self.others) > 1

    @property
    def candidates(self) -> tuple[str, ...]:
        return tuple(p.label for p in self.parts) + self.others


_VM_CLOCK = "VMs often report the base clock, so turbo can exceed it"
_NOT_A_PRODUCT = re.compile(r"^(?:pcie|sse2?|gen ?\d|x16|oem)$")


def _ordered(peaks: dict[str, Peak]) -> dict[str, Peak]:
    """Display order of the precision contract."""
    return {p: peaks[p] for p in PRECISIONS if p in peaks}


# The marks and words the vendors' tools print around a product name, which name no product: rocminfo's
# "AMD Radeon(TM) 8060S Graphics", amdsmi's "AMD Radeon™ 8060S", torch's "Radeon 8060S Graphics", nvidia-smi's
# "NVIDIA GeForce RTX 4070 Laptop GPU", "Quadro RTX 5000 with Max-Q Design". The laptop words stay (a laptop part is
# another product than the desktop card of the same number: MOBILE_WORDS), spelled one way: "laptop", "max q".
_MARKS = re.compile(r"\((?:tm|r|c)\)|[\u2122\u00ae\u00a9]", re.IGNORECASE)
_NOISE = re.compile(r"\b(?:amd|ati|nvidia|corporation|graphics|gpu|with|design)\b")


def normalise_name(name: object) -> str:
    """Lower case, trademark marks and vendor words dropped, punctuation as spaces, '/' kept (it separates the
    products of a multi-product name)."""
    text = _MARKS.sub(" ", str(name or "")).lower()
    text = re.sub(r"[^a-z0-9/]+", " ", text)
    text = _NOISE.sub(" ", text)
    text = re.sub(r" ?/ ?", "/", text)
    return re.sub(r" +", " ", text).strip()


def required_literals(pattern: str) -> tuple[str, ...]:
    """Runs of letters, digits and spaces that every match of `pattern` contains: the literal text at its top
    level, outside groups, classes and escapes, a run's last character left out where a quantifier follows it.
    Nothing where the top level has an alternation or the pattern sets flags. A name lacking one of them cannot
    match, so its pattern need not be compiled (tests/test_peaks.py proves each run against re's own parse)."""
    if "(?i" in pattern or "(?a" in pattern:
        return ()
    runs: list[str] = []
    run, depth, i = "", 0, 0
    while i < len(pattern):
        ch = pattern[i]
        if depth == 0 and (ch.isalnum() or ch == " "):
            run += ch
            i += 1
            continue
        if ch in "?*+{" and run:
            run = run[:-1]  # the quantifier makes the run's last character optional
        runs.append(run)
        run = ""
        if ch == "\\":
            i += 1  # an escape (\b, \s, \.): never part of a run
        elif ch == "[":
            i = _class_end(pattern, i)  # a class: one character of several
        elif ch == "{":
            i = pattern.index("}", i)  # a counted repeat: its numbers are no text
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "|" and depth == 0:
            return ()
        i += 1
    runs.append(run)
    return tuple(r.strip() for r in runs if r.strip())


def _class_end(pattern: str, start: int) -> int:
    """The index of the "]" closing the class that opens at `start` (a "]" first in it, or escaped, is text)."""
    i = start + 1
    if pattern[i : i + 1] == "^":
        i += 1
    i += 1  # a "]" right after the opening is a member
    while pattern[i] != "]":
        i += 2 if pattern[i] == "\\" else 1
    return i


@functools.cache
def _vendor_parts(vendor: str) -> tuple[tuple[Part, tuple[str, ...]], ...]:
    """The vendor's parts, each with the literal text its pattern needs (required_literals)."""
    return tuple((part, required_literals(part.pattern)) for part in PARTS if part.vendor == vendor)


@functools.cache
def _pattern(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def _found(part: Part, needs: tuple[str, ...], text: str) -> bool:
    """`part`'s pattern matches `text`. Compiled only for a name holding its literal text: compiling every
    pattern of a vendor cost about 14 ms of each `gpudash info` (docs/performance.md), and a name is one part."""
    return all(n in text for n in needs) and _pattern(part.pattern).search(text) is not None


def _matching(vendor: str, text: str) -> list[Part]:
    return [part for part, needs in _vendor_parts(vendor) if _found(part, needs, text)]


_MOBILE = re.compile(MOBILE_WORDS)


def match_parts(device: DeviceFacts) -> PartMatch:
    """The table parts the device's name can be (see the module docstring). Never raises."""
    vendor = (getattr(device, "vendor", None) or "").lower()
    text = normalise_name(getattr(device, "name", ""))
    if not text:
        return PartMatch()
    parts = _matching(vendor, text)
    if not parts:
        if _MOBILE.search(text):
            return PartMatch()  # a laptop part is none of its desktop family's rows
        group_parts = [
            p for p in PARTS if p.vendor == vendor and p.group and re.search(rf"\b{p.group.lower()}\b", text)
        ]
        return PartMatch(tuple(group_parts))
    others: list[str] = []
    segments = [s.strip() for s in text.split("/")]
    if len(segments) > 1:
        own = [(part, needs) for part, needs in _vendor_parts(vendor) if part in parts]
        for i, seg in enumerate(segments):
            if not re.search(r"\d", seg) or _NOT_A_PRODUCT.match(seg):
                continue
            probe = seg if i == 0 else "/" + seg  # later segments drop the "RX"/"RTX" the patterns accept "/" for
            if not any(_found(part, needs, probe) for part, needs in own):
                named = re.search(r"\b(?:radeon|geforce|instinct|rx|rtx|gtx)\b.*", seg)
                others.append(named.group(0) if named else seg)
    return PartMatch(tuple(dict.fromkeys(parts)), tuple(dict.fromkeys(others)))


def _positive_int(value: Any) -> int | None:
    try:
        n = int(value)
    except (TypeError, ValueError):
        return None
    return n if n > 0 else None


def _rates(key: str | tuple[int, int] | None, arch: ArchInfo | None) -> dict[str, int]:
    if isinstance(key, tuple):
        if key == (7, 5) and arch is not None and arch.matrix_unit is None:
            return NV_RATES_NO_TC  # TU116/TU117 (or a Turing part the name does not place): no tensor cores
        return NV_RATES.get(key, {})
    return AMD_RATES.get(key or "", {})


def _rate_figures(
    rates: dict[str, int],
    native: set[str],
    units: int,
    mhz: int,
    halved: tuple[str, ...],
    provenance: str,
    what: str,
    tail: str,
) -> dict[str, Peak]:
    out = {}
    for precision, rate in rates.items():
        if precision not in native:
            continue
        why = ""
        if precision in halved:
            rate //= 2
            why = ", GeForce fp32-accumulate half rate"
        out[precision] = Peak(
            gflops=units * mhz * rate / 1000.0,
            provenance=provenance,
            basis=f"{what}: {units} x {mhz} MHz x {rate} FLOP/clk{why}{tail}",
        )
    return out


def _gpu_formula(device: DeviceFacts, arch: ArchInfo, native: set[str]) -> dict[str, Peak]:
    units = _positive_int(getattr(device, "multiprocessors", None))
    mhz = _positive_int(getattr(device, "max_clock_mhz", None))
    if units is None or mhz is None:
        return {}
    vendor = (device.vendor or "").lower()
    halved: tuple[str, ...] = ()
    if vendor == "nvidia":
        cc = parse_cc(device.compute_capability)
        rates, unit, label = _rates(cc, arch), "SM", f"cc {cc[0]}.{cc[1]}" if cc else "?"
        tensor = rates is not NV_RATES_NO_TC  # the half rate is a tensor-core limit
        if tensor and cc in GEFORCE_HALVED and "geforce" in normalise_name(device.name).split(" "):
            halved = GEFORCE_HALVED[cc]
    else:
        rates, unit, label = _rates(arch.family, arch), "CU", arch.family
    return _rate_figures(
        rates,
        native,
        units,
        mhz,
        halved,
        ESTIMATED,
        f"formula ({label}, {unit}s x driver max clock)",
        "; the driver's max clock may differ from the clock vendors quote",
    )


def part_peaks(part: Part, arch: ArchInfo) -> dict[str, Peak]:
    """One part's peaks: its datasheet figures ("spec"), then its architecture rates at its specified SM/CU count and
    clock for precisions the datasheet leaves out ("spec-derived"), native precisions only."""
    native = {p for p, level in arch.precisions.items() if level == NATIVE}
    out: dict[str, Peak] = {}
    if part.derive and part.units and part.boost_mhz and part.arch:
        cc = parse_cc(part.arch) if part.vendor == "nvidia" else None
        rates = _rates(cc if cc else part.arch, arch)
        halved = GEFORCE_HALVED.get(cc, ()) if (part.geforce and cc) else ()
        unit = "SMs" if part.vendor == "nvidia" else "CUs"
        out = _rate_figures(
            rates,
            native,
            part.units,
            part.boost_mhz,
            halved,
            DERIVED,
            f"{part.label}: {part.units} {unit} and {part.boost_mhz} MHz per the spec ({part.source}) x {part.arch} rate",
            "",
        )
    elif part.units and part.boost_mhz and part.arch and "fp32" in native:
        # capped part: only the fp32 vector rate, which the cap does not touch
        fp32 = _rates(parse_cc(part.arch) if part.vendor == "nvidia" else part.arch, arch).get("fp32")
        if fp32:
            out = _rate_figures(
                {"fp32": fp32}, native, part.units, part.boost_mhz, (), DERIVED,
                f"{part.label}: {part.units} SMs and {part.boost_mhz} MHz per the spec ({part.source})", "",
            )  # fmt: skip
    note = f"; {part.note}" if part.note else ""
    for precision, tflops in part.tflops.items():
        if precision in native:
            out[precision] = Peak(tflops * 1000.0, SPEC, f"{part.label} datasheet ({part.source}){note}")
    return out


def _same(values: list[Peak]) -> bool:
    first = values[0]
    return all(
        v.provenance == first.provenance and abs(v.gflops - first.gflops) <= 0.005 * max(first.gflops, 1e-9)
        for v in values
    )


def peak_candidates(device: DeviceFacts) -> dict[str, dict[str, Peak]]:
    """Per candidate product, its own peaks, for a device whose name covers several (empty otherwise)."""
    try:
        match = match_parts(device)
        if not match.ambiguous:
            return {}
        arch = arch_for(device)
        return {part.label: _ordered(part_peaks(part, arch)) for part in match.parts}
    except Exception:
        return {}


def _cpu_fp32_rate(device: DeviceFacts, feats: frozenset[str]) -> tuple[int, str] | None:
    """FP32 FLOP/cycle/core and why, or None when the ISA says nothing we can rate."""
    if "avx512_f" in feats:
        arch = microarch(device)
        if arch == "Zen 5":
            return 64, "AVX-512 on Zen 5, 2x512-bit FMA (mobile Zen 5 runs 256-bit: half)"
        if vendor_of(device) == "amd":  # Zen 4 executes AVX-512 on 2x256-bit units
            return 32, f"AVX-512 on {arch if arch != 'CPU' else 'AMD'}, 2x256-bit FMA"
        return 64, "AVX-512 with 2 FMA ports (some SKUs have 1: half)"
    if "avx2" in feats and "fma3" in feats:
        return 32, "AVX2 + FMA, 2 ports"
    return None


def _cpu_peaks(device: DeviceFacts) -> dict[str, Peak]:
    cores = _positive_int(getattr(device, "multiprocessors", None))
    what = "physical cores"
    if cores is None:
        cores, what = _positive_int(getattr(device, "logical_cores", None)), "logical cores (SMT may double count)"
    mhz = _positive_int(getattr(device, "max_clock_mhz", None))
    feats = features(device)
    fp32 = _cpu_fp32_rate(device, feats)
    if cores is None or mhz is None or fp32 is None:
        return {}
    rate32, why32 = fp32
    rates: dict[str, tuple[int, str]] = {"fp32": (rate32, why32), "fp64": (rate32 // 2, why32)}
    if "amx_bf16" in feats:
        rates["bf16"] = (1024, "AMX-BF16 per core")
    elif "avx512_bf16" in feats:
        rates["bf16"] = (2 * rate32, "AVX512-BF16, 2x the fp32 rate")
    if "amx_fp16" in feats:
        rates["fp16"] = (1024, "AMX-FP16 per core")
    elif "avx512_fp16" in feats:
        rates["fp16"] = (2 * rate32, "AVX512-FP16, 2x the fp32 rate")
    if "amx_int8" in feats:
        rates["int8"] = (2048, "AMX-INT8 per core")
    elif "avx512_vnni" in feats and "avx512_f" in feats:
        rates["int8"] = (4 * rate32, "AVX512-VNNI, 4x the fp32 rate")
    elif "avx_vnni" in feats:
        rates["int8"] = (4 * 32, "AVX-VNNI (256-bit), 4x the AVX2 fp32 rate")
    return _ordered(
        {
            p: Peak(
                gflops=cores * mhz * rate / 1000.0,
                provenance=ESTIMATED,
                basis=f"formula: {cores} {what} x {mhz} MHz x {rate} FLOP/cycle ({why}); {_VM_CLOCK}",
            )
            for p, (rate, why) in rates.items()
        }
    )


def _mark(peak: Peak, candidates: tuple[str, ...], why: str) -> Peak:
    return Peak(peak.gflops, peak.provenance, f"{peak.basis}; {why}", candidates)


def is_partition(device: DeviceFacts, part: Part) -> bool:
    """A device with fewer SMs/CUs than its part specifies is a part of it (an MI300X in CPX mode, a virtual
    function of a slice, a MIG-like split under the same name): its own count and clock, not the part's figures."""
    units = _positive_int(getattr(device, "multiprocessors", None))
    return bool(units and part.units and units < part.units)


def peaks_for(device: DeviceFacts) -> dict[str, Peak]:
    """Precision -> theoretical peak, for the precisions we can say something about. Never raises."""
    try:
        vendor = (getattr(device, "vendor", None) or "").lower()
        if vendor == "cpu":
            return _cpu_peaks(device)
        if vendor not in ("nvidia", "amd"):
            return {}
        arch = arch_for(device)
        native = {p for p, level in arch.precisions.items() if level == NATIVE}
        out = _gpu_formula(device, arch, native)
        match = match_parts(device)
        if match.part is not None and not is_partition(device, match.part):
            out.update(part_peaks(match.part, arch))
        elif match.ambiguous:
            names = ", ".join(match.candidates)
            why = f"the name covers several products ({names})"
            out = {p: _mark(pk, match.candidates, why + ": estimated from this device") for p, pk in out.items()}
            if not match.others:
                per_part = [part_peaks(part, arch) for part in match.parts]
                for precision in PRECISIONS:
                    values = [peaks.get(precision) for peaks in per_part]
                    present = [v for v in values if v is not None]
                    if len(present) == len(values) and _same(present):
                        out[precision] = _mark(present[0], match.candidates, f"the same for every product of {why}")
        return _ordered(out)
    except Exception:
        return {}


def peak_memory_bandwidth_gbps(device: DeviceFacts) -> Peak | None:
    """Spec memory bandwidth (GB/s, in `gflops`) of the named part, None when unknown or when the products the name
    covers differ. Never raises."""
    try:
        match = match_parts(device)
        part = match.part
        if part is not None:
            if part.bandwidth_gbs is None or is_partition(device, part):
                return None
            return Peak(part.bandwidth_gbs, SPEC, f"{part.label} datasheet ({part.source})")
        if match.ambiguous and not match.others:
            values = {p.bandwidth_gbs for p in match.parts}
            if len(values) == 1 and None not in values:
                bw = values.pop()
                assert bw is not None
                return Peak(
                    bw,
                    SPEC,
                    f"the same for every product the name covers ({', '.join(match.candidates)})",
                    match.candidates,
                )
        return None
    except Exception:
        return None
