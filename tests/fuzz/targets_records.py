"""Harnesses for the records decoders (issue 18): record batches v2 with every codec,
the coordinator's records (key types 0-23, every value version, unknown types, newer
versions), and `decode records` on a segment file end to end.

- `batches`: byte 0 is a flag byte, the rest a segment / Fetch records buffer. Bit 0 set:
  the CRC of every batch that frames is recomputed first (else a mutation almost never
  gets past the CRC check into decompression and the records); bit 1: partial_tail;
  bit 2: check_crc off; bit 3: skip offset-commit keys (history's way); bits 4-6: a codec
  for a direct `decompress` call on the rest too. read_batches documents that it never
  raises: it yields Batch or BatchError. `decompress` documents DecodeError.
- `coordinator`: byte 0 is the key's length (255: a null key), byte 1 bit 0 set: a null
  value (tombstone), bit 1: consumer_protocol off; then the key, then the value.
  decode_record documents no exception at all (an undecodable record carries `error`);
  its result must render as `decode records` renders it, and the cached key decode
  must equal an uncached one.
- `segments`: a segment file (CRC fixed as in `batches`) through `decode records`' two
  paths, render/record_lines.py's fast one and the generic render/records.segment_items:
  the lines must be equal (a differential check), for all groups and for one group; then
  the batches' records replayed into group descriptions (observe/reads/replay, as `history`).

Seeds (corpus/batches, corpus/segments, corpus/coordinator): slices of real
`__consumer_offsets` segments of lab brokers (an uncompressed one and one with
offsets.topic.compression.codec=2, snappy in xerial framing), the same real records
re-compressed with every codec (gzip, raw snappy as librdkafka writes it, lz4, zstd), and
one key/value pair per record type and value version (tests/fuzz/seeds_records.py).
"""
from __future__ import annotations

import atexit
import json
import os
import shutil
import struct
import tempfile

from groupctl.protocol.types import DecodeError

from .registry import Crash, harness

_HEADER_LEN = 61


def fix_crcs(buf: bytes) -> bytes:
    """`buf` with the CRC-32C of every v2 batch that frames recomputed."""
    from groupctl.protocol.records.batch import CRC_FROM, LOG_OVERHEAD, _crc32c

    crc32c = _crc32c()
    out = bytearray(buf)
    pos = 0
    while len(out) - pos >= _HEADER_LEN:
        length = struct.unpack_from(">i", out, pos + 8)[0]
        size = LOG_OVERHEAD + length
        if length < _HEADER_LEN - LOG_OVERHEAD or pos + size > len(out):
            break
        if out[pos + 16] == 2:
            struct.pack_into(">I", out, pos + 17, crc32c(bytes(out[pos + CRC_FROM:pos + size])))
        pos += size
    return bytes(out)


def _check_batches(items: list, buf_len: int) -> None:
    from groupctl.protocol.records.batch import Batch, BatchError

    last = -1
    for item in items:
        if isinstance(item, BatchError):
            str(item)
            if item.position <= last:
                raise Crash(f"damaged batch position {item.position} after {last}")
            last = item.position
            continue
        if not isinstance(item, Batch):
            raise Crash(f"read_batches yielded {type(item).__name__}")
        if item.position <= last or item.position + item.size > buf_len:
            raise Crash(f"batch at {item.position} size {item.size} in {buf_len} bytes")
        last = item.position
        if len(item.records) > item.count:
            raise Crash(f"{len(item.records)} records in a batch of count {item.count}")
        for rec in item.records:
            if not (rec.key is None or isinstance(rec.key, bytes)) or \
                    not (rec.value is None or isinstance(rec.value, bytes)):
                raise Crash(f"record key/value not bytes: {rec}")


@harness("batches", documented=(DecodeError,), max_len=16384, smoke_runs=1500,
         dictionary=("\x82SNAPPY\x00", "\x1f\x8b\x08", "\x04\x22\x4d\x18", "\x28\xb5\x2f\xfd",
                     "\x00\x00\x00\x01\x00\x00\x00\x01"))
def batches(data: bytes) -> None:
    """Record batches v2 (read_batches: framing, CRC-32C, decompression none/gzip/snappy
    raw and xerial/lz4/zstd, records) and decompress() on its own."""
    if not data:
        return
    from groupctl.protocol.records.batch import read_batches
    from groupctl.protocol.records.compression import decompress

    flags, buf = data[0], data[1:]
    if flags & 1:
        buf = fix_crcs(buf)
    skip = frozenset({b"\x00\x00", b"\x00\x01"}) if flags & 8 else None
    items = list(read_batches(buf, base_position=0, check_crc=not flags & 4,
                              partial_tail=bool(flags & 2), skip_keys=skip))
    _check_batches(items, len(buf))
    codec = (flags >> 4) & 7
    if codec:
        out = decompress(codec, buf)   # unknown codecs 5-7: DecodeError
        if not isinstance(out, bytes):
            raise Crash(f"decompress({codec}) gave {type(out).__name__}")


# ---- coordinator records ---------------------------------------------------------------

def _uncached_key(key: bytes | None):
    from groupctl.protocol.records.coordinator import _decode_key

    return _decode_key(key)


@harness("coordinator", documented=(), max_len=4096, smoke_runs=2000)
def coordinator(data: bytes) -> None:
    """decode_key / decode_record of __consumer_offsets records (types 0-23, every value
    version, unknown types, newer versions), rendered as `decode records` renders them."""
    if len(data) < 2:
        return
    from groupctl.protocol.records.coordinator import decode_key, decode_record
    from groupctl.render.records import dumps_line, record_item

    klen, flags, rest = data[0], data[1], data[2:]
    key = None if klen == 255 else rest[:klen]
    value = None if flags & 1 else rest[0 if key is None else klen:]
    rec = decode_record(7, 1_795_499_486_000, key, value, consumer_protocol=not flags & 2)
    if rec.error is None and not rec.tombstone and not isinstance(rec.value, dict):
        raise Crash(f"no error and no value: {rec}")
    if rec.error is not None and rec.raw_key is None and rec.raw_value is None \
            and (key is not None or value is not None):
        raise Crash(f"an error without the raw bytes: {rec}")
    if decode_key(key) != _uncached_key(key):
        raise Crash("cached key decode differs from an uncached one")
    json.loads(dumps_line(record_item("f", 3, rec)))
    json.dumps(rec.to_dict(), default=lambda b: b.hex())


# ---- decode records, end to end --------------------------------------------------------

_SEGMENT: list[str] = []


def _remove_stale(root: str) -> None:
    """The segment directories of fuzz processes that are gone (libFuzzer's exit skips
    atexit handlers, so each atheris run leaves its own behind)."""
    for name in os.listdir(root):
        if name.startswith("groupctl-fuzz-seg-"):
            pid = name.split("-")[3]
            if pid.isdigit() and not os.path.exists(f"/proc/{pid}"):
                shutil.rmtree(os.path.join(root, name), True)


def _segment_path() -> str:
    if not _SEGMENT:
        root = "/dev/shm" if os.path.isdir("/dev/shm") else None
        _remove_stale(root or tempfile.gettempdir())
        d = tempfile.mkdtemp(prefix=f"groupctl-fuzz-seg-{os.getpid()}-", dir=root)
        atexit.register(shutil.rmtree, d, True)   # in process; libFuzzer skips atexit
        os.mkdir(os.path.join(d, "__consumer_offsets-3"))
        _SEGMENT.append(os.path.join(d, "__consumer_offsets-3", "00000000000000000000.log"))
    return _SEGMENT[0]


def _first_group(lines: list[str]) -> str | None:
    for line in lines:
        key = json.loads(line).get("key")
        if isinstance(key, dict):
            group = key.get("group_id", key.get("group"))
            if isinstance(group, str):
                return group
    return None


@harness("segments", documented=(), max_len=16384, smoke_runs=1000)
def segments(data: bytes) -> None:
    """`decode records` on one segment file: render/record_lines.py's fast path must print
    exactly the generic decoder's lines; then the records replayed (history's path)."""
    from groupctl.observe.reads.records import coordinator_batches, segment_batches
    from groupctl.observe.reads.replay import replay
    from groupctl.render.record_lines import segment_lines
    from groupctl.render.records import dumps_line, segment_items

    path = _segment_path()
    with open(path, "wb") as f:
        f.write(fix_crcs(data))
    fast = [line for line, _ in segment_lines(path, None)]
    generic = [dumps_line(item) for item, _ in segment_items(path, None)]
    if fast != generic:
        diff = next(i for i, (a, b) in enumerate(zip(fast + [""], generic + [""])) if a != b)
        raise Crash(f"fast line {diff} differs from the generic decoder's:\n"
                    f"{(fast + [''])[diff][:300]}\n{(generic + [''])[diff][:300]}")
    group = _first_group(generic)
    if group is not None:
        fast = [line for line, _ in segment_lines(path, group)]
        generic = [dumps_line(item) for item, _ in segment_items(path, group)]
        if fast != generic:
            raise Crash(f"with group {group!r}: fast lines differ from the generic decoder's")
    records = (recs for _, recs in coordinator_batches(segment_batches(path)))
    for _, desc in replay(records, {}):
        json.dumps(desc.to_dict(), default=str)
