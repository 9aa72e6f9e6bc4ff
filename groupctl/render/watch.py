"""The live view of an event stream (docs/reference/events.md) for `join --watch` and `watch` on
a terminal (one renderer for both: the probe's view is the passive one plus its own
member). render.live routes the events here; render.watch_lines writes the plain lines.

One WatchModel per group -> render_model: a header (state, generation or group /
assignment epochs, members, protocol or server assignor, time since the last rebalance;
every unknown a `-`, an unknown classic generation explained), the members with their
assignments and what each gained / lost in the last rebalance (for KIP-848 groups also
each member's target and its reconciliation time, or "reconciling" while its current
assignment is short of its target), the probe's heartbeat errors as they happen (join
--watch; a routine REBALANCE_IN_PROGRESS is how a classic member learns of a rebalance,
not an error), and a timeline of rebalances (time, from -> to, duration, members, moved
partitions, reason cut at a word boundary). The probe's view is the passive one: the
other members' `assignment` events fill the members table; its own fill its own pane.
Partitions are written as describe writes them (render.notation: `orders:0-1`).

The group's state is its one fold in the process (`_LiveSink.read_from`: `watch`'s Watcher
reducer, `join --watch`'s probe view); the view keeps only the probe's own diffs and the
errors it met. With no story in the process (docs/tools/pictures.py) it folds the events.
Names from the cluster are made visible (render/visible.py) as drawn, not when folded.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Mapping

from ..observe.state.reducer import GroupStatus
from ..protocol.errors import ErrorCode
from .notation import clip, partitions_text, show, shown
from .visible import visible
from .watch_lines import UNKNOWN_GENERATION, _tasks, plain_line, summary_line  # noqa: F401

# answers a member meets in every rebalance: steps of the protocol, not errors to show
ROUTINE_ERRORS = (ErrorCode.REBALANCE_IN_PROGRESS.name, ErrorCode.MEMBER_ID_REQUIRED.name)


def _tps(assignment: list[dict] | None) -> str:
    """describe's notation (orders:0-1), its topic names made visible."""
    return visible(partitions_text(assignment))


REASON_WIDTH = 120       # the timeline's reason column, cut at a word boundary


@dataclass
class WatchModel:
    """What the live view shows: the group's state, a GroupStatus (observe/state/reducer.py)
    folded by its one owner in the process (the module doc), plus what only the view keeps:
    the probe's own assignment diffs and the errors it met (`note`). `apply`: the view's
    own fold, where no story in the process holds the group."""

    status: GroupStatus = field(default_factory=lambda: GroupStatus(None))
    diffs: deque = field(default_factory=lambda: deque(maxlen=6))
    errors: deque = field(default_factory=lambda: deque(maxlen=6))

    group = property(lambda self: self.status.group)
    generation = property(lambda self: self.status.generation)
    protocol = property(lambda self: self.status.protocol)
    leader = property(lambda self: self.status.leader)
    member_id = property(lambda self: self.status.probe_member)
    state = property(lambda self: self.status.state)
    member_state = property(lambda self: self.status.member_state)
    epochs = property(lambda self: self.status.epochs)
    member_epoch = property(lambda self: self.status.member_epoch)
    type = property(lambda self: self.status.type)
    timeline = property(lambda self: self.status.timeline)
    group_epoch = property(lambda self: self.status.group_epoch)
    assignment_epoch = property(lambda self: self.status.assignment_epoch)

    @property
    def last_rebalance(self) -> str | None:   # its end, ISO
        return (self.status.last_rebalance or {}).get("ended")

    @property
    def members(self) -> dict[str, list | None]:
        return {mid: m.assignment for mid, m in self.status.members.items()}

    @property
    def gains(self) -> dict[str, tuple]:   # member -> (added, revoked)
        return {mid: (m.gained, m.lost) for mid, m in self.status.members.items()}

    @property
    def targets(self) -> dict[str, list | None]:   # KIP-848: member -> target
        return {mid: m.target for mid, m in self.status.members.items() if m.has_target}

    @property
    def reconciled(self) -> dict[str, int]:   # member -> last time, ms
        return {mid: m.reconciled_ms for mid, m in self.status.members.items()
                if m.reconciled_ms is not None}

    @property
    def tasks(self) -> dict[str, dict]:   # streams: member -> its tasks
        return {mid: m.tasks for mid, m in self.status.members.items() if m.tasks is not None}

    def apply(self, e: dict) -> None:
        """The event folded here and noted: a view with no owner of the group's state."""
        self.status.group = e.get("group")
        self.status.apply(e)
        self.note(e)

    def note(self, e: dict) -> None:
        """What only the view keeps of an event: the probe's errors and own diffs."""
        kind = e["event"]
        if kind == "probe":
            routine = any(r in (e.get("error") or "") for r in ROUTINE_ERRORS)
            if e["action"] in ("heartbeat_error", "rejoining", "fenced", "failed") and e.get("error") \
                    and not routine:
                self.errors.append(f"{e['ts'][11:23]} {e['action']}: {e['error']}")
        elif kind == "error" and e.get("name") not in ROUTINE_ERRORS:
            self.errors.append(f"{e['ts'][11:23]} {e['api']}: {e['name']} ({e['code']})")
        elif kind == "assignment" and "target" not in e and (
                e.get("member_id") is None or e.get("member_id") == self.member_id):
            self.diffs.append(e)   # the probe's own member's, told first-hand

    def reconciliation(self, mid: str) -> str:
        """The members table's reconciliation column."""
        if mid in self.status.behind:   # issue 19: this member holds the group up
            return "reconciling, holding up"
        member = self.status.members.get(mid)
        if member is not None and member.behind_target:
            return "reconciling"
        ms = self.reconciled.get(mid)
        return "-" if ms is None else f"{ms} ms"


def _since(iso: str | None, now: float | None) -> str:
    if iso is None or now is None:
        return "-"
    from datetime import datetime, timezone

    ended = datetime.strptime(iso, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc)
    return f"{max(0.0, now - ended.timestamp()):.0f} s ago"


EPOCH_TYPES = ("consumer", "share", "streams")   # groups counted in epochs, not generations


def counts_epochs(m: WatchModel) -> bool:
    """A KIP-848 (consumer), share or streams group: epochs and a server assignor."""
    return m.epochs is not None or m.type in EPOCH_TYPES or m.member_epoch is not None


def header_text(m: WatchModel, now: float | None = None) -> str:
    """The live view's header: what the group is now (every unknown a `-`)."""
    if counts_epochs(m):
        numbers = (f"group epoch {show(m.group_epoch)}  assignment epoch "
                   f"{show(m.assignment_epoch)}")
        protocol = f"assignor {shown(m.protocol)}"
    else:
        numbers = f"generation {_classic_generation(m)}"
        protocol = f"protocol {shown(m.protocol)}"
    probe = (f" (probe {shown(m.member_state)})" if m.member_id or m.member_state else "")
    line = (f"group {shown(m.group)}  " + (f"type {shown(m.type)}  " if m.type else "")
            + f"{numbers}  state {shown(m.state)}{probe}  members {len(m.members)}  "
            f"{protocol}  last rebalance {_since(m.last_rebalance, now)}")
    if m.member_id:
        line += f"\nprobe {visible(m.member_id)}"
        if not counts_epochs(m):   # the broker assigns in epoch groups: no leader
            line += f"  leader {shown(m.leader)}"
        if m.member_epoch is not None:
            line += f"  member epoch {m.member_epoch}"
    return line


def _classic_generation(m: WatchModel) -> str:
    """The number; or, when the members are known and still no generation (a passive
    watch of librdkafka's eager assignors, whose subscriptions carry none), why not."""
    if m.generation is not None:
        return str(m.generation)
    if m.members and not m.member_id:
        return f"unknown ({UNKNOWN_GENERATION})"
    return "-"


def timeline_row(r: dict, reason_width: int = REASON_WIDTH) -> list[str]:
    """One rebalance in the live view's timeline (from, to, ended, ms, members, moved,
    reason)."""
    members = r.get("members_after")
    ended = r.get("ended")
    reason = r.get("reason")
    return [show(r.get("from_generation")), show(r.get("to_generation")),
            shown(ended[11:23] if ended else None), _took(r),
            show(None if members is None else len(members)), show(r.get("moved_partitions")),
            clip(None if reason is None else visible(str(reason)), reason_width)]


def _took(r: dict) -> str:
    """A rebalance's ms: `N`, `LOW-HIGH` when measured by looks (events.Rebalanced),
    `≥N` when it was under way at the first look (a lower bound), `-` when not known."""
    ms = r.get("duration_ms")
    if ms is None:
        return "-"
    if r.get("duration_basis") == "interval":
        return f"{r.get('duration_min_ms')}-{r.get('duration_max_ms')}"
    return f"≥{ms}" if r.get("duration_is_lower_bound") else str(ms)


def lag_text(m: WatchModel, now: float | None) -> str:
    """watch --lag: the group's lag as last read (total, per topic, the largest partition's,
    and how old the read is); `-` until a read knows it (no commits yet, a failed read)."""
    s = m.status
    age = None if s.lag_at is None or now is None else f"read {max(0.0, now - s.lag_at):.0f} s ago"
    if s.lag is None:
        return "lag -" + ("" if age is None else f"  ({age})")
    topics = ", ".join(f"{visible(t)} {n}" for t, n in sorted(s.lag_by_topic.items()))
    return (f"lag {s.lag}" + (f": {topics}" if len(s.lag_by_topic) > 1 else "")
            + f"  (largest partition {show(s.lag_max)}" + ("" if age is None else f", {age}") + ")")


# the timeline's columns other than the reason, with the table's borders and padding
TIMELINE_FIXED = 56
WIDE = 140   # a terminal this wide shows member ids whole


def render_model(m: WatchModel, now: float | None = None, lag: bool = False,
                 width: int | None = None):
    """`width`: the terminal's; narrower than WIDE, member ids are shortened in the
    middle (their unique ends stay) and each rebalance's reason is cut at a word to fit
    one row."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    from .cells import short_id

    narrow = width is not None and width < WIDE
    name = short_id if narrow else (lambda mid: mid)
    reason_width = REASON_WIDTH if width is None else max(
        16, min(REASON_WIDTH, width - TIMELINE_FIXED))

    head = Text(header_text(m, now), style="bold")
    if lag:
        head.append("\n" + lag_text(m, now))
    members = Table(title="members", expand=False)
    members.add_column("member", no_wrap=True)
    members.add_column("assignment")
    members.add_column("last gained")
    members.add_column("last lost")
    # KIP-848 consumer and streams groups: each member converges on its own toward its
    # target; share groups have no target (ShareGroupDescribe gives none: `-`), but a member
    # holds the group up until its next heartbeat all the same
    epochs = bool(m.targets) or m.type in ("share", "streams")
    if epochs:
        members.add_column("target")
        members.add_column("reconciled in")
    if m.tasks:
        members.add_column("tasks")
    for mid, asg in sorted(m.members.items()):
        added, revoked = m.gains.get(mid, (None, None))
        row = [name(visible(mid)) + (" (probe)" if mid == m.member_id else ""), _tps(asg),
               _tps(added), _tps(revoked)]
        if epochs:
            row += [_tps(m.targets.get(mid)), m.reconciliation(mid)]
        if m.tasks:
            row.append(visible(_tasks(m.tasks.get(mid))))
        members.add_row(*row)
    timeline = Table(title="rebalances", expand=False)
    for col in ("from", "to", "ended", "ms", "members", "moved"):
        timeline.add_column(col, no_wrap=True)
    timeline.add_column("reason", no_wrap=True, overflow="ellipsis")
    for r in m.timeline:
        timeline.add_row(*timeline_row(r, reason_width))
    diffs = Text("\n".join(_own_diff(d) for d in m.diffs) or "(no assignment yet)")
    errors = Text("\n".join(map(visible, m.errors)) or "(no errors)",
                  style="red" if m.errors else "dim")
    if m.member_id is None and not m.errors and not m.diffs:   # the passive watch
        return Group(head, members, timeline)
    return Group(head, members, timeline, Text("own assignment diffs", style="bold"), diffs,
                 Text("heartbeat / request errors", style="bold"), errors)


def _own_diff(d: dict) -> str:
    number = (f"member epoch {d['member_epoch']}" if d.get("member_epoch") is not None
              else f"gen {show(d.get('generation'))}")
    return f"{number}: +{_tps(d.get('added'))} -{_tps(d.get('revoked'))}"


MAX_LIVE_GROUPS = 8   # groups shown in full by the live view; the rest as one line each


def render_models(models: dict, now: float | None = None, lag: bool = False,
                  width: int | None = None):
    from rich.console import Group
    from rich.text import Text

    names = sorted(models)
    parts = [render_model(models[g], now, lag, width) for g in names[:MAX_LIVE_GROUPS]]
    rest = [(g, models[g].status) for g in names[MAX_LIVE_GROUPS:]]
    if rest:
        parts.append(Text("\n".join(f"group {visible(g)}  state {shown(s.state)}  members "
                                     f"{len(s.members)}  rebalances {len(s.timeline)}"
                                     + (f"  lag {show(s.lag)}" if lag else "")
                                     for g, s in rest)))
    return Group(*parts)


VIEWS = ("auto", "top", "full")   # watch --view


class _LiveSink:
    """The live view on a terminal: each event noted in its group's model (whose status
    is its owner's, `read_from`), the screen drawn by `draw()`, which the command calls on
    its tick (a few times a second): at once after events, and once a second without any,
    so `last rebalance N s ago` counts on in a calm group. Not drawn from rich's own
    refresh thread: the models and statuses are the event loop's alone.

    `view`: "full" each group in full (render_models); "top" one row per group
    (render/top.py, fitted to the terminal's size at each draw); "auto" the top view for
    a `fleet` (watch --all), else full until the groups (two or more) no longer fit the
    terminal's height in full, then top from there on (no flipping back and forth)."""

    REDRAW_S = 1.0   # a calm view is drawn again this often (its clocks tick)

    def __init__(self, env, view: str = "full", fleet: bool = False):
        import time

        from rich.live import Live

        self.models: dict[str, WatchModel] = {}
        self.now = time.time
        self.view = view
        self.top = view == "top" or (view == "auto" and fleet)
        self.console = env.console()
        self.live = Live(render_models(self.models), console=self.console,
                         auto_refresh=False, transient=False)
        self._changed = False
        self._drawn_at = float("-inf")
        self._size = None   # the terminal's (width, height) at the last draw
        # the one owner of each group's state in the process (None: the view folds its own)
        self.statuses: Mapping[str | None, GroupStatus] | None = None
        self.lag = False   # watch --lag: the owner's statuses hold the lag read
        self.coordinator_of = None   # the top view's COORD column: a describe watch's

    def read_from(self, statuses: Mapping[str | None, GroupStatus], lag: bool = False) -> None:
        """Draw each group from `statuses` (group id -> its GroupStatus, folded by the
        process's story: a Watcher's `reducer.groups`, `{group: probe.view.status}`), not
        from a fold of the events of its own. `lag` (watch --lag): show the lag the
        Watcher's lag reads write into those statuses (observe/story/lag_rounds.py), on
        their own interval, not through the events."""
        self.statuses, self.lag = statuses, lag
        for group, model in self.models.items():
            model.status = statuses.get(group or None) or model.status
        self._changed = True

    def __enter__(self):
        self.live.__enter__()
        return self

    def __exit__(self, *exc):
        self.draw(force=True)   # the last frame stays on screen: as of now
        self.live.__exit__(*exc)

    def __call__(self, event: dict) -> None:
        group = event.get("group")
        model = self.models.get(group or "")   # keyed by the group's own id, as its owner
        if model is None:
            model = self.models[group or ""] = WatchModel()
        owned = None if self.statuses is None else self.statuses.get(group)
        if owned is None:   # no story of the group in the process: the view's own fold
            model.apply(event)
        else:               # its owner folded the event already
            model.status = owned
            model.note(event)
        self._changed = True

    def draw(self, force: bool = False) -> None:
        """Draw the view when an event changed it, or a second has gone by. After the
        terminal changed size the screen is cleared first: the terminal reflowed the old
        frame, which rich, counting its own lines, would overwrite only in part (160 -> 80
        -> 160 columns left pieces of it above the view)."""
        now = self.now()
        size = self.console.size
        resized = self._size is not None and size != self._size
        self._size = size
        if force or resized or self._changed or now - self._drawn_at >= self.REDRAW_S:
            self._changed, self._drawn_at = False, now
            if resized:
                self.console.clear()
            self.live.update(self.frame(now), refresh=True)

    def frame(self, now: float):
        """What the screen shows now, in the view chosen."""
        lag = self.lag
        if not self.top and self.view == "auto" and len(self.models) > 1:
            full = render_models(self.models, now, lag, self.console.width)
            if len(self.console.render_lines(full, pad=False)) < self.console.height:
                return full
            self.top = True
        if self.top:
            from .top import render_top

            width, height = self.console.size
            return render_top([m.status for m in self.models.values()], now, width, height,
                              lag, self.coordinator_of)
        return render_models(self.models, now, lag, self.console.width)
