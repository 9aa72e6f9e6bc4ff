"""The one reducer: events (envelope dicts, from any source) folded into per-group state.

    reducer = Reducer()
    status = reducer.apply(event)      # the GroupStatus of event["group"], updated
    reducer.groups["orders"].members   # {member id: MemberStatus}

What the live view (render/watch.py), `watch`'s summary, `wait`'s conditions and a metrics
exporter read: state, type, generation or epochs, protocol, leader, members with their
assignments, targets, last gains / losses, reconciliation times and tasks, the last
rebalance and the last few, rebalance counts and time spent rebalancing, members that
flapped, when the group last changed (`changed_at`, for wait --settled), when anything
was last told of it (`active_at`, the top view's order), the rebalances of the last
REBALANCE_WINDOW_S (`rebalances_within`), members behind their target, and the probe's
own member (its id, member state, member epoch) when a probe tells the story.

A `snapshot` replaces everything it tells; a `state` Dead empties the group (gone).
`GroupStatus.apply` is the one code path that changes a group's state: a story
(observe/story/story.py) folds each event it tells into its group's GroupStatus before it
decides the next, and a Watcher's Reducer holds those very statuses. It decides nothing
the story decides, and works from events alone (a replay of recorded events); the live
views draw the statuses their process's stories fold (render/watch.py).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone

from ...events import EventKind, duration_of
from .holdings import holds_target

TIMELINE = 10   # rebalances kept per group
REBALANCE_WINDOW_S = 300.0   # the longest sliding window rebalances are counted in
TARGET_TYPES = ("consumer", "streams")   # groups whose broker sets each member a target


@dataclass(slots=True)
class MemberStatus:
    member_id: str
    instance_id: str | None = None
    client_id: str | None = None
    host: str | None = None
    assignment: list[dict] | None = None      # [{topic, partitions}], None: not known
    target: list[dict] | None = None          # KIP-848: its target assignment
    gained: list[dict] | None = None          # in its last assignment change
    lost: list[dict] | None = None
    reconciled_ms: int | None = None          # KIP-848: its last reconciliation time
    tasks: dict | None = None                 # streams: {kind: [{subtopology_id, partitions}]}
    has_target: bool = False                  # a target was told (KIP-848 / streams)
    behind_since: float | None = None         # holding the group up since (issue 19), s
    subscription: list[str] | None = None     # its subscribed topics, None: not known

    @property
    def behind_target(self) -> bool:
        """Its assignment is not yet the target the broker set it (state.holdings.holds_target)."""
        return self.has_target and not holds_target(self.assignment, self.target)


class _Recent(list):
    """The last TIMELINE items appended (a list: an empty deque is 600 bytes, and a fleet
    has 100,000 groups, most of them with no rebalance to keep)."""
    __slots__ = ()

    def append(self, item) -> None:
        super().append(item)
        if len(self) > TIMELINE:
            del self[0]


@dataclass(slots=True)   # one per group: 100,000 at fleet size
class GroupStatus:
    group: str | None
    state: str | None = None
    type: str | None = None
    generation: int | None = None
    group_epoch: int | None = None
    assignment_epoch: int | None = None
    protocol: str | None = None
    leader: str | None = None
    members: dict[str, MemberStatus] = field(default_factory=dict)
    # the members are known (told in full by a snapshot, a group gone, a round's members
    # after it); False before the first look and after a round whose members are unknown
    members_known: bool = False
    last_rebalance: dict | None = None
    timeline: list = field(default_factory=_Recent)   # the last TIMELINE rebalances
    rebalances: int = 0
    rebalances_lower_bound: bool = False   # rounds between two looks may be missing
    # the time spent rebalancing, over the rounds whose duration is known (`timed`); each
    # figure with the least and most it may be (most None: a round's is unbounded)
    rebalances_timed: int = 0
    rebalancing_ms_total: int = 0
    rebalancing_ms_least: int = 0
    rebalancing_ms_most: int | None = 0
    rebalancing_ms_longest: int = 0
    changes: dict[str, int] = field(default_factory=dict)   # member key -> joins + leaves
    changed_at: float | None = None   # last change of state, members, generation or epochs
    active_at: float | None = None    # last event told of it, a first look (snapshot) aside
    rebalance_ends: list = field(default_factory=list)   # unix s, the last WINDOW_S's
    probe_member: str | None = None   # the probe's own member, when a probe tells it
    member_state: str | None = None
    member_epoch: int | None = None
    # watch --lag (observe/lag.py): the last lag read; lag None when none is known
    lag: int | None = None
    lag_max: int | None = None
    lag_by_topic: dict[str, int] = field(default_factory=dict)
    lag_at: float | None = None

    @property
    def epochs(self) -> tuple | None:
        if self.group_epoch is None and self.assignment_epoch is None:
            return None
        return (self.group_epoch, self.assignment_epoch)

    @property
    def members_behind_target(self) -> int | None:
        """Members whose assignment is not yet their target; None where the broker sets
        no targets (classic and share groups)."""
        members = list(self.members.values())
        if self.type not in TARGET_TYPES and not any(m.has_target for m in members):
            return None
        return sum(1 for m in members if m.behind_target)

    def rebalances_within(self, seconds: float, now: float) -> int:
        """Rebalances that ended in the last `seconds` (at most REBALANCE_WINDOW_S)."""
        since = now - min(seconds, REBALANCE_WINDOW_S)
        return sum(1 for t in self.rebalance_ends if t > since)

    @property
    def exists(self) -> bool:
        return self.state not in (None, "Dead")

    @property
    def flapping(self) -> list[str]:
        """Members (by instance id, else client id) that joined and left more than once
        in all: came and went, or went and came back."""
        return sorted(k for k, n in self.changes.items() if n >= 2)

    @property
    def behind(self) -> dict[str, float]:
        """Members behind their target now (issue 19: not yet acknowledged, or still
        holding partitions their target took away): member -> since (epoch seconds)."""
        return {mid: m.behind_since for mid, m in self.members.items()
                if m.behind_since is not None}

    def change_key(self) -> tuple:
        return (self.state, self.generation, self.group_epoch, self.assignment_epoch,
                tuple(sorted(self.members)))

    def summary(self) -> dict:
        """`watch`'s summary of the group."""
        known = self.rebalances_timed > 0 or self.rebalances == 0   # none: exactly 0
        return {"group": self.group, "state": self.state, "rebalances": self.rebalances,
                "rebalances_lower_bound": self.rebalances_lower_bound,
                "rebalancing_ms_total": self.rebalancing_ms_total if known else None,
                "rebalancing_ms_least": self.rebalancing_ms_least if known else None,
                "rebalancing_ms_most": self.rebalancing_ms_most if known else None,
                "rebalancing_ms_longest": self.rebalancing_ms_longest if known else None,
                "rebalances_timed": self.rebalances_timed,
                "rebalances_untimed": self.rebalances - self.rebalances_timed,
                "flapping_members": self.flapping}

    # ---- folding -----------------------------------------------------------------------
    def apply(self, e: dict) -> None:
        key = self.change_key()
        handler = _FOLDS.get(e["event"])
        if handler is not None:
            handler(self, e)
        if self.change_key() != key:
            self.changed_at = _seconds(e.get("ts"))
        if e["event"] != EventKind.SNAPSHOT:   # a first look is no activity of the group's
            self.active_at = _seconds(e.get("ts"))

    def _snapshot(self, e: dict) -> None:
        for r in e.get("recent_rebalances") or ():   # the records' past (records_past)
            self.last_rebalance = r
            self.timeline.append(r)
        self.state, self.type, self.protocol = e.get("state"), e.get("type"), e.get("protocol")
        self.generation = e.get("generation")
        self.group_epoch, self.assignment_epoch = e.get("group_epoch"), e.get("assignment_epoch")
        self.members, self.members_known = {}, True
        for m in e.get("members") or ():
            target = m.get("target_assignment")
            self.members[m["member_id"]] = MemberStatus(
                m["member_id"], m.get("instance_id"), m.get("client_id"), m.get("host"),
                m.get("assignment"), target, tasks=m.get("tasks"),
                has_target=target is not None and self.group_epoch is not None,
                subscription=m.get("subscription"))

    def _state(self, e: dict) -> None:
        self.state = e["state"]
        if e.get("member_state") is not None:   # the probe's member's; a look has none
            self.member_state = e["member_state"]
        if self.state == "Dead":   # gone: a group created again starts from nothing
            self.members, self.generation, self.protocol, self.leader = {}, None, None, None
            self.members_known = True   # known: none
            self.group_epoch = self.assignment_epoch = self.type = None
            self.lag = self.lag_max = None
            self.lag_by_topic = {}

    def _epoch(self, e: dict) -> None:
        self.group_epoch, self.assignment_epoch = e.get("group_epoch"), e.get("assignment_epoch")

    def _type_changed(self, e: dict) -> None:
        self.type = e.get("type")
        if self.type == "classic":   # generations again, no epochs
            self.group_epoch = self.assignment_epoch = None

    def _joined(self, e: dict) -> None:
        self.members.setdefault(e["member_id"], MemberStatus(
            e["member_id"], e.get("instance_id"), e.get("client_id"), e.get("host"),
            e.get("assignment"), tasks=e.get("tasks"), subscription=e.get("subscription")))
        self._count_change(e)

    def _left(self, e: dict) -> None:
        self.members.pop(e["member_id"], None)
        self._count_change(e)

    def _count_change(self, e: dict) -> None:
        key = e.get("instance_id") or e.get("client_id") or e["member_id"]
        self.changes[key] = self.changes.get(key, 0) + 1

    def _generation(self, e: dict) -> None:
        self.generation, self.protocol, self.leader = e["generation"], e.get("protocol"), e.get("leader")

    def _rebalance(self, e: dict) -> None:
        self.members_known = e.get("members_after") is not None
        if e.get("members_after") is not None or e.get("assignments") is not None:
            # members after it known (null: not known, which is no member gone)
            after = e.get("assignments") or {m: None for m in e.get("members_after") or []}
            old, tasks = self.members, e.get("tasks") or {}
            subscriptions, identities = e.get("subscriptions") or {}, e.get("identities") or {}
            self.members = {m: old.get(m) or MemberStatus(m) for m in after}
            for mid, asg in after.items():
                m = self.members[mid]
                m.assignment = asg
                if mid in tasks:
                    m.tasks = tasks[mid]
                if mid in subscriptions:
                    m.subscription = subscriptions[mid]
                if mid in identities:
                    i = identities[mid]
                    m.instance_id, m.client_id, m.host = (
                        i.get("instance_id"), i.get("client_id"), i.get("host"))
        if self.epochs is None:
            self.generation = e.get("to_generation")
            if self.type == "classic" and e.get("to_generation") is None:
                # its members report no generation (librdkafka's eager assignors): a round
                # begun and over between two looks is not seen, the count is a lower bound
                self.rebalances_lower_bound = True
        self.last_rebalance = e
        self.timeline.append(e)
        if self.epochs is not None:   # an epoch group's rebalance: every member at its target
            for m in self.members.values():
                m.behind_since = None
        self.rebalances += 1
        self._add_duration(e)
        self._count_in_window(_seconds(e.get("ended") or e.get("ts")))

    def _add_duration(self, e: dict) -> None:
        """A round's duration into the totals; one not known is counted apart (untimed),
        never as 0."""
        ms, least, most = duration_of(e)
        if ms is None:
            return
        self.rebalances_timed += 1
        self.rebalancing_ms_total += ms
        self.rebalancing_ms_least += least or 0
        self.rebalancing_ms_most = None if most is None or self.rebalancing_ms_most is None \
            else self.rebalancing_ms_most + most
        self.rebalancing_ms_longest = max(self.rebalancing_ms_longest, ms)

    def _count_in_window(self, ended: float | None) -> None:
        if ended is None:
            return
        self.rebalance_ends.append(ended)
        while self.rebalance_ends and self.rebalance_ends[0] <= ended - REBALANCE_WINDOW_S:
            del self.rebalance_ends[0]

    def _assignment(self, e: dict) -> None:
        """Another member's assignment (the group's story; KIP-848: with its target). The
        probe's own member's (no target, its own id or none) is its own, not the group's
        table's: the probe tells it first-hand."""
        mid = e.get("member_id")
        if "target" not in e and (mid is None or mid == self.probe_member):
            if e.get("member_epoch") is not None:   # a KIP-848 probe's own: its epoch now
                self.member_epoch = e["member_epoch"]
            return
        if mid is None:   # another member's event names it; nothing to show it under
            return
        m = self.members.setdefault(mid, MemberStatus(mid))
        m.assignment, m.gained, m.lost = e.get("assigned"), e.get("added"), e.get("revoked")
        if e.get("tasks") is not None:
            m.tasks = e["tasks"]
        if "target" in e:
            m.target, m.has_target = e.get("target"), True
            if e.get("reconciled_ms") is not None:
                m.reconciled_ms = e["reconciled_ms"]
        if "behind" in e:   # epoch groups' members (consumer: with their target)
            if not e.get("behind"):
                m.behind_since = None
            elif m.behind_since is None:
                m.behind_since = _seconds(e.get("ts"))

    def _probe(self, e: dict) -> None:
        self.probe_member = e.get("member_id") or self.probe_member
        if e["action"] in ("left", "fenced", "failed"):
            self.member_state = e["action"].upper()
        if "member_epoch" in e:   # a KIP-848 probe: its own state
            self.member_epoch = e.get("member_epoch")
            self.member_state = _EPOCH_MEMBER_STATES.get(e["action"], self.member_state)


_EPOCH_MEMBER_STATES = {"joined": "JOINING", "acknowledged": "STABLE", "rejoining": "JOINING",
                        "fenced": "FENCED", "left": "LEFT", "failed": "FAILED"}

_FOLDS = {
    EventKind.SNAPSHOT: GroupStatus._snapshot, EventKind.STATE: GroupStatus._state,
    EventKind.EPOCH: GroupStatus._epoch, EventKind.TYPE_CHANGED: GroupStatus._type_changed,
    EventKind.MEMBER_JOINED: GroupStatus._joined, EventKind.MEMBER_LEFT: GroupStatus._left,
    EventKind.GENERATION: GroupStatus._generation, EventKind.REBALANCE: GroupStatus._rebalance,
    EventKind.ASSIGNMENT: GroupStatus._assignment, EventKind.PROBE: GroupStatus._probe,
}


def _seconds(ts: str | None) -> float | None:
    if ts is None:
        return None
    if len(ts) == 24 and ts[-1] == "Z" and ts[10] == "T" and ts[19] == ".":
        # the events' own form (events.iso_ts), parsed in C: 15x strptime's speed, which
        # a fleet's catch-up and scrape spend on every event and every group
        return datetime.fromisoformat(ts[:-1] + "+00:00").timestamp()
    return datetime.strptime(ts, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc).timestamp()


class Reducer:
    """Per group, the GroupStatus folded from every event told of it."""

    def __init__(self):
        self.groups: dict[str | None, GroupStatus] = {}

    def apply(self, event: dict) -> GroupStatus:
        group = event["group"]
        status = self.groups.get(group)
        if status is None:
            status = self.groups[group] = GroupStatus(group)
        status.apply(event)
        return status

    def apply_lag(self, read) -> None:
        """A lag read (observe.lag.GroupLag) of a followed group; a failed read keeps
        the last one known."""
        status = self.groups.get(read.group)
        if status is None or read.error is not None:
            return
        status.lag, status.lag_max, status.lag_by_topic = read.total, read.max, read.by_topic
        status.lag_at = read.at

    __call__ = apply   # a sink
