"""Replaying the coordinator's records into group descriptions, as the broker's
GroupMetadataManager.replay rebuilds its groups: one observe.model GroupDescription per
change, with the broker's record timestamp, for the same rebalance story every source feeds.

    for at, desc in replay(batches, topic_names={topic_id: name}):
        story.observe(desc, at=at)

`batches` yields the records of one batch at a time. A snapshot is the state after one
write of the coordinator (a classic generation; a consumer group's epoch bump with its new
target and member assignments; a member's leave). A batch may hold several writes (the
coordinator lingers before it appends: two members leaving 2 ms apart share a batch), so
a batch is cut into writes: the coordinator stamps every record of one write with the
same time (CoordinatorRuntime's append reads its clock once), and within one millisecond
a write that begins (a member's metadata, or the tombstones of a leaving member, after an
epoch bump already read; a second classic generation) is cut as well. Every group epoch
and generation the coordinator wrote is therefore one snapshot.

What the records hold, and so what a snapshot can say:
- classic: GroupMetadata is the whole group, written when the group is created (Empty,
  generation 0), when the leader's SyncGroup completes a generation (members with
  subscriptions and the leader's assignments; a member the leader gave nothing has a
  zero-byte assignment: a probe, a member beyond the partitions), when a generation
  completes with no member ("is now empty") and on a static member's replacement. As
  the broker replays it (GroupMetadataManager: `members.isEmpty() ? EMPTY : STABLE`), a
  classic snapshot is Stable with members and Empty without: the start of a round
  (PreparingRebalance) and its join phase are never written. Its `current_state_timestamp`
  is when the group entered the state it was in at the write: for a generation, the end
  of its join phase (the broker's "Stabilized group G generation N" line), kept as
  `extra["joined_ms"]`; with the record's own time it bounds the generation's sync phase,
  the one part of a classic round the records hold (observe.unowned).
- consumer / share / streams: the group epoch, each member's metadata, the target
  assignment (epoch, timestamp, per member) and each member's current assignment (member
  epoch, previous epoch, state, partitions pending revocation). The group state is derived
  as the broker derives it (Empty, Assigning, Reconciling, Stable).
- a tombstone of the group's own record: the group was deleted (state Dead); a classic
  group converted to a consumer group (or back) changes type in one batch.
Topic ids are named from `topic_names` (the cluster's metadata); an unknown id stays an id.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from .model import CLASSIC, CONSUMER, SHARE, STREAMS, GroupDescription, Member, classic_member, topic_list
from .streams import task_partitions, input_topics

GROUP_METADATA = 2
JOINED = "joined_ms"   # a classic generation's record: when its join phase ended (module doc)
EPOCH = {3: CONSUMER, 11: SHARE, 17: STREAMS}
MEMBER_METADATA = {5: CONSUMER, 10: SHARE, 19: STREAMS}
TARGET_METADATA = {6: CONSUMER, 12: SHARE, 20: STREAMS}
TARGET_MEMBER = {7: CONSUMER, 13: SHARE, 21: STREAMS}
CURRENT_MEMBER = {8: CONSUMER, 14: SHARE, 22: STREAMS}
STREAMS_TOPOLOGY = 23
MEMBER_STATES = {0: "STABLE", 1: "UNREVOKED_PARTITIONS", 2: "UNRELEASED_PARTITIONS",
                 127: "UNKNOWN"}   # Kafka's modern MemberState (consumer and share groups)
# streams groups have their own MemberState, numbered from 1 (coordinator.group.streams)
STREAMS_MEMBER_STATES = {1: "STABLE", 2: "UNREVOKED_TASKS", 3: "UNRELEASED_TASKS", 127: "UNKNOWN"}
TASK_KINDS = ("active", "standby", "warmup")


@dataclass(slots=True)
class _Modern:
    """A consumer, share or streams group as its records left it."""

    type: str
    epoch: int | None = None
    assignment_epoch: int | None = None
    assignment_timestamp: int | None = None
    metadata: dict = field(default_factory=dict)   # member id -> member metadata value
    target: dict = field(default_factory=dict)     # member id -> target assignment value
    current: dict = field(default_factory=dict)    # member id -> current assignment value


@dataclass(slots=True)   # one per group a tail replays: 100,000 at fleet size
class GroupRecords:
    classic: dict | None = None       # the last GroupMetadata value
    modern: _Modern | None = None
    seen: bool = False                # any record of the group so far
    committed: bool = False           # it committed offsets since its last deletion (the
                                      # records tail tells a group that did nothing else)
    topology: dict | None = None      # a streams group's topology: the topics its tasks read

    def copy(self) -> "GroupRecords":
        """The state as of now, unchanged by later records (a GroupMetadata value is
        replaced whole, never changed: shared)."""
        m = self.modern
        return GroupRecords(self.classic, None if m is None else _Modern(
            m.type, m.epoch, m.assignment_epoch, m.assignment_timestamp, dict(m.metadata),
            dict(m.target), dict(m.current)), self.seen, self.committed, self.topology)


# records that open a write of a modern group: a member's metadata (joining, or changing
# its subscription) and the tombstones of a leaving member come before the epoch bump
_OPENS_WRITE = frozenset(MEMBER_METADATA)
_LEAVING = frozenset(CURRENT_MEMBER) | frozenset(TARGET_MEMBER)


@dataclass
class Write:
    """The records of one coordinator write of one group, as far as read."""

    timestamp: int                    # ms: every record of a write has the same
    epoch: bool = False               # a (non-tombstone) group epoch record was read
    generation: bool = False          # a GroupMetadata record was read

    def ends_before(self, rec) -> bool:
        if rec.timestamp != self.timestamp:
            return True
        if rec.type == GROUP_METADATA:
            return self.generation and rec.value is not None
        return self.epoch and (rec.type in _OPENS_WRITE
                               or rec.type in _LEAVING and rec.value is None)

    def add(self, rec) -> None:
        if rec.type == GROUP_METADATA:
            self.generation = True
        elif rec.type in EPOCH and rec.value is not None:
            self.epoch = True


def replay(batches: Iterable[list], topic_names: dict[str, str] | None = None
           ) -> Iterator[tuple[float, GroupDescription]]:
    """(timestamp in seconds, GroupDescription) after each write that changed a group."""
    names = topic_names or {}
    groups: dict[str, GroupRecords] = {}
    last: dict[str, dict] = {}
    writes: dict[str, Write] = {}    # group -> its write being read (this batch)

    def snapshot(group: str, write: Write):
        desc = describe(group, groups[group], names)
        shown = desc.to_dict()
        if shown != last.get(group):
            last[group] = shown
            return write.timestamp / 1000, desc
        return None

    for records in batches:
        for rec in records:
            group = rec.group
            if group is None or rec.error is not None or rec.type is None:
                continue
            write = writes.get(group)
            if write is not None and write.ends_before(rec):
                del writes[group]
                if (snap := snapshot(group, write)) is not None:
                    yield snap
            if apply(groups.setdefault(group, GroupRecords()), rec):
                writes.setdefault(group, Write(rec.timestamp)).add(rec)
        for group, write in writes.items():
            if (snap := snapshot(group, write)) is not None:
                yield snap
        writes.clear()


def apply(g: GroupRecords, rec) -> bool:
    """One record into the group's state; whether it was a record the state tracks."""
    t, v = rec.type, rec.value
    if t == STREAMS_TOPOLOGY:
        g.topology = v    # read with the tasks; no state of its own
        return False
    if t == GROUP_METADATA:
        g.classic, g.seen = v, True
        if v is None:
            g.committed = False   # deleted, its offsets with it
        return True
    kind = (EPOCH.get(t) or MEMBER_METADATA.get(t) or TARGET_METADATA.get(t)
            or TARGET_MEMBER.get(t) or CURRENT_MEMBER.get(t))
    if kind is None:
        return False   # offset commits, topology, regexes, partition metadata
    g.seen = True
    if t in EPOCH and v is None:
        g.modern = None    # the group's deletion (or its conversion back to classic)
        return True
    if g.modern is None or g.modern.type != kind:
        g.modern = _Modern(kind)
    m = g.modern
    member = (rec.key or {}).get("member_id")
    if t in EPOCH:
        m.epoch = v["epoch"]
    elif t in TARGET_METADATA:
        if v is not None:
            m.assignment_epoch, m.assignment_timestamp = v["assignment_epoch"], v.get("assignment_timestamp")
    else:
        table = (m.metadata if t in MEMBER_METADATA else m.target if t in TARGET_MEMBER
                 else m.current)
        if v is None:
            table.pop(member, None)
        else:
            table[member] = v
    return True


def describe(group: str, g: GroupRecords, names: dict[str, str],
             default_assignors: dict[str, str] | None = None) -> GroupDescription:
    """`default_assignors`: group type -> the broker's default server assignor, where known
    (not in the records: observe.records_assignors)."""
    if g.modern is not None and g.modern.epoch is not None:
        return _modern(group, g.modern, names, default_assignors or {}, g.topology)
    if g.classic is not None:
        return _classic(group, g.classic)
    if g.committed:
        return commit_only(group)
    return GroupDescription(group=group, state="Dead", error="deleted")


def commit_only(group: str) -> GroupDescription:
    """A group that only committed offsets (no member ever joined it, or its group records
    were deleted since): as DescribeGroups shows it, an Empty classic group with no
    protocol type and no generation."""
    return GroupDescription(group=group, type=CLASSIC, state="Empty")


def _classic(group: str, v: dict) -> GroupDescription:
    protocol_type = v["protocol_type"] or None
    members = [classic_member({"member_id": m["member_id"], "client_id": m["client_id"],
                               "client_host": m["client_host"],
                               "group_instance_id": m.get("group_instance_id"),
                               "member_metadata": m["subscription"],
                               "member_assignment": m["assignment"]},
                              protocol_type or "", v["protocol"]) for m in v["members"]]
    state_ms = v.get("current_state_timestamp")
    return GroupDescription(
        group=group, type=CLASSIC, state="Stable" if members else "Empty",
        protocol_type=protocol_type, protocol=v["protocol"], generation=v["generation"],
        members=members,
        extra={"leader": v["leader"], "state_timestamp_ms": state_ms,
               JOINED: state_ms if members and state_ms is not None and state_ms >= 0 else None})


def _partitions(items, names: dict[str, str]):
    return topic_list((names.get(tp["topic_id"], tp["topic_id"]), tp["partitions"])
                      for tp in items or ())


def _tasks(value: dict | None, suffix: str = "") -> dict | None:
    if value is None:
        return None
    return {kind: [{"subtopology_id": t["subtopology_id"], "partitions": sorted(t["partitions"])}
                   for t in value.get(f"{kind}_tasks{suffix}") or ()] for kind in TASK_KINDS}


def _modern(group: str, m: _Modern, names: dict[str, str], defaults: dict[str, str],
            topology: dict | None = None) -> GroupDescription:
    members = []
    for mid in sorted(set(m.metadata) | set(m.current)):
        meta, cur, target = m.metadata.get(mid) or {}, m.current.get(mid), m.target.get(mid)
        member = Member(
            member_id=mid, client_id=meta.get("client_id"), host=meta.get("client_host") or None,
            instance_id=meta.get("instance_id"), rack=meta.get("rack_id"),
            member_epoch=cur["member_epoch"] if cur else None,
            subscription={"version": None, "topics": sorted(meta.get("subscribed_topic_names") or []),
                          "owned_partitions": None, "generation": None,
                          "rack": meta.get("rack_id"), "user_data": None} if meta else None,
            subscribed_topic_regex=meta.get("subscribed_topic_regex") or None,
            member_protocol=CLASSIC if meta.get("classic_member_metadata") else m.type)
        if m.type == STREAMS:
            # as StreamsGroupDescribe's: the input partitions its active tasks read (the
            # unowned figures follow them), and those of the tasks it still runs until it
            # acknowledges their revocation (the records know them, describe does not)
            current = _tasks(cur) or _tasks({}) or {}
            revoking = _tasks(cur, "_pending_revocation") or {}
            member.assignment = task_partitions([*current["active"], *revoking.get("active", [])],
                                                input_topics(topology))
            member.extra = {"tasks": current,
                            "target_tasks": _tasks(target) or _tasks({}),
                            "process_id": meta.get("process_id")}
        else:
            member.assignment = _partitions(cur and cur["assigned_partitions"], names)
            member.target_assignment = (None if m.type == SHARE
                                        else _partitions(target and target["topic_partitions"], names))
        if cur is not None:
            member.extra |= {
                "previous_member_epoch": cur["previous_member_epoch"],
                "member_state": _member_state(m.type, cur)}
            if "partitions_pending_revocation" in cur:
                member.extra["partitions_pending_revocation"] = [
                    tp.to_dict() for tp in _partitions(cur["partitions_pending_revocation"], names)]
        members.append(member)
    from .records_assignors import preferred

    assignor = None if m.type == STREAMS else preferred(m.metadata) or defaults.get(m.type)
    return GroupDescription(
        group=group, type=m.type, state=_modern_state(m), protocol_type=m.type,
        protocol=assignor, group_epoch=m.epoch, assignment_epoch=m.assignment_epoch, members=members,
        extra={"assignment_timestamp_ms": m.assignment_timestamp})


def _modern_state(m: _Modern) -> str:
    """As ConsumerGroup.maybeUpdateGroupState: Empty, Assigning, Reconciling, Stable."""
    if not m.metadata and not m.current:
        return "Empty"
    if m.type == SHARE:
        return "Stable"
    if m.assignment_epoch is None or (m.epoch or 0) > m.assignment_epoch:
        return "Assigning"
    for cur in m.current.values():
        if cur["member_epoch"] != m.assignment_epoch or _member_state(m.type, cur) != "STABLE":
            return "Reconciling"
    return "Stable" if len(m.current) >= len(m.metadata) else "Reconciling"


def _member_state(group_type: str, cur: dict) -> str:
    states = STREAMS_MEMBER_STATES if group_type == STREAMS else MEMBER_STATES
    return states.get(cur["state"], str(cur["state"]))
