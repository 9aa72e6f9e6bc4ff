"""The read model of a group: what `describe` shows, built from decoded responses.

Pure functions from response dicts (snake_case fields of Kafka's JSON specs) to
GroupDescription, whose to_dict() is the JSON contract of docs/reference/json-fields.md. No I/O here; the
client-facing half lives in observe/describe.py.
"""
from __future__ import annotations

import operator
import sys
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING

from ...protocol.types import DecodeError

if TYPE_CHECKING:  # pragma: no cover - decoded bodies, for the type checker
    from ...protocol.bodies import (
        ConsumerGroupDescribeResponseGroups, ConsumerGroupDescribeResponseGroupsMembersAssignment,
        DescribeGroupsResponseGroups, DescribeGroupsResponseGroupsMembers,
        ShareGroupDescribeResponseGroupsMembersAssignment,
    )

CLASSIC = "classic"
CONSUMER = "consumer"
SHARE = "share"
STREAMS = "streams"


class GroupState(str, Enum):
    """The coordinator's group states over every type (Kafka's ClassicGroupState,
    ConsumerGroupState, ShareGroupState, StreamsGroupState); Dead also stands for a group
    that does not exist. str-valued: compares and serialises as the broker's name."""
    EMPTY = "Empty"
    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    ASSIGNING = "Assigning"
    RECONCILING = "Reconciling"
    NOT_READY = "NotReady"
    STABLE = "Stable"
    DEAD = "Dead"

    def __str__(self) -> str:
        return self.value


REBALANCING_STATES = frozenset({GroupState.PREPARING_REBALANCE, GroupState.COMPLETING_REBALANCE,
                                GroupState.ASSIGNING, GroupState.RECONCILING})
DEAD = GroupState.DEAD
SETTLED_STATES = frozenset({GroupState.STABLE, GroupState.EMPTY})


_UTF16_NATIVE = "utf-16-le" if sys.byteorder == "little" else "utf-16-be"


_POW31 = [1]  # 31**k mod 2**32 at k, grown on demand


def java_string_hash(text: str) -> int:
    """Java's String.hashCode over UTF-16 code units, as a signed 32-bit int: Java's
    h = 31*h + unit (mod 2**32) unrolled into sum(unit * 31**(n-1-i)), in C (map and
    sum), as describe --all places every group of a fleet."""
    units = (text.encode("ascii") if text.isascii()  # an ASCII char is one code unit
             else memoryview(text.encode(_UTF16_NATIVE)).cast("H"))  # UTF-16 code units
    n = len(units)
    if not n:
        return 0
    while len(_POW31) < n:
        _POW31.append(_POW31[-1] * 31 & 0xFFFFFFFF)
    h = sum(map(operator.mul, units, _POW31[n - 1::-1])) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def coordinator_partition(group_id: str, num_partitions: int = 50) -> int:
    """The __consumer_offsets partition holding the group (Kafka's Utils.abs semantics:
    Integer.MIN_VALUE maps to 0)."""
    h = java_string_hash(group_id)
    return (0 if h == -(1 << 31) else abs(h)) % num_partitions


@dataclass
class TopicPartitions:
    """Partitions of one topic, sorted."""

    topic: str
    partitions: list[int]

    def to_dict(self) -> dict:
        return {"topic": self.topic, "partitions": self.partitions}


def partition_map(tps: list[TopicPartitions] | None) -> dict[str, frozenset[int]] | None:
    """[TopicPartitions] -> {topic: partitions}, topics without partitions dropped; None
    (not known) stays None."""
    if tps is None:
        return None
    out: dict[str, set[int]] = {}
    for tp in tps:
        out.setdefault(tp.topic, set()).update(tp.partitions)
    return {t: frozenset(p) for t, p in out.items() if p}


def topic_list(pairs) -> list[TopicPartitions]:
    """[(topic, partitions), ...] merged per topic (a topic may come more than once: the
    cooperative assignors of librdkafka write one entry per added batch), sorted."""
    merged: dict[str, set[int]] = {}
    for topic, partitions in pairs:
        merged.setdefault(topic, set()).update(partitions)
    return [TopicPartitions(t, sorted(p)) for t, p in sorted(merged.items())]


@dataclass
class Member:
    """One member of a group, with its decoded subscription and assignment."""

    member_id: str
    client_id: str | None = None
    host: str | None = None
    instance_id: str | None = None
    rack: str | None = None
    member_epoch: int | None = None
    subscription: dict | None = None
    assignment: list[TopicPartitions] | None = None
    target_assignment: list[TopicPartitions] | None = None
    subscribed_topic_regex: str | None = None
    member_protocol: str | None = None    # classic, consumer, share, streams; None unknown
    extra: dict = field(default_factory=dict)  # type-specific fields (streams: process_id...)
    raw_metadata: bytes | None = None     # kept when the bytes are not consumer protocol
    raw_assignment: bytes | None = None
    decode_error: str | None = None

    @property
    def partition_count(self) -> int:
        return sum(len(tp.partitions) for tp in self.assignment or [])

    def owned(self) -> set[tuple[str, int]]:
        return {(tp.topic, p) for tp in self.assignment or [] for p in tp.partitions}

    def to_dict(self) -> dict:
        out = {
            "member_id": self.member_id, "instance_id": self.instance_id,
            "client_id": self.client_id, "host": self.host, "rack": self.rack,
            "member_epoch": self.member_epoch, "subscription": self.subscription,
            "assignment": None if self.assignment is None else [tp.to_dict() for tp in self.assignment],
            "target_assignment": None if self.target_assignment is None
            else [tp.to_dict() for tp in self.target_assignment],
            "partitions": self.partition_count, "member_protocol": self.member_protocol,
        } | self.extra
        if self.subscribed_topic_regex is not None:
            out["subscribed_topic_regex"] = self.subscribed_topic_regex
        if self.raw_metadata is not None:
            out["raw_metadata"] = self.raw_metadata.hex()
        if self.raw_assignment is not None:
            out["raw_assignment"] = self.raw_assignment.hex()
        if self.decode_error is not None:
            out["decode_error"] = self.decode_error
        return out


@dataclass(slots=True)  # describe --all holds hundreds of thousands
class OffsetRow:
    """One partition's committed offset, log-end offset and lag for a group."""

    topic: str
    partition: int
    committed: int | None
    log_end: int | None
    member_id: str | None

    @property
    def lag(self) -> int | None:
        if self.committed is None or self.log_end is None:
            return None
        return max(0, self.log_end - self.committed)

    def to_dict(self) -> dict:
        committed, log_end = self.committed, self.log_end
        lag = None if committed is None or log_end is None else max(0, log_end - committed)
        return {"topic": self.topic, "partition": self.partition, "committed": committed,
                "log_end": log_end, "lag": lag, "member_id": self.member_id}


_TOPIC_LAG = operator.itemgetter("topic", "lag")   # an offset row's dict -> (topic, lag)


@dataclass
class GroupDescription:
    """Everything `describe` shows about one group; to_dict() is the JSON."""

    group: str
    type: str | None = None
    state: str | None = None
    protocol_type: str | None = None
    protocol: str | None = None
    generation: int | None = None
    group_epoch: int | None = None
    assignment_epoch: int | None = None
    coordinator: dict | None = None
    coordinator_partition: int | None = None
    members: list[Member] = field(default_factory=list)
    offsets: list[OffsetRow] = field(default_factory=list)
    share_offsets: list | None = None  # share groups: observe.share.ShareOffsetRow
    extra: dict = field(default_factory=dict)  # type-specific fields (streams: topology...)
    error: str | None = None

    @property
    def rebalancing(self) -> bool:
        return self.state in REBALANCING_STATES

    @property
    def lag_total(self) -> int | None:
        return self._lags()[1]

    @property
    def classic_members(self) -> int | None:
        """Consumer and streams groups: how many members still speak the classic protocol."""
        if self.type not in (CONSUMER, STREAMS):
            return None
        return sum(1 for m in self.members if m.member_protocol == CLASSIC)

    def lag_by_topic(self) -> dict[str, int | None]:
        return self._lags()[0]

    def _lags(self, offsets: list[dict] | None = None
              ) -> tuple[dict[str, int | None], int | None]:
        """({topic: lag, None where no row's lag is known}, the total) in one pass: each
        row's lag computed once (describe --all writes hundreds of thousands of rows);
        `offsets`: the offset rows' dicts, when made already (their lags are in them)."""
        totals: dict[str, int | None] = {}
        total: int | None = None
        pairs = (map(_TOPIC_LAG, offsets) if offsets is not None
                 else ((row.topic, row.lag) for row in self.offsets))
        for rows in (pairs, ((row.topic, row.lag) for row in self.share_offsets or ())):
            for topic, lag in rows:
                if lag is None:
                    totals.setdefault(topic, None)
                else:
                    totals[topic] = (totals.get(topic) or 0) + lag
                    total = lag if total is None else total + lag
        return totals, total

    def to_dict(self) -> dict:
        """The JSON contract."""
        offsets = [row.to_dict() for row in self.offsets]
        lag_by_topic, lag_total = self._lags(offsets)
        out = {
            "group": self.group, "type": self.type, "state": self.state,
            "protocol_type": self.protocol_type, "protocol": self.protocol,
            "generation": self.generation, "group_epoch": self.group_epoch,
            "assignment_epoch": self.assignment_epoch, "coordinator": self.coordinator,
            "coordinator_partition": self.coordinator_partition,
            "rebalancing": self.rebalancing,
            "classic_members": self.classic_members,
            "members": [m.to_dict() for m in self.members],
            "offsets": offsets,
            "lag_by_topic": lag_by_topic,
            "lag_total": lag_total,
        }
        if self.extra or self.share_offsets is not None:  # update = `|`: a key of extra's
            out.update(self._typed())                     # own keeps its place above
        if self.error is not None:
            out["error"] = self.error
        return out

    def _typed(self) -> dict:
        out = dict(self.extra)
        if self.share_offsets is not None:
            out["share_offsets"] = [row.to_dict() for row in self.share_offsets]
        return out


def none_if_empty(value):
    return value if value not in ("", None) else None


def classic_member(raw: DescribeGroupsResponseGroupsMembers, protocol_type: str,
                   protocol: str | None) -> Member:
    """A member of a DescribeGroups response, with consumer-protocol bytes decoded.
    Metadata and assignment are empty while the group rebalances: then both stay None."""
    member = Member(member_id=raw["member_id"], client_id=raw["client_id"],
                    host=none_if_empty(raw["client_host"]),
                    instance_id=raw.get("group_instance_id"), member_protocol=CLASSIC)
    metadata, assignment = raw["member_metadata"], raw["member_assignment"]
    if protocol_type != "consumer":
        member.raw_metadata = metadata or None
        member.raw_assignment = assignment or None
        return member
    # imported here: a fleet's groups are mostly Empty, and describe --all need not load
    # the consumer-protocol codecs for them (a few ms of every start)
    from ...protocol.consumer import decode_assignment, decode_subscription

    if metadata:
        try:
            sub = decode_subscription(metadata)
            member.subscription = sub.to_dict(assignor=protocol)
            member.rack = member.subscription.get("rack")
        except DecodeError as exc:
            member.raw_metadata, member.decode_error = metadata, f"subscription: {exc}"
    if assignment:
        try:
            member.assignment = topic_list((tp.topic, tp.partitions) for tp
                                            in decode_assignment(assignment).assigned_partitions)
        except DecodeError as exc:
            member.raw_assignment, member.decode_error = assignment, f"assignment: {exc}"
    elif metadata:
        member.assignment = []  # Stable with nothing assigned to this member
    return member


def infer_classic_generation(members: list[Member]) -> int | None:
    """Every member rejoins in a classic rebalance and its subscription (v2+) carries the
    generation it held when it rejoined, so the current generation is one more than the
    highest such value. Unknown (None) when no member reports one (all new, or v0/v1)."""
    gens = [g for m in members if m.subscription
            for g in (m.subscription.get("generation"),) if g is not None and g >= 0]
    return max(gens) + 1 if gens else None


def classic_group(raw: DescribeGroupsResponseGroups) -> GroupDescription:
    """One `groups[]` entry of a DescribeGroups response (error already checked)."""
    protocol_type = none_if_empty(raw["protocol_type"])
    protocol = none_if_empty(raw["protocol_data"])
    members = [classic_member(m, protocol_type or "", protocol) for m in raw["members"]]
    desc = GroupDescription(group=raw["group_id"], type=CLASSIC, state=raw["group_state"],
                            protocol_type=protocol_type, protocol=protocol, members=members)
    if desc.state == "Stable":
        desc.generation = infer_classic_generation(members)
    return desc


def epoch_assignment(raw: ConsumerGroupDescribeResponseGroupsMembersAssignment
                     | ShareGroupDescribeResponseGroupsMembersAssignment | None
                     ) -> list[TopicPartitions]:
    if not raw:
        return []
    # a topic the broker no longer knows by name (deleted) keeps its id
    return topic_list((tp["topic_name"] or tp["topic_id"], tp["partitions"])
                       for tp in raw["topic_partitions"])


MEMBER_TYPES = {0: CLASSIC, 1: CONSUMER}  # ConsumerGroupDescribe v1 MemberType; -1 unknown


def consumer_group(raw: ConsumerGroupDescribeResponseGroups) -> GroupDescription:
    """One `groups[]` entry of a ConsumerGroupDescribe response (KIP-848)."""
    members = []
    for m in raw["members"]:
        members.append(Member(
            member_id=m["member_id"], client_id=m["client_id"], host=none_if_empty(m["client_host"]),
            instance_id=m["instance_id"], rack=m["rack_id"], member_epoch=m["member_epoch"],
            subscription={"version": None, "topics": sorted(m["subscribed_topic_names"] or []),
                          "owned_partitions": None, "generation": None, "rack": m["rack_id"],
                          "user_data": None},
            subscribed_topic_regex=none_if_empty(m["subscribed_topic_regex"]),
            assignment=epoch_assignment(m["assignment"]),
            target_assignment=epoch_assignment(m["target_assignment"]),
            member_protocol=MEMBER_TYPES.get(m.get("member_type", -1)),
        ))
    return GroupDescription(
        group=raw["group_id"], type=CONSUMER, state=raw["group_state"], protocol_type="consumer",
        protocol=none_if_empty(raw["assignor_name"]), group_epoch=raw["group_epoch"],
        assignment_epoch=raw["assignment_epoch"], members=members)


def offset_rows(committed: dict[tuple[str, int], int | None], log_end: dict[tuple[str, int], int | None],
                members: list[Member]) -> list[OffsetRow]:
    """Rows for every partition that has a committed offset or an owner, sorted.
    A partition without a committed offset has committed=None and so lag=None."""
    owners = {tp: m.member_id for m in members for tp in m.owned()}
    if not owners and not log_end:  # most groups of a fleet: Empty, offsets only
        return [OffsetRow(t, p, offset, None, None) for (t, p), offset in sorted(committed.items())]
    keys = sorted(set(committed) | set(owners))
    return [OffsetRow(t, p, committed.get((t, p)), log_end.get((t, p)), owners.get((t, p)))
            for t, p in keys]
