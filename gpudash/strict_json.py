"""JSON in and out, strictly.

In: what a file holds can neither hang, exhaust nor crash gpudash. NaN, Infinity and -Infinity, which are not
JSON but which Python's json (and so gpudash before its output was strict) wrote for a figure that was not a
number, are read as null: the figure is unknown, as in every newer file. Numbers beyond what any field can
mean are refused (10**400 or 1e400 would overflow the first float conversion, or be infinite), and so is
nesting deeper than MAX_DEPTH; strings are cut at MAX_STRING characters.
Every string, keys too, comes back safe for a terminal (gpudash.plain_text): an escape sequence or a lone
surrogate in a device name is shown as its escape, never sent to the terminal or an encoder.

Out: strict JSON every parser accepts. Non-finite floats become null (their field's reason says why) and lone
surrogates their escape, and json.dumps runs with allow_nan=False as a last guard.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import Any

from gpudash.plain_text import clean

MAX_DEPTH = 64  # gpudash's own files nest at most about 10 deep
MAX_INT = 2**63 - 1  # the largest integer field (bytes, counters) any driver reports fits in 64 bits
MAX_STRING = 65536  # characters; longer strings are cut (the cut marked with …)
_SURROGATE = re.compile("[\ud800-\udfff]")


class JsonProblem(ValueError):
    """What is wrong with a document, without the file's name (the reader adds it)."""


def _unknown(name: str) -> None:
    return None  # NaN, Infinity, -Infinity: see the module's docstring


def _integer(text: str) -> int:
    value = int(text) if len(text.lstrip("-")) <= 19 else None  # never convert thousands of digits
    if value is None or abs(value) > MAX_INT:
        raise JsonProblem(f"number {_shorten(text)} is out of range (at most {MAX_INT})")
    return value


def _real(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise JsonProblem(f"number {_shorten(text)} is out of range")
    return value


def _shorten(text: str) -> str:
    return text if len(text) <= 24 else f"{text[:12]}…({len(text)} characters)"


def loads(text: str, *, lines: bool = True) -> Any:
    """The document in `text`, checked as described above; JsonProblem says what is wrong and where.

    `lines=False`: newlines and tabs in strings are shown as escapes too (see checked)."""
    try:
        value = json.loads(text, parse_constant=_unknown, parse_int=_integer, parse_float=_real)
    except json.JSONDecodeError as exc:
        raise JsonProblem(f"not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from None
    except RecursionError:
        raise JsonProblem(f"nested more than {MAX_DEPTH} levels deep") from None
    if _plain(text):  # the numbers were checked as parsed; no string needs cleaning: one pass (a device's answers)
        if text.count("[") + text.count("{") > MAX_DEPTH:
            _check_depth(value)
        return value
    return checked(value, lines=lines)


def _plain(text: str) -> bool:
    """Whether every string of the document `text` is already what `checked` would make of it: printable
    ASCII with no escape, so no control character (newlines and tabs included), bidirectional control or
    surrogate in any string or key, and no longer than MAX_STRING. Then the parsed tree is returned as parsed
    (its numbers were checked by the parse hooks), not copied string by string; a device's answers are such
    documents."""
    return len(text) <= MAX_STRING and text.isascii() and "\\" not in text and "\x7f" not in text


def checked(value: Any, *, lines: bool = True) -> Any:
    """A parsed tree (JSON or TOML) checked for depth and numbers, with every string made safe.

    `lines=False` also shows newlines and tabs as escapes, for trees whose strings are all one-line names.
    """
    _check_depth(value)
    return _clean_tree(value, "", lines)


def _check_depth(value: Any) -> None:
    """Iteratively, so a deep document cannot exhaust the stack here either."""
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, (dict, list)):
            if depth > MAX_DEPTH:
                raise JsonProblem(f"nested more than {MAX_DEPTH} levels deep")
            children = node.values() if isinstance(node, dict) else node
            stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))


def _clean_tree(value: Any, where: str, lines: bool) -> Any:
    if isinstance(value, str):
        return clean(value, MAX_STRING, lines=lines)
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        if abs(value) > MAX_INT:
            raise JsonProblem(f"{where or 'value'}: number out of range (at most {MAX_INT})")
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise JsonProblem(f"{where or 'value'}: {value} is not a finite number")
        return value
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            name = clean(str(k), MAX_STRING, lines=False)
            out[name] = _clean_tree(v, f"{where}.{name}" if where else name, lines)
        return out
    if isinstance(value, list):
        return [_clean_tree(v, f"{where}[{i}]", lines) for i, v in enumerate(value)]
    return value  # TOML dates and times: plain values, nothing to clean


def printable(value: Any) -> Any:
    """`value` made fit for strict JSON: non-finite floats as None, lone surrogates as their escape."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, str):
        return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", value) if _SURROGATE.search(value) else value
    if isinstance(value, dict):
        return {printable(k) if isinstance(k, str) else k: printable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [printable(v) for v in value]
    return value


def dumps(value: Any, *, indent: int | None = 2, default: Callable[[Any], Any] | None = None) -> str:
    """Strict JSON text of `value` (see printable)."""
    try:  # one pass where printable would change nothing: no non-finite float (refused here), no surrogate
        text = json.dumps(value, indent=indent, allow_nan=False, default=default)
    except ValueError:
        pass
    else:
        if "\\ud" not in text:  # json's escape of a surrogate (or of U+D000-U+D7FF: then the full path too)
            return text
    return json.dumps(printable(value), indent=indent, allow_nan=False, default=default)
