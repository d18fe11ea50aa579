"""Plugin checks and gpudash's health checks together, as the dashboard's Checks view lists them: grouped by
device (the whole host first, then the devices in the machine's order), worst first within a device (CRITICAL,
WARN, UNKNOWN), then the device's passed checks folded into one line and the checks that do not apply there into
another (a GPU's 16 OK counter checks and 12 skipped ROCm checks are 2 lines; one alone keeps its line). A plugin's
status is read as its severity by the check contract (gpudash.health.contract: fail is CRITICAL, error UNKNOWN,
skip not applicable); a plugin check has no action of its own, its fix is in its detail."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gpudash.health.catalog import CATALOG, CRITICAL, HOST, NONE, OK, UNKNOWN, WARN
from gpudash.health.contract import plugin_severity

if TYPE_CHECKING:
    from gpudash.health import HealthResult
    from gpudash.plugins_api import CheckResult

ORDER = (CRITICAL, WARN, UNKNOWN, OK)
NOT_APPLICABLE = "n/a"  # the severity column of a folded line


@dataclass(frozen=True)
class CheckLine:
    device: str
    severity: str | None  # None: not applicable
    name: str  # "plugin/check", a health check ID, or "(N passed)" / "(N not applicable)" for a folded line
    summary: str
    action: str  # what to do (gpudash.health.catalog.ACTIONS); "none" for plugin checks and folded lines
    results: tuple[Any, ...]  # the CheckResult or HealthResult behind it; every folded one for a folded line

    @property
    def folded(self) -> bool:
        return len(self.results) > 1


def _plugin_line(r: CheckResult) -> CheckLine:
    return CheckLine(r.device, plugin_severity(r.status), f"{r.plugin}/{r.check}", r.summary, NONE, (r,))


def _health_line(h: HealthResult) -> CheckLine:
    return CheckLine(h.device, h.severity, h.id, h.summary, h.action, (h,))


def check_lines(
    plugin: Sequence[CheckResult], health: Sequence[HealthResult], devices: Sequence[str] = ()
) -> list[CheckLine]:
    """Every result as a line, grouped by device (HOST, then `devices` in order, then any other device as it
    first appears), worst first; each device's passed checks, then its not-applicable ones, folded into one line
    each at its end."""
    lines = [_plugin_line(r) for r in plugin] + [_health_line(h) for h in health]
    order = list(dict.fromkeys([HOST, *devices, *(line.device for line in lines)]))
    out: list[CheckLine] = []
    for device in order:
        mine = [line for line in lines if line.device == device]
        for severity in ORDER[:-1]:  # the findings, each on its line, in check order
            out += [line for line in mine if line.severity == severity]
        out += _fold(device, OK, [line for line in mine if line.severity == OK], "passed")
        out += _fold(device, None, [line for line in mine if line.severity is None], "not applicable")
    return out


def _fold(device: str, severity: str | None, lines: list[CheckLine], what: str) -> list[CheckLine]:
    if len(lines) < 2:
        return lines
    names = ", ".join(dict.fromkeys(line.name for line in lines))
    results = tuple(r for line in lines for r in line.results)
    return [CheckLine(device, severity, f"({len(lines)} {what})", names, NONE, results)]


def severity_tally(lines: Sequence[CheckLine]) -> str:
    """'1 CRITICAL, 2 WARN, 14 OK, 64 not applicable', counting results (a folded line counts each it holds)."""
    counts: Counter[str] = Counter()
    for line in lines:
        counts[line.severity or NOT_APPLICABLE] += len(line.results)
    named = [f"{counts[s]} {s}" for s in ORDER if counts[s]]
    if counts[NOT_APPLICABLE]:
        named.append(f"{counts[NOT_APPLICABLE]} not applicable")
    return ", ".join(named)


def describe_line(line: CheckLine) -> str:
    """The highlighted line in full: a plugin check's fix and environment, a health check's title, figures read
    and action, or each folded check with why it does not apply."""
    if line.folded:
        what = "passed" if line.severity == OK else "do not apply here"
        lines = [f"{line.device}: {len(line.results)} checks {what}"]
        lines += [f"  {_name(r)}: {r.summary}" for r in line.results]
        return "\n".join(lines)
    r = line.results[0]
    if hasattr(r, "plugin"):  # a plugin's CheckResult
        from gpudash.render.check import describe

        return f"{line.severity or 'not applicable'} · " + describe(r)
    title = CATALOG[r.id].title
    lines = [f"{r.id} on {r.device}: {r.severity or 'not applicable'} · {title}", r.summary]
    if r.action != NONE:
        lines.append(f"action: {r.action}")
    if r.evidence:
        lines.append("evidence: " + ", ".join(f"{k}={v}" for k, v in r.evidence.items()))
    return "\n".join(lines)


def _name(r: Any) -> str:
    return f"{r.plugin}/{r.check}" if hasattr(r, "plugin") else r.id
