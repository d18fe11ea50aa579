"""Measured speeds of a precision over fp32, and comparisons that are decided only beyond the noise.

A decision made from a speed ratio (bf16 on a CPU only when it is at least 1.1x fp32; a precision ruled out when
it is slower than fp32) needs the measurement to clear the threshold with its whole spread: a ratio of 1.08x
whose middle half of calls reaches 0.95x-1.2x says nothing about 1.1x. Figures come newest first (the newest
reliable benchmark, the older reliable ones the bench history kept, then the probe's timing); the first figure
that is conclusive decides, so a newer inconclusive measurement never flips what an older conclusive one
decided: the older answer stands, marked unconfirmed. Unreliable (contended) and implausible figures never get
here (measure/bench/store.py, measure/probe/store.py, Facts.speed_figures).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Figure:
    value: float  # speed over fp32
    low: float  # the slow end of its spread
    high: float  # the fast end
    source: str  # "benchmark", "probe timing"
    measured_at: str | None = None

    def describe(self) -> str:
        spread = f", {self.low:.2f}-{self.high:.2f}x" if (self.low, self.high) != (self.value, self.value) else ""
        when = f" {self.measured_at}" if self.measured_at else ""
        return f"{self.source}{when}{spread}"


@dataclass(frozen=True)
class Comparison:
    """Is the speed at least `threshold`: True or False when a figure decided it, None when none could."""

    answer: bool | None
    figure: Figure | None  # the deciding figure, or the newest one when none decided
    note: str = ""  # why the answer is not simply the newest figure's ("unconfirmed: ..."), or why there is none


def figure(value: float, band: object, source: str, measured_at: str | None = None) -> Figure:
    """A Figure from a value and its [low, high] band (a figure kept without one has no spread)."""
    if isinstance(band, (list, tuple)) and len(band) == 2 and all(isinstance(b, (int, float)) for b in band):
        low, high = float(min(band)), float(max(band))
        return Figure(value, min(low, value), max(high, value), source, measured_at)
    return Figure(value, value, value, source, measured_at)


def compare(figures: list[Figure], threshold: float) -> Comparison:
    """Decide "speed >= threshold" from the newest conclusive figure (see the module's docstring)."""
    if not figures:
        return Comparison(None, None, "not measured")
    skipped: list[Figure] = []
    for fig in figures:
        if fig.low >= threshold:
            answer: bool | None = True
        elif fig.high < threshold:
            answer = False
        else:
            skipped.append(fig)
            continue
        if not skipped:
            return Comparison(answer, fig)
        newest = skipped[0]
        return Comparison(
            answer,
            fig,
            f"unconfirmed: the newer measurement ({newest.value:.2f}x, {newest.describe()}) was within the noise "
            f"of {threshold:g}x, so this earlier conclusive one stands",
        )
    newest = figures[0]
    return Comparison(
        None,
        newest,
        f"inconclusive: measured {newest.value:.2f}x fp32 ({newest.describe()}), a spread that reaches both sides "
        f"of {threshold:g}x",
    )
