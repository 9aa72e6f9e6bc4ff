"""Message specs as data, and the codec built from them.

A spec says, per field, in which versions it exists (`since`/`until`), from which version
it may be null (`nullable`), and whether it travels as a tagged field (`tag`). The codec
for every (api, version, direction) is built from the spec once and reads or writes a
plain dict with snake_case keys: encoders are closures built on first use; decoders are
Python functions generated from the spec (one per struct and version: fields read into
locals, fixed-width runs with one struct unpack, partition lists with one unpack) on first
use of that version. A decoded dict always carries every field of the spec: those absent
in the decoded version hold their default, so callers never branch on versions to read a
response.

Decoders are lenient where Kafka's are strict: unknown tagged fields are kept under
`_unknown_tags` ({tag: raw bytes}) and bytes after the end of a message under `_trailing`;
encoders write `_unknown_tags` back. Bad input (truncated, corrupt, foreign) raises
DecodeError, never IndexError or struct.error.

This module is the spec language and the Api codec entry points; the generated decoders
are in codegen.py, the encoders in encoders.py.
"""
from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .types import ZERO_UUID, Reader, Writer

NO_DEFAULT = object()

# Routing of a request: which broker it must go to.
ANY_BROKER = "any"
COORDINATOR = "coordinator"
PARTITION_LEADER = "leader"


@dataclass(frozen=True)
class Type:
    """A primitive type: its name in Kafka's JSON specs and its zero value. `fmt` is the
    struct-module format of a fixed-width number (big-endian), None for other types."""

    name: str
    zero: Any
    read: Callable[[Reader, bool], Any]
    write: Callable[[Writer, Any, bool], None]
    fmt: str | None = None


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
        self._readers = {}  # (version, flexible) -> compiled reader, shared by every user

    def defaults(self) -> dict:
        """Every field at its default, as a decoder returns fields absent in a version."""
        return {f.name: _copy_default(f.default) for f in self.fields}

    # ---- compilation -------------------------------------------------------------
    def compile_decoder(self, version: int, flexible: bool) -> Callable[[Reader], dict]:
        """A decoder reading one struct from a Reader (advancing it); raises DecodeError.
        The generated reader behind it is built on first use (see compile_reader)."""
        from .codegen import guarded

        compile_reader = self.compile_reader

        def decode(r: Reader) -> dict:
            out, r.pos = guarded(compile_reader(version, flexible), r.buf, r.pos)
            return out

        return decode

    def compile_reader(self, version: int, flexible: bool) -> Callable[[bytes, int], tuple]:
        """The raw compiled decoder `(buf, pos) -> (dict, new_pos)`: generated Python
        (see codegen.gen_struct_reader), its text in the result's `source` attribute. `buf` must
        be bytes. It may raise IndexError/struct.error/UnicodeDecodeError on bad input:
        call it through compile_decoder or Api.decode_*, which raise DecodeError.

        Built on first use of (version, flexible) and kept: generating all ~400 readers
        of our specs up front would add a third of a second to every CLI start."""
        key = (version, flexible)
        read = self._readers.get(key)
        if read is None:
            from .codegen import gen_struct_reader

            read = self._readers[key] = gen_struct_reader(self, version, flexible)
        return read

    def compile_encoder(self, version: int, flexible: bool) -> Callable[[Writer, dict], None]:
        from .encoders import value_writer, write_tags

        regular = []  # (name, default, nullable, write_fn)
        tagged = []   # (tag, name, default, nullable, write_fn)
        for f in self.fields:
            if not f.present(version):
                continue
            write = value_writer(f.type, version, flexible, f.nullable_in(version))
            if f.tag is not None and flexible and version >= f.tagged_since:
                tagged.append((f.tag, f.name, f.default, f.nullable_in(version), write))
            else:
                regular.append((f.name, f.default, f.nullable_in(version), write))
        tagged.sort(key=lambda t: t[0])

        def encode(w: Writer, value: dict) -> None:
            get = value.get
            for name, default, nullable, write in regular:
                v = get(name, default)
                if v is None and not nullable:
                    v = default
                write(w, v)
            if flexible:
                write_tags(w, tagged, value)

        return encode


def _copy_default(v):
    if isinstance(v, list):
        return list(v)
    if isinstance(v, dict):
        return copy.deepcopy(v)
    return v


class Api:
    """One Kafka API: its key, the versions we speak, and compiled codecs for each."""

    def __init__(self, key: int, name: str, versions: tuple[int, int], flexible_from: int | None,
                 request: Struct, response: Struct, route: str = ANY_BROKER):
        self.key = key
        self.name = name
        self.min_version, self.max_version = versions
        self.flexible_from = flexible_from
        self.route = route
        self.request = request
        self.response = response
        self._codecs = {}
        for v in range(self.min_version, self.max_version + 1):
            flex = self.flexible(v)
            # built on first use: a command speaks a few of the ~200 (api, version)s
            self._codecs[v] = (
                _lazy_encoder(request, v, flex), _lazy_reader(request, v, flex),
                _lazy_encoder(response, v, flex), _lazy_reader(response, v, flex),
            )

    def __repr__(self) -> str:
        return f"Api({self.key}, {self.name!r})"

    def flexible(self, version: int) -> bool:
        return self.flexible_from is not None and version >= self.flexible_from

    def request_header_version(self, version: int) -> int:
        return 2 if self.flexible(version) else 1

    def response_header_version(self, version: int) -> int:
        # ApiVersions answers with header v0 always, so a client that sent a version the
        # broker does not know can still read the error and the broker's supported range.
        if self.key == 18:
            return 0
        return 1 if self.flexible(version) else 0

    def _codec(self, version: int):
        try:
            return self._codecs[version]
        except KeyError:
            raise ValueError(f"{self.name} v{version} is outside the versions groupctl speaks "
                             f"({self.min_version}-{self.max_version})") from None

    def encode_request(self, version: int, body: dict) -> bytes:
        w = Writer()
        self._codec(version)[0](w, body)
        return w.getvalue()

    def decode_request(self, version: int, data: bytes) -> dict:
        return _decode_all(self._codec(version)[1], data)

    def encode_response(self, version: int, body: dict) -> bytes:
        w = Writer()
        self._codec(version)[2](w, body)
        return w.getvalue()

    def decode_response(self, version: int, data: bytes, offset: int = 0) -> dict:
        return _decode_all(self._codec(version)[3], data, offset)


def _lazy_encoder(struct: Struct, version: int, flexible: bool):
    encoder = None

    def encode(w, value):
        nonlocal encoder
        if encoder is None:
            encoder = struct.compile_encoder(version, flexible)
        encoder(w, value)

    return encode


def _lazy_reader(struct: Struct, version: int, flexible: bool):
    compile_reader = struct.compile_reader

    def read(buf, pos):
        return compile_reader(version, flexible)(buf, pos)

    return read


def _decode_all(read, data, offset: int = 0) -> dict:
    from .codegen import guarded

    out, pos = guarded(read, data, offset)
    if pos < len(data):
        out["_trailing"] = bytes(data[pos:])  # data may be a memoryview or bytearray
    return out


def walk_fields(struct: Struct, prefix: str = ""):
    """Yield (path, Field) for every field, depth first; used by the conformance test."""
    for f in struct.fields:
        path = f"{prefix}{f.name}"
        yield path, f
        if isinstance(f.type, Array) and f.type.is_struct:
            yield from walk_fields(f.type.item, path + ".")
        elif isinstance(f.type, Struct):
            yield from walk_fields(f.type, path + ".")
