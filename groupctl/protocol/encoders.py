"""Encoders for message specs: closures built once per (struct, version); see spec.py."""
from __future__ import annotations

from .spec import Struct, Type
from .types import Writer


def value_writer(t, version: int, flexible: bool, nullable: bool = False):
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
        item = lambda w, v: item_t(w, v, flexible)

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
