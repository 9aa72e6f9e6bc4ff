"""`history`: a group's past from the coordinator's own records in `__consumer_offsets`.

For each group: its partition, found as the broker finds it (model.coordinator_partition:
abs(String.hashCode) % partitions, Integer.MIN_VALUE -> 0) and checked against
FindCoordinator (the coordinator must be that partition's leader); the partition read from
its earliest offset (client.partition_reader), offset commits skipped on their key type
before anything else is decoded; the other records replayed (replay.py) into one
GroupDescription per change, each fed with the broker's record timestamp to the same
RebalanceStory as every other source (events with source "records").

`--since`: the offset of the first record at or after it (ListOffsets by timestamp); the
records before it are replayed too (a consumer group's members were written when they
joined), but only events from that offset on are told. `--until`: reading stops before the
first record at or after it.

What the records cannot say is not invented: a classic round's start (PreparingRebalance)
is in the broker's log, not in the records, so a classic `rebalance` event has started and
duration_ms null. Compaction keeps only the latest record per key in cleaned segments: the
history is complete from the first offset after the last gap in the offsets read
(`complete_from`); before it, changes may be missing. A group the principal may not
describe is refused before anything is read (observe/acl.py: Read on the topic is not
enough).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ...errors import AuthError, GroupctlError, NotFoundError
from ...events import Source, envelope
from ...exitcodes import ExitCode
from ...protocol.records.coordinator import group_keys_pattern
from ..reads.acl import describable, refused_message
from ..reads.model import CLASSIC, coordinator_partition
from .observations import Seen
from ..reads.records import coordinator_batches
from ..reads.replay import replay
from ..story.round import UNKNOWN_DURATION
from ..story.story import RebalanceStory

TOPIC = "__consumer_offsets"
RECORDS = Source.RECORDS.value
# offset commits (key types 0 and 1), passed over on their key's first two bytes
OFFSET_COMMIT_KEYS = frozenset({b"\x00\x00", b"\x00\x01"})


@dataclass
class PartitionRead:
    """What was read of one partition, for the summary."""

    partition: int
    groups: list[str]
    leader: int | None = None
    coordinators: dict | None = None   # group -> FindCoordinator's node id
    first_offset: int | None = None
    end_offset: int | None = None
    complete_from: int | None = None   # offset after the last gap (compaction)
    complete_from_ts: float | None = None
    records: int = 0                   # group records replayed (offset commits not counted)
    damaged: int = 0
    # group -> (offset, timestamp ms) of its first record past --until, for a group with
    # none before it
    later: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"partition": self.partition, "groups": self.groups, "leader": self.leader,
                "coordinators": self.coordinators, "first_offset": self.first_offset,
                "end_offset": self.end_offset, "complete_from_offset": self.complete_from,
                "complete_from": None if self.complete_from_ts is None else _iso(self.complete_from_ts),
                "group_records": self.records, "damaged_batches": self.damaged}


def _iso(at: float) -> str:
    from ...events import iso_ts

    return iso_ts(at)


class GapTracker:
    """The first offset after the last gap: batches must follow each other, and a batch
    must hold every offset it spans (a cleaned batch keeps only some)."""

    def __init__(self):
        self.next: int | None = None
        self.complete_from: int | None = None
        self.complete_from_ts: float | None = None

    def batch(self, base: int, last: int, count: int, timestamp: float) -> None:
        if self.complete_from is None:
            self.complete_from, self.complete_from_ts = base, timestamp
        if (self.next is not None and base != self.next) or count != last - base + 1:
            self.complete_from, self.complete_from_ts = last + 1, None
        elif self.complete_from_ts is None:
            self.complete_from_ts = timestamp
        self.next = last + 1


async def read_history(cluster, groups: list[str], *, since_ms: int | None = None,
                       until_ms: int | None = None, emit: Callable[[dict], None],
                       warn: Callable[[str], None]) -> list[PartitionRead]:
    from ...client.partition_reader import EARLIEST, PartitionReader

    md = await cluster.metadata(None)
    info = md.topics.get(TOPIC)
    if info is None or info.error_code:
        probe = PartitionReader(cluster, TOPIC, 0)
        await probe.locate()   # raises the precise error (authorization, not found)
        md = await cluster.metadata(None)
        info = md.topics.get(TOPIC)
        if info is None:
            raise NotFoundError(f"topic {TOPIC} is not in the cluster's metadata")
    names = {t.topic_id: name for name, t in md.topics.items() if t.topic_id}
    _, refused = await describable(cluster, groups)   # Read on the topic is not enough
    if refused:
        raise AuthError(refused_message(list(refused), next(iter(refused.values()))))
    by_partition: dict[int, list[str]] = {}
    for g in groups:
        by_partition.setdefault(coordinator_partition(g, info.partition_count), []).append(g)
    reads = []
    for partition, members in sorted(by_partition.items()):
        reader = PartitionReader(cluster, TOPIC, partition)
        await reader.locate()
        read = PartitionRead(partition, members, reader.leader)
        read.coordinators = {}
        for g in members:
            try:
                read.coordinators[g] = (await cluster.find_coordinator(g, refresh=True)).node_id
            except GroupctlError as exc:   # e.g. no coordinator in time: the records
                warn(f"cannot check the partition of {g} against FindCoordinator: {exc}")
        for g, node in read.coordinators.items():
            if node != reader.leader:
                warn(f"FindCoordinator names broker {node} for group {g}, but partition "
                     f"{partition} of {TOPIC} is led by {reader.leader}")
        start = await reader.offset_at(EARLIEST)
        tell_from = start if since_ms is None else await reader.offset_at(since_ms)
        if tell_from is None:   # nothing at or after --since: tell nothing
            tell_from = 1 << 62
        end = None if until_ms is None else await reader.offset_at(until_ms)
        read.first_offset = start
        await _replay_partition(reader, read, start, end, tell_from, names, emit, cluster)
        read.damaged = len(reader.damaged)
        for b in reader.damaged:
            warn(f"{TOPIC}-{partition}: {b}")
        reads.append(read)
    return reads


async def _replay_partition(reader, read: PartitionRead, start, end, tell_from, names,
                            emit, cluster) -> None:
    gaps = GapTracker()
    groups = set(read.groups)
    stories = {g: RebalanceStory(g, tell=told_from_records(cluster.cluster_id)) for g in groups}
    seen: set[str] = set()
    members: dict[str, dict] = {}   # group -> member id -> (member epoch, state) last told
    kept: list[tuple[int, bool, list]] = []   # (last offset, complete so far, group records)
    # batches holding no key of these groups are passed over whole (one regex search in
    # C each: a partition is mostly offset commits); in the others, commits are skipped on
    # their key's first two bytes and other groups' records on their key
    keep = group_keys_pattern(read.groups)
    async for batch in reader.read(start if start is not None else 0, end,
                                   skip_keys=OFFSET_COMMIT_KEYS, keep=keep):
        gaps.batch(batch.base_offset, batch.last_offset, batch.count,
                   batch.base_timestamp / 1000)   # the time of its first offset
        for _, recs in coordinator_batches([batch], groups=groups):
            if end is not None:   # a batch is fetched whole: --until cuts inside it
                recs = [r for r in recs if r.offset < end]
            if recs:   # offset commits were dropped on their key type, unread
                kept.append((batch.last_offset, gaps.complete_from == start, recs))
                read.records += len(recs)
    read.end_offset = reader.high_watermark if end is None else end
    read.complete_from, read.complete_from_ts = gaps.complete_from, gaps.complete_from_ts
    _refuse_early_access(kept)
    current = [0, False]

    def records():
        for last_offset, complete, recs in kept:
            current[:] = [last_offset, complete]   # replay yields a batch's snapshots first
            yield recs

    for at, desc in replay(records(), names):
        if desc.group not in seen and current[1]:
            # nothing compacted before the group's first record: it is the group's
            # creation, so the story starts from a group that did not exist yet
            # (its events are not told: the story only learns where the group started)
            stories[desc.group].feed(Seen(desc.group, at, RECORDS, created_from_nothing(desc)))
        seen.add(desc.group)
        story = stories[desc.group]
        story.feed(Seen(desc.group, at, RECORDS, desc))
        events = story.take_told()
        events += member_transitions(desc, events, members.setdefault(desc.group, {}),
                                     cluster.cluster_id, at)
        if tell_from is not None and current[0] < tell_from:
            continue   # before --since: replayed for the state, not told
        for event in events:
            emit(event)
    missing = groups - seen
    if missing and end is not None:   # none before --until: is the group there after it?
        read.later = await _first_records(reader, end, missing)
        missing -= set(read.later)
    if missing:
        last = reader.high_watermark if end is not None else read.end_offset
        raise NotFoundError(
            f"no records of group{'s' if len(missing) > 1 else ''} "
            f"{', '.join(sorted(missing))} in {TOPIC}-{read.partition} (offsets "
            f"{read.first_offset}-{last}): never created, or deleted and compacted")


async def _first_records(reader, start: int, groups: set[str]) -> dict[str, tuple[int, int]]:
    """group -> (offset, timestamp ms) of its first record at or after `start`, for each of
    `groups` that has one (read until all are found, or to the high watermark)."""
    found: dict[str, tuple[int, int]] = {}
    batches = reader.read(start, None, skip_keys=OFFSET_COMMIT_KEYS,
                          keep=group_keys_pattern(sorted(groups)))
    try:
        async for batch in batches:
            for _, recs in coordinator_batches([batch], groups=groups):
                for r in recs:
                    g = r.key.get("group_id", r.key.get("group")) if r.key else None
                    if g in groups and g not in found:
                        found[g] = (r.offset, r.timestamp)
            if len(found) == len(groups):
                break
    finally:
        await batches.aclose()
    return found


def _refuse_early_access(kept: list) -> None:
    """A group whose records an early-access broker wrote in a layout of its own (Kafka
    3.7's KIP-848, 4.0's share groups) has no story groupctl can tell from them (told from
    the records it can read, a live group would look Empty, then Dead): one line instead."""
    early: dict[str, dict[str, set[str]]] = {}
    for _, _, recs in kept:
        for r in recs:
            if r.early_access and r.group:
                early.setdefault(r.group, {}).setdefault(r.early_access, set()).add(r.name)
    if early:
        group, by_release = sorted(early.items())[0]
        release, names = sorted(by_release.items())[0]
        raise EarlyAccessRecords(
            f"group {group!r}: its {', '.join(sorted(names))} records were written by an "
            f"early-access broker ({release}): not decoded, so its history is not told")


class EarlyAccessRecords(GroupctlError):
    """Records in a layout only an early-access broker wrote (exit 7: the broker's data,
    not the user's input, is what groupctl cannot read)."""

    exit_code = ExitCode.KAFKA_ERROR


def created_from_nothing(desc):
    """The group just before its first record: empty, at generation / epochs 0."""
    from ..reads.model import GroupDescription

    epochs = desc.group_epoch is not None
    return GroupDescription(group=desc.group, type=desc.type, state="Empty",
                            protocol_type=desc.protocol_type,
                            generation=None if epochs else 0,
                            group_epoch=0 if epochs else None,
                            assignment_epoch=0 if epochs else None)


def member_transitions(desc, told: list[dict], last: dict, cluster: str | None,
                       at: float) -> list[dict]:
    """A consumer / share / streams member's epoch or state that changed with its
    assignment unchanged (the story tells assignment changes only): an `assignment` event
    at its new member epoch, nothing added or revoked, so every member transition the
    records hold is told. `last`: member id -> (member epoch, state) as last told."""
    if desc.type == CLASSIC or desc.group_epoch is None:
        return []
    by_story = {e.get("member_id") for e in told if e["event"] == "assignment"}
    out = []
    for m in desc.members:
        now = (m.member_epoch, m.extra.get("member_state"))
        if m.member_epoch is None or last.get(m.member_id) == now:
            continue
        if m.member_id not in by_story and m.member_id in last:
            body = {"event": "assignment", "member_id": m.member_id,
                    "generation": desc.group_epoch,
                    "assigned": [tp.to_dict() for tp in m.assignment or ()],
                    "added": [], "revoked": []}
            if "tasks" in m.extra:
                body["tasks"] = m.extra["tasks"]
            out.append(amend_from_records(envelope(body, group=desc.group, cluster=cluster,
                                        source=RECORDS, at=at), desc))
        last[m.member_id] = now
    for gone in set(last) - {m.member_id for m in desc.members}:
        del last[gone]
    return out


def told_from_records(cluster_id: str | None) -> Callable:
    """A story's events as the records tell them (RebalanceStory's `tell`): the envelope,
    amended with what the records know and do not (amend_from_records, unowned_unknown)."""
    def tell(event, o: Seen, group: str) -> dict:
        return unowned_unknown(amend_from_records(envelope(
            event, group=group, cluster=cluster_id, source=RECORDS, at=o.at), o.desc), o.desc)
    return tell


def unowned_unknown(event: dict, desc) -> dict:
    """A classic `rebalance` from the records whose unowned figures are null although
    members held partitions before it: why, in words (`unowned_unknown`)."""
    if event["event"] != "rebalance" or desc.type != CLASSIC or not event.get("members_before") \
            or event.get("unowned_partition_ms") is not None:
        return event
    assignments = event.get("assignments")
    if assignments is None or any(a is None for a in assignments.values()):
        event["unowned_unknown"] = "the members' assignments are not the consumer protocol's"
    else:
        event["unowned_unknown"] = ("the records hold no sync phase of this round (its record "
                                    "gives no join end after the generation before)")
    return event


def amend_from_records(event: dict, desc) -> dict:
    """A classic round's start is not in the records: no start, no duration. The
    generation's leader is (the story does not know it from a description), and so is a
    modern member's epoch, previous epoch and state at each assignment change (extra
    fields of the `assignment` event)."""
    if event["event"] == "assignment" and desc.type != CLASSIC:
        member = next((m for m in desc.members if m.member_id == event.get("member_id")), None)
        if member is not None:
            event["member_epoch"] = member.member_epoch
            event["previous_member_epoch"] = member.extra.get("previous_member_epoch")
            event["member_state"] = member.extra.get("member_state")
    if desc.type == CLASSIC:
        if event["event"] == "rebalance":
            event["started"] = None
            event.update(UNKNOWN_DURATION.fields())
        elif event["event"] == "generation" and event.get("leader") is None:
            event["leader"] = desc.extra.get("leader")
    return event
