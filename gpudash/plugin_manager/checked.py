"""What a plugin child sends back is checked here before it reaches JSON or the screen.

The child runs plugin code, so nothing it sends is trusted: a result must have a known status, finite numbers
(JSON has no NaN or Infinity, and `check --json` must stay strict JSON), text without control characters and
of bounded length, and a bounded tree of details. Control characters in text are shown as escapes (the text
stays readable); a value of the wrong type, a non-finite number or an oversized tree makes the result invalid,
and the check or benchmark is then reported as an error that names the field.
"""

from __future__ import annotations

import math
import re
from typing import Any

from gpudash.plain_text import clean, one_line
from gpudash.plugins_api import ERROR, STATUSES, CheckResult
from gpudash.precisions import PRECISIONS

NAME_CHARS = 200  # a plugin, check, benchmark, kernel or op name; a dict key
LINE_CHARS = 1000  # a summary, a remediation, an error message
TEXT_CHARS = 4000  # a string inside details, which may hold several lines
DEPTH = 10  # of nested lists and objects in details
NODES = 10_000  # values in one result's details
BIGGEST_INT = 2**63  # beyond it, many JSON readers lose digits
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")


class Invalid(ValueError):
    """What is wrong with a value from a child, naming the field."""


def check_result(value: Any, plugin: str, check: str, device: str) -> CheckResult:
    """The CheckResult a child sent for `check` on `device`, or an error result saying what was wrong with it.

    plugin, check and device are gpudash's own: whatever the child put there is replaced.
    """
    try:
        return _check_result(value, plugin, check, device)
    except Invalid as exc:
        return CheckResult(plugin, check, device, ERROR, f"the check returned an invalid result: {exc}")


def _check_result(value: Any, plugin: str, check: str, device: str) -> CheckResult:
    if not isinstance(value, dict):
        raise Invalid(f"expected an object, got {type(value).__name__}")
    status = value.get("status")
    if status not in STATUSES:
        raise Invalid(f"status {one_line(repr(status), 40)} is not one of {', '.join(STATUSES)}")
    return CheckResult(
        plugin,
        check,
        device,
        status,
        summary=line_field(value.get("summary"), "summary"),
        remediation=line_field(value.get("remediation") or "", "remediation"),
        env=_env(value.get("env") or {}),
        details=details_tree(value.get("details") or {}, "details"),
    )


def benchmark_results(value: Any) -> list[dict[str, Any]]:
    """The bench-style results a child sent for one benchmark run; raises Invalid naming the first problem.

    Keys outside the bench contract move into the item's details, so nothing a plugin reported is lost.
    """
    if not isinstance(value, list):
        raise Invalid(f"expected a list of results, got {type(value).__name__}")
    if len(value) > 1000:
        raise Invalid(f"{len(value)} results; at most 1000")
    return [_bench_item(item, f"result {i}") for i, item in enumerate(value)]


_BENCH_KEYS = ("precision", "op", "shape", "gflops", "median_s", "efficiency", "details", "plugin", "benchmark")


def _bench_item(item: Any, where: str) -> dict[str, Any]:
    if not isinstance(item, dict):
        raise Invalid(f"{where}: expected an object, got {type(item).__name__}")
    if item.get("precision") not in PRECISIONS:
        raise Invalid(f"{where}: precision {one_line(repr(item.get('precision')), 40)} is not one of gpudash's")
    shape = item.get("shape") or []
    if not isinstance(shape, list) or len(shape) > 8 or not all(_is_int(n) and 0 <= n < 2**40 for n in shape):
        raise Invalid(f"{where}: shape is not a list of at most 8 sizes")
    details = details_tree(item.get("details") or {}, f"{where}: details")
    extra = {k: v for k, v in item.items() if k not in _BENCH_KEYS}
    details.update(details_tree(extra, f"{where}"))
    return {
        "precision": item["precision"],
        "op": name_field(item.get("op"), f"{where}: op"),
        "shape": list(shape),
        "gflops": _measure(item.get("gflops"), f"{where}: gflops"),
        "median_s": _measure(item.get("median_s"), f"{where}: median_s"),
        "efficiency": _measure(item.get("efficiency"), f"{where}: efficiency"),
        "details": details,
    }


def _measure(value: Any, where: str) -> float | None:
    if value is None:
        return None
    if not _is_number(value) or not math.isfinite(value) or value < 0:
        raise Invalid(f"{where}: {one_line(repr(value), 40)} is not a finite number >= 0")
    return value


def name_field(value: Any, where: str) -> str:
    """A name: a non-empty string without control characters (it becomes a key and a label)."""
    if not isinstance(value, str) or not value.strip():
        raise Invalid(f"{where}: expected a non-empty string, got {one_line(repr(value), 40)}")
    if clean(value, NAME_CHARS) != value:
        raise Invalid(f"{where}: {one_line(repr(value), 60)} has control characters or is over {NAME_CHARS} long")
    return value


def line_field(value: Any, where: str, limit: int = LINE_CHARS) -> str:
    if not isinstance(value, str):
        raise Invalid(f"{where}: expected a string, got {type(value).__name__}")
    return one_line(value, limit)


def _env(value: Any) -> dict[str, str]:
    if not isinstance(value, dict):
        raise Invalid(f"env: expected an object of NAME: value, got {type(value).__name__}")
    out = {}
    for name, setting in value.items():
        if not isinstance(name, str) or not _ENV_NAME.fullmatch(name):
            raise Invalid(f"env: {one_line(repr(name), 60)} is not an environment variable name")
        if not isinstance(setting, str) or clean(setting, LINE_CHARS) != setting:
            raise Invalid(f"env {name}: the value is not a string of printable characters up to {LINE_CHARS}")
        out[name] = setting
    return out


def details_tree(value: Any, where: str) -> dict[str, Any]:
    """A JSON object of plain values: finite numbers, bounded text, at most DEPTH deep and NODES values."""
    if not isinstance(value, dict):
        raise Invalid(f"{where}: expected an object, got {type(value).__name__}")
    budget = [NODES]
    return _tree(value, where, 0, budget)


def _tree(value: Any, where: str, depth: int, budget: list[int]) -> Any:
    budget[0] -= 1
    if budget[0] < 0:
        raise Invalid(f"{where}: more than {NODES} values")
    if value is None or isinstance(value, bool):
        return value
    if _is_int(value):
        if abs(value) >= BIGGEST_INT:
            raise Invalid(f"{where}: the integer {str(value)[:20]}... is too large")
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise Invalid(f"{where}: {value!r} is not a finite number")
        return value
    if isinstance(value, str):
        return clean(value, TEXT_CHARS, lines=True)
    if depth >= DEPTH:
        raise Invalid(f"{where}: nested more than {DEPTH} deep")
    if isinstance(value, list):
        return [_tree(v, f"{where}[{i}]", depth + 1, budget) for i, v in enumerate(value)]
    if isinstance(value, dict):
        out = {}
        for key, v in value.items():
            if not isinstance(key, str):
                raise Invalid(f"{where}: a key is {type(key).__name__}, not a string")
            safe = clean(key, NAME_CHARS)
            out[safe] = _tree(v, f"{where}.{safe}", depth + 1, budget)
        return out
    raise Invalid(f"{where}: {type(value).__name__} is not plain data")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
