"""`decode records` (offline: __consumer_offsets segment files) and `history` (a group's
past from the coordinator's records, read from the cluster)."""
from __future__ import annotations

from typing import List, Optional

import typer

from ..errors import UsageError
from .app import app
from .env import env_of
from .decode import decode_app
from .group_ids import check as check_group_ids
from .timearg import TIME_HELP as _TIME_HELP
from .timearg import parse_time


@decode_app.command("records")
def decode_records_cmd(
    ctx: typer.Context,
    files: List[str] = typer.Argument(
        ..., metavar="FILE...",
        help="__consumer_offsets segment files (*.log) as copied from a broker's data "
             "directory (…/__consumer_offsets-N/00000000000000000000.log)."),
    group: Optional[str] = typer.Option(
        None, "--group", "-g", metavar="G", help="Only the records of this group."),
):
    """Decode the group coordinator's records in __consumer_offsets segment files, as
    Kafka's DumpLogSegments --offsets-decoder does: every record type (0-23) and value
    version; one object per record with offset, timestamp, type, record name, key fields,
    value version and fields (a tombstone's value is null). A record type or value version
    this groupctl does not know is kept raw (hex) with its type and version; a damaged
    batch (bad CRC, truncated) is reported with its offset, and decoding goes on. Never
    touches the network."""
    import os

    from ..render.records import Stream, record_columns, record_row, segment_items
    from ..render.record_lines import parallel_file_lines

    env = env_of(ctx)
    for path in files:
        if not os.path.isfile(path):
            raise UsageError(f"{path}: no such file" if not os.path.exists(path)
                             else f"{path}: not a file")
    files = _segments(env, files)
    with_file = len(set(files)) > 1
    stream = Stream(env, record_columns(with_file), lambda item: record_row(item, with_file))
    damaged = 0
    early: set[tuple] = set()   # (record, release) told

    def early_note(item: dict | str) -> None:
        """Once per record type: records an early-access broker wrote (each record's
        `error` says so too). JSON text holds the key only as this field (every quote
        inside a string is escaped); it may be several lines."""
        if isinstance(item, str):
            if '"early_access": "' in item:
                import json

                for line in item.splitlines():
                    if '"early_access": "' in line:
                        early_note(json.loads(line))
            return
        seen = (item.get("record"), item.get("early_access"))
        if seen[1] and seen not in early:
            early.add(seen)
            env.warn(f"{seen[0]} records written by an early-access broker ({seen[1]}): "
                     "not decoded")
    workers = min(len(files), os.cpu_count() or 1)
    try:
        if stream.fmt in ("ndjson", "json") and workers == 1:
            from ..render.record_lines import segment_lines

            for path in files:
                lines = []
                for line, warning in segment_lines(path, group):
                    if warning:
                        damaged += 1
                        env.warn(warning)
                    early_note(line)
                    lines.append(line)
                    if len(lines) >= 2000:
                        stream.write_lines(lines)
                        lines = []
                stream.write_lines(lines)
        elif stream.fmt in ("ndjson", "json"):
            for path in files:   # unreadable files fail here, before any worker starts
                if not os.access(path, os.R_OK):
                    raise UsageError(f"{path}: cannot read: permission denied")
            for lines, warnings in parallel_file_lines(files, group, workers):
                for line in lines:
                    early_note(line)
                stream.write_lines(lines)
                for w in warnings:
                    damaged += 1
                    env.warn(w)
        else:
            for path in files:
                for item, warning in segment_items(path, group):
                    if warning:
                        damaged += 1
                        env.warn(warning)
                    early_note(item)
                    stream.write(item)
    finally:
        stream.close()
    if damaged:
        env.warn(f"{damaged} damaged batch{'es' if damaged != 1 else ''} skipped")
    if group is not None and stream.count == 0:
        _note(env, f"no record of group {group!r} in {_files(len(files), 'segment')}")


def _note(env, text: str) -> None:
    env.note(f"groupctl: decode records: {text}")


def _files(n: int, what: str = "file") -> str:
    return f"the {what}" if n == 1 else f"the {n} {what}s"


def _segments(env, files: list[str]) -> list[str]:
    """The log segments among `files`, in order. Kafka's other files of a partition
    directory (`__consumer_offsets-17/*`: indexes, checkpoints) are skipped with one
    note; any other file that is not a segment is said and skipped; an empty segment
    is said. UsageError (exit 2) when none is a segment."""
    import os

    from ..observe.reads.records import not_a_segment, side_file

    segments, side, others = [], [], []
    for path in dict.fromkeys(files):
        why = not_a_segment(path)
        if why is None:
            segments.append(path)
        elif side_file(path) is not None:
            side.append(path)
        else:
            others.append((path, why))
    for path, why in others if len(files) > 1 else ():
        env.warn(f"{path}: {why}; skipped")
    if not segments:
        if len(files) == 1:
            raise UsageError(f"{files[0]}: {not_a_segment(files[0])}")
        raise UsageError(f"none of the {len(files)} files is a log segment "
                         f"(__consumer_offsets-N/*.log)")
    if side:
        _note(env, f"skipped {len(side)} file{'s' if len(side) != 1 else ''} of the partition "
                   f"director{'ies' if len({os.path.dirname(p) for p in side}) > 1 else 'y'} "
                   f"that {'are' if len(side) != 1 else 'is'} not a log segment: "
                   + ", ".join(os.path.basename(p) for p in side))
    for path in segments:
        if os.path.getsize(path) == 0:
            _note(env, f"{path}: an empty segment (no records)")
    return segments


@app.command("history")
def history_cmd(
    ctx: typer.Context,
    groups: List[str] = typer.Argument(..., metavar="GROUP...", help="Groups to replay.",
                                       callback=check_group_ids),
    since: Optional[str] = typer.Option(None, "--since", metavar="T",
                                        help=f"Tell events from this time on. {_TIME_HELP}"),
    until: Optional[str] = typer.Option(None, "--until", metavar="T",
                                        help=f"Stop before this time. {_TIME_HELP}"),
):
    """A group's exact past from the group coordinator's own records in __consumer_offsets
    (every group type), as rebalance events with the broker's record timestamps (source
    "records"): generations (classic) with members and decoded assignments; group and
    assignment epochs, members joining and leaving, each member's assignment as it
    reconciles (consumer, share, streams); type conversions; the group's deletion. Reads
    the group's partition (abs(hashCode(group)) % partitions, checked against
    FindCoordinator) from its earliest offset; offset commits are skipped unread. Never
    writes to the cluster. Needs READ and DESCRIBE on topic __consumer_offsets (exit 4
    names the ACL otherwise). The history is complete from the offset after the last gap
    that compaction left (printed at the end); a classic round's start is not in the
    records, so classic rebalances have no duration. -o ndjson/json give the events for
    scripts and `analyze --events`."""
    import time

    from ..observe.sources.history import read_history
    from ..render.records import Stream, history_line, history_summary
    from ..render.visible import visible
    from .common import make_cluster, run_async

    env = env_of(ctx)
    now_ms = int(time.time() * 1000)
    since_ms = None if since is None else parse_time(since, "--since", now_ms)
    until_ms = None if until is None else parse_time(until, "--until", now_ms)
    if since_ms is not None and until_ms is not None and until_ms <= since_ms:
        raise UsageError("--until must be after --since")
    stream = Stream(env, [], None, line=history_line)
    told: dict[str, int] = {}

    def emit(event: dict) -> None:
        told[event["group"]] = told.get(event["group"], 0) + 1
        stream.write(event)

    async def main():
        async with make_cluster(env) as cluster:
            return await read_history(cluster, list(dict.fromkeys(groups)), since_ms=since_ms,
                                      until_ms=until_ms, emit=emit, warn=env.warn)

    try:
        reads = run_async(env, main())
    finally:
        stream.close()
    for line in history_summary(reads):
        if stream.fmt in ("table", "wide"):
            env.stdout.write(visible(line) + "\n")
        else:   # the same footer, beside the machine output (a note, not a warning)
            env.note(f"groupctl: history: {line}")
    for line in _silent_groups(reads, told, since, until, since_ms, now_ms):
        env.note(f"groupctl: history: {line}")


def _silent_groups(reads, told: dict[str, int], since, until, since_ms, now_ms) -> list[str]:
    """Why a group that exists told nothing: its records all come after --until, --since
    is in the future, or nothing happened in the window."""
    from .timearg import iso_ms

    out = []
    for read in reads:
        for g in read.groups:
            if told.get(g):
                continue
            if g in read.later:
                offset, ts = read.later[g]
                out.append(f"no event of {g} before --until {until}: its first record is "
                           f"at offset {offset} ({iso_ms(ts)})")
            elif since_ms is not None and since_ms > now_ms:
                out.append(f"no event of {g}: --since {since} is in the future")
            else:
                window = " ".join(f"{o} {v}" for o, v in (("--since", since), ("--until", until))
                                  if v is not None)
                out.append(f"no event of {g}" + (f" in the window {window}" if window else ""))
    return out
