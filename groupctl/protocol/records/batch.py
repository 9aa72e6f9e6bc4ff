"""Record batches (magic v2), as in a log segment file or a Fetch response's records.

Layout (Kafka's DefaultRecordBatch): baseOffset int64, batchLength int32 (bytes after this
field), partitionLeaderEpoch int32, magic int8, crc uint32 (CRC-32C of everything after
it), attributes int16 (bits 0-2 compression, 3 timestamp type, 4 transactional, 5
control, 6 delete horizon), lastOffsetDelta int32, baseTimestamp int64, maxTimestamp
int64, producerId int64, producerEpoch int16, baseSequence int32, records count int32,
then the records (compressed as a whole when the codec is not none). A record: length
varint, attributes int8, timestampDelta varlong, offsetDelta varint, key (varint length,
-1 null), value (the same), headers (varint count of key/value pairs).

`read_batches(buf)` yields a Batch per batch and a BatchError for a batch that cannot be
read (bad CRC, unknown magic, truncated, damaged records), naming its offset and file
position; it never raises on bad bytes. After a damaged header nothing further can be
framed, so the scan stops there; a batch whose header frames but whose contents are
damaged is reported and the scan continues with the next one. A Fetch response may end
in a partial batch (the broker cuts at max bytes): `partial_tail=True` drops it quietly.
"""
from __future__ import annotations

import re
import struct
from collections.abc import Iterator
from dataclasses import dataclass

from ..types import DecodeError
from .compression import CODECS, NONE, decompress

HEADER = struct.Struct(">qiibIhiqqqhii")
HEADER_SIZE = HEADER.size          # 61
LOG_OVERHEAD = 12                  # baseOffset + batchLength
CRC_FROM = 21                      # the CRC covers the batch from attributes on
ATTR_CODEC = 0x07
ATTR_LOG_APPEND_TIME = 0x08
ATTR_TRANSACTIONAL = 0x10
ATTR_CONTROL = 0x20


@dataclass(slots=True)
class Record:
    offset: int
    timestamp: int                 # ms since the epoch
    key: bytes | None
    value: bytes | None
    headers: list | tuple = ()   # (key, value) pairs; () when none


@dataclass(slots=True)
class Batch:
    base_offset: int
    last_offset: int
    position: int                  # byte position of the batch in its buffer / file
    size: int                      # whole batch, header included
    codec: int
    control: bool
    transactional: bool
    log_append_time: bool
    base_timestamp: int
    max_timestamp: int
    partition_leader_epoch: int
    crc: int
    records: list[Record]
    count: int = 0                 # records in the batch (skipped ones included)

    @property
    def compression(self) -> str:
        return CODECS.get(self.codec, str(self.codec))


@dataclass(slots=True)
class BatchError:
    offset: int | None             # the batch's base offset, when its header was readable
    position: int
    reason: str

    def __str__(self) -> str:
        where = f"offset {self.offset}" if self.offset is not None else "unknown offset"
        return f"damaged batch at {where} (byte {self.position}): {self.reason}"


def _crc32c():
    from crc32c import crc32c  # C / hardware CRC-32C: a batch's check costs microseconds

    return crc32c


def read_batches(buf: bytes, *, base_position: int = 0, check_crc: bool = True,
                 partial_tail: bool = False, skip_keys: frozenset | None = None,
                 keep: re.Pattern[bytes] | None = None,
                 skipped: list | None = None) -> Iterator[Batch | BatchError]:
    """`skip_keys`: records whose key starts with one of these byte strings are passed
    over unread (not in `records`; `count` still counts them): `history` skips offset
    commits (key types 0 and 1) this way. `keep`: a batch whose records' bytes (after
    decompression) hold no match is passed over whole, its records unread (`records`
    empty, `count` from its header; still CRC-checked): one search in C instead of a walk
    through every record (`history`: a key of one of its groups' records). `skipped`: a
    list that gets (offset, head) of the records passed over by `skip_keys` whose value is
    not null, head being the key's type and first string (int16 length, bytes: an offset
    commit's group); a record whose head is the one before's is not added again (the
    records tail: which groups committed offsets, without decoding them)."""
    crc32c = _crc32c() if check_crc else None
    view = memoryview(buf)
    pos, end = 0, len(buf)
    while pos < end:
        where = base_position + pos
        if end - pos < LOG_OVERHEAD:
            if not partial_tail:
                yield BatchError(None, where, f"{end - pos} bytes left, less than a batch header")
            return
        base_offset, length = struct.unpack_from(">qi", buf, pos)
        if length < HEADER_SIZE - LOG_OVERHEAD:
            if length == 0 and base_offset == 0 and not any(view[pos:]):
                return  # zeros after the last batch: a preallocated segment's unused tail
            yield BatchError(base_offset, where, f"batch length {length} is too small")
            return
        size = LOG_OVERHEAD + length
        if pos + size > end:
            if not partial_tail:
                yield BatchError(base_offset, where,
                                 f"truncated: the batch needs {size} bytes, {end - pos} left")
            return
        magic = buf[pos + 16]
        if magic != 2:
            yield BatchError(base_offset, where, f"magic {magic}: only record batch v2 is read")
        else:
            yield _batch(buf, view, pos, size, where, crc32c, skip_keys, keep, skipped)
        pos += size


def _batch(buf, view, pos: int, size: int, where: int, crc32c, skip_keys=None, keep=None,
           skipped=None) -> Batch | BatchError:
    (base_offset, _, leader_epoch, _, crc, attrs, last_delta, base_ts, max_ts, _, _, _,
     count) = HEADER.unpack_from(buf, pos)
    if crc32c is not None:
        actual = crc32c(view[pos + CRC_FROM:pos + size])
        if actual != crc:
            return BatchError(base_offset, where,
                              f"CRC-32C mismatch (stored {crc}, computed {actual})")
    codec = attrs & ATTR_CODEC
    records: list[Record] = []
    try:
        if codec == NONE:
            if keep is None or keep.search(buf, pos + HEADER_SIZE, pos + size) is not None:
                records = _records(bytes(view[pos + HEADER_SIZE:pos + size]), count,
                                   base_offset, max_ts if attrs & ATTR_LOG_APPEND_TIME else None,
                                   base_ts, skip_keys, skipped)
        else:
            body = decompress(codec, bytes(view[pos + HEADER_SIZE:pos + size]))
            if keep is None or keep.search(body) is not None:
                records = _records(body, count, base_offset,
                                   max_ts if attrs & ATTR_LOG_APPEND_TIME else None, base_ts,
                                   skip_keys, skipped)
    except DecodeError as exc:
        return BatchError(base_offset, where, str(exc))
    return Batch(base_offset, base_offset + last_delta, where, size, codec,
                 bool(attrs & ATTR_CONTROL), bool(attrs & ATTR_TRANSACTIONAL),
                 bool(attrs & ATTR_LOG_APPEND_TIME), base_ts, max_ts, leader_epoch, crc, records,
                 count)


def _records(body: bytes, count: int, base_offset: int, append_time: int | None,
             base_ts: int, skip_keys=None, skipped=None) -> list[Record]:
    if count < 0 or count > len(body):
        raise DecodeError(f"record count {count} cannot fit in {len(body)} bytes")
    try:
        return _parse_records(body, count, base_offset, append_time, base_ts, skip_keys,
                              skipped)
    except IndexError:
        raise DecodeError("truncated record") from None


_NO_HEADERS: tuple = ()


def _parse_records(body: bytes, count: int, base_offset: int, append_time: int | None,
                   base_ts: int, skip_keys=None, skipped=None) -> list[Record]:
    out = []
    pos, end = 0, len(body)
    head = b""   # the last head added to `skipped`
    for _ in range(count):
        # Varints inline (one or two bytes: almost every one in practice; longer ones
        # through _varint): this loop runs once per record of the partition.
        b = body[pos]
        if b < 0x80:
            length, pos = (b >> 1) ^ -(b & 1), pos + 1
        elif body[pos + 1] < 0x80:
            v = (b & 0x7F) | (body[pos + 1] << 7)
            length, pos = (v >> 1) ^ -(v & 1), pos + 2
        else:
            length, pos = _varint(body, pos)
        stop = pos + length
        if length < 0 or stop > end:
            raise DecodeError(f"record of {length} bytes at byte {pos} runs past the batch")
        pos += 1                                            # record attributes (unused)
        b = body[pos]
        if b < 0x80:
            ts_delta, pos = (b >> 1) ^ -(b & 1), pos + 1
        else:
            ts_delta, pos = _varint(body, pos)
        b = body[pos]
        if b < 0x80:
            off_delta, pos = (b >> 1) ^ -(b & 1), pos + 1
        else:
            off_delta, pos = _varint(body, pos)
        b = body[pos]
        if b < 0x80:
            n, pos = (b >> 1) ^ -(b & 1), pos + 1
        else:
            n, pos = _varint(body, pos)
        if n < 0:
            key = None
        else:
            if skip_keys is not None and body[pos:pos + 2] in skip_keys:
                if skipped is not None and body[pos + n] != 1 and not (   # 1: null value
                        head and body.startswith(head, pos)):
                    head = body[pos:pos + 4 + ((body[pos + 2] << 8) | body[pos + 3])]
                    skipped.append((base_offset + off_delta, head))
                pos = stop   # passed over unread (history: offset commits)
                continue
            key, pos = body[pos:pos + n], pos + n
        b = body[pos]
        if b < 0x80:
            n, pos = (b >> 1) ^ -(b & 1), pos + 1
        elif body[pos + 1] < 0x80:
            v = (b & 0x7F) | (body[pos + 1] << 7)
            n, pos = (v >> 1) ^ -(v & 1), pos + 2
        else:
            n, pos = _varint(body, pos)
        if n < 0:
            value = None
        else:
            value, pos = body[pos:pos + n], pos + n
        headers: list | tuple = _NO_HEADERS
        n, pos = _varint(body, pos)
        if n > 0:
            pairs: list[tuple[bytes, bytes | None]] = []
            headers = pairs
            for _ in range(n):
                k, pos = _varint(body, pos)
                hk, pos = body[pos:pos + max(k, 0)], pos + max(k, 0)
                k, pos = _varint(body, pos)
                hv, pos = (None, pos) if k < 0 else (body[pos:pos + k], pos + k)
                pairs.append((hk, hv))
        if pos != stop:
            raise DecodeError(f"record at offset {base_offset + off_delta} has "
                              f"{stop - pos} bytes more or less than its length says")
        out.append(Record(base_offset + off_delta,
                          append_time if append_time is not None else base_ts + ts_delta,
                          key, value, headers))
    if pos != end:
        raise DecodeError(f"{end - pos} bytes after the batch's {count} records")
    return out


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    """A zig-zag varint (Kafka's ByteUtils.readVarint/readVarlong)."""
    b = buf[pos]
    if b < 0x80:
        return (b >> 1) ^ -(b & 1), pos + 1
    value, shift = b & 0x7F, 7
    while True:
        pos += 1
        b = buf[pos]
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return (value >> 1) ^ -(value & 1), pos + 1
        shift += 7
        if shift > 63:
            raise DecodeError("varint too long")


def encode_batch(records: list[tuple[int, bytes | None, bytes | None]], *, base_offset: int = 0,
                 base_timestamp: int = 0, codec: int = NONE, control: bool = False) -> bytes:
    """A v2 batch of (timestamp delta, key, value) records: for tests and fixtures."""
    from ..types import Writer
    from .compression import compress

    body = Writer()
    for i, (ts_delta, key, value) in enumerate(records):
        rec = Writer()
        rec.int8(0)
        rec.varint(ts_delta)
        rec.varint(i)
        for part in (key, value):
            if part is None:
                rec.varint(-1)
            else:
                rec.varint(len(part))
                rec.raw(part)
        rec.varint(0)
        body.varint(len(rec.buf))
        body.raw(rec.getvalue())
    data = compress(codec, body.getvalue())
    attrs = codec | (ATTR_CONTROL if control else 0)
    last = max(len(records) - 1, 0)
    after_crc = struct.pack(">hiqqqhii", attrs, last, base_timestamp,
                            base_timestamp + max((r[0] for r in records), default=0),
                            -1, -1, -1, len(records)) + data
    crc = _crc32c()(after_crc)
    length = 4 + 1 + 4 + len(after_crc)
    return struct.pack(">qiibI", base_offset, length, 0, 2, crc) + after_crc
