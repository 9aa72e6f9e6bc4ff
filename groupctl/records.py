"""Frozen value records for the classes every command imports: what
`@dataclass(frozen=True)` gives them (equality and hash over the fields, a repr, no
attribute set after __init__), without its cost at import. A dataclass writes and compiles
six methods per class when its module is imported: ~0.3 ms a class, ~2 ms of a
`describe` for the six classes of the client's metadata, TLS settings and clock.

A subclass names its fields in `_fields` (in order; `_hidden` leaves some out of the
repr, as `field(repr=False)`) and sets them in its own __init__ with `_init`.
"""
from __future__ import annotations

from typing import Any, ClassVar


class FrozenRecordError(AttributeError):
    """An attribute of a frozen record set or deleted (dataclasses' FrozenInstanceError)."""


class Frozen:
    _fields: ClassVar[tuple[str, ...]] = ()
    _hidden: ClassVar[frozenset[str]] = frozenset()

    def _init(self, **values: Any) -> None:
        for name, value in values.items():
            object.__setattr__(self, name, value)

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self._fields)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields
                          if name not in self._hidden)
        return f"{self.__class__.__qualname__}({shown})"

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenRecordError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenRecordError(f"cannot delete field {name!r}")
