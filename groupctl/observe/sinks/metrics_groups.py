"""The per-group families of watch's metrics (observe.metrics): what accumulates per group
(GroupCounts), the families read from the reducer and the counts (one small function each,
`@group_family`; `rebalance_histogram` for a figure of the rebalance events), and each
group's lines kept between its events (_Kept; sinks.metrics_blocks places them in the
text).

    @group_family("groupctl_group_x", "gauge", "help")
    def _x(v: GroupView) -> Iterator[Sample]:
        if v.status.exists:
            yield "", v.labels(), value          # labels: type (+ cluster, group added)
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator

from ...events import duration_of
from .metrics_text import Family, Histogram, Sample, base_text, family_lines
from ..story.reasons import REASON_KINDS, kind as reason_kind
from ..state.reducer import GroupStatus, _seconds

# The states of each group type (KIP-848 consumer, KIP-932 share, KIP-1071 streams):
# every one is a series, 1 for the current one, so `== 1` and `changes()` both work.
STATES = {
    "classic": ("Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead"),
    "consumer": ("Empty", "Assigning", "Reconciling", "Stable", "Dead"),
    "share": ("Empty", "Stable", "Dead"),
    "streams": ("Empty", "NotReady", "Assigning", "Reconciling", "Stable", "Dead"),
}
# seconds; rebalances last from tens of milliseconds (KIP-848) to the rebalance timeout
REBALANCE_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600)

@dataclass(slots=True)
class GroupCounts:
    """What accumulates for one group, from its events (one per group: slots, and the
    rebalance counters' keys shared between groups)."""
    version: int = 0                                   # +1 at each of the group's events
    rebalances: dict[tuple[str, str], int] = field(default_factory=dict)  # (type, kind)
    histograms: dict[tuple[str, str], Histogram] = field(default_factory=dict)  # (name, type)
    unowned_seconds: dict[tuple[str, str], float] = field(default_factory=dict)  # (type, basis)
    state: str | None = None
    state_since: float | None = None   # when groupctl first saw the current state

    def event(self, e: dict, status: GroupStatus | None) -> None:
        self.version += 1
        kind = _type(status)
        if kind != "unknown" and (kind, "unknown") not in self.rebalances:
            self.rebalances.update(_zeros(kind))   # from 0, so increase() sees the first one
        if e.get("event") == "rebalance":
            key = (kind, reason_kind(e.get("reason")))
            self.rebalances[key] = self.rebalances.get(key, 0) + 1
            if e.get("unowned_partition_ms") is not None:   # issue 19 (cost)
                basis = (kind, str(e.get("unowned_basis")))
                self.unowned_seconds[basis] = (self.unowned_seconds.get(basis, 0.0)
                                               + e["unowned_partition_ms"] / 1000)
            for name, (value_of, buckets) in REBALANCE_HISTOGRAMS.items():
                value = value_of(e)
                if value is not None:
                    hist = self.histograms.get((name, kind)) or self.histograms.setdefault(
                        (name, kind), Histogram(buckets))
                    hist.observe(value)
        state = status.state if status is not None else None
        if state != self.state:
            self.state, self.state_since = state, _seconds(e.get("ts")) or time.time()


_ZEROS: dict[str, dict[tuple[str, str], int]] = {}


def _zeros(kind: str) -> dict[tuple[str, str], int]:
    """A type's rebalance counters at 0, one key tuple per (type, reason kind) for all
    groups (at 100,000 groups, 45 MB of tuples otherwise)."""
    zeros = _ZEROS.get(kind)
    if zeros is None:
        zeros = _ZEROS[kind] = {(kind, reason): 0 for reason in REASON_KINDS}
    return zeros


@dataclass
class GroupView:
    """What a group family reads: the reducer's status and the group's counts."""
    status: GroupStatus
    counts: GroupCounts
    type: str

    def labels(self, *pairs: tuple[str, str]) -> tuple[tuple[str, str], ...]:
        return (("type", self.type),) + pairs


@dataclass(frozen=True)
class GroupFamily:
    family: Family
    samples: Callable[[GroupView], Iterable[Sample]]


GROUP_FAMILIES: list[GroupFamily] = []
# a histogram per group of a figure of its `rebalance` events: name -> (the figure of an
# event, None: not known; the buckets)
REBALANCE_HISTOGRAMS: dict[str, tuple[Callable[[dict], float | None], tuple[float, ...]]] = {}


def group_family(name: str, kind: str, help: str):
    """Register a per-group family: its samples get the cluster and group labels. Its
    lines are built at the group's next event and kept: a value that changes with time
    alone is a timestamp (`time() - x` in PromQL), as Prometheus's naming guide says."""
    def register(fn: Callable[[GroupView], Iterable[Sample]]):
        GROUP_FAMILIES.append(GroupFamily(Family(name, kind, help), fn))
        return fn
    return register


# ---- the group families, in the order of the exposition ---------------------------------
@group_family("groupctl_group_state", "gauge",
              "1 for the group's current state, 0 for the type's other states")
def _state(v: GroupView) -> Iterator[Sample]:
    known = STATES.get(v.type, ())
    current = v.status.state
    for s in known + ((current,) if current not in known else ()):
        yield "", v.labels(("state", str(s))), 1.0 if s == current else 0.0


@group_family("groupctl_group_state_entered_timestamp_seconds", "gauge",
              "Unix time groupctl saw the group enter its current state (when groupctl "
              "first saw the group, if it was in that state already)")
def _state_entered(v: GroupView) -> Iterator[Sample]:
    if v.counts.state_since is not None and v.counts.state == v.status.state:
        yield "", v.labels(("state", str(v.status.state))), v.counts.state_since


@group_family("groupctl_group_generation", "gauge", "Generation of a classic group")
def _generation(v: GroupView) -> Iterator[Sample]:
    if v.status.exists and v.status.generation is not None:
        yield "", v.labels(), v.status.generation


@group_family("groupctl_group_epoch", "gauge", "Group epoch (consumer, share, streams groups)")
def _epoch(v: GroupView) -> Iterator[Sample]:
    if v.status.exists and v.status.group_epoch is not None:
        yield "", v.labels(), v.status.group_epoch


@group_family("groupctl_group_assignment_epoch", "gauge", "Target assignment epoch")
def _assignment_epoch(v: GroupView) -> Iterator[Sample]:
    if v.status.exists and v.status.assignment_epoch is not None:
        yield "", v.labels(), v.status.assignment_epoch


@group_family("groupctl_group_members", "gauge",
              "Members of the group")
def _members(v: GroupView) -> Iterator[Sample]:
    if v.status.exists:
        yield "", v.labels(), len(v.status.members)


@group_family("groupctl_group_members_behind_target", "gauge",
              "Members whose assignment is not yet their target (consumer, streams)")
def _behind(v: GroupView) -> Iterator[Sample]:
    if v.status.exists and v.type in ("consumer", "streams"):
        yield "", v.labels(), _behind_target(v.status)


@group_family("groupctl_group_last_rebalance_timestamp_seconds", "gauge",
              "Unix time the group's last rebalance ended")
def _last_rebalance(v: GroupView) -> Iterator[Sample]:
    ended = _ended(v.status.last_rebalance) if v.status.exists else None
    if ended is not None:
        yield "", v.labels(), ended


@group_family("groupctl_group_rebalances", "counter",
              "Rebalances of the group seen by groupctl, by the kind of their first reason "
              "(classic: stabilized generations; epoch-based: new assignment epochs)")
def _rebalances(v: GroupView) -> Iterator[Sample]:
    for (kind, reason), n in sorted(list(v.counts.rebalances.items())):
        yield "_total", (("type", kind), ("reason", reason)), n


@group_family("groupctl_group_unowned_partition_seconds", "counter",
              "Partition-seconds without an owner during the group's rebalances, summed "
              "over partitions, by the figure's basis (measured; upper_bound: the time a "
              "partition may have been unowned, as the looks around the round bound it "
              "(an eager classic group's whole round, a move between two looks); "
              "lower_bound: part of the round unseen; the events reference: What a "
              "rebalance cost)")
def _unowned(v: GroupView) -> Iterator[Sample]:
    for (kind, basis), seconds in sorted(list(v.counts.unowned_seconds.items())):
        yield "_total", (("type", kind), ("basis", basis)), seconds


@group_family("groupctl_group_last_slowest_member_seconds", "gauge",
              "The member that held the group's last rebalance up longest (consumer, share, "
              "streams groups; label member, and client_id when known) and how long after "
              "its target it caught up; no series when no member was seen behind")
def _slowest(v: GroupView) -> Iterator[Sample]:
    yield from _slowest_figure(v, "slowest_member_ms")


@group_family("groupctl_group_last_slowest_member_held_seconds", "gauge",
              "How long that member held on after it was told of its target (its revoke); "
              "no series where the source cannot see it told (describe of a consumer group "
              "on Kafka 4.3.1: use watch --source records)")
def _slowest_held(v: GroupView) -> Iterator[Sample]:
    yield from _slowest_figure(v, "slowest_member_held_ms")


def _slowest_figure(v: GroupView, field: str) -> Iterator[Sample]:
    """One series per group: the last rebalance's slowest member (a member id is a label
    of one series at a time, so a group never has more than one)."""
    r = v.status.last_rebalance if v.status.exists else None
    if not r or r.get("slowest_member") is None or r.get(field) is None:
        return
    mid = str(r["slowest_member"])
    member = v.status.members.get(mid)
    client = member.client_id if member is not None else None
    yield "", v.labels(("member", mid), ("client_id", client or "")), r[field] / 1000


def rebalance_histogram(name: str, help: str, value_of: Callable[[dict], float | None],
                        buckets: tuple[float, ...]) -> None:
    """Register a per-group histogram of a figure of the group's `rebalance` events."""
    REBALANCE_HISTOGRAMS[name] = (value_of, buckets)

    @group_family(name, "histogram", help)
    def _samples(v: GroupView) -> Iterator[Sample]:
        for (family, kind), hist in sorted(list(v.counts.histograms.items())):
            if family == name:
                yield from hist.samples((("type", kind),))


def _seconds_of(field: str) -> Callable[[dict], float | None]:
    """An event's `field` in milliseconds, as seconds."""
    def value_of(e: dict) -> float | None:
        ms = e.get(field)
        return None if ms is None else ms / 1000
    return value_of


def _duration_seconds(e: dict) -> float | None:
    """A rebalance's duration where it is known to an interval (exact, or the middle of
    the looks' interval); none for a duration unknown or only bounded below."""
    ms, _, most = duration_of(e)
    return None if ms is None or most is None else ms / 1000


rebalance_histogram("groupctl_group_rebalance_duration_seconds",
                    "Duration of the group's rebalances whose duration is known (exact, or "
                    "the middle of the interval between the looks that saw it)",
                    _duration_seconds, REBALANCE_BUCKETS)
rebalance_histogram("groupctl_group_rebalance_slowest_member_seconds",
                    "How long after its target the slowest member of each rebalance caught "
                    "up (consumer, share, streams groups; rebalances with a member seen behind)",
                    _seconds_of("slowest_member_ms"), REBALANCE_BUCKETS)


def _type(status: GroupStatus | None) -> str:
    return (status.type if status is not None else None) or "unknown"


def _behind_target(status: GroupStatus) -> int:
    """Members whose assignment is not yet their target (KIP-848 / streams)."""
    return sum(1 for m in list(status.members.values()) if m.behind_target)


def _ended(rebalance: dict | None) -> float | None:
    if not rebalance:
        return None
    try:
        return _seconds(rebalance.get("ended") or rebalance.get("ts"))
    except (TypeError, ValueError):
        return None


class _Kept:
    """One group's lines of each family (UTF-8), as of its last change: an event, or a lag
    read (read without an event: its time is part of the stamp)."""
    __slots__ = ("stamp", "cluster", "data")

    def __init__(self, name: str, status: GroupStatus, counts: GroupCounts,
                 cluster: str | None, families: list[GroupFamily]):
        self.stamp = stamp(status, counts)   # first: a change during the build builds again
        self.cluster = cluster
        view = GroupView(status, counts, _type(status))
        head = base_text(((("cluster", cluster),) if cluster else ()) + (("group", str(name)),))
        self.data: tuple[bytes, ...] | None = tuple(
            family_lines(g.family, head, g.samples(view)).encode() for g in families)


def stamp(status: GroupStatus, counts: GroupCounts) -> tuple:
    return (counts.version, status.lag_at)
