"""The coordinator's records as a stream: from segment files (`decode records`) or from
fetched record batches (`history`), decoded into CoordinatorRecords.

`coordinator_records(batches, group=..., skip_offset_commits=...)` turns the output of
protocol.records.batch.read_batches into CoordinatorRecords (and passes BatchErrors
through, for the caller to report). Control batches (transaction markers) are skipped.
With `skip_offset_commits`, records of types 0 and 1 are dropped on their key's first two
bytes, before anything else is decoded: a busy partition holds far more offset commits
than group records. With `group`, only records whose key names that group are decoded
past the key.
"""
from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator

from ...protocol.records.batch import Batch, BatchError, read_batches
from ...protocol.records.coordinator import (
    OFFSET_COMMIT_TYPES, CoordinatorRecord, decode_key, decode_record, record_type,
)

_PARTITION_DIR = re.compile(r"-(\d+)$")


def coordinator_records(batches: Iterable[Batch | BatchError], *, group: str | None = None,
                        skip_offset_commits: bool = False
                        ) -> Iterator[CoordinatorRecord | BatchError]:
    for batch in batches:
        if isinstance(batch, BatchError):
            yield batch
            continue
        if batch.control:
            continue
        for rec in batch.records:
            key = rec.key
            if skip_offset_commits and record_type(key) in OFFSET_COMMIT_TYPES:
                continue
            if group is not None:
                _, fields, _ = decode_key(key)
                if not fields or fields.get("group_id", fields.get("group")) != group:
                    continue
            yield decode_record(rec.offset, rec.timestamp, key, rec.value)


def partition_of_path(path: str) -> int | None:
    """The partition a segment file belongs to, from its directory name
    (`.../__consumer_offsets-7/00000000000000000000.log` -> 7); None when not named so."""
    m = _PARTITION_DIR.search(os.path.basename(os.path.dirname(os.path.abspath(path))))
    return int(m.group(1)) if m else None


# Kafka's other files in a partition directory (LogFileUtils; the checkpoints of
# LeaderEpochFileCache and PartitionMetadataFile): skipped with a note, never decoded
_SIDE_SUFFIXES = {".index": "offset index", ".timeindex": "time index",
                  ".txnindex": "transaction index", ".snapshot": "producer state snapshot",
                  ".deleted": "segment file being deleted", ".cleaned": "cleaner's temporary file",
                  ".swap": "cleaner's swap file"}
_SIDE_NAMES = {"leader-epoch-checkpoint": "leader epoch checkpoint",
               "partition.metadata": "partition metadata"}
_KAFKA_SEGMENT = re.compile(r"\d{20}\.log$")   # as a broker names its segment files


def side_file(path: str) -> str | None:
    """What `path` is when it is one of Kafka's other files of a partition directory (an
    index, a checkpoint...), by its name; None otherwise."""
    name = os.path.basename(path)
    if name in _SIDE_NAMES:
        return _SIDE_NAMES[name]
    for suffix, what in _SIDE_SUFFIXES.items():
        if name.endswith(suffix):
            return what
    return None


def not_a_segment(path: str) -> str | None:
    """Why the file at `path` is not a log segment, or None when it is one: named as a
    broker names its segments (read as one, damage and all), or any other name whose
    first record batch reads cleanly (v2, its CRC right). An empty `.log` is a segment
    (a new active segment has no batch yet)."""
    what = side_file(path)
    if what is not None:
        return f"Kafka's {what}, not a log segment"
    if _KAFKA_SEGMENT.search(os.path.basename(path)):
        return None
    try:
        with open(path, "rb") as f:
            head = f.read(12)
            if not head:
                return None if path.endswith(".log") else "an empty file, not a log segment"
            if len(head) == 12:
                length = int.from_bytes(head[8:12], "big", signed=True)
                if 0 < length <= 16 * 1024 * 1024:   # a sane first batch: read it whole
                    head += f.read(length)
    except OSError as exc:
        from ...errors import UsageError

        raise UsageError(f"{path}: cannot read: {exc.strerror or exc}") from None
    first = next(read_batches(head), None)
    if isinstance(first, Batch):
        return None
    return "not a log segment (it does not begin with a record batch)"


def segment_batches(path: str) -> Iterator[Batch | BatchError]:
    """The batches of one segment file (read whole: segments are at most 100 MiB by
    default for __consumer_offsets, and a memory map would keep the file open)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        from ...errors import UsageError

        raise UsageError(f"{path}: cannot read: {exc.strerror or exc}") from None
    yield from read_batches(data)


def coordinator_batches(batches: Iterable[Batch | BatchError], *, groups=None,
                        skip_offset_commits: bool = True, consumer_protocol: bool = False
                        ) -> Iterator[tuple[Batch | BatchError, list[CoordinatorRecord]]]:
    """(batch, its coordinator records) per batch, control batches included (with no
    records: their offsets count for gap detection). `groups`: a set of group ids to keep.
    GroupMetadata members' bytes stay bytes (consumer_protocol=False): the replay decodes
    them into observe.model Members."""
    for batch in batches:
        if isinstance(batch, BatchError) or batch.control:
            yield batch, []
            continue
        out = []
        for rec in batch.records:
            key = rec.key
            if skip_offset_commits and record_type(key) in OFFSET_COMMIT_TYPES:
                continue
            if groups is not None:
                _, fields, _ = decode_key(key)
                if not fields or fields.get("group_id", fields.get("group")) not in groups:
                    continue
            out.append(decode_record(rec.offset, rec.timestamp, key, rec.value,
                                     consumer_protocol=consumer_protocol))
        yield batch, out


def commits_by_batch(chunk) -> dict[int, dict[str, tuple[int, float]]]:
    """The offset commits of a chunk (passed over unread: chunk.skipped, (offset, key)) by
    the batch that holds them: base offset -> {group: (its last commit's offset, the
    batch's time)}. A commit key (types 0 and 1) begins with the group id (int16 length,
    UTF-8)."""
    out: dict[int, dict[str, tuple[int, float]]] = {}
    if not chunk.skipped:
        return out
    batches = iter(b for b in chunk.batches if hasattr(b, "base_offset"))
    batch = next(batches, None)
    for offset, key in chunk.skipped:
        while batch is not None and batch.last_offset < offset:
            batch = next(batches, None)
        if batch is None:
            break
        size = int.from_bytes(key[2:4], "big", signed=True)
        if size < 0 or len(key) < 4 + size:
            continue
        group = key[4:4 + size].decode("utf-8", "replace")
        out.setdefault(batch.base_offset, {})[group] = (offset, batch.max_timestamp / 1000)
    return out


def topic_ids(value: dict | None) -> Iterable[str]:
    """The topic ids a record's value names (assignments: [{topic_id, partitions}])."""
    if not value:
        return ()
    return [item["topic_id"] for field in value.values() if isinstance(field, list)
            for item in field if isinstance(item, dict) and item.get("topic_id")]
