"""The event record (docs/reference/events.md): one dict per event, written as ndjson (`join --watch -o
ndjson`, `--record FILE`) and read back by the analytics pipeline.

Every event has the envelope {"v", "ts", "source", "cluster", "group", "event"} and the
fields of its type (EVENT_FIELDS). Producers (the probe driver in coordinator/, the passive
watcher in observe/) build the type-specific part and call `envelope()`; a type's fields are
always all present (None when unknown), so a record line never changes shape.

A top-level module so that coordinator/ and observe/ (siblings) can both import it.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, fields
from datetime import datetime, timezone
from enum import Enum
from typing import ClassVar, Iterable, Mapping

SCHEMA_VERSION = 1


class Source(str, Enum):
    """Who made the observation an event tells (the envelope's `source`)."""
    PROBE = "probe"
    DESCRIBE = "describe"
    RECORDS = "records"          # the coordinator's own records (__consumer_offsets)
    BROKER_LOG = "broker-log"
    CLIENT_LOG = "client-log"


class EventKind(str, Enum):
    """The event types: the one vocabulary (str-valued: JSON stays the same)."""
    SNAPSHOT = "snapshot"
    STATE = "state"
    GENERATION = "generation"
    EPOCH = "epoch"
    TYPE_CHANGED = "type_changed"
    MEMBER_JOINED = "member_joined"
    MEMBER_LEFT = "member_left"
    ASSIGNMENT = "assignment"
    REBALANCE = "rebalance"
    PROBE = "probe"
    ERROR = "error"

    def __str__(self) -> str:
        return self.value


SOURCES = tuple(s.value for s in Source)

EVENT_FIELDS: dict[str, tuple[str, ...]] = {
    "snapshot": ("state", "type", "generation", "group_epoch", "assignment_epoch", "protocol",
                 "members"),
    "state": ("state", "previous"),
    "generation": ("generation", "protocol", "leader", "members"),
    "epoch": ("group_epoch", "assignment_epoch"),
    "type_changed": ("type", "previous"),
    "member_joined": ("member_id", "instance_id", "client_id", "host"),
    "member_left": ("member_id", "instance_id", "client_id", "host"),
    "assignment": ("member_id", "generation", "assigned", "added", "revoked"),
    "rebalance": ("from_generation", "to_generation", "started", "ended", "duration_ms",
                  "duration_basis", "duration_min_ms", "duration_max_ms", "members_before", "members_after", "moved_partitions", "reason",
                  "unowned_partition_ms", "unowned_partitions_max_ms", "unowned_basis",
                  "slowest_member", "slowest_member_ms", "slowest_member_held_ms"),
    "probe": ("action", "member_id", "generation", "error"),
    "error": ("api", "code", "name", "retriable"),
}
ENVELOPE = ("v", "ts", "source", "cluster", "group", "event")
PROBE_ACTIONS = ("joined", "synced", "heartbeat_error", "rejoining", "left", "fenced", "failed",
                 "acknowledged")


_last_ts: tuple[float, str] = (float("nan"), "")   # many events share a time (first looks)


def iso_ts(epoch_seconds: float | None = None) -> str:
    """UTC ISO-8601 with milliseconds and a Z: 2026-11-22T12:00:00.123Z."""
    global _last_ts
    t = time.time() if epoch_seconds is None else epoch_seconds
    last = _last_ts
    if t == last[0]:
        return last[1]
    dt = datetime.fromtimestamp(t, tz=timezone.utc)
    text = dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"
    _last_ts = (t, text)
    return text


def envelope(body: "Event | dict", *, group: str, cluster: str | None, source: str = "probe",
             at: float | None = None) -> dict:
    """`body` (an Event, or {"event": TYPE, ...fields}) inside the event envelope. Missing
    fields of the type become None; extra fields are kept (a new field is allowed, a renamed
    one not)."""
    if isinstance(body, Event):
        body = body.to_dict()
    kind = body["event"]
    kind = kind.value if isinstance(kind, Enum) else kind
    if kind not in EVENT_FIELDS:
        raise ValueError(f"unknown event type {kind!r}")
    source = source.value if isinstance(source, Enum) else source
    if source not in SOURCES:
        raise ValueError(f"unknown event source {source!r}")
    out = {"v": SCHEMA_VERSION, "ts": iso_ts(at), "source": source, "cluster": cluster,
           "group": group, "event": kind}
    for name in EVENT_FIELDS[kind]:
        out[name] = body.get(name)
    for name, value in body.items():
        if name not in out:
            out[name] = value
    return out


def duration_of(rebalance: Mapping) -> tuple[int | None, int | None, int | None]:
    """A `rebalance` record's duration as (figure, least, most) in ms, None where not
    known (`most` None: not bounded above). Records written before the duration's basis
    was told give their `duration_ms` as exact, or as a lower bound when flagged so."""
    ms = rebalance.get("duration_ms")
    if ms is None:
        return None, None, None
    if rebalance.get("duration_basis") is not None:
        return ms, rebalance.get("duration_min_ms"), rebalance.get("duration_max_ms")
    if rebalance.get("duration_is_lower_bound"):
        return ms, ms, None
    return ms, ms, ms


def tp_list(mapping: Mapping[str, Iterable[int]] | None) -> list[dict] | None:
    """{topic: partitions} -> [{"topic", "partitions"}] sorted, empty topics dropped."""
    if mapping is None:
        return None
    return [{"topic": t, "partitions": sorted(p)} for t, p in sorted(mapping.items()) if p]


def partition_changes(old: dict | None, new: dict | None, *, known_before: bool = True
                      ) -> tuple[list[dict] | None, list[dict] | None]:
    """(added, revoked) as tp_lists from {topic: partitions} before and after; (None, None)
    when either side is unknown. `known_before=False`: a member seen for the first time,
    whose missing `old` counts as empty (all it holds was added)."""
    if new is None or (old is None and known_before):
        return None, None
    old = old or {}
    return (tp_list({t: p - old.get(t, frozenset()) for t, p in new.items()}),
            tp_list({t: p - new.get(t, frozenset()) for t, p in old.items()}))


def tp_map(items: list[dict] | None) -> dict[str, set[int]]:
    """The inverse of tp_list."""
    return {i["topic"]: set(i["partitions"]) for i in items or ()}


# ---- typed events -------------------------------------------------------------------------
# What producers build: one frozen dataclass per event type, `to_dict()` the type-specific part
# of the record ({"event": TYPE, ...fields}); `envelope()` takes either form.

@dataclass(frozen=True)
class Event:
    KIND: ClassVar[str] = ""

    @property
    def kind(self) -> EventKind:
        return EventKind(self.KIND)

    def to_dict(self) -> dict:
        cls = type(self)
        known = _SHAPES.get(cls)
        if known is None:   # each type's fields, read once (every told event comes here)
            known = _SHAPES[cls] = (str(cls.KIND), tuple(f.name for f in fields(self)))
        kind, names = known
        out = {"event": kind}
        for name in names:
            out[name] = getattr(self, name)
        return out


_SHAPES: dict[type, tuple[str, tuple[str, ...]]] = {}


@dataclass(frozen=True)
class Snapshot(Event):
    """The group in full as first seen by a watch or probe, again after a gap in contact,
    and when a group that was gone (`state` Dead) is there again: its members [{member_id,
    instance_id, client_id, host, assignment, target_assignment, subscription}] (`subscription`:
    its subscribed topics, null when not known; streams members add `tasks`). `gap_ms` (an extra field): null on the first look, otherwise the time since
    the last look that showed the group."""
    KIND: ClassVar[str] = EventKind.SNAPSHOT
    state: str | None
    type: str | None = None
    generation: int | None = None
    group_epoch: int | None = None
    assignment_epoch: int | None = None
    protocol: str | None = None
    members: list[dict] | None = None
    gap_ms: int | None = None


@dataclass(frozen=True)
class StateChanged(Event):
    """The group's state changed (for the probe: the state its own member state implies,
    named in the extra field `member_state`)."""
    KIND: ClassVar[str] = EventKind.STATE
    state: str | None
    previous: str | None = None
    member_state: str | None = None


@dataclass(frozen=True)
class GenerationStarted(Event):
    KIND: ClassVar[str] = EventKind.GENERATION
    generation: int | None
    protocol: str | None = None
    leader: str | None = None
    members: list[str] | None = None


@dataclass(frozen=True)
class EpochChanged(Event):
    KIND: ClassVar[str] = EventKind.EPOCH
    group_epoch: int | None
    assignment_epoch: int | None = None


@dataclass(frozen=True)
class TypeChanged(Event):
    """The group changed type: a classic group became a consumer group when its first
    KIP-848 member joined, and back when the last KIP-848 member left (Kafka's
    group.consumer.migration.policy, bidirectional by default)."""
    KIND: ClassVar[str] = EventKind.TYPE_CHANGED
    type: str | None
    previous: str | None = None


@dataclass(frozen=True)
class _MemberIdentity(Event):
    member_id: str
    instance_id: str | None = None
    client_id: str | None = None
    host: str | None = None


@dataclass(frozen=True)
class MemberJoined(_MemberIdentity):
    """A member first in the group, with what a look showed of it (extra fields, null when
    not known): `assignment` (tp_list), `subscription` (its subscribed topics) and, for a
    streams member, `tasks` ({"active"|"standby"|"warmup": [{"subtopology_id",
    "partitions"}]})."""
    KIND: ClassVar[str] = EventKind.MEMBER_JOINED
    assignment: list[dict] | None = None
    subscription: list[str] | None = None
    tasks: dict | None = None


@dataclass(frozen=True)
class MemberLeft(_MemberIdentity):
    KIND: ClassVar[str] = EventKind.MEMBER_LEFT


@dataclass(frozen=True)
class AssignmentChanged(Event):
    """One member's assignment in a generation (tp_list form); added/revoked null when the
    previous one is unknown."""
    KIND: ClassVar[str] = EventKind.ASSIGNMENT
    member_id: str | None
    generation: int | None
    assigned: list[dict] | None
    added: list[dict] | None = None
    revoked: list[dict] | None = None


@dataclass(frozen=True)
class TaskAssignmentChanged(AssignmentChanged):
    """A streams member's assignment: `assigned`/`added`/`revoked` are the input partitions
    of its active tasks (as describe's `assignment`), and the extra fields `tasks`,
    `tasks_added`, `tasks_revoked` its tasks by kind: {"active"|"standby"|"warmup":
    [{"subtopology_id", "partitions"}]} (the added/revoked ones null when the previous
    tasks are unknown)."""
    tasks: dict | None = None
    tasks_added: dict | None = None
    tasks_revoked: dict | None = None


@dataclass(frozen=True)
class Rebalanced(Event):
    """One rebalance, from the generation (or epoch) before to the one after; the extra field
    `assignments` holds every member's assignment after it (null when unknown), with
    `subscriptions` (member -> its subscribed topics, null when not known) and `identities`
    (member -> {instance_id, client_id, host}) of the same members. `started`
    is when the observer saw it begin (null when it did not: under way at its first look,
    begun during a gap in contact, or begun and ended between two looks).

    Its duration (observe/story/round.py) with how it is known, `duration_basis`: "exact" (the
    probe's own member's times; the broker's), "interval" (both ends seen by looks: the
    true duration lies in `duration_min_ms`..`duration_max_ms`, `duration_ms` is the
    middle), "lower_bound" (under way at the first look: at least `duration_ms`,
    `duration_max_ms` null; `duration_is_lower_bound` says so too), "unknown" (every
    duration field null: a coordinator's record holds no start; a round not seen at all).
    `seen` is false for a round the broker completed between two looks (a classic
    generation that moved on by more than one): it is told so that every round counts,
    and all it is known by is its generations. `watch --source auto` tells a classic
    round from the records (source "records": its end at the record's time) with its start
    bounded by describe's looks: an "interval" (or "lower_bound") with the extra field
    `duration_source` "records+describe".

    What it cost: `unowned_partition_ms` (the sum over
    partitions of the time between leaving one member and reaching the next),
    `unowned_partitions_max_ms` (the longest single partition's), `unowned_basis`
    ("measured" when a witness saw both ends; "upper_bound" when the looks around the
    round bound it: an eager classic group's round, a partition that moved between two
    looks; "lower_bound" when part of the round was unseen; null with the figures when not
    known), and the extra fields
    `unowned_longest` ([{topic, partition, ms}], the longest first) and
    `unowned_unsubscribed` (tp_list: left unowned, no live member subscribes to them,
    reported apart). Who held it up (consumer, share, streams groups): `slowest_member`,
    the last member to catch up with its target; `slowest_member_ms`, how long after its
    target was set it got there (this includes the wait for the member's next heartbeat,
    when it hears of the target); `slowest_member_held_ms`, how long it held on after it
    was told (its revoke; 0 when it had nothing to give up; null where the source cannot
    see the moment it was told: ConsumerGroupDescribe on Kafka 4.3.1, see
    docs/reference/events.md). All null when no look caught a member behind; classic
    groups: always null, no member's own progress is seen."""
    KIND: ClassVar[str] = EventKind.REBALANCE
    from_generation: int | None
    to_generation: int | None
    started: str | None
    ended: str
    members_before: list[str] | None
    members_after: list[str] | None
    moved_partitions: int | None
    reason: str | None
    duration_ms: int | None = None
    duration_min_ms: int | None = None
    duration_max_ms: int | None = None
    duration_basis: str | None = "unknown"
    assignments: dict[str, list[dict] | None] | None = None
    duration_is_lower_bound: bool = False
    seen: bool = True
    unowned_partition_ms: int | None = None
    unowned_partitions_max_ms: int | None = None
    unowned_basis: str | None = None
    unowned_longest: list[dict] | None = None
    unowned_unsubscribed: list[dict] | None = None
    slowest_member: str | None = None
    slowest_member_ms: int | None = None
    slowest_member_held_ms: int | None = None
    subscriptions: dict[str, list[str] | None] | None = None
    identities: dict[str, dict] | None = None


@dataclass(frozen=True)
class TaskRebalanced(Rebalanced):
    """A streams group's rebalance: the extra field `tasks` holds every member's tasks
    after it ({member: {"active"|"standby"|"warmup": [...]}}); `moved_partitions` counts
    the input partitions of active tasks that changed owner."""
    tasks: dict[str, dict] | None = None


@dataclass(frozen=True)
class ProbeAction(Event):
    """Something the probe's own member did (its action: one of PROBE_ACTIONS); `reason` is an extra field."""
    KIND: ClassVar[str] = EventKind.PROBE
    action: str
    member_id: str | None = None
    generation: int | None = None
    error: str | None = None
    reason: str | None = None


@dataclass(frozen=True)
class EpochAssignmentChanged(Event):
    """A KIP-848 member's own assignment at its member epoch (an "assignment" event with
    `member_epoch` in place of `generation`)."""
    KIND: ClassVar[str] = EventKind.ASSIGNMENT
    member_id: str | None
    member_epoch: int | None
    assigned: list[dict] | None
    added: list[dict] | None = None
    revoked: list[dict] | None = None


@dataclass(frozen=True)
class EpochProbeAction(Event):
    """Something a KIP-848 probe member did (a "probe" event with `member_epoch`)."""
    KIND: ClassVar[str] = EventKind.PROBE
    action: str
    member_id: str | None = None
    member_epoch: int | None = None
    error: str | None = None
    reason: str | None = None


@dataclass(frozen=True)
class ErrorSeen(Event):
    """An error code a response carried."""
    KIND: ClassVar[str] = EventKind.ERROR
    api: str
    code: int
    name: str
    retriable: bool
