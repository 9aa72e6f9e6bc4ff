"""Writers for the machine formats (json, yaml, ndjson) and the dispatch to a table view.

Every command builds plain data (dicts, lists, str/int/None) first; tables are one view of
that data, json/yaml print all of it. Bytes are shown as lowercase hex.
"""
from __future__ import annotations

import json
import sys
from enum import Enum
from typing import Any, Callable

from .visible import visible_data


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
    if indent != 2:
        return json.dumps(to_plain(data), indent=indent, ensure_ascii=False)
    out: list[str] = []
    _indented(data, out, "\n")
    return "".join(out)


# ---- fast writers, byte for byte json.dumps(to_plain(data), ...) ----------------------
#
# `describe --all` over thousands of groups spent most of its time in to_plain (a copy of
# everything) and json's pure-Python indenting encoder (the C one only writes compact
# JSON). The indented form (indent 2, the only one used) is written here, scalars straight
# from a table by exact type, anything else through to_plain first. The items of a compact
# list (write_json_items) go to the C encoder with a default= hook for what to_plain
# converts: the same text for data with str keys (every command's to_dict data); a key
# json cannot take (a tuple, an enum) goes the to_plain way.

def _plain_default(value: Any) -> Any:
    plain = to_plain(value)
    if plain is value:
        raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")
    return plain


_COMPACT = json.JSONEncoder(ensure_ascii=False, default=_plain_default).encode


def _compact(item: Any) -> str:
    try:
        return _COMPACT(item)
    except TypeError:   # a dict key of a type json refuses: to_plain names it
        return json.dumps(to_plain(item), ensure_ascii=False)
_STR = json.encoder.encode_basestring  # C, as json.dumps(ensure_ascii=False) uses


def _float(value: float) -> str:
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    return float.__repr__(value)


_SCALARS: dict[type, Callable[[Any], str]] = {
    str: _STR, int: int.__repr__, float: _float, bool: lambda b: "true" if b else "false",
    type(None): lambda _: "null"}
_SCALAR_TYPES = frozenset(_SCALARS)
_STR_TYPE = frozenset({str})
_C_ENCODER = getattr(json.encoder, "c_make_encoder", None)  # None without the C accelerator
_flat_encoders: dict[str, Callable[[Any, int], Any]] = {}


def _flat(value: dict | list, nl: str) -> str | None:
    """A dict (str keys) or list holding scalars only, written by the C encoder: its item
    separator carries the next depth's newline and indent, which is all indent=2 adds to
    a container without containers inside. None for any other container."""
    if _C_ENCODER is None or not _SCALAR_TYPES.issuperset(
            map(type, value.values() if type(value) is dict else value)):
        return None
    if type(value) is dict and not _STR_TYPE.issuperset(map(type, value)):
        return None   # non-str keys: to_plain's str(key), not json's own spelling
    inner = nl + "  "
    encode = _flat_encoders.get(inner)
    if encode is None:
        encode = _flat_encoders[inner] = _C_ENCODER(
            None, None, _STR, None, ": ", "," + inner, False, False, True)
    text = "".join(encode(value, 0))
    return f"{text[0]}{inner}{text[1:-1]}{nl}{text[-1]}"


_DICT_TYPE = frozenset({dict})
_ROWS_ENCODER = None if _C_ENCODER is None else _C_ENCODER(
    None, None, _STR, None, ": ", ",\n", False, False, True)


def _flat_rows(value: list, nl: str) -> str | None:
    """A list of non-empty flat dicts (describe's offset rows), in one C encoder call with
    ",\n" between items at both depths: encoded strings never hold a raw newline or NUL,
    and inside a flat dict no item ends with "}", so "},\n{" is exactly where one dict
    ends and the next begins; the other ",\n" are the dicts' own separators."""
    if (_ROWS_ENCODER is None or not _DICT_TYPE.issuperset(map(type, value))
            or not all(value)):
        return None
    for row in value:
        if not (_SCALAR_TYPES.issuperset(map(type, row.values()))
                and _STR_TYPE.issuperset(map(type, row))):
            return None
    inner, inner2 = nl + "  ", nl + "    "
    body = ("".join(_ROWS_ENCODER(value, 0))[2:-2].replace("},\n{", "\0")
            .replace(",\n", "," + inner2).replace("\0", f"{inner}}},{inner}{{{inner2}"))
    return f"[{inner}{{{inner2}{body}{inner}}}{nl}]"


# describe's offset rows (observe/model.py OffsetRow.to_dict), the bulk of a describe --all:
# one %-template per depth, each value's exact type checked (anything else: the general way)
_OFFSET_ROW = ("topic", "partition", "committed", "log_end", "lag", "member_id")
_offset_row_templates: dict[str, str] = {}


def _offset_rows(value: list, nl: str) -> str | None:
    inner, inner2 = nl + "  ", nl + "    "
    template = _offset_row_templates.get(nl)
    if template is None:
        template = _offset_row_templates[nl] = (
            "{" + ",".join(f"{inner2}{_STR(k)}: %s" for k in _OFFSET_ROW) + inner + "}")
    rows = []
    for row in value:
        if type(row) is not dict or tuple(row) != _OFFSET_ROW:
            return None
        topic, partition, committed, log_end, lag, member = row.values()
        if (type(topic) is not str or type(partition) is not int
                or (committed is not None and type(committed) is not int)
                or (log_end is not None and type(log_end) is not int)
                or (lag is not None and type(lag) is not int)
                or (member is not None and type(member) is not str)):
            return None
        rows.append(template % (
            _STR(topic), partition, "null" if committed is None else committed,
            "null" if log_end is None else log_end, "null" if lag is None else lag,
            "null" if member is None else _STR(member)))
    return f"[{inner}{f',{inner}'.join(rows)}{nl}]"


def _indented(value: Any, out: list[str], nl: str) -> None:
    """Append value's JSON (indent 2, at the depth whose newline+indent is `nl`) to out."""
    scalar = _SCALARS.get(type(value))
    if scalar is not None:
        out.append(scalar(value))
    elif type(value) is dict:
        _indented_dict(value, out, nl)
    elif type(value) is list:
        _indented_list(value, out, nl)
    else:
        plain = to_plain(value)
        if isinstance(plain, str):       # a str subclass, as json writes it
            out.append(_STR(plain))
        elif isinstance(plain, (int, float)) and plain is value:
            out.append(json.dumps(plain))
        elif plain is value:
            raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")
        else:
            _indented(plain, out, nl)


def _indented_dict(value: dict, out: list[str], nl: str) -> None:
    if not value:
        out.append("{}")
        return
    flat = _flat(value, nl)
    if flat is not None:
        out.append(flat)
        return
    inner = nl + "  "
    sep = "{" + inner
    for key, item in value.items():
        name = _STR(key if type(key) is str else str(key))
        scalar = _SCALARS.get(type(item))
        if scalar is not None:
            out.append(f"{sep}{name}: {scalar(item)}")
        else:
            out.append(f"{sep}{name}: ")
            _indented(item, out, inner)
        sep = "," + inner
    out.append(nl + "}")


def _indented_list(value: list, out: list[str], nl: str) -> None:
    if not value:
        out.append("[]")
        return
    flat = _offset_rows(value, nl) or _flat(value, nl) or _flat_rows(value, nl)
    if flat is not None:
        out.append(flat)
        return
    inner = nl + "  "
    sep = "[" + inner
    for item in value:
        scalar = _SCALARS.get(type(item))
        if scalar is not None:
            out.append(sep + scalar(item))
        else:
            out.append(sep)
            _indented(item, out, inner)
        sep = "," + inner
    out.append(nl + "]")


def write_json_items(stream, items, indent: int | None = 2,
                     indented: Callable[[Any, list[str], str], None] | None = None) -> None:
    """Write an iterable as one JSON array (as dumps_json(list(items)) would), or as ndjson
    lines (indent None), one item at a time: nothing but the current item is held.
    `indented(item, out, nl)`: a writer of one item's indented text (as _indented) for
    items that are not plain data (describe's groups: render/describe_json.py)."""
    if indent is None:
        for item in items:
            stream.write(_compact(item) + "\n")
        return
    write = indented or _indented
    sep = "[\n  "
    for item in items:
        out = [sep]
        write(item, out, "\n  ")
        stream.write("".join(out))
        sep = ",\n  "
    stream.write("[]\n" if sep == "[\n  " else "\n]\n")


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
        table(env.console(), visible_data(data), fmt == "wide")
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
