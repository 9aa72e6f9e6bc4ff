"""How every view writes the small things: unknown values, partitions, counted nouns, long
text cut to a column. One notation everywhere (describe, join, decode, the live view and
the plain lines of `watch` / `join --watch`), so `orders:0-1` means the same on each.
"""
from __future__ import annotations

from .visible import cut_head, visible

ELLIPSIS = "…"


def show(value) -> str:
    """A value as text; unknown (None or "") is `-`."""
    return "-" if value is None or value == "" else str(value)


def shown(value) -> str:
    """A name or state from the cluster as a view draws it: show(), made visible (the
    statuses and events hold names as the cluster wrote them)."""
    return visible(show(value))


def ranges(parts) -> str:
    """[0, 1, 2, 5] -> '0-2,5'."""
    out: list[str] = []
    start: int | None = None
    prev = 0  # read only once start is set
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


def partitions_text(assignment: list[dict] | None) -> str:
    """`orders:0-2,5 payments:1` — ranges per topic; `-` unknown, `(none)` empty (for the
    whole list, or one topic listed with no partitions)."""
    if assignment is None:
        return "-"
    return " ".join(f"{tp['topic']}:{ranges(tp['partitions']) or '(none)'}"
                    for tp in assignment) or "(none)"


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """`1 rebalance`, `2 rebalances`, `1 time`, `0 times`."""
    return f"{count} {noun if count == 1 else (nouns or noun + 's')}"


def clip(text: str | None, width: int) -> str:
    """`text` cut to at most `width` characters at a word boundary, with an ellipsis
    when anything was cut (a single word longer than the column is cut inside it)."""
    text = "" if text is None else str(text)
    if len(text) <= width:
        return text
    room = text[:width - len(ELLIPSIS) + 1]   # + 1: a space just after the cut is a boundary
    cut = room.rfind(" ")
    kept = room[:cut] if cut > 0 else cut_head(text, width - len(ELLIPSIS))
    return kept.rstrip(" ,;:") + ELLIPSIS
