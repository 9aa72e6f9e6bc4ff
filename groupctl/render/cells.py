"""Cells shared by the describe tables (groups.py) and the type-specific views
(group_types.py): a value or "-", a bare table, partition ranges, short member ids. Its own
module so that groups.py can use group_types.py without either importing the other."""
from __future__ import annotations

from rich.table import Table


def show(value) -> str:
    return "-" if value is None or value == "" else str(value)


def table(*columns: str, right: tuple[str, ...] = ()) -> Table:
    table = Table(box=None, header_style="bold", pad_edge=False)
    for col in columns:
        table.add_column(col, justify="right" if col in right else "left",
                         overflow="fold")
    return table


def partitions_text(assignment: list[dict] | None) -> str:
    """`orders:0-2,5 payments:1` — compact ranges per topic; `-` unknown, `(none)` empty."""
    if assignment is None:
        return "-"
    return " ".join(f"{tp['topic']}:{ranges(tp['partitions'])}" for tp in assignment) or "(none)"


def ranges(parts: list[int]) -> str:
    """[0, 1, 2, 5] -> '0-2,5'."""
    out, start, prev = [], None, None
    for p in sorted(parts):
        if start is not None and p == prev + 1:
            prev = p
            continue
        if start is not None:
            out.append(f"{start}" if start == prev else f"{start}-{prev}")
        start = prev = p
    if start is not None:
        out.append(f"{start}" if start == prev else f"{start}-{prev}")
    return ",".join(out)


def short_id(member_id: str) -> str:
    return member_id if len(member_id) <= 28 else member_id[:12] + "…" + member_id[-12:]
