"""Plain data (gpudash.models, the probe and profile records) built from a decoded file, every field checked.

A field's type comes from its dataclass annotation, so the check follows the code that uses the field: a
memory figure that is a string, a process without a pid or a utilization of 1e30 stops at the reader with one
line naming the field, instead of crashing a table or the dashboard later. The range comes from the unit in
the field's name (`_bytes`, `_pct`, `_mhz`, `_w`, `_c`, `_s`), the naming rule gpudash's records follow.
Keys a record does not know are ignored, as a newer gpudash may add fields.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from functools import cache
from typing import Any

from gpudash.plain_text import one_line

MAX_INT = 2**63 - 1
_NOTHING = dataclasses.MISSING

# (low, high) by the unit at the end of a field's name; any other number is a count, an index, a rate or a
# ratio, never below zero.
_UNIT_RANGES: tuple[tuple[str, tuple[float, float]], ...] = (
    ("cpu_pct", (0.0, 100.0 * 65536)),  # of one core, like top: 400 for four busy cores
    ("_pct", (0.0, 100.0)),
    ("_c", (-273.15, 10_000.0)),  # degrees Celsius
    ("_mhz", (0.0, 1e6)),
    ("_w", (0.0, 1e7)),
)
_SIGNED = ("_delta",)  # names whose numbers may be negative


class FieldProblem(ValueError):
    """'where: what is wrong', e.g. 'devices[0].samples[3].power_w: expected a number or null, got "x"'."""


@cache
def value_range(name: str) -> tuple[float, float] | None:
    """The allowed (low, high) of a field called `name`; None when any finite number goes. Cached: the names
    are the dataclasses' fields, asked for with every answer checked."""
    if not name or name.endswith(_SIGNED):
        return None
    for suffix, bounds in _UNIT_RANGES:
        if name.endswith(suffix):
            return bounds
    return (0.0, float(MAX_INT))


@cache
def _fields(cls: type) -> tuple[tuple[str, Any, bool, Any], ...]:
    """(name, type, required, _quick(type)) of each field of dataclass `cls`."""
    hints = typing.get_type_hints(cls)
    out = []
    for f in dataclasses.fields(cls):
        required = f.default is _NOTHING and f.default_factory is _NOTHING
        out.append((f.name, hints[f.name], required, _quick(hints[f.name])))
    return tuple(out)


def build(
    cls: type,
    data: Any,
    where: str,
    *,
    skip: frozenset[str] = frozenset(),
    choices: dict[str, tuple[Any, ...]] | None = None,
    ranges: bool = True,
) -> Any:
    """An instance of dataclass `cls` from `data`; FieldProblem naming the first wrong field.

    `skip`: fields the file may not set (left at their defaults); `choices`: field name -> allowed values;
    `ranges=False` checks types only (a live driver's odd reading is shown, not refused).
    """
    if not isinstance(data, dict):
        raise FieldProblem(f"{where}: expected an object, got {_shown(data)}")
    kwargs = {}
    for name, kind, required, quick in _fields(cls):
        if name in skip or name not in data:
            if required:
                raise FieldProblem(f"{where}.{name}: missing" if where else f"{name}: missing")
            continue
        value = data[name]
        if not _taken_as_is(quick, value, name if ranges else ""):
            at = f"{where}.{name}" if where else name
            value = _convert(kind, value, at, name, choices or {}, ranges)
        elif type(value) is dict:
            value = dict(value)  # a copy, as _convert makes
        if choices and name in choices and value is not None and value not in choices[name]:
            allowed = ", ".join(repr(c) for c in choices[name])
            at = f"{where}.{name}" if where else name
            raise FieldProblem(f"{at}: expected one of {allowed}, got {_shown(value)}")
        kwargs[name] = value
    return cls(**kwargs)


def _taken_as_is(quick: tuple[tuple[type, ...], bool, bool, bool] | None, value: Any, name: str) -> bool:
    """Whether _convert would return `value` itself (or, for an object of strings, an equal copy): the common
    case of a scalar of the field's exact type, in range, or null where allowed, decided without building
    the field's path or trying each option of its type. Anything else goes through _convert, which says
    what is wrong. `quick`: _quick of the field's type."""
    if quick is None:
        return False
    types_, nullable, number, strings = quick
    if value is None:
        return nullable
    if type(value) not in types_:
        return False
    if strings:
        return all(type(v) is str for v in value.values())
    if not number:
        return True
    if not -MAX_INT <= value <= MAX_INT:  # NaN and the infinities fail this too
        return False
    bounds = value_range(name)
    return bounds is None or bounds[0] <= value <= bounds[1]


@cache
def _quick(kind: Any) -> tuple[tuple[type, ...], bool, bool, bool] | None:
    """(the exact types _taken_as_is takes, null allowed, a number, an object of strings) of a field of
    type str, bool, int, float or dict[str, str], each optionally `| None`; None for any other type."""
    shape = _shape(kind)
    nullable = False
    if shape[0] == "union":
        if len(shape[1]) != 1:
            return None
        nullable = shape[2]
        shape = _shape(shape[1][0])
    if shape[0] in ("str", "bool"):
        return ((str,) if shape[0] == "str" else (bool,)), nullable, False, False
    if shape[0] == "number":
        return ((int,) if shape[1] is int else (int, float)), nullable, True, False
    if shape[0] == "dict" and _shape(shape[1]) == ("str",):
        return (dict,), nullable, False, True
    return None


@cache
def _shape(kind: Any) -> tuple[Any, ...]:
    """What a type annotation asks for, worked out once per annotation: ("any",), ("union", options, nullable),
    ("record", cls), ("list", item), ("dict", item), ("bool",), ("str",), ("number", int or float)."""
    origin = typing.get_origin(kind)
    if kind is Any:
        return ("any",)
    if origin is typing.Union or origin is types.UnionType:
        options = typing.get_args(kind)
        return ("union", tuple(o for o in options if o is not type(None)), type(None) in options)
    if dataclasses.is_dataclass(kind) and isinstance(kind, type):
        return ("record", kind)
    if origin is list or kind is list:
        return ("list", typing.get_args(kind)[0] if typing.get_args(kind) else Any)
    if origin is dict or kind is dict:
        return ("dict", typing.get_args(kind)[1] if typing.get_args(kind) else Any)
    if kind is bool:
        return ("bool",)
    if kind is str:
        return ("str",)
    if kind in (int, float):
        return ("number", kind)
    return ("unknown",)


def _convert(kind: Any, value: Any, where: str, name: str, choices: dict[str, tuple[Any, ...]], ranges: bool) -> Any:
    shape = _shape(kind)
    tag = shape[0]
    if tag == "any":
        return value
    if tag == "union":
        if value is None and shape[2]:
            return None
        problems = []
        for option in shape[1]:
            try:
                return _convert(option, value, where, name, choices, ranges)
            except FieldProblem as exc:
                problems.append(exc)
        if len(problems) == 1:
            raise problems[0]
        raise FieldProblem(f"{where}: expected {_expected(kind)}, got {_shown(value)}")
    if tag == "str":
        if not isinstance(value, str):
            raise FieldProblem(f"{where}: expected a string, got {_shown(value)}")
        return value
    if tag == "number":
        return _number(shape[1], value, where, name if ranges else "")
    if tag == "bool":
        if not isinstance(value, bool):
            raise FieldProblem(f"{where}: expected true or false, got {_shown(value)}")
        return value
    if tag == "record":
        return build(shape[1], value, where, choices=choices, ranges=ranges)
    if tag == "list":
        if not isinstance(value, list):
            raise FieldProblem(f"{where}: expected a list, got {_shown(value)}")
        return [_convert(shape[1], v, f"{where}[{i}]", name, choices, ranges) for i, v in enumerate(value)]
    if tag == "dict":
        if not isinstance(value, dict):
            raise FieldProblem(f"{where}: expected an object, got {_shown(value)}")
        return {k: _convert(shape[1], v, f"{where}.{k}", name, choices, ranges) for k, v in value.items()}
    raise FieldProblem(f"{where}: cannot check a field of type {kind}")  # a record gpudash cannot read


def _number(kind: type, value: Any, where: str, name: str) -> Any:
    wanted = (int,) if kind is int else (int, float)
    if isinstance(value, bool) or not isinstance(value, wanted):
        noun = "an integer" if kind is int else "a number"
        raise FieldProblem(f"{where}: expected {noun}, got {_shown(value)}")
    if value != value or value in (float("inf"), float("-inf")):
        raise FieldProblem(f"{where}: {value} is not a finite number")
    bounds = value_range(name)
    if bounds is not None and not bounds[0] <= value <= bounds[1]:
        low, high = (int(b) if float(b).is_integer() else b for b in bounds)
        raise FieldProblem(f"{where}: {value:g} is outside {low} to {high}")
    if abs(value) > MAX_INT:
        raise FieldProblem(f"{where}: {value:g} is out of range")
    return value


def _expected(kind: Any) -> str:
    names = {int: "an integer", float: "a number", str: "a string", bool: "true or false", type(None): "null"}
    parts = []
    for option in typing.get_args(kind):
        origin = typing.get_origin(option) or option
        parts.append(names.get(option) or {list: "a list", dict: "an object"}.get(origin, "an object"))
    return " or ".join(dict.fromkeys(parts))


def _shown(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return "an object" if isinstance(value, dict) else "a list"
    if isinstance(value, str):
        return f"the string {one_line(repr(value), 60)}"
    if isinstance(value, float):
        return f"{value:g}"
    return one_line(repr(value), 60)
