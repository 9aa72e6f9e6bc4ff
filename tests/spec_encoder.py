"""Encoders of any spec (groupctl/protocol/schema.py) built from its data, for tests that
write bytes of specs groupctl only decodes (the coordinator's records): closures, no code
generation. groupctl's own encoders are generated (tools/gen_codecs.py)."""
from __future__ import annotations

from groupctl.protocol.schema import Struct, Type
from groupctl.protocol.types import Writer


def compile_encoder(struct: Struct, version: int, flexible: bool):
    """An encoder `(Writer, dict) -> None` of `struct` at `version`."""
    regular = []  # (name, default, nullable, write_fn)
    tagged = []   # (tag, name, default, nullable, write_fn)
    for f in struct.fields:
        if not f.present(version):
            continue
        is_tagged = (f.tag is not None and f.tagged_since is not None and flexible
                     and version >= f.tagged_since)
        write = value_writer(f.type, version, flexible, f.nullable_in(version), is_tagged)
        if is_tagged:
            assert f.tag is not None   # is_tagged says so
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


def value_writer(t, version: int, flexible: bool, nullable: bool = False,
                 tagged: bool = False):
    if isinstance(t, Type):
        prim = t.write
        return lambda w, v: prim(w, v, flexible)
    if isinstance(t, Struct):
        encode = compile_encoder(t, version, flexible)
        if not nullable:
            return encode

        def write_nullable_struct(w: Writer, v):
            # the marker: int8 -1 / 1; inside a tagged field a varint 0 / 1 (Kafka's
            # generated writers and readers)
            if v is None:
                w.uvarint(0) if tagged else w.int8(-1)
            else:
                w.uvarint(1) if tagged else w.int8(1)
                encode(w, v)

        return write_nullable_struct
    if t.is_struct:
        item = compile_encoder(t.item, version, flexible)
    else:
        item_t = t.item.write

        def item(w: Writer, v) -> None:
            item_t(w, v, flexible)

    def write_array(w: Writer, values):
        if values is None:
            w.length(None, flexible)
            return
        w.length(len(values), flexible)
        for v in values:
            item(w, v)

    return write_array


def write_tags(w: Writer, tagged: list, value: dict) -> None:
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
