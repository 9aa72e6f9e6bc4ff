"""Writers for the machine formats (json, yaml, ndjson) and the dispatch to a table view.

Every command builds plain data (dicts, lists, str/int/None) first; tables are one view of
that data, json/yaml print all of it. Bytes are shown as lowercase hex.
"""
from __future__ import annotations

import json
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
    return json.dumps(to_plain(data), indent=indent, ensure_ascii=False)


def dumps_yaml(data: Any) -> str:
    import yaml

    return yaml.safe_dump(to_plain(data), sort_keys=False, allow_unicode=True)


def emit(env, data: Any, table: Callable[[Any, Any, bool], None] | None = None) -> None:
    """Print `data` in the format chosen by -o. `table(console, data, wide)` draws the
    table view; without one, table output falls back to yaml."""
    fmt = env.settings.output
    out = env.stdout
    if fmt == "json":
        out.write(dumps_json(data) + "\n")
    elif fmt == "yaml":
        out.write(dumps_yaml(data))
    elif fmt == "ndjson":
        for item in data if isinstance(data, list) else [data]:
            out.write(dumps_json(item, indent=None) + "\n")
    elif table is not None:
        table(env.console(), data, fmt == "wide")
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
