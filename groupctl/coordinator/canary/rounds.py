"""One canary round: a full membership of the canary's own group, timed step by step, on
the one member driver (driver/member_driver.py), which leaves on every exit.

    classic   FindCoordinator, JoinGroup (MEMBER_ID_REQUIRED, then again with the member
              id: KIP-394), SyncGroup (as the group's only member it leads and assigns
              nothing), one Heartbeat, LeaveGroup.
    consumer  FindCoordinator, ConsumerGroupHeartbeat at member epoch 0, heartbeats until
              the (empty) assignment is reconciled and acknowledged, the leave at -1.

It costs nothing: the classic member subscribes to no topic, the KIP-848 member to
`groupctl:no-partitions` (a name no topic can have, as the probe does: never an empty
list, see members/consumer/types.NO_PARTITIONS_TOPIC); it never commits and never fetches.

The round ends at its first error (an error code in an answer, a request without one, or
the round's deadline): that error and its step are the round's, and the member leaves at
once, not retrying what a consumer would retry: the next round starts afresh, so a
coordinator that moves shows as one failed round and then rounds on the new one.
FindCoordinator is one request (not the client's retrying lookup) for the same reason.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Callable

from ...clock import Clock
from ...errors import DeadlineError, GroupctlError
from ...protocol import consumer as cp
from ...protocol import messages as M
from ...protocol.errors import error_for
from ..driver.member_driver import MemberDriver
from ..members.classic import ClassicMember
from ..members.consumer import ConsumerMember
from ..members.interface import Coordinator
from .plan import Canary
from .timing import CLASSIC_STEPS, CONSUMER_STEPS, TIMEOUT, Stopwatch, TimedLinks, failure_name

REASON_PREFIX = "groupctl canary"
EMPTY_SUBSCRIPTION = cp.encode_subscription(cp.Subscription(topics=[]))
EMPTY_ASSIGNMENT = cp.encode_assignment(cp.Assignment(assigned_partitions=[]))
HEARTBEAT_MS = 1   # the one classic Heartbeat goes as soon as the member is synced


@dataclass(frozen=True)
class RoundSettings:
    timeout_s: float = 10.0             # the round's deadline, its leave excluded
    leave_budget_s: float = 5.0         # the leave, also after an error
    session_timeout_ms: int = 10_000    # classic; within the broker's 6-1800 s defaults
    rebalance_timeout_ms: int = 10_000


@dataclass
class RoundResult:
    """One round of one canary: where it ran, whether it completed, each step's figure
    (ms, measured on the monotonic clock; None: the step did not complete)."""

    canary: Canary
    coordinator: int | None      # the broker the round ran against (None: never found)
    ok: bool
    error: str | None            # Kafka's error name, or timeout / disconnected
    failed_step: str | None
    steps: dict[str, float | None] = field(default_factory=dict)
    round_ms: float | None = None
    started_at: float = 0.0      # Unix time the round started
    member_id: str | None = None

    def to_dict(self) -> dict:
        c = self.canary
        return {"coordinator": self.coordinator, "protocol": c.protocol, "group": c.group,
                "partition": c.partition, "ok": self.ok, "error": self.error,
                "failed_step": self.failed_step,
                **{f"{step}_ms": ms for step, ms in self.steps.items()},
                "round_ms": self.round_ms, "member_id": self.member_id,
                "started_at": round(self.started_at, 3)}


def classic_member(canary: Canary, s: RoundSettings) -> ClassicMember:
    """The classic canary: offers `range` with an empty subscription; as the only member it
    leads, and assigns every member nothing."""
    return ClassicMember(
        canary.group, protocols=[("range", EMPTY_SUBSCRIPTION)],
        session_timeout_ms=s.session_timeout_ms, rebalance_timeout_ms=s.rebalance_timeout_ms,
        heartbeat_interval_ms=HEARTBEAT_MS, reason_prefix=REASON_PREFIX,
        assign=lambda pending: {m.member_id: EMPTY_ASSIGNMENT for m in pending.members})


def consumer_member(canary: Canary, s: RoundSettings) -> ConsumerMember:
    """The KIP-848 canary: wants no partitions (NO_PARTITIONS_TOPIC); its member id says
    whose it is in the broker's log ("Member groupctl-canary-... joins")."""
    return ConsumerMember(
        canary.group, topics=[], member_id=f"groupctl-canary-{uuid.uuid4()}",
        rebalance_timeout_ms=s.rebalance_timeout_ms,
        request_timeout_ms=int(s.timeout_s * 1000), reason_prefix=REASON_PREFIX)


async def find_coordinator(cluster, group: str, watch: Stopwatch, timeout_s: float
                           ) -> Coordinator | None:
    """One FindCoordinator for `group`, timed; None when it failed (the watch has why)."""
    def body(conn) -> dict:
        if conn.supports(M.FIND_COORDINATOR, 4):
            return {"key_type": 0, "coordinator_keys": [group]}
        return {"key": group, "key_type": 0}

    n = watch.sent("find_coordinator")
    try:
        resp = await cluster.request(M.FIND_COORDINATOR, body, deadline=timeout_s)
    except GroupctlError as exc:
        watch.answered(n, failure_name(exc))
        return None
    entry = next(iter(resp.get("coordinators") or ()), resp)
    code = entry.get("error_code") or 0
    watch.answered(n, error_for(code).name if code else None)
    return None if code else Coordinator(entry["node_id"], entry["host"], entry["port"])


async def run_round(cluster, canary: Canary, s: RoundSettings, clock: Clock, *,
                    last_coordinator: int | None = None,
                    log: Callable[[str], None] | None = None) -> RoundResult:
    """One round of `canary` (see the module doc). Never raises for what the broker did:
    that is the result's `error`; a cancellation (Ctrl-C, SIGTERM) leaves, then goes on."""
    watch = Stopwatch(clock)
    started_at, t0 = clock.wall(), clock.monotonic()
    steps = CLASSIC_STEPS if canary.protocol == "classic" else CONSUMER_STEPS
    found = await find_coordinator(cluster, canary.group, watch, s.timeout_s)
    member_id = None
    if found is not None:
        member_id = await _membership(cluster, canary, found, watch, s, clock, log)
    ok = watch.error is None
    step, error = watch.error or (None, None)
    return RoundResult(
        canary, found.node_id if found is not None else last_coordinator, ok, error, step,
        {name: watch.ms(name) for name in steps},
        round((clock.monotonic() - t0) * 1000, 3) if ok else None, started_at, member_id)


async def _membership(cluster, canary: Canary, found: Coordinator, watch: Stopwatch,
                      s: RoundSettings, clock: Clock, log) -> str | None:
    classic = canary.protocol == "classic"
    member: ClassicMember | ConsumerMember = (classic_member(canary, s) if classic
                                              else consumer_member(canary, s))
    member.coordinator_found(found.node_id, found.host, found.port)
    driver = MemberDriver(cluster, member, links=TimedLinks(cluster, watch), log=log,
                          clock=clock, name=f"the canary of group {canary.group}")

    def through(m) -> bool:
        if watch.error is not None:
            return True
        return watch.answers.get("heartbeat", 0) >= 1 if classic else m.stable

    async with driver.membership("round done", leave_budget_s=s.leave_budget_s):
        try:
            await driver.run_until(through, s.timeout_s, "through its round")
        except DeadlineError:
            watch.fail(watch.pending_step() or "join", TIMEOUT)
        except GroupctlError as exc:   # a fatal answer: its code is in the watch already
            watch.fail(watch.pending_step() or "join", failure_name(exc))
        why = "round done" if watch.error is None else \
            f"round failed: {watch.error[1]} on {watch.error[0]}"
        if not await driver.leave(why, s.leave_budget_s):
            watch.fail("leave", driver.unanswered[0][1] if driver.unanswered else TIMEOUT)
    return member.member_id or None
