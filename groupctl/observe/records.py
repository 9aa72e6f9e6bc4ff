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

from ..protocol.records.batch import Batch, BatchError, read_batches
from ..protocol.records.coordinator import (
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


def segment_batches(path: str) -> Iterator[Batch | BatchError]:
    """The batches of one segment file (read whole: segments are at most 100 MiB by
    default for __consumer_offsets, and a memory map would keep the file open)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        from ..errors import UsageError

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
