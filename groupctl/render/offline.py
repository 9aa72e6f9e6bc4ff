"""Table views of the offline commands: `decode ...` and `errors` (json/yaml print the
same data, whole). Each view takes the plain dict/list the command built."""
from __future__ import annotations

from rich.table import Table
from rich.text import Text

from .notation import partitions_text as _partitions
from .notation import show as _show


def _print(console, renderable) -> None:
    """On a terminal, fit the terminal; into a pipe or file, use the natural width so each
    row stays on one line (grep-able) instead of wrapping at rich's default 80 columns."""
    if console.is_terminal:
        console.print(renderable)
        return
    natural = console.measure(renderable, options=console.options.update_width(10_000)).maximum
    console.width = max(console.width, natural)  # print(width=) cannot exceed console.width
    with console.capture() as captured:
        console.print(renderable)
    console.file.write("".join(line.rstrip() + "\n" for line in captured.get().splitlines()))


def _fields(console, title: str, rows: list[tuple[str, object]]) -> None:
    console.print(Text(title, style="bold"))
    table = Table(box=None, show_header=False, pad_edge=False)
    table.add_column(style="bold")
    table.add_column(overflow="fold")
    for key, value in rows:
        table.add_row(key, value if isinstance(value, Text) else _show(value))
    _print(console, table)


def _user_data_rows(user_data) -> list[tuple[str, object]]:
    if isinstance(user_data, dict):
        rows: list[tuple[str, object]] = [("user data", "decoded:")]
        rows += [(f"  {k.replace('_', ' ')}",
                  _partitions(v) if k == "previous_assignment" else v)
                 for k, v in user_data.items()]
        return rows
    return [("user data", user_data)]


def _trailing_rows(data: dict) -> list[tuple[str, object]]:
    if not data.get("trailing"):
        return []
    n = len(data["trailing"]) // 2
    return [("trailing", Text(f"{data['trailing']} ({_bytes(n)})", style="yellow"))]


def _bytes(n: int) -> str:
    return "1 byte" if n == 1 else f"{n} bytes"


def subscription_view(console, data: dict, wide: bool) -> None:
    topics = data["topics"]
    _fields(console, f"Subscription v{data['version']}", [
        ("topics", ", ".join(topics) if topics else "(none)"),
        ("owned partitions", _partitions(data["owned_partitions"])),
        ("generation", data["generation"]),
        ("rack", data["rack"]),
        *_user_data_rows(data["user_data"]),
        *_trailing_rows(data),
    ])


def assignment_view(console, data: dict, wide: bool) -> None:
    parts = data["assigned_partitions"]
    count = sum(len(tp["partitions"]) for tp in parts)
    _fields(console, f"Assignment v{data['version']}", [
        ("assigned", _partitions(parts)),
        ("partitions", count),
        *_user_data_rows(data["user_data"]),
        *_trailing_rows(data),
    ])


def user_data_view(console, data: dict, wide: bool) -> None:
    title = f"{data['assignor']} user data"
    if "version" in data:
        title += f" v{data['version']}"
    rows = []
    if "previous_assignment" in data:
        rows.append(("previous assignment", _partitions(data["previous_assignment"])))
    rows.append(("generation", data["generation"]))
    _fields(console, title, rows + _trailing_rows(data))


def errors_table(console, errors: list[dict], wide: bool) -> None:
    table = Table(box=None, header_style="bold", pad_edge=False)
    table.add_column("CODE", justify="right", no_wrap=True)
    table.add_column("NAME", no_wrap=True)
    table.add_column("RETRIABLE", no_wrap=True)
    table.add_column("MEANING", overflow="fold")
    table.add_column("GROUPCTL", overflow="fold")
    for e in errors:
        table.add_row(str(e["code"]), Text(e["name"], style="cyan"),
                      Text("yes", style="green") if e["retriable"] else "no",
                      e["meaning"], _show(e["action"]))
    _print(console, table)
