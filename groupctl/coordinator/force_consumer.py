"""`force-rebalance` of a consumer (KIP-848) group: what the protocol allows.

KIP-848 groups have no stop-the-world rebalance: the broker runs the assignor when the
group epoch moves, and members reconcile towards their target assignment one by one,
keeping the partitions that stay theirs. What a tool can do from outside is make the group
epoch move: a transient member joins (ConsumerGroupHeartbeat, member epoch 0, an empty
subscription and no owned partitions, so the assignor gives it nothing) and leaves at once
(member epoch -1). Measured on the lab's Kafka 4.3.1 broker (tests/integration/
test_force_rebalance_consumer.py): the join does not move the group epoch (an empty
subscription is no subscription change; the member gets the current epoch), the leave
bumps it by one ("Bumped group epoch to N+1"), the broker computes a new target assignment
for that epoch, and the members' callbacks show no revocation: they keep their partitions.

ConsumerGroupHeartbeat has no KIP-800 reason field: the broker logs the member id only
("Member M joins the consumer group using the consumer protocol.", "Member M left the
consumer group."), so the member id starts with `groupctl-force-rebalance-`.
"""
from __future__ import annotations

import asyncio
import uuid

from ..errors import DeadlineError, GroupctlError
from .force_rebalance import (
    LEAVE_BUDGET_S, STABLE_POLL_S, Clock, announce, Phase, Seen, Snapshot, _last_seen,
)
from .force_report import Report, consumer_report

JOIN_EPOCH, LEAVE_EPOCH = 0, -1
REBALANCE_TIMEOUT_MS = 10_000


def member_id() -> str:
    """KIP-1082: from ConsumerGroupHeartbeat v1 the client chooses its member id."""
    return f"groupctl-force-rebalance-{uuid.uuid4()}"


def join_body(group: str, member: str) -> dict:
    return {"group_id": group, "member_id": member, "member_epoch": JOIN_EPOCH,
            "instance_id": None, "rack_id": None, "rebalance_timeout_ms": REBALANCE_TIMEOUT_MS,
            "subscribed_topic_names": [], "subscribed_topic_regex": None,
            "server_assignor": None, "topic_partitions": []}


def leave_body(group: str, member: str) -> dict:
    return {"group_id": group, "member_id": member, "member_epoch": LEAVE_EPOCH,
            "instance_id": None, "rack_id": None, "rebalance_timeout_ms": -1,
            "subscribed_topic_names": None, "subscribed_topic_regex": None,
            "server_assignor": None, "topic_partitions": None}


async def force_consumer(cluster, before, reason: str, *, snapshot: Snapshot, deadline,
                         on_phase: Phase | None = None, clock: Clock | None = None) -> Report:
    from ..client.errors import kafka_error
    from ..protocol.messages import CONSUMER_GROUP_HEARTBEAT as HB

    clock = clock or Clock()
    phase = on_phase or (lambda name, info: None)
    d = cluster.deadline(deadline)
    group = before.group
    member = member_id()
    joined = False
    epoch = None
    seen = Seen()
    try:
        await announce(phase, "joining", {"member_id": member})
        started = clock.now()
        joined = True  # from the moment the request may be out: leave on every exit path
        resp = await cluster.send_to_coordinator(group, HB, join_body(group, member),
                                                 min_version=1, deadline=d)
        if resp.get("error_code"):
            raise kafka_error("ConsumerGroupHeartbeat", resp["error_code"],
                              f"group {group!r}: {resp.get('error_message') or ''}".rstrip(": "))
        epoch = resp.get("member_epoch")
        await announce(phase, "joined", {"member_id": member, "member_epoch": epoch})
        await _leave(cluster, group, member)
        joined = False
        await announce(phase, "left", {"member_id": member})
        after = await _until_settled(snapshot, d, seen, before)
        return consumer_report(before, after, reason=reason, started=started,
                               stable_at=clock.now(), member_id=member, member_epoch=epoch,
                               states=seen.states)
    finally:
        if joined:
            try:
                await asyncio.shield(_leave(cluster, group, member))
            except (GroupctlError, asyncio.CancelledError):
                pass


async def _leave(cluster, group: str, member: str) -> dict:
    from ..protocol.messages import CONSUMER_GROUP_HEARTBEAT as HB

    return await cluster.send_to_coordinator(group, HB, leave_body(group, member),
                                             min_version=1, deadline=LEAVE_BUDGET_S)


async def _until_settled(snapshot: Snapshot, d, seen: Seen, before):
    """The group once it is Stable with its assignment epoch caught up with a group epoch
    past the one before (the assignor ran and every member reconciled)."""
    while True:
        desc = await snapshot()
        seen.note(desc)
        if desc is not None and desc.state in ("Stable", "Empty") \
                and desc.group_epoch is not None and desc.group_epoch > (before.group_epoch or 0) \
                and desc.assignment_epoch == desc.group_epoch:
            return desc
        if d.expired:
            raise DeadlineError(f"the group was not Stable again within the timeout; last "
                                f"seen: {_last_seen(seen)}")
        await asyncio.sleep(min(STABLE_POLL_S, d.remaining()))
