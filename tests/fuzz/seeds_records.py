"""Seeds of the records harnesses (targets_records.py) from real segment files:

    PYTHONPATH=. python -m tests.fuzz.seeds_records SEGMENT.log...

Segments come from lab brokers' `__consumer_offsets` (tests/integration/records_support
.snapshot; one lab with offsets.topic.compression.codec=2 for snappy in xerial framing).
Written: corpus/batches (flag byte 1 = fix CRCs, then 1-3 consecutive real batches; the
uncompressed ones also re-compressed with gzip, raw snappy, xerial snappy, lz4 and zstd,
their real header kept), corpus/segments (the same windows, no flag byte), and
corpus/coordinator (each distinct real key/value pair, plus one synthetic pair per record
type and value version: encoded from schemas.py with default fields).
"""
from __future__ import annotations

import hashlib
import struct
import sys

from .registry import CORPUS
from .targets_records import fix_crcs

PER_SOURCE = 8            # windows per segment file: keeps the committed corpus small
MAX_SEED = 6000


def _spans(buf: bytes) -> list[tuple[int, int, int]]:
    """(position, size, codec) of each batch."""
    from groupctl.protocol.records.batch import Batch, read_batches

    return [(b.position, b.size, b.codec) for b in read_batches(buf) if isinstance(b, Batch)]


def _recompressed(buf: bytes, pos: int, size: int) -> list[bytes]:
    """One uncompressed real batch with its records compressed by every codec."""
    import cramjam

    from groupctl.protocol.records.compression import GZIP, LZ4, SNAPPY, ZSTD, compress

    header, body = bytearray(buf[pos:pos + 61]), buf[pos + 61:pos + size]
    out = []
    variants = [(c, compress(c, body)) for c in (GZIP, SNAPPY, LZ4, ZSTD)]
    variants.append((SNAPPY, bytes(cramjam.snappy.compress_raw(body))))   # librdkafka's form
    for codec, data in variants:
        h = bytearray(header)
        struct.pack_into(">i", h, 8, 49 + len(data))
        attrs = struct.unpack_from(">h", h, 21)[0]
        struct.pack_into(">h", h, 21, (attrs & ~7) | codec)
        out.append(fix_crcs(bytes(h) + data))
    return out


def _windows(buf: bytes) -> list[bytes]:
    spans = _spans(buf)
    step = max(1, len(spans) // PER_SOURCE)
    out = []
    for i in range(0, len(spans), step):
        window = spans[i:i + 1 + i % 3]
        start, end = window[0][0], window[-1][0] + window[-1][1]
        if end - start <= MAX_SEED:
            out.append(buf[start:end])
    return out[:PER_SOURCE]


def _schema_pairs() -> list[bytes]:
    """key/value inputs of the coordinator harness: every type, every value version."""
    from tests.spec_encoder import compile_encoder
    from groupctl.protocol.records.schemas import RECORD_TYPES
    from groupctl.protocol.types import Writer

    out = []
    for rtype, schema in sorted(RECORD_TYPES.items()):
        w = Writer()
        w.int16(rtype)
        compile_encoder(schema.key, 0, False)(w, _filled(schema.key, 0))
        key = w.getvalue()
        lo, hi = schema.value_versions
        for version in range(lo, hi + 2):   # hi + 1: a version newer than the schema
            v = Writer()
            v.int16(version)
            enc_version = min(version, hi)
            compile_encoder(schema.value, enc_version, schema.value_flexible(enc_version))(
                v, _filled(schema.value, enc_version))
            out.append(bytes([len(key), 0]) + key + v.getvalue())
        out.append(bytes([len(key), 1]) + key)   # a tombstone
    for rtype in (9, 18, 24, 0x7FFF, -1):   # types this Kafka removed or does not know
        key = struct.pack(">h", rtype) + b"\x00\x01g"
        out.append(bytes([len(key), 0]) + key + b"\x00\x00\x00\x01g")
    return out


def _filled(struct_, version: int) -> dict:
    """Default-ish values for every field (strings "x", arrays of one item)."""
    from groupctl.protocol.schema import Array, Bytes, String, Struct

    value: dict = {}
    for f in struct_.fields:
        if not f.present(version):
            continue
        t = f.type
        if isinstance(t, Struct):
            value[f.name] = _filled(t, version)
        elif isinstance(t, Array):
            value[f.name] = [_filled(t.item, version)] if t.is_struct else []
        elif t is String:
            value[f.name] = "x"
        elif t is Bytes:
            value[f.name] = b""
    return value


def _write(name: str, seeds: list[bytes]) -> None:
    d = CORPUS / name
    d.mkdir(parents=True, exist_ok=True)
    for old in d.iterdir():
        old.unlink()
    for s in dict.fromkeys(seeds):
        (d / f"seed-{hashlib.sha1(s).hexdigest()[:16]}").write_bytes(s)
    print(f"{name}: {len(set(seeds))} seeds, {sum(map(len, set(seeds)))} bytes")


def main(paths: list[str]) -> None:
    from groupctl.protocol.records.batch import Batch, read_batches

    batch_seeds, segment_seeds, pairs = [], [], []
    for path in paths:
        with open(path, "rb") as f:
            buf = f.read()
        windows = _windows(buf)
        segment_seeds += windows
        batch_seeds += [b"\x01" + w for w in windows]
        plain = [(p, s) for p, s, c in _spans(buf) if c == 0][:2]
        for p, s in plain:
            again = _recompressed(buf, p, s)
            batch_seeds += [b"\x01" + r for r in again]
            segment_seeds += again[:2]
        for b in read_batches(buf):
            if isinstance(b, Batch):
                for r in b.records:
                    if r.key is not None and len(r.key) < 255:
                        flag = 1 if r.value is None else 0
                        pairs.append(bytes([len(r.key), flag]) + r.key + (r.value or b""))
    pairs = list(dict.fromkeys(pairs))[:40] + _schema_pairs()
    _write("batches", batch_seeds)
    _write("segments", segment_seeds)
    _write("coordinator", pairs)


if __name__ == "__main__":
    main(sys.argv[1:])
