"""Message specs as data, and the codec built from them.

A spec says, per field, in which versions it exists (`since`/`until`), from which version
it may be null (`nullable`), and whether it travels as a tagged field (`tag`). The codec
for every (api, version, direction) is compiled once, at import, into closures that read
or write a plain dict with snake_case keys. A decoded dict always carries every field of
the spec: those absent in the decoded version hold their default, so callers never branch
on versions to read a response.

Decoders are lenient where Kafka's are strict: unknown tagged fields are kept under
`_unknown_tags` ({tag: raw bytes}) and bytes after the end of a message under `_trailing`.
"""
from __future__ import annotations

from dataclasses import dataclass, field as dc_field
from typing import Any, Callable

from .types import DecodeError, Reader, Writer, ZERO_UUID

NO_DEFAULT = object()

# Routing of a request: which broker it must go to.
ANY_BROKER = "any"
COORDINATOR = "coordinator"
PARTITION_LEADER = "leader"


@dataclass(frozen=True)
class Type:
    """A primitive type: its name in Kafka's JSON specs and its zero value."""

    name: str
    zero: Any
    read: Callable[[Reader, bool], Any]
    write: Callable[[Writer, Any, bool], None]


def _fixed(name, zero, reader, writer) -> Type:
    return Type(name, zero, lambda r, c: reader(r), lambda w, v, c: writer(w, v))


Int8 = _fixed("int8", 0, Reader.int8, Writer.int8)
Int16 = _fixed("int16", 0, Reader.int16, Writer.int16)
Uint16 = _fixed("uint16", 0, Reader.uint16, Writer.uint16)
Int32 = _fixed("int32", 0, Reader.int32, Writer.int32)
Int64 = _fixed("int64", 0, Reader.int64, Writer.int64)
Float64 = _fixed("float64", 0.0, Reader.float64, Writer.float64)
Bool = _fixed("bool", False, Reader.bool, Writer.bool)
Uuid = _fixed("uuid", ZERO_UUID, Reader.uuid, Writer.uuid)
String = Type("string", "", Reader.string, Writer.string)
Bytes = Type("bytes", b"", Reader.bytes, Writer.bytes)
Records = Type("records", None, Reader.bytes, Writer.bytes)


class Field:
    """One field of a struct. Versions are inclusive; `until=None` means "and later"."""

    __slots__ = ("name", "type", "since", "until", "nullable", "default", "tag",
                 "tagged_since", "about")

    def __init__(self, name: str, type: "Type | Array", since: int = 0, until: int | None = None,
                 nullable: int | bool | None = None, default: Any = NO_DEFAULT,
                 tag: int | None = None, tagged_since: int | None = None, about: str = ""):
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
            default = [] if isinstance(type, Array) else type.zero
        self.default = default

    def present(self, version: int) -> bool:
        return self.since <= version and (self.until is None or version <= self.until)

    def nullable_in(self, version: int) -> bool:
        return self.nullable is not None and version >= self.nullable


class Array:
    """An array of a primitive type (`Array(Int32)`) or of a struct (`Array(Field(...), ...)`)."""

    def __init__(self, *items):
        if len(items) == 1 and isinstance(items[0], Type):
            self.item: Type | Struct = items[0]
        else:
            self.item = Struct(*items)

    @property
    def is_struct(self) -> bool:
        return isinstance(self.item, Struct)


class Struct:
    def __init__(self, *fields: Field):
        self.fields = list(fields)
        names = [f.name for f in fields]
        if len(names) != len(set(names)):
            raise ValueError(f"duplicate field names in {names}")

    # ---- compilation -------------------------------------------------------------
    def compile_decoder(self, version: int, flexible: bool) -> Callable[[Reader], dict]:
        regular = []   # (name, read_fn) in wire order
        tagged = {}    # tag -> (name, read_fn)
        absent = {}    # fields not on the wire in this version: name -> default
        for f in self.fields:
            if not f.present(version):
                absent[f.name] = _copy_default(f.default)
                continue
            read = _value_reader(f.type, version, flexible)
            if f.tag is not None and flexible and version >= f.tagged_since:
                tagged[f.tag] = (f.name, read)
                absent[f.name] = _copy_default(f.default)
            else:
                regular.append((f.name, read))

        def decode(r: Reader) -> dict:
            out = {name: _copy_default(v) for name, v in absent.items()} if absent else {}
            for name, read in regular:
                out[name] = read(r)
            if flexible:
                _read_tags(r, tagged, out)
            return out

        return decode

    def compile_encoder(self, version: int, flexible: bool) -> Callable[[Writer, dict], None]:
        regular = []  # (name, default, nullable, write_fn)
        tagged = []   # (tag, name, default, write_fn)
        for f in self.fields:
            if not f.present(version):
                continue
            write = _value_writer(f.type, version, flexible)
            if f.tag is not None and flexible and version >= f.tagged_since:
                tagged.append((f.tag, f.name, f.default, write))
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
                _write_tags(w, tagged, value)

        return encode


def _copy_default(v):
    return list(v) if isinstance(v, list) else v


def _value_reader(t, version: int, flexible: bool):
    if isinstance(t, Type):
        prim = t.read
        return lambda r: prim(r, flexible)
    if t.is_struct:
        item = t.item.compile_decoder(version, flexible)
    else:
        item_t = t.item.read
        item = lambda r: item_t(r, flexible)  # noqa: E731

    def read_array(r: Reader):
        n = r.length(flexible)
        if n < 0:
            return None
        if n > r.remaining():  # every element takes at least one byte
            raise DecodeError(f"array of {n} elements cannot fit in {r.remaining()} bytes")
        return [item(r) for _ in range(n)]

    return read_array


def _value_writer(t, version: int, flexible: bool):
    if isinstance(t, Type):
        prim = t.write
        return lambda w, v: prim(w, v, flexible)
    if t.is_struct:
        item = t.item.compile_encoder(version, flexible)
    else:
        item_t = t.item.write
        item = lambda w, v: item_t(w, v, flexible)  # noqa: E731

    def write_array(w: Writer, values):
        if values is None:
            w.length(None, flexible)
            return
        w.length(len(values), flexible)
        for v in values:
            item(w, v)

    return write_array


def _read_tags(r: Reader, tagged: dict, out: dict) -> None:
    for _ in range(r.uvarint()):
        tag = r.uvarint()
        size = r.uvarint()
        known = tagged.get(tag)
        if known is None:
            out.setdefault("_unknown_tags", {})[tag] = r.raw(size)
            continue
        name, read = known
        sub = Reader(r.raw(size))
        out[name] = read(sub)


def _write_tags(w: Writer, tagged: list, value: dict) -> None:
    present = [(tag, name, write) for tag, name, default, write in tagged
               if value.get(name, default) != default]
    w.uvarint(len(present))
    for tag, name, write in present:
        sub = Writer()
        write(sub, value[name])
        w.uvarint(tag)
        w.uvarint(len(sub.buf))
        w.raw(sub.buf)


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
            self._codecs[v] = (
                request.compile_encoder(v, flex), request.compile_decoder(v, flex),
                response.compile_encoder(v, flex), response.compile_decoder(v, flex),
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


def _decode_all(decoder, data: bytes, offset: int = 0) -> dict:
    r = Reader(data, offset)
    out = decoder(r)
    if r.remaining():
        out["_trailing"] = r.raw(r.remaining())
    return out


def walk_fields(struct: Struct, prefix: str = ""):
    """Yield (path, Field) for every field, depth first; used by the conformance test."""
    for f in struct.fields:
        path = f"{prefix}{f.name}"
        yield path, f
        if isinstance(f.type, Array) and f.type.is_struct:
            yield from walk_fields(f.type.item, path + ".")
