"""The rocm_checks plugin's hooks (no torch at import: the checks import it when they run)."""

from __future__ import annotations

from gpudash.plugins_api import hookimpl

from .device_checks import DEVICE_CHECKS
from .table_checks import TABLE_CHECKS


@hookimpl
def register_checks(register):
    for check in (*DEVICE_CHECKS, *TABLE_CHECKS):
        register(check())
