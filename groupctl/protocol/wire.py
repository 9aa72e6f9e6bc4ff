"""What the generated codecs (messages/m*.py, consumer_codecs.py, records/codecs.py; written
by tools/gen_codecs.py) call: varints, tagged-field sections, the element budget, and
`guarded`, the one way into a decoder.

A generated decoder is `(buf, pos) -> (dict, new_pos)`. It leaves Python's own errors on
short input (IndexError, struct.error, UnicodeDecodeError) to `guarded`, which turns them
into DecodeError; explicit checks stand only where a slice would silently truncate.
"""
from __future__ import annotations

import struct as _struct

from .types import DecodeError, Writer, uuid_to_str

I16 = _struct.Struct(">h").unpack_from
I32 = _struct.Struct(">i").unpack_from
unpack_from = _struct.unpack_from

# Array elements one decode may make (guarded's `budget`): a frame of tiny elements
# decodes into ~70 times its size in Python objects (a hostile 25 MB ListGroups answer
# took 1.7 GB), so a decode stops at its budget (DecodeError) however small they are.
# Decoders run on one thread at a time (the event loop's): one counter serves them all.
ELEMENT_BUDGET = 1_000_000
budget = [ELEMENT_BUDGET]


def guarded(read, buf, pos: int, limit: int = ELEMENT_BUDGET):
    """Run a generated decoder; bad input becomes DecodeError, never IndexError & co.
    Decoders slice `buf` and hand the slices out, so they must get bytes. At most `limit`
    array elements are decoded (DecodeError beyond)."""
    if buf.__class__ is not bytes:
        buf = bytes(buf)
    budget[0] = limit
    try:
        return read(buf, pos)
    except UnicodeDecodeError as exc:
        raise DecodeError(f"invalid UTF-8 in string: {exc}") from None
    except (IndexError, _struct.error):
        raise DecodeError(f"truncated: {len(buf) - pos} bytes from offset {pos} end "
                          f"before the message does") from None


def overrun(buf, pos: int, n: int) -> DecodeError:
    return DecodeError(f"need {n} bytes at offset {pos}, have {len(buf) - pos}")


def too_many(n: int, room: int) -> DecodeError:
    return DecodeError(f"array of {n} elements cannot fit in {room} bytes")


def over_budget() -> DecodeError:
    return DecodeError("more array elements than groupctl decodes in one message")


def uvarint(buf, pos: int) -> tuple[int, int]:
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


def read_uuid(buf, pos: int):
    end = pos + 16
    if end > len(buf):
        raise overrun(buf, pos, 16)
    return uuid_to_str(buf[pos:end]), end


def read_tags(buf, pos: int, tagged: dict, out: dict) -> int:
    """The tagged-field section at `pos`: known tags into `out` by name, others kept
    raw under out["_unknown_tags"]."""
    count, pos = uvarint(buf, pos)
    for _ in range(count):
        tag, pos = uvarint(buf, pos)
        size, pos = uvarint(buf, pos)
        end = pos + size
        if end > len(buf):
            raise overrun(buf, pos, size)
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


def write_tags(w: Writer, tagged: tuple, value: dict) -> None:
    """Known tagged fields ((tag, name, default, nullable, write), ascending tags) that
    differ from their default, plus any `_unknown_tags` kept from a decoded message (as
    Java keeps and rewrites them), in ascending tag order."""
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
