"""Checks: the Check base class, the CheckResult it gives, and the statuses a result may carry."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from gpudash.models import NOT_RUN_REPLAYED  # noqa: F401  (public: plugins skip with it)
from gpudash.plugins_api.devices import Device
from gpudash.plugins_api.plain_data import PlainData

# Check verdicts a check may give.
PASS, WARN, FAIL, SKIP = "pass", "warn", "fail", "skip"
STATUSES = (PASS, WARN, FAIL, SKIP)
# Given by gpudash, never by a check: the check itself raised, hung, or killed its process.
ERROR = "error"


@dataclass
class CheckResult(PlainData):
    """One check on one device. `env` holds environment variables to set (NAME -> value) as the fix."""

    plugin: str
    check: str
    device: str  # device key, "amd:0"
    status: str  # pass | warn | fail | skip (gpudash adds "error" when the check itself broke)
    summary: str
    remediation: str = ""
    env: dict[str, str] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)


class Check:
    """Base class for a check. Subclass it, set `name`, implement `run(device)` returning a CheckResult.

    `needs_device = False` declares a check answered from tables alone (gfx target, versions): it then runs on
    replayed machines too. A check that runs device code keeps the default True and is skipped on a replay.
    `vendors = ("amd",)` limits it to those devices: gpudash skips the others without running anything.
    """

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    needs_device: ClassVar[bool] = True
    vendors: ClassVar[tuple[str, ...] | None] = None  # None: every device
    timeout_s: ClassVar[float | None] = None  # None: gpudash's default limit

    def run(self, device: Device) -> CheckResult:
        raise NotImplementedError(f"{type(self).__name__}.run")

    def result(
        self,
        status: str,
        summary: str,
        *,
        remediation: str = "",
        env: dict[str, str] | None = None,
        details: dict[str, Any] | None = None,
    ) -> CheckResult:
        """A result for this check; gpudash fills in the plugin and device."""
        if status not in STATUSES:
            raise ValueError(f"status {status!r} is not one of {', '.join(STATUSES)}")
        return CheckResult("", self.name, "", status, summary, remediation, dict(env or {}), dict(details or {}))

    def passed(self, summary: str, **kw: Any) -> CheckResult:
        return self.result(PASS, summary, **kw)

    def warned(self, summary: str, **kw: Any) -> CheckResult:
        return self.result(WARN, summary, **kw)

    def failed(self, summary: str, **kw: Any) -> CheckResult:
        return self.result(FAIL, summary, **kw)

    def skipped(self, summary: str, **kw: Any) -> CheckResult:
        return self.result(SKIP, summary, **kw)
