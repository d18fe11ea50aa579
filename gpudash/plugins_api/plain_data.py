"""to_dict/from_dict for the flat dataclasses that cross into a child process and out as JSON."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any, ClassVar, TypeVar

from gpudash.models import from_dict

T = TypeVar("T", bound="PlainData")


class PlainData:
    """A mixin for a dataclass of plain values."""

    __dataclass_fields__: ClassVar[dict[str, Any]]  # set by @dataclass on the subclass; lets asdict accept self

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls: type[T], data: dict[str, Any]) -> T:
        """Ignores keys it does not know: the other side may be a newer gpudash."""
        return from_dict(cls, data)
