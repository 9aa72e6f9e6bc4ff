"""`force-rebalance`'s driver: trigger one rebalance of a live group over the client layer,
wait until it is Stable again, and report what changed.

    report = await force_rebalance(cluster, before, reason, snapshot=..., deadline=d)

`before` is the group as describe showed it (observe.model.GroupDescription, or anything
with the same attributes); `snapshot` is an async iterator of the group's looks as they
come (None when it is gone): observe.source.looks over the one describe source, asking
only the group's own type's describe API. The driver does not import observe: the CLI
hands it both.

Classic groups: force_classic.ClassicTrigger over two dedicated connections to the
coordinator (the JoinGroup parks on "join", DescribeGroups and the LeaveGroup go over
"control"), then snapshots until the group is Stable again. Consumer (KIP-848) groups:
force_consumer.py (the KIP-848 ConsumerMember, joined and left through member_driver.py).
Every member this adds leaves on every exit path: the `finally` below sends the
LeaveGroup when the trigger may still be a member (Ctrl-C and SIGTERM cancel the task,
and cancellation lands there too); force_consumer leaves the same way, through
MemberDriver.membership.
"""
from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, AsyncIterator, Awaitable, Callable

from ..client.interface import ClusterLike
from ..errors import DeadlineError, GroupctlError, KafkaError
from ..protocol.errors import ErrorCode
from .force_classic import CONTROL, ClassicTrigger, Protocol, Send, TriggerState
from .force_report import COOPERATIVE_PROTOCOLS, Report, classic_report

if TYPE_CHECKING:  # pragma: no cover
    from ..client.connection import BrokerConnection
    from ..observe.model import GroupDescription

POLL_S = 0.01            # DescribeGroups while our JoinGroup parks: the leave must be quick
DESCRIBE_TIMEOUT_S = 5.0
STABLE_POLL_S = 0.02     # snapshots until Stable again
LEAVE_BUDGET_S = 5.0     # the LeaveGroup on the way out, also after the deadline

Snapshot = AsyncIterator["GroupDescription | None"]   # the group's looks (observe.source.looks)
Phase = Callable[[str, dict], "Awaitable[None] | None"]


@dataclass
class Clock:
    """Monotonic seconds; injected so tests and the report share one time base."""

    now: Callable[[], float] = time.monotonic


@dataclass
class Seen:
    """What the driver saw, for the report and for a timeout's message."""

    states: list[str | None] = field(default_factory=list)
    last: GroupDescription | None = None

    def note(self, desc) -> None:
        self.last = desc
        state = getattr(desc, "state", None) if desc is not None else "missing"
        if not self.states or self.states[-1] != state:
            self.states.append(state)


async def announce(phase: Phase, name: str, info: dict) -> None:
    """Tell the caller which phase starts (it may wait: a test pause, a progress line)."""
    result = phase(name, info)
    if asyncio.iscoroutine(result):
        await result


def empty_subscription(protocol_type: str) -> bytes:
    """Metadata that asks for nothing: an empty consumer-protocol subscription."""
    if protocol_type != "consumer":
        return b""
    from ..protocol import consumer as cp

    return cp.encode_subscription(cp.Subscription(topics=[], user_data=None,
                                                  owned_partitions=[], generation_id=-1))


async def force_rebalance(cluster: ClusterLike, before, reason: str, *, snapshot: Snapshot,
                          deadline,
                          on_phase: Phase | None = None, clock: Clock | None = None,
                          log: Callable[[str], None] | None = None) -> Report:
    """Trigger one rebalance of the live group `before` describes (see the module doc).
    `log` gets a consumer group's transient member's transitions, one line each."""
    if before.type == "consumer":
        from .force_consumer import force_consumer

        return await force_consumer(cluster, before, reason, snapshot=snapshot,
                                    deadline=deadline, on_phase=on_phase, clock=clock, log=log)
    return await force_classic(cluster, before, reason, snapshot=snapshot, deadline=deadline,
                               on_phase=on_phase, clock=clock)


class Links:
    """The two dedicated connections to the coordinator (see force_classic): "join" carries
    the JoinGroups, "control" DescribeGroups and the LeaveGroup. A control link that died
    (e.g. a request timed out, which closes it) is reopened: the LeaveGroup must go out."""

    def __init__(self, cluster: ClusterLike, node_id: int):
        self.cluster = cluster
        self.node_id = node_id
        self.conns: dict[str, BrokerConnection] = {}

    async def open(self, d) -> None:
        for name in ("join", CONTROL):
            self.conns[name] = await self.cluster.open_connection(self.node_id, deadline=d)

    async def get(self, name: str, budget: float = LEAVE_BUDGET_S):
        conn = self.conns[name]
        if name == CONTROL and conn.closed:
            conn = self.conns[name] = await self.cluster.open_connection(self.node_id,
                                                                         deadline=budget)
        return conn

    async def close(self) -> None:
        await asyncio.gather(*(c.close() for c in self.conns.values()), return_exceptions=True)


async def force_classic(cluster: ClusterLike, before, reason: str, *, snapshot: Snapshot, deadline,
                        on_phase: Phase | None = None, clock: Clock | None = None) -> Report:
    clock = clock or Clock()
    phase = on_phase or (lambda name, info: None)
    d = cluster.deadline(deadline)
    group = before.group
    trigger = ClassicTrigger(group, Protocol(before.protocol_type, before.protocol,
                                             empty_subscription(before.protocol_type)), reason)
    info = await cluster.find_coordinator(group, deadline=d)
    links = Links(cluster, info.node_id)
    seen = Seen()
    join_task: asyncio.Task | None = None
    try:
        await links.open(d)
        await announce(phase, "joining", {"coordinator": info.node_id})
        first = trigger.start()[0]
        resp = await _send(links, first, trigger)
        sends = trigger.on_join(resp)
        _raise_refusal(trigger)
        started = clock.now()
        join_task = asyncio.ensure_future(_send(links, sends[0], trigger))
        await announce(phase, "parked", {"member_id": trigger.member_id})
        await _leave_when_parked(links, trigger, join_task, d, seen)
        await announce(phase, "left", {"member_id": trigger.member_id})
        after, follow_up, stable_at = await _until_stable(before, snapshot, d, seen, clock,
                                                          trigger)
        if join_task.done():  # answered at once after the LeaveGroup: was the race lost?
            _join_result(trigger, join_task)
        return classic_report(before, after, started=started, stable_at=stable_at,
                              follow_up=follow_up, trigger=trigger, states=seen.states)
    finally:
        await _cleanup(links, trigger, join_task)


def _raise_refusal(trigger: ClassicTrigger) -> None:
    if trigger.error is None:
        return
    from ..client.errors import kafka_error

    if trigger.error_code:
        raise kafka_error("JoinGroup", trigger.error_code, f"group {trigger.group!r}")
    raise KafkaError("JoinGroup", ErrorCode.UNKNOWN_SERVER_ERROR,
                     f"group {trigger.group!r}: {trigger.error}")


async def _leave_when_parked(links: Links, trigger: ClassicTrigger, join_task: asyncio.Task,
                             d, seen: Seen) -> None:
    """Poll DescribeGroups on the control link until the trigger asks to leave (it saw its
    JoinGroup parked, or the JoinGroup was answered), then send the LeaveGroup; its answer
    moves the trigger to LEFT (or FAILED when the join had failed)."""
    from ..protocol.messages import DESCRIBE_GROUPS

    while trigger.state == TriggerState.JOINING:
        if join_task.done():
            sends = _join_result(trigger, join_task)
        else:
            conn = await links.get(CONTROL)
            resp = await conn.request(DESCRIBE_GROUPS, {
                "groups": [trigger.group], "include_authorized_operations": False},
                timeout=DESCRIBE_TIMEOUT_S)
            entry = (resp.get("groups") or [{}])[0]
            ids = {m["member_id"] for m in entry.get("members") or ()}
            seen.states.append(entry.get("group_state"))
            sends = trigger.on_describe(entry.get("group_state"), ids)
        for send in sends:
            await _leave(links, trigger, send)
        if trigger.state == TriggerState.JOINING:
            if d.expired:
                raise DeadlineError(f"our JoinGroup to {trigger.group!r} was not seen parked "
                                    f"in time (states seen: {', '.join(_dedup(seen.states))})")
            await asyncio.sleep(POLL_S)
    _raise_refusal(trigger)


def _join_result(trigger: ClassicTrigger, task: asyncio.Task) -> list[Send]:
    exc = task.exception()
    if exc is not None:
        return trigger.on_join_failed(str(exc))
    return trigger.on_join(task.result())


async def _leave(links: Links, trigger: ClassicTrigger, send: Send) -> None:
    try:
        resp = await _send(links, send, trigger)
    except GroupctlError as exc:
        trigger.on_leave(None, why=str(exc))
        return
    trigger.on_leave(resp)


async def _send(links: Links, send: Send, trigger: ClassicTrigger):
    from ..protocol.messages import JOIN_GROUP, LEAVE_GROUP

    conn = await links.get(send.link)
    if send.api == "JoinGroup":
        # parked for up to the group's rebalance timeout: never cut short by the deadline
        return await conn.request(JOIN_GROUP, send.body, min_version=4,
                                  timeout=trigger.rebalance_timeout_ms / 1000 + 5)
    return await conn.request(LEAVE_GROUP, send.body, timeout=LEAVE_BUDGET_S)


async def _until_stable(before, snapshot: Snapshot, d, seen: Seen, clock: Clock,
                        trigger: ClassicTrigger):
    """(first Stable snapshot, the cooperative follow-up's Stable snapshot or None, time
    the first was seen). DeadlineError naming what was seen when out of time."""
    def without_us(s) -> bool:
        return all(m.member_id != trigger.member_id for m in s.members)

    stable = await _poll(snapshot, d, seen, lambda s: s is not None and s.state == "Stable"
                         and without_us(s), "Stable again")
    stable_at = clock.now()
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
                        f"{_last_seen(seen)}")


def _unassigned(before, after) -> bool:
    owned_before = {tp for m in before.members for tp in m.owned()}
    owned_after = {tp for m in after.members for tp in m.owned()}
    return bool(owned_before - owned_after)


async def _cleanup(links: Links, trigger: ClassicTrigger, join_task: asyncio.Task | None) -> None:
    """Leave if we may still be a member (any exit path), then close the links. The leave
    is shielded: a second cancellation (Ctrl-C again) does not cut it off mid-request."""
    try:
        for send in trigger.abort("groupctl is stopping"):
            await asyncio.wait_for(asyncio.shield(_leave(links, trigger, send)),
                                   LEAVE_BUDGET_S + 1)
    except (asyncio.TimeoutError, asyncio.CancelledError, GroupctlError):
        pass
    finally:
        if join_task is not None and not join_task.done():
            join_task.cancel()
        if join_task is not None:
            try:
                await join_task
            except BaseException:  # noqa: BLE001 - cancelled or failed: already handled
                pass
        await links.close()


def _last_seen(seen: Seen) -> str:
    last = seen.last
    if last is None:
        return "the group is gone" if seen.states[-1:] == ["missing"] else "nothing"
    members = ", ".join(m.member_id for m in getattr(last, "members", [])) or "none"
    return (f"state {last.state}, {len(last.members)} members ({members}); states seen: "
            f"{', '.join(s for s in _dedup(seen.states) if s)}")


def _dedup(states: list) -> list:
    out: list = []
    for s in states:
        if not out or out[-1] != s:
            out.append(s)
    return [str(s) for s in out]


