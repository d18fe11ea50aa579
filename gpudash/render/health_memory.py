"""The memory of bad GPUs as text (gpudash.health.memory): one line per remembered failure, under the device."""

from __future__ import annotations

from typing import Any

from gpudash.plain_text import one_line


def memory_lines(remembered: dict[str, list[Any]], device_of: dict[str, str]) -> list[str]:
    """`remembered`: UUID -> its Failures; `device_of`: UUID -> the device key it has now (absent: not here)."""
    lines = []
    for uuid, failures in remembered.items():
        where = device_of.get(uuid, "not present now")
        for failure in failures:
            lines.append(f"remembered {where} {uuid}: {one_line(failure.line(), 400)}")
    return lines
