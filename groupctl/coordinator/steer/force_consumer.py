"""`force-rebalance` of a consumer (KIP-848) group: what the protocol allows.

KIP-848 groups have no stop-the-world rebalance: the broker runs the assignor when the
group epoch moves, and members reconcile towards their target assignment one by one,
keeping the partitions that stay theirs. What a tool can do from outside is make the group
epoch move: a transient member joins (ConsumerGroupHeartbeat, member epoch 0, subscribed
to consumer.NO_PARTITIONS_TOPIC, a name no topic can have, and no owned partitions, so the
assignor gives it nothing) and leaves at once (member epoch -1). Measured on the lab's Kafka
4.3.1 broker (tests/integration/test_force_consumer_member.py): the join bumps the group
epoch (a subscription change) and so does the leave ("Bumped group epoch to N+1", "N+2"),
the broker computes a new target assignment, and the members' callbacks show no
revocation: they keep their partitions. (An empty subscription would not bump at the join,
but Kafka 4.3.1 mis-assigns a pending target when a member joins with one: see
consumer/types.py NO_PARTITIONS_TOPIC.)

The transient member is the probe's own KIP-848 member (coordinator/consumer/
ConsumerMember: its join and leave bodies, its error table, its transitions), driven by
the one MemberDriver (driver/member_driver.py) through the member interface: joined = the
broker answered the join with a member epoch; then the member's own leave. A retriable
error on the join (coordinator moved, loading) is retried within --timeout as the member's
table says; a fatal one ends the command with the member's message.

ConsumerGroupHeartbeat has no KIP-800 reason field: the broker logs the member id only
("Member M joins the consumer group using the consumer protocol.", "Member M left the
consumer group."), so the member id starts with `groupctl-force-rebalance-` (v1: the
client chooses its member id, KIP-1082).
"""
from __future__ import annotations

import uuid
from typing import Callable

from ...client.interface import ClusterLike
from ...clock import SYSTEM_CLOCK, Clock
from ...errors import DeadlineError, UnreachableError
from ..driver.member_driver import MemberDriver
from ..members.consumer import ConsumerMember
from .common import (
    LEAVE_BUDGET_S, Phase, Seen, Snapshot, announce, last_seen,
)
from .force_report import Report, consumer_report

REBALANCE_TIMEOUT_MS = 10_000
REASON_PREFIX = "groupctl force-rebalance"


def member_id() -> str:
    """KIP-1082: from ConsumerGroupHeartbeat v1 the client chooses its member id."""
    return f"groupctl-force-rebalance-{uuid.uuid4()}"


def transient_member(group: str) -> ConsumerMember:
    """The member that joins and leaves: no topics (ConsumerMember subscribes it to
    NO_PARTITIONS_TOPIC, never []), no instance id (a static
    member would leave with -2 and its absence would not bump the epoch)."""
    return ConsumerMember(group, topics=[], member_id=member_id(),
                          rebalance_timeout_ms=REBALANCE_TIMEOUT_MS, reason_prefix=REASON_PREFIX)


def joined(member) -> bool:
    """The broker answered the join: the member holds a member epoch."""
    return member.generation > 0


async def force_consumer(cluster: ClusterLike, before, reason: str, *, snapshot: Snapshot, deadline,
                         on_phase: Phase | None = None, clock: Clock | None = None,
                         log: Callable[[str], None] | None = None,
                         driver: MemberDriver | None = None) -> Report:
    """Bump the group epoch of the consumer group `before` describes (see the module doc).
    `log` gets the member's transitions, one line each; `driver` is for tests."""
    clock = clock or SYSTEM_CLOCK
    phase = on_phase or (lambda name, info: None)
    d = cluster.deadline(deadline)
    driver = driver or MemberDriver(cluster, transient_member(before.group), log=log,
                                    clock=clock)
    member = driver.member
    assert isinstance(member, ConsumerMember)
    seen = Seen()
    async with driver.membership("force-rebalance: done", leave_budget_s=LEAVE_BUDGET_S):
        await announce(phase, "joining", {"member_id": member.member_id})
        started = clock.monotonic()
        # the coordinator describe just used (cached): no FindCoordinator round before the
        # join; a stale one is answered NOT_COORDINATOR and the member looks it up itself
        info = await cluster.find_coordinator(before.group, deadline=d)
        member.coordinator_found(info.node_id, info.host, info.port)
        await driver.run_until(joined, d, "joined")
        epoch = member.generation
        await announce(phase, "joined", {"member_id": member.member_id, "member_epoch": epoch})
        if not await driver.leave("joined: leaving at once bumps the group epoch",
                                  LEAVE_BUDGET_S):
            raise UnreachableError(f"the leave of groupctl's member {member.member_id} got no "
                                   f"answer ({_unanswered(driver)}); the broker removes it "
                                   f"when its session times out")
        await announce(phase, "left", {"member_id": member.member_id})
        after = await _until_settled(snapshot, d, seen, before)
        stable_at = clock.monotonic()
    return consumer_report(before, after, started=started,
                           stable_at=stable_at, member_id=member.member_id,
                           member_epoch=epoch, states=seen.states)


def _unanswered(driver: MemberDriver) -> str:
    return ", ".join(f"{api}: {kind}" for api, kind in driver.unanswered)


async def _until_settled(snapshot: Snapshot, d, seen: Seen, before):
    """The group once it is Stable with its assignment epoch caught up with a group epoch
    past the one before (the assignor ran and every member reconciled)."""
    async for desc in snapshot:
        seen.note(desc)
        if desc is not None and desc.state in ("Stable", "Empty") \
                and desc.group_epoch is not None and desc.group_epoch > (before.group_epoch or 0) \
                and desc.assignment_epoch == desc.group_epoch:
            return desc
        if d.expired:
            break
    raise DeadlineError(f"the group was not Stable again within the timeout; last "
                        f"seen: {last_seen(seen)}")
