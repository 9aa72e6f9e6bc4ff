"""`decode records -o ndjson/json`: a segment's records as JSON lines, fast.

A busy `__consumer_offsets` is mostly offset commits (OffsetCommit v3/v4): for those the
line is built from the bytes directly (the key's JSON once per distinct key, the value's
four or five fields unpacked at once); every other record, and any commit that is not
exactly the common shape (another tag, trailing bytes, a long metadata string, a bad
byte), goes through the generic decoder (render.records.segment_items' shape). Both give
the same bytes for the same record: tests/unit/test_cli_records.py compares them.
"""
from __future__ import annotations

import struct
from json.encoder import encode_basestring

from ..protocol.records.coordinator import decode_key, decode_record
from ..protocol.types import uuid_to_str
from .records import dumps_line, iso_ms, record_item

_V3 = struct.Struct(">qih").unpack_from     # offset, leader epoch, metadata length
_I64 = struct.Struct(">q").unpack_from
_ZERO_UUID = '"AAAAAAAAAAAAAAAAAAAAAA"'
_topic_ids: dict[bytes, str] = {}   # a partition's commits name a few topics, again and again


def _commit_value(v: bytes) -> str | None:
    """The JSON of an OffsetCommit value v3/v4 in the common shape, else None."""
    n = len(v)
    if n < 16:
        return None
    version = v[1] if v[0] == 0 else -1
    if version == 3:
        offset, epoch, size = _V3(v, 2)
        end = 16 + max(size, 0)
        if size < 0 or end + 8 != n:
            return None
        meta = v[16:end]
        ts = _I64(v, end)[0]
        tail: str | None = ""
    elif version == 4:
        offset, epoch = struct.unpack_from(">qi", v, 2)
        size = v[14]
        if not 0 < size < 0x80:
            return None
        end = 15 + size - 1
        if end + 9 > n:
            return None
        meta = v[15:end]
        ts = _I64(v, end)[0]
        tags = v[end + 8:]
        if tags == b"\x00":
            tail = f", \"topic_id\": {_ZERO_UUID}"
        elif len(tags) == 19 and tags[:3] == b"\x01\x00\x10":
            tail = _topic_ids.get(tags)
            if tail is None:
                tail = _topic_ids[tags] = f", \"topic_id\": \"{uuid_to_str(tags[3:])}\""
        else:
            return None
    else:
        return None
    try:
        text = meta.decode()
    except UnicodeDecodeError:
        return None
    return (f'{{"offset": {offset}, "leader_epoch": {epoch}, "metadata": '
            f'{encode_basestring(text)}, "commit_timestamp": {ts}{tail}}}')


def segment_lines(path: str, group: str | None):
    """(JSON line, warning or None) per record or damaged batch, in file order."""
    from ..observe.reads.records import partition_of_path, segment_batches
    from ..protocol.records.batch import BatchError

    partition = partition_of_path(path)
    prefix = (f'{{"file": {encode_basestring(path)}, "partition": '
              f'{"null" if partition is None else partition}, "offset": ')
    keys: dict[bytes, tuple] = {}
    for batch in segment_batches(path):
        if isinstance(batch, BatchError):
            yield dumps_line({"file": path, "partition": partition, "damaged_batch": {
                "offset": batch.offset, "position": batch.position,
                "error": batch.reason}}), f"{path}: {batch}"
            continue
        if batch.control:
            continue
        for r in batch.records:
            k = keys.get(r.key) if r.key is not None else None
            if k is None:
                rtype, fields, error = decode_key(r.key)
                owner = fields.get("group_id", fields.get("group")) if fields else None
                k = (rtype == 1 and error is None, owner,
                     f'"type": {rtype}, "record": "OffsetCommit", "key": {dumps_line(fields)}, '
                     f'"version": ' if error is None else "")
                if r.key is not None:
                    keys[r.key] = k
            fast, owner, fragment = k
            if group is not None and owner != group:
                continue
            value = (_commit_value(r.value) if fast and r.value is not None and r.timestamp >= 0
                     else None)
            if value is None or r.value is None:
                yield dumps_line(record_item(path, partition, decode_record(
                    r.offset, r.timestamp, r.key, r.value))), None
                continue
            iso = iso_ms(r.timestamp)   # None past year 9999: null, as the generic line
            stamp = f'"{iso}"' if iso is not None else "null"
            yield (f'{prefix}{r.offset}, "timestamp": {stamp}, "timestamp_ms": '
                   f'{r.timestamp}, {fragment}{r.value[1]}, "value": {value}}}'), None


def _file_lines(args) -> tuple[list[str], list[str]]:
    path, group = args
    lines, warnings = [], []
    for line, warning in segment_lines(path, group):
        lines.append(line)
        if warning:
            warnings.append(warning)
    return ["\n".join(lines)] if lines else [], warnings   # one string: one memcpy to pickle


def parallel_file_lines(paths: list[str], group: str | None, workers: int):
    """(JSON lines, warnings) per file, in order, decoded by `workers` processes: a
    segment file is independent of the others, and a dump of many is CPU-bound."""
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(workers) as pool:
        yield from pool.imap(_file_lines, [(p, group) for p in paths])
