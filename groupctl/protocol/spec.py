"""Message specs as data, and the codec built from them.

A spec says, per field, in which versions it exists (`since`/`until`), from which version
it may be null (`nullable`), and whether it travels as a tagged field (`tag`). The codec
for every (api, version, direction) is built from the spec once and reads or writes a
plain dict with snake_case keys: encoders are closures built at import; decoders are
Python functions generated from the spec (one per struct and version: fields read into
locals, fixed-width runs with one struct unpack, partition lists with one unpack) on first
use of that version. A decoded dict always carries every field of the spec: those absent
in the decoded version hold their default, so callers never branch on versions to read a
response.

Decoders are lenient where Kafka's are strict: unknown tagged fields are kept under
`_unknown_tags` ({tag: raw bytes}) and bytes after the end of a message under `_trailing`;
encoders write `_unknown_tags` back. Bad input (truncated, corrupt, foreign) raises
DecodeError, never IndexError or struct.error.
"""
from __future__ import annotations

import copy
import linecache
import struct as _struct
import textwrap
from dataclasses import dataclass
from string import Template
from typing import Any, Callable

from .types import DecodeError, Reader, Writer, ZERO_UUID, uuid_to_str

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

    __slots__ = ("name", "type", "since", "until", "nullable", "default", "tag",
                 "tagged_since", "about")

    def __init__(self, name: str, type: "Type | Array | Struct", since: int = 0,
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
        compile_reader = self.compile_reader

        def decode(r: Reader) -> dict:
            out, r.pos = _guarded(compile_reader(version, flexible), r.buf, r.pos)
            return out

        return decode

    def compile_reader(self, version: int, flexible: bool) -> Callable[[bytes, int], tuple]:
        """The raw compiled decoder `(buf, pos) -> (dict, new_pos)`: generated Python
        (see _gen_struct_reader), its text in the result's `source` attribute. `buf` must
        be bytes. It may raise IndexError/struct.error/UnicodeDecodeError on bad input:
        call it through compile_decoder or Api.decode_*, which raise DecodeError.

        Built on first use of (version, flexible) and kept: generating all ~400 readers
        of our specs up front would add a third of a second to every CLI start."""
        key = (version, flexible)
        read = self._readers.get(key)
        if read is None:
            read = self._readers[key] = _gen_struct_reader(self, version, flexible)
        return read

    def compile_encoder(self, version: int, flexible: bool) -> Callable[[Writer, dict], None]:
        regular = []  # (name, default, nullable, write_fn)
        tagged = []   # (tag, name, default, nullable, write_fn)
        for f in self.fields:
            if not f.present(version):
                continue
            write = _value_writer(f.type, version, flexible, f.nullable_in(version))
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
                _write_tags(w, tagged, value)

        return encode


def _copy_default(v):
    if isinstance(v, list):
        return list(v)
    if isinstance(v, dict):
        return copy.deepcopy(v)
    return v


# ---- compiled decoders: (buf, pos) -> (value, new_pos) --------------------------------
#
# Each (struct, version) gets one generated function that reads the fields in wire order
# into locals and returns them as one dict: no Python call per field, no Reader. The
# templates below, one per kind of value, are Python that reads a value from `buf` at
# `pos` into a variable ($v) and advances `pos`; _gen_struct_reader strings them together
# and _gen_value_reader wraps one in a function of its own (for tagged fields). The code
# a spec produced is in the reader's `source` attribute, and tracebacks show it.
#
# Python's own errors on short input (IndexError, struct.error) are left to the entry
# points (_guarded); explicit checks stand only where a slice would silently truncate.

_I16 = _struct.Struct(">h").unpack_from
_I32 = _struct.Struct(">i").unpack_from


def _guarded(read, buf, pos: int):
    """Run a compiled reader; bad input becomes DecodeError, never IndexError & co.
    Readers slice `buf` and hand the slices out, so they must get bytes."""
    if buf.__class__ is not bytes:
        buf = bytes(buf)
    try:
        return read(buf, pos)
    except UnicodeDecodeError as exc:
        raise DecodeError(f"invalid UTF-8 in string: {exc}") from None
    except (IndexError, _struct.error):
        raise DecodeError(f"truncated: {len(buf) - pos} bytes from offset {pos} end "
                          f"before the message does") from None


def _overrun(buf, pos: int, n: int) -> DecodeError:
    return DecodeError(f"need {n} bytes at offset {pos}, have {len(buf) - pos}")


def _uvarint(buf, pos: int) -> tuple[int, int]:
    b = buf[pos]
    if b < 0x80:
        return b, pos + 1
    b2 = buf[pos + 1]
    if b2 < 0x80:  # lengths up to 16 KiB
        return (b & 0x7F) | (b2 << 7), pos + 2
    value, shift = (b & 0x7F) | ((b2 & 0x7F) << 7), 14
    pos += 1
    while True:
        pos += 1
        b = buf[pos]
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, pos + 1
        shift += 7
        if shift > 63:
            raise DecodeError("varint too long")


def _read_uuid(buf, pos: int):
    end = pos + 16
    if end > len(buf):
        raise _overrun(buf, pos, 16)
    return uuid_to_str(buf[pos:end]), end


def _read_tags(buf, pos: int, tagged: dict, out: dict) -> int:
    """The tagged-field section at `pos`: known tags into `out` by name, others kept
    raw under out["_unknown_tags"]."""
    count, pos = _uvarint(buf, pos)
    for _ in range(count):
        tag, pos = _uvarint(buf, pos)
        size, pos = _uvarint(buf, pos)
        end = pos + size
        if end > len(buf):
            raise _overrun(buf, pos, size)
        known = tagged.get(tag)
        if known is None:
            out.setdefault("_unknown_tags", {})[tag] = buf[pos:end]
        else:
            name, read = known
            value, used = read(buf, pos)
            if used > end:
                raise DecodeError(f"tagged field {tag} runs past its {size} bytes")
            out[name] = value
        pos = end
    return pos


def _read_through_reader(t: Type, flexible: bool):
    """A reader for a primitive without a template: through its Reader method."""
    prim = t.read

    def read_other(buf, pos):
        r = Reader(buf, pos)
        return prim(r, flexible), r.pos

    return read_other


# Lengths into $n: compact (unsigned varint of length+1, 0 = null) or INT16/INT32.
_LENGTH = {
    "compact": """
        $n = buf[pos]
        if $n < 0x80:
            pos += 1
        else:
            $n, pos = _uvarint(buf, pos)
        $n -= 1
        """,
    "int16": """
        $n = _I16(buf, pos)[0]
        pos += 2
        """,
    "int32": """
        $n = _I32(buf, pos)[0]
        pos += 4
        """,
}
_FIXED = """
    $v = $unpack(buf, pos)[0]
    pos += $size
    """
_FIXED_RUN = """
    $targets = $unpack(buf, pos)
    pos += $size
    """
_SLICE = """
    if $n < 0:
        $v = None
    else:
        end = pos + $n
        if end > len(buf):
            raise _overrun(buf, pos, $n)
        $v = buf[pos:end]$convert
        pos = end
    """
_FIXED_ARRAY = """
    if $n < 0:
        $v = None
    else:
        end = pos + $n * $size
        if end > len(buf):
            raise _overrun(buf, pos, $n * $size)
        $v = list(_unpack_from(">%d$fmt" % $n, buf, pos))
        pos = end
    """
_ARRAY = """
    if $n < 0:
        $v = None
    else:
        if $n > len(buf) - pos:  # every element takes at least one byte
            raise DecodeError("array of %d elements cannot fit in %d bytes" % ($n, len(buf) - pos))
        $v = []
        $append = $v.append
        for _ in range($n):
    """
_CALL = """
    $v, pos = $read(buf, pos)
    """
_NULLABLE_STRUCT = """
    if buf[pos] & 0x80:  # int8 marker: -1 null, 1 present
        $v = None
        pos += 1
    else:
        $v, pos = $read(buf, pos + 1)
    """
_TAGS = """
    if buf[pos]:
        pos = _read_tags(buf, pos, $tagged, out)
    else:  # no tagged fields: the common case
        pos += 1
    """


class _Source:
    """The text of one generated function and the objects it refers to by name."""

    _count = 0

    def __init__(self, header: str):
        self.lines = [header]
        self.env = {"_uvarint": _uvarint, "_overrun": _overrun, "_I16": _I16, "_I32": _I32,
                    "_unpack_from": _struct.unpack_from, "_read_tags": _read_tags,
                    "_read_uuid": _read_uuid, "_copy_default": _copy_default,
                    "DecodeError": DecodeError}
        self.names = 0

    def var(self, prefix: str) -> str:
        self.names += 1
        return f"{prefix}{self.names}"

    def ref(self, obj, prefix: str) -> str:
        name = self.var(f"_{prefix}")
        self.env[name] = obj
        return name

    def emit(self, indent: int, template: str, **subst) -> None:
        text = Template(textwrap.dedent(template).strip("\n")).substitute(subst)
        self.lines.extend("    " * indent + line for line in text.splitlines())

    def build(self, name: str, label: str):
        _Source._count += 1
        filename = f"<groupctl decoder {_Source._count}: {label}>"
        source = "\n".join(self.lines) + "\n"
        exec(compile(source, filename, "exec"), self.env)
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        fn = self.env[name]
        fn.source = source
        return fn


def _emit_value(src: _Source, t, version: int, flexible: bool, nullable: bool, v: str,
                indent: int) -> None:
    """Code reading one value of type `t` into variable `v`."""
    if isinstance(t, Type):
        if t.fmt:
            codec = _struct.Struct(">" + t.fmt)
            src.emit(indent, _FIXED, v=v, unpack=src.ref(codec.unpack_from, "unpack"),
                     size=codec.size)
        elif t.name in ("string", "bytes", "records"):
            n = src.var("n")
            length = "compact" if flexible else "int16" if t.name == "string" else "int32"
            src.emit(indent, _LENGTH[length], n=n)
            src.emit(indent, _SLICE, n=n, v=v, convert=".decode()" if t.name == "string" else "")
        elif t.name == "uuid":
            src.emit(indent, _CALL, v=v, read="_read_uuid")
        else:
            src.emit(indent, _CALL, v=v, read=src.ref(_read_through_reader(t, flexible), "read"))
    elif isinstance(t, Struct):
        read = src.ref(t.compile_reader(version, flexible), "struct")
        src.emit(indent, _NULLABLE_STRUCT if nullable else _CALL, v=v, read=read)
    else:  # Array: null is a length of -1
        n = src.var("n")
        src.emit(indent, _LENGTH["compact" if flexible else "int32"], n=n)
        item = t.item
        if isinstance(item, Type) and item.fmt:  # partition lists: one unpack for all
            src.emit(indent, _FIXED_ARRAY, n=n, v=v, fmt=item.fmt,
                     size=_struct.calcsize(">" + item.fmt))
        else:
            append, x = src.var("append"), src.var("x")
            src.emit(indent, _ARRAY, n=n, v=v, append=append)
            _emit_value(src, item, version, flexible, False, x, indent + 2)
            src.emit(indent + 2, "$append($x)", append=append, x=x)


def _default_expr(src: _Source, default) -> str:
    """An expression giving a field's default; lists and dicts fresh on every decode."""
    if isinstance(default, list) and not default:
        return "[]"
    if isinstance(default, (list, dict)):
        return f"_copy_default({src.ref(default, 'default')})"
    return src.ref(default, "default")


def _gen_struct_reader(struct: "Struct", version: int, flexible: bool):
    src = _Source("def read_struct(buf, pos):")
    result = {}   # field name -> the expression of its value, in spec order
    tagged = {}   # tag -> (name, reader)
    run = []      # consecutive fixed-width fields, read with one unpack: [(name, var, fmt)]

    def flush_run():
        if run:
            codec = _struct.Struct(">" + "".join(fmt for _, _, fmt in run))
            src.emit(1, "# " + ", ".join(name for name, _, _ in run))
            src.emit(1, _FIXED_RUN, targets=", ".join(v for _, v, _ in run) + ",",
                     unpack=src.ref(codec.unpack_from, "unpack"), size=codec.size)
            run.clear()

    for f in struct.fields:
        is_tagged = f.tag is not None and flexible and version >= f.tagged_since
        if not f.present(version) or is_tagged:
            if f.present(version):
                tagged[f.tag] = (f.name, _gen_value_reader(f.type, version, flexible,
                                                           f.nullable_in(version)))
            result[f.name] = _default_expr(src, f.default)
            continue
        v = result[f.name] = src.var("v")
        if isinstance(f.type, Type) and f.type.fmt:
            run.append((f.name, v, f.type.fmt))
            continue
        flush_run()
        src.emit(1, f"# {f.name}")
        _emit_value(src, f.type, version, flexible, f.nullable_in(version), v, 1)
    flush_run()
    src.emit(1, "out = {" + ", ".join(f"{name!r}: {expr}" for name, expr in result.items()) + "}")
    if flexible:
        src.emit(1, _TAGS, tagged=src.ref(tagged, "tagged"))
    src.emit(1, "return out, pos")
    label = f"v{version}{' flexible' if flexible else ''} {{{', '.join(result)}}}"
    return src.build("read_struct", label[:120])


def _gen_value_reader(t, version: int, flexible: bool, nullable: bool = False):
    """A standalone `(buf, pos) -> (value, pos)` reader for one value (tagged fields)."""
    src = _Source("def read_value(buf, pos):")
    _emit_value(src, t, version, flexible, nullable, "value", 1)
    src.emit(1, "return value, pos")
    return src.build("read_value", f"v{version} {getattr(t, 'name', type(t).__name__)}")


# ---- compiled encoders ------------------------------------------------------------------

def _value_writer(t, version: int, flexible: bool, nullable: bool = False):
    if isinstance(t, Type):
        prim = t.write
        return lambda w, v: prim(w, v, flexible)
    if isinstance(t, Struct):
        encode = t.compile_encoder(version, flexible)
        if not nullable:
            return encode

        def write_nullable_struct(w: Writer, v):
            if v is None:
                w.int8(-1)
            else:
                w.int8(1)
                encode(w, v)

        return write_nullable_struct
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


def _write_tags(w: Writer, tagged: list, value: dict) -> None:
    """Known tagged fields that differ from their default, plus any `_unknown_tags` kept
    from a decoded message (as Java keeps and rewrites them), in ascending tag order."""
    out = []
    for tag, name, default, nullable, write in tagged:
        v = value.get(name, default)
        if v is None and not nullable:
            v = default
        if v != default:
            sub = Writer()
            write(sub, v)
            out.append((tag, sub.buf))
    unknown = value.get("_unknown_tags")
    if unknown:
        known = {t for t, *_ in tagged}
        out.extend((t, raw) for t, raw in unknown.items() if t not in known)
        out.sort(key=lambda t: t[0])
    w.uvarint(len(out))
    for tag, raw in out:
        w.uvarint(tag)
        w.uvarint(len(raw))
        w.raw(raw)


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
            # encoders now; decoders (generated code) on first use, see compile_reader
            self._codecs[v] = (
                request.compile_encoder(v, flex), _lazy_reader(request, v, flex),
                response.compile_encoder(v, flex), _lazy_reader(response, v, flex),
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


def _lazy_reader(struct: Struct, version: int, flexible: bool):
    compile_reader = struct.compile_reader

    def read(buf, pos):
        return compile_reader(version, flexible)(buf, pos)

    return read


def _decode_all(read, data, offset: int = 0) -> dict:
    out, pos = _guarded(read, data, offset)
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
