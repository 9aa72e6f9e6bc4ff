"""The spec language: message specs as data (primitive Types, Fields with their version
ranges, Arrays, Structs). tools/gen_codecs.py writes the codecs of these definitions as
plain functions into the generated modules; nothing here makes code."""
from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from ..records import Frozen

from .types import ZERO_UUID, Reader, Writer

NO_DEFAULT = object()



class Type(Frozen):
    """A primitive type: its name in Kafka's JSON specs and its zero value. `fmt` is the
    struct-module format of a fixed-width number (big-endian), None for other types."""

    name: str
    zero: Any
    read: Callable[[Reader, bool], Any]
    write: Callable[[Writer, Any, bool], None]
    fmt: str | None
    _fields = ("name", "zero", "read", "write", "fmt")

    def __init__(self, name: str, zero: Any, read: Callable[[Reader, bool], Any],
                 write: Callable[[Writer, Any, bool], None], fmt: str | None = None):
        self._init(name=name, zero=zero, read=read, write=write, fmt=fmt)


def _fixed(name, zero, reader, writer, fmt=None) -> Type:
    return Type(name, zero, lambda r, c: reader(r), lambda w, v, c: writer(w, v), fmt)


Int8 = _fixed("int8", 0, Reader.int8, Writer.int8, "b")
Int16 = _fixed("int16", 0, Reader.int16, Writer.int16, "h")
Uint16 = _fixed("uint16", 0, Reader.uint16, Writer.uint16, "H")
Int32 = _fixed("int32", 0, Reader.int32, Writer.int32, "i")
Int64 = _fixed("int64", 0, Reader.int64, Writer.int64, "q")
Float64 = _fixed("float64", 0.0, Reader.float64, Writer.float64, "d")
Bool = _fixed("bool", False, Reader.bool, Writer.bool, "?")  # '?': any non-zero byte is True
Uuid = _fixed("uuid", ZERO_UUID, Reader.uuid, Writer.uuid)
String = Type("string", "", Reader.string, Writer.string)
Bytes = Type("bytes", b"", Reader.bytes, Writer.bytes)
Records = Type("records", None, Reader.bytes, Writer.bytes)


class Field:
    """One field of a struct. Versions are inclusive; `until=None` means "and later"."""

    __slots__ = (
        "about",
        "default",
        "name",
        "nullable",
        "since",
        "tag",
        "tagged_since",
        "type",
        "until",
    )

    def __init__(self, name: str, type: Type | Array | Struct, since: int = 0,
                 until: int | None = None, nullable: int | bool | None = None,
                 default: Any = NO_DEFAULT, tag: int | None = None,
                 tagged_since: int | None = None, about: str = ""):
        self.name = name
        self.type = type
        self.since = since
        self.until = until
        # nullable=True: nullable in every version the field exists; an int: from that version.
        self.nullable = since if nullable is True else nullable
        self.tag = tag
        self.tagged_since = (since if tagged_since is None else tagged_since) if tag is not None else None
        self.about = about
        if default is NO_DEFAULT:
            if isinstance(type, Array):
                default = []
            elif isinstance(type, Struct):  # Java: a fresh, default-filled struct
                default = type.defaults()
            else:
                default = type.zero
        self.default = default

    def present(self, version: int) -> bool:
        return self.since <= version and (self.until is None or version <= self.until)

    def nullable_in(self, version: int) -> bool:
        return self.nullable is not None and version >= self.nullable


class Array:
    """An array of a primitive type (`Array(Int32)`), of a struct given inline
    (`Array(Field(...), ...)`), or of a named struct shared by several fields
    (`Array(TOPIC_PARTITIONS)`, Kafka's "commonStructs")."""

    def __init__(self, *items):
        if len(items) == 1 and isinstance(items[0], (Type, Struct)):
            self.item: Type | Struct = items[0]
        else:
            self.item = Struct(*items)

    @property
    def is_struct(self) -> bool:
        return isinstance(self.item, Struct)


class Struct:
    """An ordered list of fields. Used as a message body, as the item of an Array, or as
    the type of a Field (a struct-valued field; when nullable, Kafka prefixes it with an
    int8 marker: -1 null, 1 present)."""

    def __init__(self, *fields: Field):
        self.fields = list(fields)
        names = [f.name for f in fields]
        if len(names) != len(set(names)):
            raise ValueError(f"duplicate field names in {names}")

    def defaults(self) -> dict:
        """Every field at its default, as a decoder returns fields absent in a version."""
        return {f.name: _copy_default(f.default) for f in self.fields}


def _copy_default(v):
    if isinstance(v, list):
        return list(v)
    if isinstance(v, dict):
        return copy.deepcopy(v)
    return v


def walk_fields(struct: Struct, prefix: str = ""):
    """Yield (path, Field) for every field, depth first; used by the conformance test."""
    for f in struct.fields:
        path = f"{prefix}{f.name}"
        yield path, f
        if isinstance(f.type, Array) and isinstance(f.type.item, Struct):
            yield from walk_fields(f.type.item, path + ".")
        elif isinstance(f.type, Struct):
            yield from walk_fields(f.type, path + ".")
