"""Generated decoders for message specs (schema.py): (buf, pos) -> (value, new_pos); see
spec.py."""
from __future__ import annotations

import linecache
import re
import struct as _struct
import textwrap
import zlib

from .codecache import compile_cached
from .schema import Struct, Type, _copy_default
from .types import DecodeError, Reader, uuid_to_str

# ---- compiled decoders: (buf, pos) -> (value, new_pos) --------------------------------
#
# Each (struct, version) gets one generated function that reads the fields in wire order
# into locals and returns them as one dict: no Python call per field, no Reader, and none
# per struct inside it either (array items and non-null struct fields are read inline,
# _emit_struct; a nullable struct is a call to its own reader). The
# templates below, one per kind of value, are Python that reads a value from `buf` at
# `pos` into a variable ($v) and advances `pos`; gen_struct_reader strings them together
# and _gen_value_reader wraps one in a function of its own (for tagged fields). The code
# a spec produced is in the reader's `source` attribute, and tracebacks show it.
#
# Python's own errors on short input (IndexError, struct.error) are left to the entry
# points (guarded); explicit checks stand only where a slice would silently truncate.

_I16 = _struct.Struct(">h").unpack_from
_I32 = _struct.Struct(">i").unpack_from


# Array elements one decode may make (guarded's `budget`): a frame of tiny elements
# decodes into ~70 times its size in Python objects (a hostile 25 MB ListGroups answer
# took 1.7 GB), so a decode stops at its budget (DecodeError) however small they are.
# Decoders run on one thread at a time (the event loop's): one counter serves them all.
ELEMENT_BUDGET = 1_000_000
_budget = [ELEMENT_BUDGET]


def guarded(read, buf, pos: int, budget: int = ELEMENT_BUDGET):
    """Run a compiled reader; bad input becomes DecodeError, never IndexError & co.
    Readers slice `buf` and hand the slices out, so they must get bytes. At most `budget`
    array elements are decoded (DecodeError beyond)."""
    if buf.__class__ is not bytes:
        buf = bytes(buf)
    _budget[0] = budget
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
        _budget[0] -= $n
        if _budget[0] < 0:
            raise DecodeError("more array elements than groupctl decodes in one message")
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
_TAGGED_NULLABLE_STRUCT = """
    if buf[pos] == 0:  # a tagged field's marker is a varint: 0 null, 1 present (Kafka's
        $v = None      # generated readers: readUnsignedVarint() > 0)
        pos += 1
    else:
        $v, pos = $read(buf, _uvarint(buf, pos)[1])
    """
_TAGS = """
    if buf[pos]:
        pos = _read_tags(buf, pos, $tagged, $out)
    else:  # no tagged fields: the common case
        pos += 1
    """


_templates: dict[str, str] = {}
_PLACEHOLDER = re.compile(r"\$([_A-Za-z][_A-Za-z0-9]*)")


def _template(text: str) -> str:
    """A code template ($name placeholders, string.Template's syntax) as a str.format
    string, dedented: made once per template, as a run fills hundreds of them and
    str.format does it in C (Template.substitute calls back into Python per name)."""
    fmt = _templates.get(text)
    if fmt is None:
        body = textwrap.dedent(text).strip("\n").replace("{", "{{").replace("}", "}}")
        fmt = _templates[text] = _PLACEHOLDER.sub(r"{\1}", body)
    return fmt


class _Source:
    """The text of one generated function and the objects it refers to by name."""

    def __init__(self, header: str):
        self.lines = [header]
        self.env = {"_uvarint": _uvarint, "_overrun": _overrun, "_I16": _I16, "_I32": _I32,
                    "_unpack_from": _struct.unpack_from, "_read_tags": _read_tags,
                    "_read_uuid": _read_uuid, "_copy_default": _copy_default,
                    "DecodeError": DecodeError, "_budget": _budget}
        self.names = 0

    def var(self, prefix: str) -> str:
        self.names += 1
        return f"{prefix}{self.names}"

    def ref(self, obj, prefix: str) -> str:
        name = self.var(f"_{prefix}")
        self.env[name] = obj
        return name

    def emit(self, indent: int, template: str, **subst) -> None:
        text = _template(template).format_map(subst)
        self.lines.extend("    " * indent + line for line in text.splitlines())

    def build(self, name: str, label: str):
        source = "\n".join(self.lines) + "\n"
        # named by its text, so that a compiled reader from the disk cache (codecache.py)
        # carries the same name as a fresh one, and linecache shows the right source
        filename = f"<groupctl decoder {zlib.crc32(source.encode()):08x}: {label}>"
        exec(compile_cached(source, filename), self.env)
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        fn = self.env[name]
        fn.source = source  # type: ignore[attr-defined]  # kept for debugging and tests
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
    elif isinstance(t, Struct) and not nullable:
        _emit_struct(src, t, version, flexible, v, indent)  # inline: no call per struct
    elif isinstance(t, Struct):
        read = src.ref(compile_reader(t, version, flexible), "struct")
        src.emit(indent, _NULLABLE_STRUCT, v=v, read=read)
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


def compile_decoder(struct: Struct, version: int, flexible: bool):
    """A decoder reading one struct from a Reader (advancing it); raises DecodeError.
    The generated reader behind it is built on first use (see compile_reader)."""

    def decode(r) -> dict:
        out, r.pos = guarded(compile_reader(struct, version, flexible), r.buf, r.pos)
        return out

    return decode


def compile_reader(struct: Struct, version: int, flexible: bool):
    """The raw compiled decoder `(buf, pos) -> (dict, new_pos)`: generated Python (see
    gen_struct_reader), its text in the result's `source` attribute. `buf` must be bytes. It
    may raise IndexError/struct.error/UnicodeDecodeError on bad input: call it through
    compile_decoder or Api.decode_*, which raise DecodeError.

    Built on first use of (version, flexible) and kept on the struct: generating all ~400
    readers of our specs up front would add a third of a second to every CLI start."""
    key = (version, flexible)
    read = struct._readers.get(key)
    if read is None:
        read = struct._readers[key] = gen_struct_reader(struct, version, flexible)
    return read


def gen_struct_reader(struct: Struct, version: int, flexible: bool):
    src = _Source("def read_struct(buf, pos):")
    _emit_struct(src, struct, version, flexible, "out", 1)
    src.emit(1, "return out, pos")
    fields = [f.name for f in struct.fields]
    label = f"v{version}{' flexible' if flexible else ''} {{{', '.join(fields)}}}"
    return src.build("read_struct", label[:120])


def _emit_struct(src: _Source, struct: Struct, version: int, flexible: bool, out: str,
                 indent: int) -> None:
    """Code reading one struct into the dict `out`. A struct inside (an array's items,
    a non-null struct field) is read inline, in this same function with names of its
    own: a response of 200 groups of ten partitions is then one Python call, not 2,400
    (a call and its (value, pos) tuple cost as much as reading the fields)."""
    result = {}   # field name -> the expression of its value, in spec order
    tagged = {}   # tag -> (name, reader)
    # consecutive fixed-width fields, read with one unpack: [(name, var, fmt)]
    run: list[tuple[str, str, str]] = []

    def flush_run():
        if run:
            codec = _struct.Struct(">" + "".join(fmt for _, _, fmt in run))
            src.emit(indent, "# " + ", ".join(name for name, _, _ in run))
            src.emit(indent, _FIXED_RUN, targets=", ".join(v for _, v, _ in run) + ",",
                     unpack=src.ref(codec.unpack_from, "unpack"), size=codec.size)
            run.clear()

    for f in struct.fields:
        is_tagged = f.tagged_since is not None and flexible and version >= f.tagged_since
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
        src.emit(indent, f"# {f.name}")
        _emit_value(src, f.type, version, flexible, f.nullable_in(version), v, indent)
    flush_run()
    src.emit(indent, out + " = {" + ", ".join(f"{name!r}: {expr}"
                                              for name, expr in result.items()) + "}")
    if flexible:
        src.emit(indent, _TAGS, tagged=src.ref(tagged, "tagged"), out=out)


def _gen_value_reader(t, version: int, flexible: bool, nullable: bool = False):
    """A standalone `(buf, pos) -> (value, pos)` reader for one value (tagged fields)."""
    src = _Source("def read_value(buf, pos):")
    if isinstance(t, Struct) and nullable:
        src.emit(1, _TAGGED_NULLABLE_STRUCT, v="value",
                 read=src.ref(compile_reader(t, version, flexible), "struct"))
    else:
        _emit_value(src, t, version, flexible, nullable, "value", 1)
    src.emit(1, "return value, pos")
    return src.build("read_value", f"v{version} {getattr(t, 'name', type(t).__name__)}")
