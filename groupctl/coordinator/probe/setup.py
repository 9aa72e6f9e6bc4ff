"""What the probe needs around the sans-IO member: the member itself (`new_member`, the one
place a member protocol is chosen), which protocols it offers, its subscription bytes, and
the leader's assignment. The group as it is (observe.reads.model GroupDescription) comes from
observe/reads/snapshot.py.

Protocol choice (docs/commands/join.md, "The KIP-848 probe"):

    --assignor NAME        offer NAME only.
    group has a protocol   (DescribeGroups protocol_data, set while CompletingRebalance or
                           Stable) offer that one only, so the probe never changes the
                           group's assignor.
    otherwise              (new, Empty or rebalancing group) offer every assignor groupctl
                           implements, range first: the broker then picks one every member
                           supports, so consumers with any built-in assignor can join.

The probe's subscription is empty unless --topics is given: it wants no partitions.

Assignor input (a decision): members with an EMPTY subscription (the probe itself, by
default) are left out of the assignor's input and get an empty assignment; every other
member goes in, in JoinGroup response order, as the Java leader passes them. For range and
roundrobin this is exactly the Java result (an empty-subscription member gets nothing
there anyway). For sticky and cooperative-sticky it differs on purpose: Java's quota
algorithm does not count a first-in-HashMap-order empty subscription as different, and
would hand the probe partitions it never subscribed to and never consumes (seen on a real
broker: the probe got half of a topic). Leaving it out gives the real members every
partition, the result the Java leader computes for the group without the probe.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ...client.interface import ClusterLike
from ...errors import GroupctlError, UsageError
from ...exitcodes import ExitCode
from ...protocol import consumer as cp
from ...protocol.errors import ErrorCode
from ..assignors import ASSIGNORS, MemberSubscription, get_assignor

if TYPE_CHECKING:  # pragma: no cover
    from ...observe.reads.model import GroupDescription
    from ..members.classic import PendingAssignment
    from ..members.interface import GroupMember

DEFAULT_PROTOCOLS = ("range", "cooperative-sticky", "roundrobin", "sticky")


@dataclass
class ProbeSettings:
    group: str
    topics: list[str] = field(default_factory=list)
    assignor: str | None = None
    instance_id: str | None = None
    session_timeout_ms: int = 10_000
    rebalance_timeout_ms: int = 30_000
    heartbeat_interval_ms: int | None = None   # default: session / 3, at most 3 s
    describe_first: bool = True
    reason_prefix: str = "groupctl probe"
    protocol: str | None = None   # classic | consumer; None: from the group's type
    topic_regex: str | None = None   # consumer protocol only (v1): RE2 on the broker
    rack_id: str | None = None       # consumer protocol: the member's rack

    @property
    def heartbeat_ms(self) -> int:
        return self.heartbeat_interval_ms or min(3000, max(1, self.session_timeout_ms // 3))


@dataclass
class ProbeResult:
    """What one join showed (the `join` command's output)."""

    group: str
    generation: int
    protocol: str | None
    leader: str | None
    member_id: str
    instance_id: str | None
    is_leader: bool
    members: list[dict] | None
    assignment: list[dict]
    group_assignment: list[dict] | None
    coordinator: dict | None
    joined_in_ms: int
    type: str = "classic"                  # the group's type: classic, or consumer (KIP-848)
    member_epoch: int | None = None        # consumer groups: the probe's member epoch
    group_epoch: int | None = None         # consumer groups: the group's epoch
    assignment_epoch: int | None = None    # consumer groups: the target assignment's epoch
    member_state: str | None = None        # consumer groups: the member's state at the end
    member_protocol: str | None = None     # consumer groups: the probe's (consumer, classic)

    def to_dict(self) -> dict:
        return dict(self.__dict__)


class ProbeError(GroupctlError):
    """The probe cannot stay in the group for a reason the broker gave or implies (exit 7)."""
    exit_code = ExitCode.KAFKA_ERROR


PROTOCOLS = ("classic", "consumer")


def member_protocol(settings: ProbeSettings, described: "GroupDescription | None") -> str:
    """Which member protocol joins the group, from its type (described first): a consumer
    group -> consumer (KIP-848), a classic group -> classic; a new, empty or unknown group
    -> classic unless --protocol consumer. An explicit --protocol classic may join a
    consumer group (as a classic member of it, which Kafka allows); --protocol consumer is
    refused for a classic group with members, which its first consumer-protocol member
    would convert."""
    asked = settings.protocol
    if asked is not None and asked not in PROTOCOLS:
        raise UsageError(f"--protocol {asked!r}: choose one of {', '.join(PROTOCOLS)}")
    kind = getattr(described, "type", None)
    live = described is not None and bool(described.members) and described.state not in (
        "Dead", "Empty")
    if kind in ("share", "streams"):
        raise ProbeError(f"group {settings.group!r} is a {kind} group; the probe joins "
                         f"consumer and classic groups only")
    if kind == "consumer":
        return asked or "consumer"
    if kind == "classic" and live:
        if asked == "consumer":
            raise UsageError(f"group {settings.group!r} is a classic group with members; a "
                             f"consumer-protocol member would convert it (leave out "
                             f"--protocol consumer)")
        return "classic"
    return asked or "classic"


def new_member(settings: ProbeSettings, described: "GroupDescription | None") -> "GroupMember":
    """The probe's member for the group as `described` (member_protocol), offering what
    fits the group (see the module doc)."""
    protocol = member_protocol(settings, described)
    if protocol == "consumer":
        return _consumer_member(settings)
    if settings.topic_regex is not None:
        raise UsageError("--topic-regex needs the consumer protocol (a KIP-848 group, or "
                         "--protocol consumer)")
    from ..members.consumer import SERVER_ASSIGNORS

    if settings.assignor in SERVER_ASSIGNORS and settings.assignor not in ASSIGNORS:
        raise UsageError(f"--assignor {settings.assignor!r} is a server assignor of "
                         f"consumer-protocol groups; group {settings.group!r} is joined "
                         f"with the classic protocol ({', '.join(ASSIGNORS)})")
    from ..members.classic import ClassicMember

    names = choose_protocols(described, settings.assignor)
    topics = settings.topics

    def subscribe(owned: dict[str, list[int]], generation: int) -> list[tuple[str, bytes]]:
        return protocols_for(names, topics, owned, generation)  # KIP-429: owned partitions

    return ClassicMember(
        settings.group, protocols=protocols_for(names, topics, {}, -1),
        session_timeout_ms=settings.session_timeout_ms,
        rebalance_timeout_ms=settings.rebalance_timeout_ms,
        heartbeat_interval_ms=settings.heartbeat_ms, group_instance_id=settings.instance_id,
        reason_prefix=settings.reason_prefix, subscribe=subscribe if topics else None)


async def describe_for_join(cluster: ClusterLike, group: str) -> "GroupDescription":
    """The group before the probe joins: DescribeGroups (a classic group, or Dead), and
    for a Dead answer ConsumerGroupDescribe (a KIP-848 group looks Dead to DescribeGroups).
    A broker without KIP-848 leaves the Dead description."""
    from ...observe.reads.snapshot import describe_group

    classic = await describe_group(cluster, group)
    if classic.state != "Dead":
        return classic
    try:
        found = await epoch_snapshot(cluster, group, known=False)
    except GroupctlError:
        return classic
    return classic if found is None else found


async def epoch_snapshot(cluster: ClusterLike, group: str, *, known: bool = True
                         ) -> "GroupDescription | None":
    """The group as ConsumerGroupDescribe shows it, through the one describe path (None:
    not a consumer group). Failures other than "not found" raise. `known`: the group is
    known to be a consumer group (the probe's own), so only its type's API is asked; else
    every API the coordinator has: a group taken for a consumer group is shown as such
    where the coordinator has no ConsumerGroupDescribe (Kafka 3.7), and a group nobody
    saw must not become one."""
    from ...observe.reads import model
    from ...observe.reads.listing import GroupListing
    from ...observe.reads.snapshot import group_snapshot

    listing = GroupListing(group, None, model.CONSUMER, None) if known else None
    desc = await group_snapshot(cluster, group, listing=listing)
    return desc if desc is None or desc.type == model.CONSUMER else None


def _consumer_member(settings: ProbeSettings) -> "GroupMember":
    from ..members.consumer import SERVER_ASSIGNORS, ConsumerMember

    if settings.assignor is not None and settings.assignor not in SERVER_ASSIGNORS:
        raise UsageError(f"--assignor {settings.assignor!r}: a consumer-protocol (KIP-848) "
                         f"group uses a server assignor: {', '.join(SERVER_ASSIGNORS)}")
    return ConsumerMember(
        settings.group, member_id=consumer_member_id(), topics=settings.topics,
        topic_regex=settings.topic_regex,
        server_assignor=settings.assignor, rack_id=settings.rack_id,
        group_instance_id=settings.instance_id,
        rebalance_timeout_ms=settings.rebalance_timeout_ms,
        request_timeout_ms=settings.session_timeout_ms, reason_prefix=settings.reason_prefix)


def consumer_member_id() -> str:
    """The KIP-848 probe's member id: the client chooses it (ConsumerGroupHeartbeat v1,
    KIP-1082). The broker asks only that it is not empty (GroupMetadataManager
    throwIfConsumerGroupHeartbeatRequestIsInvalid); the Java client sends a bare Uuid. The
    `groupctl-` prefix is the one the classic probe's broker-made id has (client id
    `groupctl`), so the broker's "Member M joins the consumer group" lines say whose it is;
    the random UUID after it keeps it unique for the member's life."""
    return f"groupctl-{uuid.uuid4()}"


def choose_protocols(described: "GroupDescription | None", assignor: str | None) -> list[str]:
    """The protocol names the probe offers, in preference order (see the module doc)."""
    if assignor:
        return [assignor]
    if described is not None:
        ptype = described.protocol_type or ""
        if ptype not in ("", "consumer") and described.members:
            raise ProbeError(f"group {described.group!r} has protocol type {ptype!r}; "
                             f"the probe joins consumer groups only")
        if described.protocol:
            return [described.protocol]
    return list(DEFAULT_PROTOCOLS)


def subscription_bytes(protocol: str, topics: list[str], owned: dict[str, list[int]],
                       generation: int) -> bytes:
    """The consumer-protocol subscription for `protocol` (owned partitions and, for the
    sticky assignors, their user data, as the Java client writes them)."""
    user_data = None
    assignor = ASSIGNORS.get(protocol)
    if assignor is not None and topics:
        user_data = assignor.user_data(owned, generation)
    return cp.encode_subscription(cp.Subscription(
        topics=sorted(topics), user_data=user_data,
        owned_partitions=[cp.TopicPartitions(t, sorted(p)) for t, p in sorted(owned.items()) if p],
        generation_id=generation))


def protocols_for(names: list[str], topics: list[str], owned: dict[str, list[int]],
                  generation: int) -> list[tuple[str, bytes]]:
    return [(n, subscription_bytes(n, topics, owned, generation)) for n in names]


def decode_member(member_id: str, instance_id: str | None, metadata: bytes) -> MemberSubscription:
    sub = cp.decode_subscription(metadata)
    return MemberSubscription(
        member_id=member_id, topics=list(sub.topics),
        owned_partitions={tp.topic: list(tp.partitions) for tp in sub.owned_partitions},
        generation=sub.generation_id, user_data=sub.user_data, rack=sub.rack_id,
        group_instance_id=instance_id)


def decoded_subscriptions(pending: PendingAssignment) -> list[dict]:
    """Every member of the leader's JoinGroup with its decoded subscription (for output)."""
    out = []
    for m in pending.members:
        try:
            sub = cp.decode_subscription(m.metadata).to_dict(pending.protocol_name)
        except Exception:  # not consumer-protocol bytes: keep them raw
            sub = {"raw": m.metadata.hex()}
        out.append({"member_id": m.member_id, "instance_id": m.group_instance_id,
                    "subscription": sub})
    return out


async def compute_assignment(cluster: ClusterLike, pending: PendingAssignment
                             ) -> dict[str, dict[str, list[int]]]:
    """Run the group's assignor over every member's subscription, as the Java leader does.
    ProbeError when groupctl does not implement the assignor."""
    name = pending.protocol_name or ""
    try:
        assignor = get_assignor(name)
    except KeyError:
        raise ProbeError(
            f"the probe was elected leader of the group, whose assignor {name!r} groupctl does "
            f"not implement (known: {', '.join(ASSIGNORS)}); it left the group at once so "
            f"that a real member can lead") from None
    members = [decode_member(m.member_id, m.group_instance_id, m.metadata)
               for m in pending.members]
    subscribed = [m for m in members if m.topics]
    topics = sorted({t for m in subscribed for t in m.topics})
    partitions, racks = await _partitions(cluster, topics)
    result = assignor.assign(partitions, subscribed, racks) if subscribed else {}
    return {m.member_id: result.get(m.member_id, {}) for m in members}


async def _partitions(cluster: ClusterLike, topics: list[str]):
    if not topics:
        return {}, None
    md = await cluster.metadata(topics)
    partitions = {t: len(info.partitions) for t, info in md.topics.items()
                  if info.error_code == ErrorCode.NONE and info.partitions}
    broker_rack = {b.node_id: b.rack for b in md.brokers.values()}
    if not any(broker_rack.values()):
        return partitions, None
    racks = {(t, p): {broker_rack.get(r) for r in info.replicas if broker_rack.get(r)}
             for t, i in md.topics.items() for p, info in i.partitions.items()}
    return partitions, racks


def encode_assignments(assignment: dict[str, dict[str, list[int]]]) -> dict[str, bytes]:
    return {member: cp.encode_assignment(cp.Assignment(assigned_partitions=[
        cp.TopicPartitions(t, sorted(ps)) for t, ps in sorted(topics.items()) if ps]))
        for member, topics in assignment.items()}


def decode_assignment_map(data: bytes | None) -> dict[str, list[int]]:
    if not data:
        return {}
    return {tp.topic: list(tp.partitions)
            for tp in cp.decode_assignment(data).assigned_partitions}


def parse_topics(text: str | None) -> list[str]:
    if text is None:
        return []
    topics = [t.strip() for t in text.split(",") if t.strip()]
    if not topics:
        raise UsageError("--topics needs at least one topic name")
    return topics
