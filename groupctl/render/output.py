"""Writers for the machine formats (json, yaml, ndjson) and the dispatch to a table view.

Every command builds plain data (dicts, lists, str/int/None) first; tables are one view of
that data, json/yaml print all of it. Bytes are shown as lowercase hex.
"""
from __future__ import annotations

import sys
from enum import Enum
from typing import Any, Callable


def to_plain(value: Any) -> Any:
    """Data ready for json/yaml: bytes become hex, enums their values, tuples lists,
    dataclasses dicts."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).hex()
    if isinstance(value, Enum):   # e.g. a str-valued state: its value (yaml's safe dumper
        return value.value        # cannot write the enum itself)
    if isinstance(value, dict):
        return {str(k): to_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [to_plain(v) for v in value]
    if hasattr(value, "to_dict"):
        return to_plain(value.to_dict())
    return value


def dumps_json(data: Any, indent: int | None = 2) -> str:
    if indent == 2:
        return _indented(data)
    if indent is None:
        return _compact(data)
    import json

    return json.dumps(to_plain(data), indent=indent, ensure_ascii=False)


# ---- the writers ---------------------------------------------------------------------------
#
# Indented JSON (indent 2, -o json) through orjson, the compact form (ndjson lines) through
# json's C encoder (its ", " and ": " separators, which orjson does not write). Both give
# json.dumps(to_plain(data), ensure_ascii=False) byte for byte, with one deliberate
# difference in the indented form: a float that is not a number (NaN, Infinity, which
# json.dumps writes though JSON has no such token) is null, and a non-zero float below
# 1e-4 is spelled out (0.00005, 1e-7: json.dumps' 5e-05, 1e-07; the same number). What
# orjson cannot write exactly (an int past 64 bits, a dict key that is not a str, a lone
# surrogate) goes the to_plain + json.dumps way, so it is as before.

def _plain_default(value: Any) -> Any:
    plain = to_plain(value)
    if plain is value:
        raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")
    return plain


_COMPACT: list[Callable[[Any], str]] = []


def _compact(item: Any) -> str:
    import json   # here: -o json (orjson) and the tables do not need it

    if not _COMPACT:
        _COMPACT.append(json.JSONEncoder(ensure_ascii=False, default=_plain_default).encode)
    try:
        return _COMPACT[0](item)
    except TypeError:   # a dict key of a type json refuses: to_plain names it
        return json.dumps(to_plain(item), ensure_ascii=False)


def _indented(item: Any) -> str:
    """item's JSON, indent 2."""
    dumps, options = _orjson()
    try:
        return dumps(item, default=_plain_default, option=options).decode()
    except TypeError:   # orjson.JSONEncodeError; json's own TypeError if it cannot be written
        import json

        return json.dumps(to_plain(item), indent=2, ensure_ascii=False)


_ORJSON: list = []


def _orjson() -> tuple[Callable[..., bytes], int]:
    """orjson.dumps and its options, imported on first use (only -o json needs it: a
    table-printing command does not pay for the import)."""
    if not _ORJSON:
        import orjson

        # dataclasses and datetimes through to_plain as json.dumps would (orjson's own
        # spelling of them is not groupctl's to_dict)
        _ORJSON[:] = [orjson.dumps, orjson.OPT_INDENT_2 | orjson.OPT_PASSTHROUGH_DATACLASS
                      | orjson.OPT_PASSTHROUGH_DATETIME]
    return _ORJSON[0], _ORJSON[1]


def write_json_items(stream, items, indent: int | None = 2) -> None:
    """Write an iterable as one JSON array (as dumps_json(list(items)) would), or as ndjson
    lines (indent None), one item at a time: nothing but the current item is held."""
    if indent is None:
        for item in items:
            stream.write(_compact(item) + "\n")
        return
    sep, chunk = "[\n", []
    for item in items:
        chunk.append(item)
        if len(chunk) == ITEMS_AT_ONCE:
            sep = _write_chunk(stream, chunk, sep)
            chunk = []
    if chunk:
        sep = _write_chunk(stream, chunk, sep)
    stream.write("[]\n" if sep == "[\n" else "\n]\n")


# Items written by one orjson call (describe --all at 2,000 groups: a third of the time
# of one call per item, whose text was then moved one level in), few enough that a fleet's
# items are not all held at once.
ITEMS_AT_ONCE = 256


def _write_chunk(stream, chunk: list, sep: str) -> str:
    """`chunk`'s items, one level in, after `sep`; returns the next separator."""
    dumps, options = _orjson()
    try:   # a list's items come out one level in: its text without "[\n" and "\n]"
        text = dumps(chunk, default=_plain_default, option=options).decode()[2:-2]
    except TypeError:   # an item orjson cannot write: each on its own, as _indented does
        text = ",\n".join("  " + _indented(item).replace("\n", "\n  ") for item in chunk)
    stream.write(sep + text)
    return ",\n"


def dumps_yaml(data: Any) -> str:
    import yaml

    return yaml.safe_dump(to_plain(data), sort_keys=False, allow_unicode=True)


def emit(env, data: Any, table: Callable[[Any, Any, bool], None] | None = None) -> None:
    """Print `data` in the format chosen by -o. `table(console, data, wide)` draws the
    table view; without one, table output falls back to yaml."""
    fmt = env.settings.output
    out = env.stdout
    if fmt == "json" and isinstance(data, list):
        write_json_items(out, data)
    elif fmt == "json":
        out.write(dumps_json(data) + "\n")
    elif fmt == "yaml":
        out.write(dumps_yaml(data))
    elif fmt == "ndjson":
        write_json_items(out, data if isinstance(data, list) else [data], indent=None)
    elif table is not None:   # names from the cluster shown, never obeyed (visible.py)
        from .visible import visible_data

        table(env.view_console(), visible_data(data), fmt == "wide")
    else:
        out.write(dumps_yaml(data))
    out.flush()


class NdjsonWriter:
    """Line-buffered ndjson for event streams (stdout or a --record file)."""

    def __init__(self, stream=None):
        self.stream = stream or sys.stdout

    def write(self, event: dict) -> None:
        self.stream.write(dumps_json(event, indent=None) + "\n")
        self.stream.flush()


class RecordFile:
    """A --record FILE: ndjson events appended whole lines at a time. A write that fails
    (a full disk, an I/O error) cuts the file back to its last whole line, so what was there
    before and every event told stays readable, and raises a UsageError naming the file
    (exit 2, as an unwritable --record path at the start) once; later events are dropped,
    so the command's way out (a probe's leave, which tells events too) is not stopped by the
    same error again. Unbuffered: nothing is left in a buffer for close() to fail on.
    A symlink, a FIFO or a device at FILE is refused (exit 2): a file made is 0600."""

    def __init__(self, path: str):
        from ..errors import UsageError

        from ..safe_files import open_append

        self.path = path
        try:   # a regular file only: no symlink followed, no FIFO to hang on
            self._file = open_append(path)
        except OSError as exc:
            raise UsageError(f"--record {path}: cannot write: {exc.strerror or exc}") from None
        self._whole = self._file.seek(0, 2)  # where the last whole line ends
        self.failed = False

    def write(self, event: dict) -> None:
        from ..errors import UsageError

        if self.failed:  # told once; the events of the way out (a probe's leave) go on
            return
        data = memoryview((dumps_json(event, indent=None) + "\n").encode("utf-8"))
        try:
            while data:
                data = data[self._file.write(data):]
        except OSError as exc:
            self.failed = True
            try:
                self._file.truncate(self._whole)
            except OSError:
                pass  # nothing more to do: the message says the file could not be written
            raise UsageError(f"--record {self.path}: cannot write: "
                             f"{exc.strerror or exc}") from None
        self._whole = self._file.tell()

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> RecordFile:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
