"""The console of a table view written into a pipe or a file: the bytes rich's console
writes there (no colour, as wide as the content, no trailing spaces: cli/env.py), without
importing rich (~20 ms of a `describe | grep`).

It writes what it can write exactly: lines of str (made visible, as VisibleConsole does)
or cells.Styled, and cells.table() grids whose text is printable ASCII (or `…`), one
character one column, and whose rows fit in the console's width. Anything else (another
renderable, a wide character, a row rich would fold, print's other options) goes to the
rich console `fallback()` makes, created on first need, on the same stream: the output is
rich's either way (tests/unit/test_plain_console.py compares the two).
"""
from __future__ import annotations

import re
from typing import Any, Callable

from .cells import Grid, Styled
from .visible import visible

# one character, one column (rich's cell_len), nothing rich would change
_SIMPLE = re.compile(r"[ -~…]*\Z")
_PRINT_OPTIONS = frozenset({"markup", "highlight"})   # turned off: as groupctl's consoles are


class PlainConsole:
    """print() as rich's Console off a terminal (soft wrap, no markup, no highlighting)."""

    def __init__(self, stream, fallback: Callable[[], Any]):
        self._stream = stream
        self._fallback = fallback
        self._rich: Any = None
        self._width: int | None = None   # rich's own until set (from COLUMNS, a terminal)
        self.is_terminal = False

    @property
    def width(self) -> int:
        return self.rich().width if self._width is None else self._width

    @width.setter
    def width(self, value: int) -> None:
        self._width = value
        if self._rich is not None:
            self._rich.width = value

    def rich(self) -> Any:
        """The rich console for what this one does not write itself."""
        if self._rich is None:
            self._rich = self._fallback()
            if self._width is not None:
                self._rich.width = self._width
        return self._rich

    def print(self, *objects: Any, **options: Any) -> None:
        plain = options.keys() <= _PRINT_OPTIONS and not any(options.values())
        text = self._text(objects) if plain else None
        if text is None:
            self.rich().print(*objects, **options)
            return
        self._stream.write(text)

    def __getattr__(self, name: str) -> Any:   # the rest of rich's Console
        return getattr(self.rich(), name)

    def _text(self, objects: tuple[Any, ...]) -> str | None:
        """What rich would write for `objects`, or None where this console cannot say."""
        if not objects:
            return "\n"
        if len(objects) != 1:
            return None
        (obj,) = objects
        if type(obj) is str:
            line = visible(obj)
        elif type(obj) is Styled:
            line = obj.plain
        elif type(obj) is Grid:
            return None if self._width is None else _grid_text(obj, self._width)
        else:
            return None
        if "\n" in line or not _SIMPLE.match(line):
            return None
        return line.rstrip(" ") + "\n"


def _cell(cell: Any) -> str | None:
    if type(cell) is str:
        text = visible(cell)
    elif type(cell) is Styled:
        text = cell.plain
    else:
        return None
    return text if _SIMPLE.match(text) else None


def _grid_text(grid: Grid, width: int) -> str | None:
    """rich's Table(box=None, pad_edge=False) off a terminal: each column as wide as its
    widest cell, two spaces between columns, trailing spaces cut."""
    rows = [[col for col, _ in grid.columns]]
    for row in grid.rows:
        if len(row) != len(grid.columns):
            return None
        cells = [_cell(c) for c in row]
        if None in cells:
            return None
        rows.append(cells)   # type: ignore[arg-type]
    if any(_cell(h) is None for h in rows[0]):
        return None
    widths = [max(len(r[i]) for r in rows) for i in range(len(grid.columns))]
    if sum(widths) + 2 * (len(widths) - 1) > width:   # rich would fold cells: its way
        return None
    right = [r for _, r in grid.columns]
    lines = []
    for r in rows:
        line = "  ".join(c.rjust(w) if rj else c.ljust(w) for c, w, rj in zip(r, widths, right))
        lines.append(line.rstrip(" ") + "\n")
    return "".join(lines)
