"""Records for the classes every command imports: what `@dataclass` gives them
(equality over the fields, a repr; Frozen: a hash and no attribute set after __init__),
without its cost at import. A dataclass writes and compiles up to six methods per class
when its module is imported: ~0.3 ms a class, ~2.5 ms of a `describe` for the client's
metadata, the TLS settings, the clock and the command's environment.

A subclass names its fields in `_fields` (in order; `_hidden` leaves some out of the
repr, as `field(repr=False)`) and sets them in its own __init__ (Frozen: with `_init`).
"""
from __future__ import annotations

from typing import Any, ClassVar


class FrozenRecordError(AttributeError):
    """An attribute of a frozen record set or deleted (dataclasses' FrozenInstanceError)."""


class Record:
    """@dataclass: equality over the fields (same class only), a repr, no hash."""

    _fields: ClassVar[tuple[str, ...]] = ()
    _hidden: ClassVar[frozenset[str]] = frozenset()

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self._fields)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()

    __hash__ = None  # type: ignore[assignment]  # mutable, as a dataclass with eq

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields
                          if name not in self._hidden)
        return f"{self.__class__.__qualname__}({shown})"


class Frozen(Record):
    """@dataclass(frozen=True): a Record with a hash, set once by `_init`."""

    def _init(self, **values: Any) -> None:
        for name, value in values.items():
            object.__setattr__(self, name, value)

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(self._values())

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenRecordError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenRecordError(f"cannot delete field {name!r}")
