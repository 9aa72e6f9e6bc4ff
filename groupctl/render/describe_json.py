"""`describe -o json`: GroupDescriptions written straight to indented JSON text.

Byte for byte what output.write_json_items([g.to_dict() for g in groups]) writes (and so
json.dumps(to_plain(...), indent=2)), one group at a time, without the dict of every
offset row: at fleet scale the rows are almost all of the output (ten per group, 200,000
at 20,000 groups), and building a dict per row and then checking it again cost more than
writing it. A row whose values are not of the exact types describe builds (never, from
observe/describe.py) goes the general way through its to_dict().
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..observe.model import GroupDescription, OffsetRow
from .output import _SCALARS, _STR, _indented, write_json_items

_prefixes: dict[str, dict[str, str]] = {}  # indent -> {key: ",<indent>\"key\": "}
_standard: dict[str, tuple[str, ...]] = {}  # indent -> to_dict()'s own keys' prefixes
_NO_TOPIC = object()  # before the first row (a row's topic may be anything, None too)


def write_groups(stream, groups: Iterable[GroupDescription]) -> None:
    """The groups as one JSON array (indent 2), one group at a time."""
    write_json_items(stream, groups, indented=indented_group)


def indented_group(desc: GroupDescription, out: list[str], nl: str) -> None:
    """Append what output._indented(desc.to_dict(), out, nl) appends."""
    rows = desc.offsets
    inner = nl + "  "
    rows_text, lags = "[]", None
    if rows:
        fast = _exact_rows(rows, inner)
        if fast is None:  # a row of other types: json's own spelling, the general way
            out_rows: list[str] = []
            _indented([row.to_dict() for row in rows], out_rows, inner)
            rows_text = "".join(out_rows)
        else:
            rows_text = fast[0]
            if desc.share_offsets is None:  # the lags summed as the rows were written:
                lags = list(fast[1:])       # to_dict need not sum them again
    elif desc.share_offsets is None:
        lags = [{}, None]
    data = desc.to_dict(row_dicts=False, lags=lags)
    if not data:
        out.append("{}")
        return
    standard = _standard_prefixes(inner)
    pairs: Iterable[tuple[str, Any]]
    if len(data) == len(standard):  # to_dict's own keys, in its order (no extra key)
        pairs = zip(standard, data.values())
    else:
        pairs = ((_prefix(key, inner), item) for key, item in data.items())
    first = True
    for prefix, item in pairs:
        if first:  # the first key: "{" where the others have ","
            prefix, first = "{" + prefix[1:], False
        if item is None:
            out.append(prefix + "null")
            continue
        scalar = _SCALARS.get(type(item))
        if scalar is not None:
            out.append(prefix + scalar(item))
        elif item is rows:
            out.append(prefix + rows_text)
        else:
            out.append(prefix)
            _indented(item, out, inner)
    out.append(nl + "}")


def _prefix(key, inner: str) -> str:
    """',<inner>"key": ' (str(key) for a key json cannot take, as _indented_dict)."""
    prefixes = _prefixes.setdefault(inner, {})
    prefix = prefixes.get(key) if type(key) is str else None
    if prefix is None:
        prefix = f",{inner}{_STR(key if type(key) is str else str(key))}: "
        if type(key) is str and len(prefixes) < 256:
            prefixes[key] = prefix
    return prefix


def _standard_prefixes(inner: str) -> tuple[str, ...]:
    """The prefixes of the keys every GroupDescription.to_dict() has, in its order (asked
    of the model itself, so they follow it)."""
    standard = _standard.get(inner)
    if standard is None:
        keys = GroupDescription(group="").to_dict(row_dicts=False)
        standard = _standard[inner] = tuple(_prefix(key, inner) for key in keys)
    return standard


def _exact_rows(rows: list, nl: str) -> tuple[str, dict, int | None] | None:
    """The rows through one f-string each, with their lags summed on the way as
    GroupDescription._lags sums them ({topic: lag}, total); or None when any row is not an
    OffsetRow of str, int and None values (then json's own spelling may differ: the
    general way)."""
    inner, inner2 = nl + "  ", nl + "    "
    after_topic = f",{inner2}\"partition\": "
    after_partition = f",{inner2}\"committed\": "
    after_committed = f",{inner2}\"log_end\": "
    after_log_end = f",{inner2}\"lag\": "
    after_lag = f",{inner2}\"member_id\": "
    end = inner + "}"
    text: list[str] = []
    topic_of: object = _NO_TOPIC
    head = ""
    totals: dict = {}
    total = None
    for row in rows:
        if type(row) is not OffsetRow:
            return None
        topic, partition, committed, log_end, member = (
            row.topic, row.partition, row.committed, row.log_end, row.member_id)
        if topic is not topic_of:
            if type(topic) is not str:
                return None
            topic_of, head = topic, f"{{{inner2}\"topic\": {_STR(topic)}{after_topic}"
        if type(partition) is not int:
            return None
        if type(committed) is int and type(log_end) is int:
            lag = log_end - committed
            if lag < 0:
                lag = 0
            middle = f"{committed}{after_committed}{log_end}{after_log_end}{lag}"
            totals[topic] = (totals.get(topic) or 0) + lag
            total = lag if total is None else total + lag
        else:
            if committed is None and log_end is None:
                middle = f"null{after_committed}null{after_log_end}null"
            elif committed is None and type(log_end) is int:
                middle = f"null{after_committed}{log_end}{after_log_end}null"
            elif type(committed) is int and log_end is None:
                middle = f"{committed}{after_committed}null{after_log_end}null"
            else:
                return None
            totals.setdefault(topic, None)
        if member is None:
            member_text = "null"
        elif type(member) is str:
            member_text = _STR(member)
        else:
            return None
        text.append(f"{head}{partition}{after_partition}{middle}{after_lag}{member_text}{end}")
    return f"[{inner}{f',{inner}'.join(text)}{nl}]", totals, total
