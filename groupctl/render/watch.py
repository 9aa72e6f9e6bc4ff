"""Views of a live event stream (DESIGN §4 events) for `join --watch` and `watch` (one
renderer for both: the probe's view is the passive one plus its own member).

    with open_sinks(env, record_path) as sink:   # sink(event) for every event
        ...

- `-o ndjson`: each event as one JSON line on stdout, flushed per line.
- table/wide on a terminal: a rich Live view, one WatchModel per group -> render_model:
  a header (state, generation or epochs, members, time since the last rebalance), the
  members with their assignments and what each gained / lost in the last rebalance (for
  KIP-848 groups also each member's target and its reconciliation time, or "reconciling"
  while its current assignment is short of its target), the probe's heartbeat errors as
  they happen (join --watch; a routine REBALANCE_IN_PROGRESS is how a classic member learns
  of a rebalance, not an error), and a timeline of rebalances (time, from -> to, duration,
  members, moved partitions, reason). The probe's view is the passive one: the other
  members' `assignment` events fill the members table; its own fill its own pane.
- table/wide into a pipe or file (and json/yaml): one plain line per event.
- `--record FILE`: the same ndjson lines into FILE, beside whichever view runs.
"""
from __future__ import annotations

import contextlib
from collections import deque
from dataclasses import dataclass, field

from ..protocol.errors import ErrorCode
from .output import NdjsonWriter, RecordFile

# answers a member meets in every rebalance: steps of the protocol, not errors to show
ROUTINE_ERRORS = (ErrorCode.REBALANCE_IN_PROGRESS.name, ErrorCode.MEMBER_ID_REQUIRED.name)


def _show(value) -> str:
    return "-" if value is None else str(value)


def _tps(items) -> str:
    if items is None:
        return "-"
    return " ".join(f"{i['topic']}:{','.join(str(p) for p in i['partitions'])}"
                    for i in items) or "(none)"


def _tasks(tasks: dict | None) -> str:
    """A streams member's tasks as StreamsGroupCommand shows them: `ACTIVE: 0:[0,1]; ...`."""
    if tasks is None:
        return "-"
    parts = [f"{kind.upper()}: " + "; ".join(
        f"{t['subtopology_id']}:[{','.join(str(p) for p in t['partitions'])}]" for t in ts)
        for kind, ts in tasks.items() if ts]
    return " ".join(parts) or "(none)"


def plain_line(e: dict) -> str:
    """One human line per event (the non-terminal view)."""
    kind, ts = e["event"], e["ts"]
    if kind == "state":
        text = f"group state {e.get('previous') or '-'} -> {e['state']}" + (
            f" (probe {e['member_state']})" if e.get("member_state") else "")
    elif kind == "epoch":
        text = f"group epoch {e.get('group_epoch')} assignment epoch {e.get('assignment_epoch')}"
    elif kind == "type_changed":
        text = f"group type {e.get('previous') or '-'} -> {e.get('type')}"
    elif kind == "generation":
        members = e.get("members")
        text = (f"generation {e['generation']} protocol={e.get('protocol')} leader={e.get('leader')}"
                + (f" members={len(members)}" if members is not None else ""))
    elif kind == "assignment":
        text = (f"assignment gen {e.get('generation')}"
                + (f" {e['member_id']}" if e.get("member_id") else "")
                + f": {_tps(e.get('assigned'))} "
                f"added={_tps(e.get('added'))} revoked={_tps(e.get('revoked'))}"
                + (f" target={_tps(e['target'])}" if "target" in e else "")
                + (f" reconciled in {e['reconciled_ms']} ms"
                   if e.get("reconciled_ms") is not None else "")
                + (f" tasks {_tasks(e['tasks'])}" if e.get("tasks") is not None else ""))
    elif kind == "rebalance":
        text = (f"rebalance {_show(e.get('from_generation'))} -> {e['to_generation']} in "
                f"{e['duration_ms']} ms, members {len(e.get('members_after') or [])}, "
                f"moved {e.get('moved_partitions')}, reason: {e.get('reason')}")
    elif kind in ("member_joined", "member_left"):
        text = (f"{kind.replace('_', ' ')}: {e['member_id']} client={e.get('client_id')} "
                f"host={e.get('host')}" + (f" instance={e['instance_id']}" if e.get("instance_id") else ""))
    elif kind == "probe":
        text = (f"probe {e['action']} member={e.get('member_id')} gen={e.get('generation')}"
                + (f" error={e['error']}" if e.get("error") else "")
                + (f" ({e['reason']})" if e.get("reason") else ""))
    elif kind == "error":
        text = f"error {e['api']}: {e['name']} ({e['code']})"
    else:
        text = kind
    if e.get("member_epoch") is not None:   # a KIP-848 probe's own events
        text += f" member_epoch={e['member_epoch']}"
    return f"{ts} {e['group']} {text}" if e.get("source") == "describe" else f"{ts} {text}"


@dataclass
class WatchModel:
    """What the live view shows, folded from the events."""

    group: str | None = None
    generation: int | None = None
    protocol: str | None = None
    leader: str | None = None
    member_id: str | None = None
    state: str | None = None
    member_state: str | None = None
    members: dict[str, list | None] = field(default_factory=dict)
    diffs: deque = field(default_factory=lambda: deque(maxlen=6))
    errors: deque = field(default_factory=lambda: deque(maxlen=6))
    timeline: deque = field(default_factory=lambda: deque(maxlen=10))
    epochs: tuple | None = None                             # KIP-848 groups: (group, assignment)
    member_epoch: int | None = None                         # a KIP-848 probe's own
    last_rebalance: str | None = None                       # its end, ISO
    gains: dict[str, tuple] = field(default_factory=dict)   # member -> (added, revoked)
    targets: dict[str, list | None] = field(default_factory=dict)  # KIP-848: member -> target
    reconciled: dict[str, int | None] = field(default_factory=dict)  # member -> last time, ms
    type: str | None = None                                 # after a type_changed event
    tasks: dict[str, dict] = field(default_factory=dict)    # streams: member -> its tasks

    @property
    def group_epoch(self) -> int | None:
        return None if self.epochs is None else self.epochs[0]

    @property
    def assignment_epoch(self) -> int | None:
        return None if self.epochs is None else self.epochs[1]

    def apply(self, e: dict) -> None:
        self.group = e.get("group")
        kind = e["event"]
        if kind == "state":
            self.state, self.member_state = e["state"], e.get("member_state")
        elif kind == "epoch":
            self.epochs = (e.get("group_epoch"), e.get("assignment_epoch"))
        elif kind == "type_changed":
            self.type = e.get("type")
            if self.type == "classic":   # generations again, no epochs
                self.epochs = None
        elif kind == "member_joined":
            self.members.setdefault(e["member_id"], None)
        elif kind == "member_left":
            for table in (self.members, self.gains, self.targets, self.reconciled,
                          self.tasks):
                table.pop(e["member_id"], None)
        elif kind == "generation":
            self.generation, self.protocol, self.leader = e["generation"], e.get("protocol"), e.get("leader")
        elif kind == "probe":
            self.member_id = e.get("member_id") or self.member_id
            if e["action"] in ("left", "fenced", "failed"):
                self.member_state = e["action"].upper()
            routine = any(r in (e.get("error") or "") for r in ROUTINE_ERRORS)
            if e["action"] in ("heartbeat_error", "rejoining", "fenced", "failed") and e.get("error") \
                    and not routine:
                self.errors.append(f"{e['ts'][11:23]} {e['action']}: {e['error']}")
        elif kind == "error" and e.get("name") not in ROUTINE_ERRORS:
            self.errors.append(f"{e['ts'][11:23]} {e['api']}: {e['name']} ({e['code']})")
        elif kind == "rebalance":
            self.members = dict(e.get("assignments") or {m: None for m in e.get("members_after") or []})
            self.generation = e.get("to_generation") if self.epochs is None else self.generation
            self.last_rebalance = e.get("ended")
            self.timeline.append(e)
            if e.get("tasks") is not None:
                self.tasks = dict(e["tasks"])
        elif kind == "assignment":
            self._assignment(e)
        if kind == "probe" and "member_epoch" in e:   # a KIP-848 probe: its own state
            self.member_epoch = e.get("member_epoch")
            self.member_state = _EPOCH_MEMBER_STATES.get(e["action"], self.member_state)


    def _assignment(self, e: dict) -> None:
        """A member's assignment: the group's story (passive, or the probe's view of the
        others; KIP-848: every member, with its target) fills the members table; the
        probe's own member's event (source probe, its own id, no target) its own pane."""
        mid = e.get("member_id")
        own = e.get("source") != "describe" and "target" not in e and (
            mid is None or mid == self.member_id)
        if own:
            self.diffs.append(e)
            return
        self.members[mid] = e.get("assigned")
        self.gains[mid] = (e.get("added"), e.get("revoked"))
        if e.get("tasks") is not None:   # streams: the member's tasks
            self.tasks[mid] = e["tasks"]
        if "target" in e:
            self.targets[mid] = e.get("target")
            if e.get("reconciled_ms") is not None:
                self.reconciled[mid] = e["reconciled_ms"]

    def reconciliation(self, mid: str) -> str:
        """The members table's reconciliation column."""
        target = self.targets.get(mid)
        if target is not None and _tp_set(target) != _tp_set(self.members.get(mid)):
            return "reconciling"
        ms = self.reconciled.get(mid)
        return "-" if ms is None else f"{ms} ms"


def _tp_set(items) -> set:
    return {(i["topic"], p) for i in items or () for p in i["partitions"]}


_EPOCH_MEMBER_STATES = {"joined": "JOINING", "acknowledged": "STABLE", "rejoining": "JOINING",
                        "fenced": "FENCED", "left": "LEFT", "failed": "FAILED"}


def _since(iso: str | None, now: float | None) -> str:
    if iso is None or now is None:
        return "-"
    from datetime import datetime, timezone

    ended = datetime.strptime(iso, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc)
    return f"{max(0.0, now - ended.timestamp()):.0f} s ago"


def render_model(m: WatchModel, now: float | None = None):
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    number = (f"epochs {m.epochs[0]}/{m.epochs[1]}" if m.epochs is not None
              else f"generation {m.generation}")
    head = Text(f"group {m.group}  " + (f"type {m.type}  " if m.type else "")
                + f"{number}  state {m.state}"
                + (f" (probe {m.member_state})" if m.member_id or m.member_state else "")
                + f"  members {len(m.members)}  protocol {m.protocol}  "
                f"last rebalance {_since(m.last_rebalance, now)}"
                + (f"\nprobe {m.member_id}  leader {m.leader}" if m.member_id else "")
                + (f"  member epoch {m.member_epoch}" if m.member_epoch is not None else ""),
                style="bold")
    members = Table(title="members", expand=False)
    members.add_column("member")
    members.add_column("assignment")
    members.add_column("last gained")
    members.add_column("last lost")
    epochs = bool(m.targets)
    if epochs:   # KIP-848: each member converges on its own toward its target
        members.add_column("target")
        members.add_column("reconciled in")
    if m.tasks:
        members.add_column("tasks")
    for mid, asg in sorted(m.members.items()):
        added, revoked = m.gains.get(mid, (None, None))
        row = [mid + (" (probe)" if mid == m.member_id else ""), _tps(asg),
               _tps(added), _tps(revoked)]
        if epochs:
            row += [_tps(m.targets.get(mid)), m.reconciliation(mid)]
        if m.tasks:
            row.append(_tasks(m.tasks.get(mid)))
        members.add_row(*row)
    timeline = Table(title="rebalances", expand=False)
    for col in ("from", "to", "ended", "ms", "members", "moved", "reason"):
        timeline.add_column(col)
    for r in m.timeline:
        timeline.add_row(_show(r.get("from_generation")), str(r["to_generation"]),
                         r["ended"][11:23], str(r["duration_ms"]),
                         _show(None if r.get("members_after") is None else len(r["members_after"])),
                         _show(r.get("moved_partitions")), str(r.get("reason") or "")[:120])
    diffs = Text("\n".join((f"gen {d.get('generation')}" if d.get("generation") is not None
                            else f"member epoch {d.get('member_epoch')}")
                           + f": +{_tps(d.get('added'))} "
                           f"-{_tps(d.get('revoked'))}" for d in m.diffs) or "(no assignment yet)")
    errors = Text("\n".join(m.errors) or "(no errors)", style="red" if m.errors else "dim")
    if m.member_id is None and not m.errors and not m.diffs:   # the passive watch
        return Group(head, members, timeline)
    return Group(head, members, timeline, Text("own assignment diffs", style="bold"), diffs,
                 Text("heartbeat / request errors", style="bold"), errors)


MAX_LIVE_GROUPS = 8   # groups shown in full by the live view; the rest as one line each


def render_models(models: dict, now: float | None = None):
    from rich.console import Group
    from rich.text import Text

    shown = sorted(models)[:MAX_LIVE_GROUPS]
    parts = [render_model(models[g], now) for g in shown]
    rest = sorted(models)[MAX_LIVE_GROUPS:]
    if rest:
        parts.append(Text("\n".join(f"group {g}  state {models[g].state}  members "
                                     f"{len(models[g].members)}  rebalances {len(models[g].timeline)}"
                                     for g in rest)))
    return Group(*parts)


class _LiveSink:
    def __init__(self, env):
        import time

        from rich.live import Live

        self.models: dict[str, WatchModel] = {}
        self.now = time.time
        self.live = Live(render_models(self.models), console=env.console(),
                         refresh_per_second=4, transient=False)

    def __enter__(self):
        self.live.__enter__()
        return self

    def __exit__(self, *exc):
        self.live.__exit__(*exc)

    def __call__(self, event: dict) -> None:
        self.models.setdefault(event.get("group"), WatchModel()).apply(event)
        self.live.update(render_models(self.models, self.now()))


@contextlib.contextmanager
def open_sinks(env, record_path: str | None):
    """A callable taking each event, writing it to the chosen view and the record file."""
    with contextlib.ExitStack() as stack:
        sinks = []
        if record_path:  # whole lines; a full disk is one error line, the file intact
            sinks.append(stack.enter_context(RecordFile(record_path)).write)
        fmt = env.settings.output
        if fmt == "ndjson":
            sinks.append(NdjsonWriter(env.stdout).write)
        elif fmt in ("table", "wide") and env.stdout_is_terminal:
            sinks.append(stack.enter_context(_LiveSink(env)))
        else:
            def plain(event: dict) -> None:
                env.stdout.write(plain_line(event) + "\n")
                env.stdout.flush()
            sinks.append(plain)

        def sink(event: dict) -> None:
            for s in sinks:
                s(event)

        yield sink


def summary_line(s: dict) -> str:
    """The end of a --duration watch, one line per group."""
    flapping = ", ".join(s["flapping_members"]) or "none"
    return (f"summary {s['group']}: {s['rebalances']} rebalances, "
            f"{s['rebalancing_ms_total']} ms rebalancing (longest {s['rebalancing_ms_longest']} ms), "
            f"state {s['state'] or '-'}, flapping members: {flapping}")
