"""Cells shared by the describe tables (groups.py) and the type-specific views
(group_types.py): a bare table, short member ids (values and partitions are written as
notation.py says). Its own module so that groups.py can use group_types.py without either
importing the other."""
from __future__ import annotations

from rich.table import Table

from .visible import cut_head, cut_tail


def table(*columns: str, right: tuple[str, ...] = ()) -> Table:
    table = Table(box=None, header_style="bold", pad_edge=False)
    for col in columns:
        table.add_column(col, justify="right" if col in right else "left",
                         overflow="fold")
    return table


def short_id(member_id: str) -> str:
    """At most 28 characters: the head and tail of a longer id around `…` (cut on the
    visible text, never inside an escape)."""
    if len(member_id) <= 28:
        return member_id
    return cut_head(member_id, 12) + "…" + cut_tail(member_id, 12)
