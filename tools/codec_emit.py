"""Python source of the codecs of message specs (groupctl/protocol/schema.py's spec
language): one decoder `(buf, pos) -> (dict, new_pos)` and one encoder `(Writer, dict)`
per struct and version, as plain module-level functions. tools/gen_codecs.py writes them
into committed modules, so a run imports them like any other code (Python's bytecode
cache) and never generates or compiles anything.

Decoders read the fields in wire order into locals and return them as one dict: no Python
call per field and none per struct inside it either (array items and non-null struct
fields are read inline; a nullable struct is a call to its own reader); consecutive
fixed-width fields are read with one unpack, arrays of numbers with one unpack for all.
A decoded dict carries every field of the spec: those absent in the version hold their
default (a literal, so a list or dict default is fresh on every decode). Unknown tagged
fields are kept under `_unknown_tags`. Python's own errors on short input are left to
wire.guarded, the entry point.

Identical functions (a version that changed nothing in this struct) are written once.
"""
from __future__ import annotations

import re
import struct as _struct
import textwrap

from groupctl.protocol.schema import Array, Struct, Type

# Lengths into $n: compact (unsigned varint of length+1, 0 = null) or INT16/INT32.
_LENGTH = {
    "compact": """
        $n = buf[pos]
        if $n < 0x80:
            pos += 1
        else:
            $n, pos = uvarint(buf, pos)
        $n -= 1
        """,
    "int16": """
        $n = I16(buf, pos)[0]
        pos += 2
        """,
    "int32": """
        $n = I32(buf, pos)[0]
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
            raise overrun(buf, pos, $n)
        $v = buf[pos:end]$convert
        pos = end
    """
# A compact string or bytes: empty (length byte 1) is the common case of many fields (an
# offset's metadata), read without a slice.
_COMPACT_SLICE = """
    $n = buf[pos]
    if $n == 1:
        $v = $empty
        pos += 1
    else:
        if $n < 0x80:
            pos += 1
        else:
            $n, pos = uvarint(buf, pos)
        $n -= 1
        if $n < 0:
            $v = None
        else:
            end = pos + $n
            if end > len(buf):
                raise overrun(buf, pos, $n)
            $v = buf[pos:end]$convert
            pos = end
    """
_FIXED_ARRAY = """
    if $n < 0:
        $v = None
    else:
        end = pos + $n * $size
        if end > len(buf):
            raise overrun(buf, pos, $n * $size)
        $v = list(unpack_from(">%d$fmt" % $n, buf, pos))
        pos = end
    """
_ARRAY = """
    if $n < 0:
        $v = None
    else:
        if $n > len(buf) - pos:  # every element takes at least one byte
            raise too_many($n, len(buf) - pos)
        budget[0] -= $n
        if budget[0] < 0:
            raise over_budget()
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
    if buf[pos] == 0:  # a tagged field's marker is a varint: 0 null, 1 present
        $v = None
        pos += 1
    else:
        $v, pos = $read(buf, uvarint(buf, pos)[1])
    """
_TAGS = """
    if buf[pos]:
        pos = read_tags(buf, pos, $tagged, $out)
    else:  # no tagged fields: the common case
        pos += 1
    """
# The tagged-field count read with the struct's last fixed-width fields (one unpack).
_FOLDED_TAGS = """
    if $count:
        pos = read_tags(buf, pos + $size, $tagged, $out)
    else:  # no tagged fields: the common case
        pos += $after
    """
_PLACEHOLDER = re.compile(r"\$([_A-Za-z][_A-Za-z0-9]*)")

# What generated code may call from groupctl/protocol/wire.py (imported as used).
RUNTIME = ("I16", "I32", "budget", "over_budget", "overrun", "read_tags", "read_uuid",
           "too_many", "unpack_from", "uvarint", "write_tags")

_WRITE = {"int8": "int8", "int16": "int16", "uint16": "uint16", "int32": "int32",
          "int64": "int64", "float64": "float64", "bool": "bool", "uuid": "uuid"}


def _fill(template: str, subst: dict) -> str:
    body = textwrap.dedent(template).strip("\n")
    return _PLACEHOLDER.sub(lambda m: str(subst[m.group(1)]), body)


class Module:
    """The functions and constants of one generated module, in the order first made."""

    def __init__(self) -> None:
        self.functions: list[str] = []
        self._by_body: dict[str, str] = {}     # a function's text without its name -> name
        self._names: set[str] = set()
        self.constants: list[str] = []
        self._constants: dict[str, str] = {}   # value text -> name

    def function(self, hint: str, args: str, lines: list[str]) -> str:
        body = "\n".join(lines) or "    pass"   # an empty message (ListGroups v0)
        key = f"({args}):\n{body}"
        name = self._by_body.get(key)
        if name is None:
            name, n = hint, 1
            while name in self._names:
                n += 1
                name = f"{hint}_{n}"
            self._names.add(name)
            self._by_body[key] = name
            self.functions.append(f"def {name}({args}):\n{body}\n")
        return name

    def constant(self, hint: str, text: str) -> str:
        name = self._constants.get(text)
        if name is None:
            name = f"_{hint}{len(self._constants) + 1}"
            self._constants[text] = name
            self.constants.append(f"{name} = {text}\n")
        return name

    def unpacker(self, fmt: str) -> str:
        return self.constant("U", f"_struct.Struct({'>' + fmt!r}).unpack_from")

    def source(self) -> str:
        """The functions and constants; the caller writes the imports (see imports)."""
        return "\n\n".join(self.functions) + "\n\n" + "".join(self.constants)

    def imports(self, text: str, package: str = "..") -> str:
        """The import of what `text` (the whole module) calls from wire.py."""
        used = [n for n in RUNTIME if re.search(rf"(?<![\w.]){n}\b", text)]
        return f"from {package}wire import {', '.join(used)}\n" if used else ""


class _Fn:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.names = 0

    def var(self, prefix: str) -> str:
        self.names += 1
        return f"{prefix}{self.names}"

    def emit(self, indent: int, template: str, **subst) -> None:
        self.lines.extend("    " * indent + line for line in _fill(template, subst).splitlines())


# ---- decoders ------------------------------------------------------------------------

def reader(mod: Module, struct: Struct, version: int, flexible: bool, hint: str) -> str:
    """The name of the decoder of `struct` at `version`: (buf, pos) -> (dict, pos)."""
    fn = _Fn()
    _emit_struct(mod, fn, struct, version, flexible, "out", 1, hint)
    fn.emit(1, "return out, pos")
    return mod.function(hint, "buf, pos", fn.lines)


def _emit_value(mod, fn, t, version, flexible, nullable, v, indent, hint) -> None:
    if isinstance(t, Type):
        if t.fmt:
            size = _struct.calcsize(">" + t.fmt)
            fn.emit(indent, _FIXED, v=v, unpack=mod.unpacker(t.fmt), size=size)
        elif t.name in ("string", "bytes", "records"):
            n = fn.var("n")
            convert = ".decode()" if t.name == "string" else ""
            if flexible:
                fn.emit(indent, _COMPACT_SLICE, n=n, v=v, convert=convert,
                        empty="''" if t.name == "string" else "b''")
            else:
                fn.emit(indent, _LENGTH["int16" if t.name == "string" else "int32"], n=n)
                fn.emit(indent, _SLICE, n=n, v=v, convert=convert)
        elif t.name == "uuid":
            fn.emit(indent, _CALL, v=v, read="read_uuid")
        else:
            raise ValueError(f"no decoder template for type {t.name}")
    elif isinstance(t, Struct) and not nullable:
        _emit_struct(mod, fn, t, version, flexible, v, indent, hint)  # inline
    elif isinstance(t, Struct):
        fn.emit(indent, _NULLABLE_STRUCT, v=v, read=reader(mod, t, version, flexible, hint))
    else:  # Array: null is a length of -1
        n = fn.var("n")
        fn.emit(indent, _LENGTH["compact" if flexible else "int32"], n=n)
        item = t.item
        if isinstance(item, Type) and item.fmt:  # partition lists: one unpack for all
            fn.emit(indent, _FIXED_ARRAY, n=n, v=v, fmt=item.fmt,
                    size=_struct.calcsize(">" + item.fmt))
        else:
            append, x = fn.var("append"), fn.var("x")
            fn.emit(indent, _ARRAY, n=n, v=v, append=append)
            _emit_value(mod, fn, item, version, flexible, False, x, indent + 2, hint)
            fn.emit(indent + 2, "$append($x)", append=append, x=x)


def _emit_struct(mod, fn, struct: Struct, version, flexible, out, indent, hint) -> None:
    result = {}   # field name -> the expression of its value, in spec order
    tagged = []   # (tag, name, reader)
    run: list[tuple[str, str, str]] = []   # consecutive fixed-width fields: (name, var, fmt)

    def flush_run(count: str = ""):
        """Emit the pending fixed-width run; with `count`, the tagged-field count byte
        that follows it is read in the same unpack (into `count`) and pos is left as is."""
        if run:
            fmt = "".join(f for _, _, f in run)
            fn.emit(indent, "# " + ", ".join(name for name, _, _ in run))
            targets = ", ".join(v for _, v, _ in run) + ","
            if count:
                fn.emit(indent, "$targets $count = $unpack(buf, pos)", targets=targets,
                        count=count, unpack=mod.unpacker(fmt + "B"))
            else:
                fn.emit(indent, _FIXED_RUN, targets=targets, unpack=mod.unpacker(fmt),
                        size=_struct.calcsize(">" + fmt))
            run.clear()

    for f in struct.fields:
        is_tagged = f.tagged_since is not None and flexible and version >= f.tagged_since
        if not f.present(version) or is_tagged:
            if f.present(version):
                tagged.append((f.tag, f.name, _value_reader(
                    mod, f.type, version, flexible, f.nullable_in(version), f"{hint}_{f.name}")))
            result[f.name] = repr(f.default)
            continue
        v = result[f.name] = fn.var("v")
        if isinstance(f.type, Type) and f.type.fmt:
            run.append((f.name, v, f.type.fmt))
            continue
        flush_run()
        fn.emit(indent, f"# {f.name}")
        _emit_value(mod, fn, f.type, version, flexible, f.nullable_in(version), v, indent,
                    f"{hint}_{f.name}")
    folded = fn.var("count") if flexible and run else ""
    size = _struct.calcsize(">" + "".join(f for _, _, f in run))
    flush_run(folded)
    fn.emit(indent, out + " = {" + ", ".join(f"{name!r}: {expr}"
                                             for name, expr in result.items()) + "}")
    if flexible:
        table = "{" + ", ".join(f"{tag}: ({name!r}, {read})" for tag, name, read in tagged) + "}"
        if folded:
            fn.emit(indent, _FOLDED_TAGS, count=folded, size=size, after=size + 1,
                    tagged=mod.constant("TAGS", table), out=out)
        else:
            fn.emit(indent, _TAGS, tagged=mod.constant("TAGS", table), out=out)


def _value_reader(mod, t, version, flexible, nullable, hint) -> str:
    """A standalone `(buf, pos) -> (value, pos)` reader of one value (a tagged field)."""
    fn = _Fn()
    if isinstance(t, Struct) and nullable:
        fn.emit(1, _TAGGED_NULLABLE_STRUCT, v="value",
                read=reader(mod, t, version, flexible, hint))
    else:
        _emit_value(mod, fn, t, version, flexible, nullable, "value", 1, hint)
    fn.emit(1, "return value, pos")
    return mod.function(hint + "_tag", "buf, pos", fn.lines)


# ---- encoders ------------------------------------------------------------------------

def writer(mod: Module, struct: Struct, version: int, flexible: bool, hint: str) -> str:
    """The name of the encoder of `struct` at `version`: (w, value) -> None. A field
    missing from `value`, or None where the version does not allow null, is written as
    its default; `_unknown_tags` kept from a decoded message are written back."""
    fn = _Fn()
    tagged = []
    if any(f.present(version) and not (f.tag is not None and flexible
                                       and version >= (f.tagged_since or 0))
           for f in struct.fields):
        fn.emit(1, "get = value.get")
    for f in struct.fields:
        if not f.present(version):
            continue
        nullable = f.nullable_in(version)
        if f.tag is not None and f.tagged_since is not None and flexible \
                and version >= f.tagged_since:
            write = _value_writer(mod, f.type, version, flexible, nullable, True,
                                  f"{hint}_{f.name}")
            tagged.append(f"({f.tag}, {f.name!r}, {f.default!r}, {nullable}, {write})")
            continue
        v = fn.var("v")
        fn.emit(1, f"# {f.name}")
        if isinstance(f.type, Array) and not nullable:   # its default: empty
            fn.emit(1, f"{v} = get({f.name!r}) or ()")
        elif nullable:
            fn.emit(1, f"{v} = get({f.name!r}, {f.default!r})")
        else:
            fn.emit(1, f"{v} = get({f.name!r})")
            v = f"{f.default!r} if {v} is None else {v}"
        _emit_write(mod, fn, f.type, version, flexible, nullable, False, v, 1,
                    f"{hint}_{f.name}")
    if flexible:
        tagged.sort(key=lambda text: int(text[1:text.index(",")]))
        table = "(" + "".join(t + ", " for t in tagged) + ")"
        fn.emit(1, f"write_tags(w, {mod.constant('WTAGS', table)}, value)")
    return mod.function(hint, "w, value", fn.lines)


def _emit_write(mod, fn, t, version, flexible, nullable, tagged, v, indent, hint) -> None:
    flex = "True" if flexible else "False"
    if isinstance(t, Type):
        if t.name in _WRITE:
            fn.emit(indent, f"w.{_WRITE[t.name]}({v})")
        elif t.name == "string":
            fn.emit(indent, f"w.string({v}, {flex})")
        else:   # bytes, records
            fn.emit(indent, f"w.bytes({v}, {flex})")
    elif isinstance(t, Struct):
        write = writer(mod, t, version, flexible, hint)
        if not nullable:
            fn.emit(indent, f"{write}(w, {v})")
        else:   # the marker: int8 -1 / 1; inside a tagged field a varint 0 / 1
            absent, present = ("w.uvarint(0)", "w.uvarint(1)") if tagged else \
                ("w.int8(-1)", "w.int8(1)")
            fn.emit(indent, f"if {v} is None:\n    {absent}\nelse:\n    {present}\n"
                            f"    {write}(w, {v})")
    else:
        x = fn.var("x")
        if nullable:
            fn.emit(indent, f"if {v} is None:\n    w.length(None, {flex})\nelse:")
            indent += 1
        fn.emit(indent, f"w.length(len({v}), {flex})\nfor {x} in {v}:")
        _emit_write(mod, fn, t.item, version, flexible, False, False, x, indent + 1, hint)


def _value_writer(mod, t, version, flexible, nullable, tagged, hint) -> str:
    fn = _Fn()
    _emit_write(mod, fn, t, version, flexible, nullable, tagged, "value", 1, hint)
    return mod.function(hint + "_tag", "w, value", fn.lines)
