"""Can training use a precision on this device? The evidence in order of trust: spec, probe, checks, benchmark.

`support`: the architecture has it natively, the probe (if one ran) did not find it broken, and no check
flags it. `judge`: supported, and no reliable measurement (benchmark, or the probe's timing) found it slower than
fp32 beyond its noise (recommend/speed.py).
The verdict keeps the reason and the provenance of the deciding fact.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpudash.models import MEASURED, SPEC
from gpudash.recommend.facts import Facts


@dataclass(frozen=True)
class Verdict:
    ok: bool
    reason: str
    provenance: str


def not_verified(facts: Facts) -> str:
    """Why nothing was verified here, in a few words."""
    if facts.replayed:
        return "not verified: replayed"
    return f"not verified: {facts.not_run.get('probe') or 'no probe ran'}"


def check_provenance(facts: Facts, check: dict) -> str:
    details = check.get("details")
    given = details.get("provenance") if isinstance(details, dict) else None
    if given in (MEASURED, SPEC):
        return given
    return SPEC if facts.replayed else MEASURED


def describe_check(check: dict) -> str:
    name = "/".join(str(p) for p in (check.get("plugin"), check.get("check")) if p)
    summary = check.get("summary") or check.get("status")
    return f"check {name} {check.get('status')}: {summary}"


def support(facts: Facts, precision: str) -> Verdict:
    """Does the device support `precision`: native by the spec tables, and not found broken where a probe or a
    check looked (a probe's slow reference path counts as not supported: the hardware path is not in use)."""
    family = facts.arch.family
    level = facts.arch.precisions.get(precision, "absent")
    if level != "native":
        return Verdict(False, f"{precision} is {level} on {family} by the spec tables", SPEC)
    result = facts.probe_result(precision)
    if result is not None and result.verified is False:
        why = result.failure_reason or result.verdict or "wrong results"
        return Verdict(False, f"the probe found {precision} broken here ({why})", MEASURED)
    if result is not None and result.verdict == "slow_reference":
        note = (result.details or {}).get("note") or "runs only as a slow reference path"
        return Verdict(False, f"the probe found {precision} correct but slow here ({note})", MEASURED)
    flagged = facts.checks_flagging(precision)
    if flagged:
        return Verdict(False, describe_check(flagged[0]), check_provenance(facts, flagged[0]))
    if result is not None and result.verified:
        return Verdict(True, f"{precision} native on {family} and verified by the probe", MEASURED)
    return Verdict(True, f"{precision} native on {family} ({not_verified(facts)})", SPEC)


def judge(facts: Facts, precision: str) -> Verdict:
    """Can training use `precision` here: supported (above), and not measured slower than fp32."""
    verdict = support(facts, precision)
    if not verdict.ok:
        return verdict
    slower = facts.compare_speed(precision, 1.0)
    if slower.answer is False and slower.figure is not None:
        fig = slower.figure
        note = f"; {slower.note}" if slower.note else ""
        return Verdict(
            False,
            f"{precision} measured {fig.value:.2f}x the fp32 speed here (slower; {fig.describe()}{note})",
            MEASURED,
        )
    return verdict


def arch_notes_about(facts: Facts, word: str) -> list[str]:
    return [n for n in facts.arch.notes if word in n.lower()]
