"""Cells shared by the describe tables (groups.py) and the type-specific views
(group_types.py): a bare table, styled text, short member ids (values and partitions are
written as notation.py says). Its own module so that groups.py can use group_types.py
without either importing the other.

`table()` and `Styled` are descriptions, not rich objects: a rich console draws them as
rich's Table and Text (`__rich__`), and the plain console of a pipe (plain.py) writes
the same bytes without importing rich (a `describe` into a pipe or a file pays no ~20 ms
for it).
"""
from __future__ import annotations

from typing import Any

from .visible import cut_head, cut_tail


class Styled:
    """rich's `Text(text, style=...)` or `Text.assemble(*parts)`, made when drawn."""

    __slots__ = ("parts", "style", "_text")

    def __init__(self, text: str = "", style: str = ""):
        self.parts: tuple[Any, ...] | None = None
        self.style = style
        self._text = text

    @classmethod
    def assemble(cls, *parts: str | tuple[str, str] | Styled) -> Styled:
        made = cls()
        made.parts = parts
        return made

    @property
    def plain(self) -> str:
        if self.parts is None:
            return self._text
        return "".join(p if isinstance(p, str) else p.plain if isinstance(p, Styled) else p[0]
                       for p in self.parts)

    def __rich__(self) -> Any:
        from rich.text import Text

        if self.parts is None:
            return Text(self._text, style=self.style)
        return Text.assemble(*(p.__rich__() if isinstance(p, Styled) else p
                               for p in self.parts))


class Grid:
    """rich's Table as groupctl draws it (no box, bold header, no padding at the edges,
    long cells folded), made when drawn: columns, then rows of str, Styled or any rich
    renderable."""

    __slots__ = ("columns", "rows")

    def __init__(self, columns: list[tuple[str, bool]]):
        self.columns = columns          # (header, right-justified)
        self.rows: list[tuple[Any, ...]] = []

    def add_row(self, *cells: Any) -> None:
        self.rows.append(cells)

    def __rich__(self) -> Any:
        from rich.table import Table

        table = Table(box=None, header_style="bold", pad_edge=False)
        for col, right in self.columns:
            table.add_column(col, justify="right" if right else "left", overflow="fold")
        for row in self.rows:
            table.add_row(*(c.__rich__() if isinstance(c, Styled) else c for c in row))
        return table


def table(*columns: str, right: tuple[str, ...] = ()) -> Grid:
    return Grid([(col, col in right) for col in columns])


def short_id(member_id: str) -> str:
    """At most 28 characters: the head and tail of a longer id around `…` (cut on the
    visible text, never inside an escape)."""
    if len(member_id) <= 28:
        return member_id
    return cut_head(member_id, 12) + "…" + cut_tail(member_id, 12)
