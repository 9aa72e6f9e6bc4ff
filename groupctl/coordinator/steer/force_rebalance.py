"""`force-rebalance`'s driver: trigger one rebalance of a live group over the client layer,
wait until it is Stable again, and report what changed.

    report = await force_rebalance(cluster, before, reason, snapshot=..., deadline=d)

`before` is the group as describe showed it (observe.reads.model.GroupDescription, or anything
with the same attributes); `snapshot` is an async iterator of the group's looks as they
come (None when it is gone): observe.sources.poller.looks over the one describe source, asking
only the group's own type's describe API. The CLI hands it both.

Classic groups: force_classic.ClassicTrigger, a member on the one driver
(driver/member_driver.py) with two dedicated connections to the coordinator (the JoinGroup
parks on the join route, DescribeGroups and the LeaveGroup go over the control route),
then snapshots until the group is Stable again. Consumer (KIP-848) groups:
force_consumer.py (the KIP-848 ConsumerMember on the same driver). Every member this adds
leaves on every exit path, through MemberDriver.membership: the LeaveGroup goes out when
the trigger may still be a member (Ctrl-C and SIGTERM cancel the task, and cancellation
lands there too).
"""
from __future__ import annotations

from typing import Callable

from ...clock import SYSTEM_CLOCK, Clock
from ...errors import DeadlineError, KafkaError
from ...protocol.errors import ErrorCode
from ..driver.member_driver import MemberDriver
from .common import (
    LEAVE_BUDGET_S, Phase, Seen, Snapshot, announce, dedup, last_seen,
)
from .force_classic import ClassicTrigger, Protocol, TriggerState
from .force_consumer import force_consumer
from .force_report import COOPERATIVE_PROTOCOLS, Report, classic_report


def empty_subscription(protocol_type: str) -> bytes:
    """Metadata that asks for nothing: an empty consumer-protocol subscription."""
    if protocol_type != "consumer":
        return b""
    from ...protocol import consumer as cp

    return cp.encode_subscription(cp.Subscription(topics=[], user_data=None,
                                                  owned_partitions=[], generation_id=-1))


async def force_rebalance(cluster, before, reason: str, *, snapshot: Snapshot, deadline,
                          on_phase: Phase | None = None, clock: Clock | None = None,
                          log: Callable[[str], None] | None = None) -> Report:
    """Trigger one rebalance of the live group `before` describes (see the module doc).
    `log` gets a consumer group's transient member's transitions, one line each."""
    if before.type == "consumer":
        return await force_consumer(cluster, before, reason, snapshot=snapshot,
                                    deadline=deadline, on_phase=on_phase, clock=clock, log=log)
    return await force_classic(cluster, before, reason, snapshot=snapshot, deadline=deadline,
                               on_phase=on_phase, clock=clock)


async def force_classic(cluster, before, reason: str, *, snapshot: Snapshot, deadline,
                        on_phase: Phase | None = None, clock: Clock | None = None) -> Report:
    clock = clock or SYSTEM_CLOCK
    phase = on_phase or (lambda name, info: None)
    d = cluster.deadline(deadline)
    group = before.group
    trigger = ClassicTrigger(group, Protocol(before.protocol_type, before.protocol,
                                             empty_subscription(before.protocol_type)), reason)
    info = await cluster.find_coordinator(group, deadline=d)
    trigger.coordinator_found(info.node_id, info.host, info.port)
    driver = MemberDriver(cluster, trigger, clock=clock, name=f"our JoinGroup to {group!r}")
    seen = Seen()
    async with driver.membership("groupctl is stopping", leave_budget_s=LEAVE_BUDGET_S):
        await driver.connect()   # both routes: the window between join and leave is short
        await announce(phase, "joining", {"coordinator": info.node_id})
        await driver.run_until(lambda t: t.state is not TriggerState.ASKING_ID
                               and t.state is not TriggerState.IDLE, d, "given a member id")
        _raise_refusal(trigger)
        started = clock.monotonic()
        await driver.run_until(lambda t: t.join_parked or t.state is not TriggerState.JOINING,
                               d, "sent")
        await announce(phase, "parked", {"member_id": trigger.member_id})
        await _leave_when_parked(driver, trigger, d, seen)
        await announce(phase, "left", {"member_id": trigger.member_id})
        after, follow_up, stable_at = await _until_stable(before, snapshot, d, seen, clock,
                                                          trigger)
        driver.settle()  # the JoinGroup answered since the LeaveGroup: was the race lost?
        return classic_report(before, after, started=started, stable_at=stable_at,
                              follow_up=follow_up, trigger=trigger, states=seen.states)


def _raise_refusal(trigger: ClassicTrigger) -> None:
    if trigger.error is None:
        return
    from ...client.errors import kafka_error

    if trigger.error_code:
        raise kafka_error("JoinGroup", trigger.error_code, f"group {trigger.group!r}")
    raise KafkaError("JoinGroup", ErrorCode.UNKNOWN_SERVER_ERROR,
                     f"group {trigger.group!r}: {trigger.error}")


async def _leave_when_parked(driver: MemberDriver, trigger: ClassicTrigger, d,
                             seen: Seen) -> None:
    """Run the trigger until it asks to leave (DescribeGroups on the control route showed
    its JoinGroup parked, or the JoinGroup was answered), then until the LeaveGroup's
    answer moves it to LEFT (or FAILED when the join had failed)."""
    try:
        await driver.run_until(lambda t: t.state is not TriggerState.JOINING, d, "seen parked")
    except DeadlineError:
        seen.states.extend(s for s in trigger.states_seen if s)
        raise DeadlineError(f"our JoinGroup to {trigger.group!r} was not seen parked in time "
                            f"(states seen: {', '.join(dedup(seen.states))})") from None
    seen.states.extend(s for s in trigger.states_seen if s)
    # the LeaveGroup has its own budget: it goes out also when the deadline has passed
    await driver.run_until(lambda t: t.done, LEAVE_BUDGET_S, "left")
    _raise_refusal(trigger)


async def _until_stable(before, snapshot: Snapshot, d, seen: Seen, clock: Clock,
                        trigger: ClassicTrigger):
    """(first Stable snapshot, the cooperative follow-up's Stable snapshot or None, time
    the first was seen). DeadlineError naming what was seen when out of time."""
    def without_us(s) -> bool:
        return all(m.member_id != trigger.member_id for m in s.members)

    stable = await _poll(snapshot, d, seen, lambda s: s is not None and s.state == "Stable"
                         and without_us(s), "Stable again")
    stable_at = clock.monotonic()
    follow_up = None
    if before.protocol in COOPERATIVE_PROTOCOLS and _unassigned(before, stable):
        # cooperative: partitions revoked for a new owner come back in a second
        # rebalance the members start themselves; show it when it comes in time
        try:
            follow_up = await _poll(snapshot, d, seen, lambda s: s is not None
                                    and s.state == "Stable" and not _unassigned(before, s),
                                    "the cooperative follow-up rebalance")
        except DeadlineError:
            follow_up = None
    return stable, follow_up, stable_at


async def _poll(snapshot: Snapshot, d, seen: Seen, done, what: str):
    async for desc in snapshot:
        seen.note(desc)
        if desc is not None and done(desc):
            return desc
        if d.expired:
            break
    raise DeadlineError(f"the group was not {what} within the timeout; last seen: "
                        f"{last_seen(seen)}")


def _unassigned(before, after) -> bool:
    owned_before = {tp for m in before.members for tp in m.owned()}
    owned_after = {tp for m in after.members for tp in m.owned()}
    return bool(owned_before - owned_after)
