"""The fleet on a terminal: `watch --all` (and `--view top`) as one row per group, the way
`top` shows processes. Each row reads the one reducer's GroupStatus (observe/state/reducer.py):

    text = render_top(statuses, now, width=100, height=30)   # a rich Text, fits the box

    groupctl watch · 42 groups: 30 Stable, 7 Empty, 5 PreparingRebalance · 9 rebalances in 5m · 10:01:02 UTC
    GROUP          STATE               TYPE      MEMBERS  GEN/EPOCH  REBAL/5m  LAST REBAL  BEHIND
    payments       PreparingRebalance  classic         3          -         4      12s ago       -
    orders         Reconciling         consumer        2        7/7         1    1m05s ago       1
    ...
    … 27 more groups not shown (most recent activity first)

- Rows: most recent activity first (the last event told of the group, a first look aside;
  groups with none yet by name); as many as the terminal's height leaves, the footer
  says how many more there are. The title ticks (its clock, the ages) once a second.
- Columns: COLUMNS, each a title, a cell read from the GroupStatus and a rank to drop at
  (the highest goes first on a narrow terminal, rank 0 never). The group's name takes the
  room the others leave and is cut with `…`. A column is one more Column(...) entry.
- Numbers: a classic group's generation, a consumer / share / streams group's group epoch
  `/` assignment epoch; rebalances that ended in the last WINDOW_S; the last rebalance's
  age; members whose assignment is not yet their target (consumer and streams groups);
  with watch --lag, LAG: the group's total lag as last read. Every unknown is `-`.
- Names and states from the cluster are made visible (render/visible.py) as they are drawn:
  the statuses hold them as the cluster wrote them.
- COORD (a describe watch): the broker that last described the group, `3!` (red) when the
  last round got no description of it (its coordinator stopped answering, or its groups
  are moving); the title then says which coordinators and for how many groups.
"""
from __future__ import annotations

import heapq
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Callable, Iterable

from rich.cells import cell_len, set_cell_size
from rich.text import Text

from ..observe.state.reducer import REBALANCE_WINDOW_S, GroupStatus
from .notation import ELLIPSIS, show, shown
from .visible import cut_head

WINDOW_S = REBALANCE_WINDOW_S    # the REBAL column's sliding window
WINDOW = f"{WINDOW_S / 60:g}m" if WINDOW_S % 60 == 0 else f"{WINDOW_S:g}s"   # its name
GAP = 2                          # spaces between columns
GROUP_MIN = 12                   # a name narrower than this: drop a column instead
CHROME = 3                       # title, column titles, footer
REBALANCING = frozenset({"PreparingRebalance", "CompletingRebalance", "Assigning",
                         "Reconciling", "NotReady"})
EPOCH_TYPES = ("consumer", "share", "streams")
UNANSWERED = "!"                 # COORD: the last round got no description of the group

# group -> (the broker that last described it, whether the last round got nothing of it)
CoordinatorOf = Callable[[str], "tuple[int | None, bool]"]


@dataclass(frozen=True)
class Column:
    title: str
    cell: Callable[[GroupStatus, float], str]
    drop: int                  # narrow terminal: the highest rank goes first; 0 never
    left: bool = False         # text left-aligned; numbers right
    style: Callable[[GroupStatus, str], str] | None = None


def _age(seconds: float) -> str:
    s = max(0, int(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    if s < 86400:
        return f"{s // 3600}h{s % 3600 // 60:02d}m"
    return f"{s // 86400}d{s % 86400 // 3600:02d}h"


def _seconds(iso: str | None) -> float | None:
    if not iso:
        return None
    try:
        return datetime.strptime(iso, "%Y-%m-%dT%H:%M:%S.%fZ").replace(
            tzinfo=timezone.utc).timestamp()
    except ValueError:
        return None


def _numbers(s: GroupStatus, now: float) -> str:
    """A classic generation; the group / assignment epochs of the others."""
    if not s.exists:
        return "-"
    if s.epochs is not None or s.type in EPOCH_TYPES:
        return f"{show(s.group_epoch)}/{show(s.assignment_epoch)}"
    return show(s.generation)


def _last_rebalance(s: GroupStatus, now: float) -> str:
    r = s.last_rebalance or {}
    ended = _seconds(r.get("ended") or r.get("ts"))
    return "-" if ended is None else f"{_age(now - ended)} ago"


def _state_style(s: GroupStatus, text: str) -> str:
    return "bold yellow" if s.state in REBALANCING else ""


def _nonzero(style: str) -> Callable[[GroupStatus, str], str]:
    return lambda s, text: style if text not in ("0", "-") else ""


COLUMNS: tuple[Column, ...] = (
    Column("STATE", lambda s, now: shown(s.state), 0, left=True, style=_state_style),
    Column("TYPE", lambda s, now: shown(s.type), 6, left=True),
    Column("MEMBERS", lambda s, now: str(len(s.members)) if s.exists else "-", 3),
    Column("GEN/EPOCH", _numbers, 5),
    Column(f"REBAL/{WINDOW}",
           lambda s, now: str(s.rebalances_within(WINDOW_S, now)), 1, style=_nonzero("yellow")),
    Column("LAST REBAL", _last_rebalance, 2),
    Column("BEHIND", lambda s, now: show(s.members_behind_target), 4, style=_nonzero("yellow")),
)


# watch --lag: the group's total lag as last read (a failed read keeps the last one known)
LAG = Column("LAG", lambda s, now: show(s.lag) if s.exists else "-", 4)


def coordinator_column(coordinator_of: CoordinatorOf) -> Column:
    """COORD: the group's coordinator as the describe source last saw it (module doc)."""
    def cell(s: GroupStatus, now: float) -> str:
        node, unanswered = coordinator_of(str(s.group))
        return show(node) + (UNANSWERED if unanswered else "")

    return Column("COORD", cell, 3,
                  style=lambda s, text: "bold red" if text.endswith(UNANSWERED) else "")


def columns(lag: bool, coordinator_of: CoordinatorOf | None = None) -> tuple[Column, ...]:
    """The columns of this watch: LAG only with --lag (without it, lag is never read),
    COORD when the source knows the coordinators."""
    every = COLUMNS + (LAG,) if lag else COLUMNS
    if coordinator_of is not None:
        every = every[:1] + (coordinator_column(coordinator_of),) + every[1:]
    return every


def by_activity(statuses: Iterable[GroupStatus], limit: int | None = None) -> list[GroupStatus]:
    """Most recent activity first (a round's groups share its time: then by name); groups
    with none yet after them, by name. `limit`: only the first so many (a screenful
    without sorting the whole fleet)."""
    active: list[GroupStatus] = []
    calm: list[GroupStatus] = []
    for s in statuses:
        (calm if s.active_at is None else active).append(s)

    def newest(s: GroupStatus) -> tuple:
        return (-(s.active_at or 0.0), str(s.group))

    def name(s: GroupStatus) -> str:
        return str(s.group)

    if limit is None:
        return sorted(active, key=newest) + sorted(calm, key=name)
    first = heapq.nsmallest(limit, active, key=newest)
    return first + heapq.nsmallest(limit - len(first), calm, key=name)


def fit_columns(widths: dict[str, int], name_width: int, width: int,
                every: tuple[Column, ...] = COLUMNS) -> tuple[list[Column], int]:
    """The columns that fit `width` beside a group name of at least GROUP_MIN (dropping the
    highest ranks first), and the room left for the name (at most `name_width`)."""
    kept = list(every)
    while True:
        room = width - sum(widths[c.title] + GAP for c in kept)
        droppable = [c for c in kept if c.drop]
        if room >= min(GROUP_MIN, name_width) or not droppable:
            return kept, max(1, min(name_width, room))
        kept.remove(max(droppable, key=lambda c: c.drop))


def _cut(text: str, width: int) -> str:
    if cell_len(text) <= width:
        return text
    room = max(0, width - 1)   # never inside an escape (render/visible.py)
    kept = cut_head(text, len(set_cell_size(text, room).rstrip(" ")))
    return set_cell_size(kept, room) + ELLIPSIS


def _pad(text: str, width: int, left: bool) -> str:
    text = _cut(text, width)
    room = " " * (width - cell_len(text))
    return text + room if left else room + text


def unanswered_text(statuses: list[GroupStatus], coordinator_of: CoordinatorOf) -> str:
    """`no answer from coordinator 3 for 12 groups, ...` ('' when every group answered)."""
    silent = Counter(node for node, unanswered in
                     (coordinator_of(str(s.group)) for s in statuses) if unanswered)
    return ", ".join(
        f"no answer {'' if node is None else f'from coordinator {node} '}for {n} group"
        + ("" if n == 1 else "s")
        for node, n in sorted(silent.items(), key=lambda kv: (kv[0] is None, kv[0] or 0)))


def title_line(statuses: list[GroupStatus], now: float,
               coordinator_of: CoordinatorOf | None = None) -> str:
    """What the fleet is now: its groups by state, its rebalances in the window, the
    coordinators that did not answer for groups, the time."""
    states: Counter = Counter()
    for state, n in Counter(s.state for s in statuses).items():   # made visible once each
        states[shown(state)] += n
    counted = ", ".join(f"{n} {state}" for state, n in
                        sorted(states.items(), key=lambda kv: (-kv[1], kv[0])))
    window = sum(s.rebalances_within(WINDOW_S, now) for s in statuses if s.rebalance_ends)
    clock = datetime.fromtimestamp(now, tz=timezone.utc).strftime("%H:%M:%S UTC")
    groups = f"{len(statuses)} group" + ("" if len(statuses) == 1 else "s")
    silent = unanswered_text(statuses, coordinator_of) if coordinator_of else ""
    return (f"groupctl watch · {groups}" + (f": {counted}" if counted else "")
            + (f" · {silent}" if silent else "")
            + f" · {window} rebalance{'' if window == 1 else 's'} in {WINDOW} · {clock}")


def render_top(statuses: Iterable[GroupStatus], now: float, width: int, height: int,
               lag: bool = False, coordinator_of: CoordinatorOf | None = None) -> Text:
    """The fleet in at most `height` - 1 lines of at most `width` cells (the last line of
    the terminal stays free: a full screen would scroll); `lag`: watch --lag's column;
    `coordinator_of`: the COORD column's (a describe watch's)."""
    every = list(statuses)
    every_column = columns(lag, coordinator_of)
    rows = by_activity(every, limit=max(1, height - 1 - CHROME))
    hidden = len(every) - len(rows)
    cells = [{c.title: c.cell(s, now) for c in every_column} for s in rows]
    widths = {c.title: max([cell_len(c.title)] + [cell_len(r[c.title]) for r in cells])
              for c in every_column}
    names = [shown(s.group) for s in rows]
    longest = max([cell_len("GROUP")] + [cell_len(n) for n in names])
    kept, name_width = fit_columns(widths, longest, width, every_column)

    out = Text(no_wrap=True, overflow="crop")
    out.append(_cut(title_line(every, now, coordinator_of), width), style="bold")
    out.append("\n" + _pad("GROUP", name_width, True) + "".join(
        " " * GAP + _pad(c.title, widths[c.title], c.left) for c in kept), style="reverse")
    for s, name, row in zip(rows, names, cells):
        line = Text("\n" + _pad(name, name_width, True), style="dim" if not s.exists else "")
        for c in kept:
            text = row[c.title]
            line.append(" " * GAP + _pad(text, widths[c.title], c.left),
                        style=(c.style(s, text) if c.style else "") or None)
        out.append_text(line)
    footer = (f"… {hidden} more group{'' if hidden == 1 else 's'} not shown "
              "(most recent activity first)" if hidden else
              "most recent activity first · watch GROUP shows one group in full")
    out.append("\n" + _cut(footer, width), style="dim")
    return out
