"""Views of the coordinator's records: `decode records` (one row per record) and
`history` (one row per event). Machine formats stream one object per record / event."""
from __future__ import annotations

import json
from datetime import datetime, timezone

from .output import to_plain
from .visible import visible, visible_data


_last_iso: list = [None, None]   # records of a batch mostly share a timestamp


def _json_default(value):
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).hex()
    if hasattr(value, "to_dict"):
        return value.to_dict()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


# one encoder for every line: json.dumps with options builds a new one per call
_ENCODER = json.JSONEncoder(ensure_ascii=False, default=_json_default)
dumps_line = _ENCODER.encode


def iso_ms(ms: int | None) -> str | None:
    """A record timestamp (ms) as UTC ISO-8601 with milliseconds, like every event's ts."""
    if ms is None or ms < 0:
        return None
    if _last_iso[0] == ms:
        return _last_iso[1]
    _last_iso[0], _last_iso[1] = ms, _iso_ms(ms)
    return _last_iso[1]


_seconds: dict[int, str] = {}


def _iso_ms(ms: int) -> str | None:
    sec, milli = divmod(ms, 1000)
    prefix = _seconds.get(sec)
    if prefix is None:
        try:
            prefix = datetime.fromtimestamp(sec, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.")
        except (OverflowError, OSError, ValueError):
            return None
        if len(_seconds) > 10_000:
            _seconds.clear()
        _seconds[sec] = prefix
    return f"{prefix}{milli:03d}Z"


class Stream:
    """Writes items one at a time in the -o format: ndjson (a line each), json (one array,
    an item a line), yaml (a list); table rows through `row(item) -> [cells]`."""

    def __init__(self, env, columns: list[str], row, line=None):
        self.env, self.fmt, self.out = env, env.settings.output, env.stdout
        self.columns, self.row, self.line = columns, row, line
        self.count = 0
        self._rows: list[list[str]] = []
        self._lines: list[str] = []   # written in chunks: a segment holds millions
        self._started = False         # json: the array's "[" is out

    def write(self, item: dict) -> None:
        if self.fmt in ("ndjson", "json"):
            self._lines.append(dumps_line(item))
            if len(self._lines) >= 2000:
                self._flush_lines()
        elif self.fmt == "yaml":
            import yaml

            self.out.write(yaml.safe_dump([to_plain(item)], sort_keys=False, allow_unicode=True))
        elif self.line is not None:   # the table view of an event stream: a line each
            self.out.write(visible(self.line(visible_data(item))) + "\n")
        else:   # names made visible before a cell is cut (render/visible.py)
            self._rows.append(self.row(visible_data(item)))
            if len(self._rows) >= 1000:   # a long listing shows up as it goes
                self._flush_table()
        self.count += 1

    def write_lines(self, lines: list[str], count: int | None = None) -> None:
        """JSON lines already made (ndjson / json; a string may hold several lines,
        `count` items in all): written as they are."""
        self._lines.extend(lines)
        self.count += len(lines) if count is None else count
        if len(self._lines) >= 2000 or len(lines) > 1:
            self._flush_lines()

    def _flush_lines(self) -> None:
        if not self._lines:
            return
        if self.fmt == "ndjson":
            self.out.write("\n".join(self._lines) + "\n")
        else:   # json: one array, an item a line (a string of several lines: a file's)
            self.out.write((",\n" if self._started else "[\n") + ",\n".join(
                line.replace("\n", ",\n") for line in self._lines))
            self._started = True
        self._lines = []

    def close(self) -> None:
        self._flush_lines()
        if self.fmt == "json":
            self.out.write("[]\n" if self.count == 0 else "\n]\n")
        elif self.fmt == "yaml" and self.count == 0:
            self.out.write("[]\n")
        elif self.fmt not in ("ndjson", "json", "yaml"):
            self._flush_table()
        self.out.flush()

    def _flush_table(self) -> None:
        if not self._rows:
            return
        from rich.table import Table
        from rich.text import Text

        table = Table(box=None, pad_edge=False, header_style="bold")
        for c in self.columns:
            table.add_column(c, overflow="fold")
        for r in self._rows:   # plain text: a value's [a,b] is not rich markup
            table.add_row(*(Text(cell) for cell in r))
        self._rows = []
        console = self.env.console()
        if console.is_terminal:
            console.print(table)
        else:
            console.width = 10_000   # into a pipe: one line per row
            console.print(table, soft_wrap=True)


RECORD_COLUMNS = ["PARTITION", "OFFSET", "TIME", "TYPE", "RECORD", "KEY", "V", "VALUE"]


def record_columns(with_file: bool) -> list[str]:
    """The table's columns: FILE too when several files are decoded."""
    return ["FILE", *RECORD_COLUMNS] if with_file else RECORD_COLUMNS


def record_row(item: dict, with_file: bool = False) -> list[str]:
    where = [item.get("file") or "-"] if with_file else []
    where.append(_s(item.get("partition")))
    if "damaged_batch" in item:
        d = item["damaged_batch"]
        return [*where, _s(d.get("offset")), "-", "-", "DAMAGED BATCH", "-", "-",
                f"byte {d.get('position')}: {d['error']}"]
    key = item.get("key") or {}
    value = item.get("value")
    shown = ("<tombstone>" if item.get("value") is None and item.get("error") is None
             else summary(value, item.get("type")) if value is not None
             else f"(raw) {item.get('error')}")
    return [*where, str(item["offset"]), item.get("timestamp") or "-", _s(item.get("type")),
            item.get("record") or "?", " ".join(_s(v) for v in key.values()),
            _s(item.get("version")), shown]


# A member's reconciliation state in the modern groups' CurrentMemberAssignment records
# (Kafka's coordinator.group.modern.MemberState; streams groups: streams.MemberState)
_MEMBER_STATES = {0: "STABLE", 1: "UNREVOKED_PARTITIONS", 2: "UNRELEASED_PARTITIONS",
                  127: "UNKNOWN"}
_STREAMS_MEMBER_STATES = {1: "STABLE", 2: "UNREVOKED_TASKS", 3: "UNRELEASED_TASKS",
                          127: "UNKNOWN"}
_STATE_NAMES = {8: _MEMBER_STATES, 14: _MEMBER_STATES, 22: _STREAMS_MEMBER_STATES}


def summary(value: dict, record_type: int | None = None, limit: int = 200) -> str:
    """A value's fields as k=v, one table cell: null as `-`, a list of plain values as
    [a,b], a list of topic partitions as [topic:0,1 ...], any other list by its number of
    entries, a member's state by its name. Past `limit` characters the cell ends at a
    field with `…`."""
    states = _STATE_NAMES.get(record_type or -1, {})
    parts = []
    for k, v in value.items():
        if k.startswith("_"):
            continue
        if k == "state" and isinstance(v, int) and v in states:
            parts.append(f"{k}={states[v]}")
        else:
            parts.append(f"{k}={_cell(v)}")
    text, shown = "", 0
    for part in parts:
        if text and len(text) + 1 + len(part) > limit:
            return f"{text} … ({len(parts) - shown} more)"
        text = f"{text} {part}" if text else part
        shown += 1
    return text


def _cell(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, dict):
        return "{" + " ".join(f"{k}={_cell(x)}" for k, x in v.items()) + "}"
    if not isinstance(v, list):
        return str(v)
    if all(not isinstance(x, (dict, list)) for x in v):
        return "[" + ",".join(_s(x) for x in v) + "]"
    if all(isinstance(x, dict) and "partitions" in x for x in v):   # topic partitions
        return "[" + " ".join(
            f"{x.get('topic', x.get('topic_name', x.get('topic_id')))}:"
            + ",".join(str(p) for p in x["partitions"]) for x in v) + "]"
    return f"<{len(v)} {'entry' if len(v) == 1 else 'entries'}>"


def _s(v) -> str:
    return "-" if v is None else str(v)


def history_line(event: dict) -> str:
    """One human line per history event (render.watch's, with the records' gaps said)."""
    from .watch import plain_line

    if event["event"] == "rebalance" and event.get("duration_ms") is None:
        event = dict(event, duration_ms="?")
        text = plain_line(event).replace("in ? ms", "(start not in the records)")
    else:
        text = plain_line(event)
    return f"{text}  [{event['group']}]"


def history_summary(reads) -> list[str]:
    out = []
    for r in reads:
        d = r.to_dict()
        if d["complete_from_offset"] is None:   # no batch read: an empty window
            out.append(f"__consumer_offsets-{d['partition']} (leader {d['leader']}): nothing "
                       f"in the window (it ends at offset {d['end_offset']}, the partition "
                       f"begins at {d['first_offset']})")
            continue
        out.append(
            f"__consumer_offsets-{d['partition']} (leader {d['leader']}): offsets "
            f"{d['first_offset']}-{d['end_offset']}, {d['group_records']} group records of "
            f"{', '.join(d['groups'])}; complete from offset {d['complete_from_offset']}"
            + (f" ({d['complete_from']})" if d["complete_from"] else "")
            + ("" if d["complete_from_offset"] == d["first_offset"]
               else ": before it compaction kept only each key's latest record")
            + (f"; {d['damaged_batches']} damaged batches skipped" if d["damaged_batches"] else ""))
    return out


def segment_items(path: str, group: str | None):
    """(item, warning) per record or damaged batch of one segment file: the objects
    `decode records` prints (warning: the line for stderr, for a damaged batch)."""
    from ..observe.reads.records import coordinator_records, partition_of_path, segment_batches
    from ..protocol.records.batch import BatchError

    partition = partition_of_path(path)
    for item in coordinator_records(segment_batches(path), group=group):
        if isinstance(item, BatchError):
            yield {"file": path, "partition": partition, "damaged_batch": {
                "offset": item.offset, "position": item.position, "error": item.reason}}, \
                f"{path}: {item}"
            continue
        yield record_item(path, partition, item), None


def record_item(path: str, partition: int | None, item) -> dict:
    """The object `decode records` prints for one CoordinatorRecord."""
    out = {"file": path, "partition": partition, "offset": item.offset,
           "timestamp": iso_ms(item.timestamp), "timestamp_ms": item.timestamp,
           "type": item.type, "record": item.name, "key": item.key,
           "version": item.version, "value": item.value}
    if item.error is not None:   # as CoordinatorRecord.to_dict: raw bytes when kept
        if item.raw_key is not None:
            out["raw_key"] = item.raw_key
        if item.raw_value is not None:
            out["raw_value"] = item.raw_value
        out["error"] = item.error
    if item.early_access is not None:   # the release whose early layout it is
        out["early_access"] = item.early_access
    return out
