"""What a terminal is given: names from the cluster shown, never obeyed.

Group ids, client ids, topic names inside consumer-protocol bytes and broker error messages
are written by whoever runs a consumer or a broker. Printed raw, an ESC starts a control
sequence (clear the screen, set the window title, write the clipboard: OSC 52, hide a link:
OSC 8), a newline forges a row, a bidi override or a zero-width character makes one name
look like another. Every human-readable writer (tables, the live view, plain event lines,
stderr) shows such characters as visible escapes, written as Python writes them: `\\x1b`,
`\\n`, `\\u202e`. This module is the one place that does it:

- `visible(text)`: one string;
- `visible_data(value)`: every string in plain data (dicts, lists), before a table or a
  view is drawn from it, so that widths are measured and cuts made on the escaped text;
- `VisibleConsole`: rich's Console that escapes every string it is given and reads no
  markup or emoji codes in it (a group named `[/x]` is a name, not a markup error);
- `cut_head` / `cut_tail`: cuts that never split an escape.

Escaped: Unicode's control (Cc: C0 with tab, newline and carriage return, DEL, C1), format
(Cf: bidi embeddings, overrides, isolates and marks, zero-width space / joiners, the BOM,
soft hyphen, tag characters), line and paragraph separators (Zl, Zp) and lone surrogates
(Cs: bytes a decoder could not read). The result holds none of them, so escaping twice is
escaping once. Structured outputs (json, yaml, ndjson) are exact and do not come here.
"""
from __future__ import annotations

import re
from typing import Any

_ESCAPED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(ch: str) -> str:
    named = _NAMED.get(ch)
    if named is not None:
        return named
    point = ord(ch)
    if point <= 0xFF:
        return f"\\x{point:02x}"
    if point <= 0xFFFF:
        return f"\\u{point:04x}"
    return f"\\U{point:08x}"


# Every point point of those categories (tests/unit/test_visible.py checks the class against
# the running Python's Unicode tables; Egyptian format controls up to U+1343F are Cf from
# Unicode 15 on).
_UNSAFE = re.compile(
    "[\x00-\x1f\x7f-\x9f\xad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e"
    "\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ud800-\udfff\ufeff"
    "\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f]")


_ASCII_UNSAFE = re.compile("[\x00-\x1f\x7f]")


def visible(text: str) -> str:
    """`text` with every character a terminal would obey or hide shown as an escape."""
    if text.isascii():   # known without a scan: only C0 and DEL to look for
        if _ASCII_UNSAFE.search(text) is None:
            return text
    elif _UNSAFE.search(text) is None:
        return text
    return _UNSAFE.sub(lambda m: _escape(m.group()), text)


def visible_data(value: Any) -> Any:
    """Plain data with every string (str keys too) made visible; other values as they
    are."""
    if type(value) is str:
        return visible(value)
    if isinstance(value, dict):
        return {visible(k) if type(k) is str else k: visible_data(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [visible_data(v) for v in value]
    return value


_AN_ESCAPE = re.compile(r"\\(?:x[0-9a-f]{2}|u[0-9a-f]{4}|U[0-9a-f]{8}|[nrt])")


def _inside_escape(text: str, index: int) -> tuple[int, int] | None:
    """The (start, end) of the escape that `index` falls strictly inside, if any."""
    for m in _AN_ESCAPE.finditer(text, max(0, index - 9), index + 9):
        if m.start() < index < m.end():
            return m.start(), m.end()
    return None


def cut_head(text: str, width: int) -> str:
    """The first at most `width` characters of `text`, ending before an escape it would
    split."""
    inside = _inside_escape(text, width)
    return text[:inside[0] if inside else width]


def cut_tail(text: str, width: int) -> str:
    """The last at most `width` characters of `text`, starting after an escape it would
    split."""
    start = max(0, len(text) - width)
    inside = _inside_escape(text, start)
    return text[inside[1] if inside else start:]


def _console_class():
    from rich.console import Console

    class VisibleConsole(Console):
        """rich's Console that escapes every string it renders (print's strings, table
        cells given as strings) and reads no markup or emoji codes in them."""

        def __init__(self, *args, **kwargs):
            kwargs.setdefault("markup", False)
            kwargs.setdefault("emoji", False)
            super().__init__(*args, **kwargs)

        def render_str(self, text: str, **kwargs):
            return super().render_str(visible(text), **kwargs)

    return VisibleConsole


_console: type | None = None


def console_class() -> type:
    """The VisibleConsole class (rich imported on first use)."""
    global _console
    if _console is None:
        _console = _console_class()
    return _console


def visible_console(**kwargs):
    """A VisibleConsole."""
    return console_class()(**kwargs)
