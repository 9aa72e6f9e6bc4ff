"""Views of a live event stream (DESIGN §4 events) for `join --watch`.

    with open_sinks(env, record_path) as sink:   # sink(event) for every event
        ...

- `-o ndjson`: each event as one JSON line on stdout, flushed per line.
- table/wide on a terminal: a rich Live view (WatchModel -> render_model): generation,
  group and member state, the members of the current generation with their assignments,
  the last assignment diffs, heartbeat errors as they happen, and a timeline of rebalances
  with their durations.
- table/wide into a pipe or file (and json/yaml): one plain line per event.
- `--record FILE`: the same ndjson lines into FILE, beside whichever view runs.
"""
from __future__ import annotations

import contextlib
from collections import deque
from dataclasses import dataclass, field

from .output import NdjsonWriter


def _show(value) -> str:
    return "-" if value is None else str(value)


def _tps(items) -> str:
    if items is None:
        return "-"
    return " ".join(f"{i['topic']}:{','.join(str(p) for p in i['partitions'])}"
                    for i in items) or "(none)"


def plain_line(e: dict) -> str:
    """One human line per event (the non-terminal view)."""
    kind, ts = e["event"], e["ts"]
    if kind == "state":
        text = f"group state {e.get('previous') or '-'} -> {e['state']} (probe {e.get('member_state')})"
    elif kind == "generation":
        members = e.get("members")
        text = (f"generation {e['generation']} protocol={e.get('protocol')} leader={e.get('leader')}"
                + (f" members={len(members)}" if members is not None else ""))
    elif kind == "assignment":
        text = (f"assignment gen {e.get('generation')}: {_tps(e.get('assigned'))} "
                f"added={_tps(e.get('added'))} revoked={_tps(e.get('revoked'))}")
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
    elif kind == "epoch":
        text = f"group epoch {e.get('group_epoch')} assignment epoch {e.get('assignment_epoch')}"
    else:
        text = kind
    if e.get("member_epoch") is not None:   # a KIP-848 probe's own events
        text += f" member_epoch={e['member_epoch']}"
    return f"{ts} {text}"


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
    group_epoch: int | None = None         # KIP-848 groups
    assignment_epoch: int | None = None
    member_epoch: int | None = None

    def apply(self, e: dict) -> None:
        self.group = e.get("group")
        kind = e["event"]
        if kind == "state":
            self.state, self.member_state = e["state"], e.get("member_state")
        elif kind == "generation":
            self.generation, self.protocol, self.leader = e["generation"], e.get("protocol"), e.get("leader")
        elif kind == "probe":
            self.member_id = e.get("member_id") or self.member_id
            if e["action"] in ("left", "fenced", "failed"):
                self.member_state = e["action"].upper()
            if e["action"] in ("heartbeat_error", "rejoining", "fenced", "failed") and e.get("error"):
                self.errors.append(f"{e['ts'][11:23]} {e['action']}: {e['error']}")
        elif kind == "error":
            self.errors.append(f"{e['ts'][11:23]} {e['api']}: {e['name']} ({e['code']})")
        elif kind == "rebalance":
            self.members = dict(e.get("assignments") or {m: None for m in e.get("members_after") or []})
            self.timeline.append(e)
        elif kind == "assignment":
            self.diffs.append(e)
        elif kind == "epoch":
            self.group_epoch, self.assignment_epoch = e.get("group_epoch"), e.get("assignment_epoch")
        if kind == "probe" and "member_epoch" in e:   # a KIP-848 probe: its own state
            self.member_epoch = e.get("member_epoch")
            self.member_state = _EPOCH_MEMBER_STATES.get(e["action"], self.member_state)


_EPOCH_MEMBER_STATES = {"joined": "JOINING", "acknowledged": "STABLE", "rejoining": "JOINING",
                        "fenced": "FENCED", "left": "LEFT", "failed": "FAILED"}


def render_model(m: WatchModel):
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    head = Text(f"group {m.group}  generation {m.generation}  state {m.state} "
                f"(probe {m.member_state})  protocol {m.protocol}\n"
                f"probe {m.member_id}  leader {m.leader}"
                + (f"\ngroup epoch {m.group_epoch}  assignment epoch {m.assignment_epoch}  "
                   f"probe member epoch {m.member_epoch}" if m.member_epoch is not None else ""),
                style="bold")
    members = Table(title="members", expand=False)
    members.add_column("member")
    members.add_column("assignment")
    for mid, asg in sorted(m.members.items()):
        members.add_row(mid + (" (probe)" if mid == m.member_id else ""), _tps(asg))
    timeline = Table(title="rebalances", expand=False)
    for col in ("from", "to", "ended", "ms", "members", "moved", "reason"):
        timeline.add_column(col)
    for r in m.timeline:
        timeline.add_row(_show(r.get("from_generation")), str(r["to_generation"]),
                         r["ended"][11:23], str(r["duration_ms"]),
                         _show(None if r.get("members_after") is None else len(r["members_after"])),
                         _show(r.get("moved_partitions")), str(r.get("reason") or "")[:60])
    diffs = Text("\n".join(f"gen {d.get('generation')}: +{_tps(d.get('added'))} "
                           f"-{_tps(d.get('revoked'))}" for d in m.diffs) or "(no assignment yet)")
    errors = Text("\n".join(m.errors) or "(no errors)", style="red" if m.errors else "dim")
    return Group(head, members, timeline, Text("own assignment diffs", style="bold"), diffs,
                 Text("heartbeat / request errors", style="bold"), errors)


class _LiveSink:
    def __init__(self, env):
        from rich.live import Live

        self.model = WatchModel()
        self.live = Live(render_model(self.model), console=env.console(),
                         refresh_per_second=4, transient=False)

    def __enter__(self):
        self.live.__enter__()
        return self

    def __exit__(self, *exc):
        self.live.__exit__(*exc)

    def __call__(self, event: dict) -> None:
        self.model.apply(event)
        self.live.update(render_model(self.model))


@contextlib.contextmanager
def open_sinks(env, record_path: str | None):
    """A callable taking each event, writing it to the chosen view and the record file."""
    with contextlib.ExitStack() as stack:
        sinks = []
        if record_path:
            f = stack.enter_context(open(record_path, "a", encoding="utf-8"))
            sinks.append(NdjsonWriter(f).write)
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
