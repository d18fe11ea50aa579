"""One contract for every check result, the plugins' and gpudash's own health checks: `id`, `severity`,
`device`, `evidence` and `action` beside the plugin fields (check.schema.json), and the exit codes."""

from __future__ import annotations

from typing import Any

from gpudash.health.catalog import CRITICAL, NAGIOS_CODES, NONE, OK, UNKNOWN, WARN, HealthResult, worst
from gpudash.plugins_api import CheckResult

# A plugin's status as a severity: skip is "not applicable"; error (the check broke) is UNKNOWN.
_PLUGIN_SEVERITY = {"pass": OK, "warn": WARN, "fail": CRITICAL, "error": UNKNOWN, "skip": None}
_STATUS = {OK: "pass", WARN: "warn", CRITICAL: "fail", UNKNOWN: "error", None: "skip"}
HEALTH_PLUGIN = "gpudash"  # the "plugin" of gpudash's own health results


def plugin_severity(status: str) -> str | None:
    return _PLUGIN_SEVERITY.get(status, UNKNOWN)


def plugin_entry(r: CheckResult) -> dict[str, Any]:
    return {
        **r.to_dict(),
        "id": f"plugin.{r.plugin}.{r.check}",
        "severity": plugin_severity(r.status),
        "evidence": dict(r.details),
        "action": NONE,
    }


def as_check_result(h: HealthResult) -> CheckResult:
    summary = h.summary if h.action == NONE else f"{h.summary} (action: {h.action})"
    return CheckResult(HEALTH_PLUGIN, h.id, h.device, _STATUS[h.severity], summary)


def health_entry(h: HealthResult) -> dict[str, Any]:
    return {
        **as_check_result(h).to_dict(),
        "summary": h.summary,
        "id": h.id,
        "severity": h.severity,
        "evidence": h.evidence,
        "action": h.action,
    }


def exit_code(severities: list[str | None], style: str) -> int:
    """ "default": 1 when anything is CRITICAL, else 0. "nagios": 0/1/2/3 for the worst of OK/WARN/CRITICAL/UNKNOWN
    (in the order CRITICAL, WARN, UNKNOWN, OK); nothing that applied is 0."""
    found = worst(severities)
    if style == "nagios":
        return NAGIOS_CODES[found] if found is not None else 0
    return 1 if found == CRITICAL else 0
