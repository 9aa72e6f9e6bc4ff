"""The classic half of `force-rebalance` as a sans-IO state machine: one new generation of a
Stable classic group, never two.

A member that joins and later leaves costs a group two rebalances (its join, its leave).
This machine joins only far enough to start a rebalance and leaves while its own JoinGroup
is still parked, so the coordinator completes that one rebalance without it. The order,
found on the lab's Kafka 4.3.1 broker (tests/integration/test_force_rebalance.py):

1. JoinGroup with an empty member id on the *join* link -> MEMBER_ID_REQUIRED carrying our
   member id M (KIP-394). The broker only records M as a pending member: no rebalance yet,
   and DescribeGroups does not list pending members.
2. JoinGroup with M on the join link. For a Stable group this is "Adding new member M ...;
   client reason: groupctl force-rebalance: ..." -> PreparingRebalance, and the broker
   parks the request until every member has rejoined (or the rebalance timeout).
3. Poll DescribeGroups over the *control* link until it shows PreparingRebalance with M
   among the members. Only then is the JoinGroup known to have been processed: a
   LeaveGroup sent earlier could overtake it on the other connection, remove the pending
   M, and the JoinGroup would then fail with UNKNOWN_MEMBER_ID without any rebalance.
4. LeaveGroup v3+ naming M, with the same KIP-800 reason, on the control link (the join
   link is busy with the parked request). The broker answers our parked JoinGroup with
   UNKNOWN_MEMBER_ID, removes M, and completes the join phase with the original members
   once they have rejoined: exactly one new generation, which they see as one rebalance.

The window between 2 and 4 is a few milliseconds; the members rejoin only at their next
heartbeat. Should they all have rejoined before our LeaveGroup arrives (the race is lost),
our JoinGroup is answered with the new generation and M is a member of it: the machine
still leaves at once (JOINED -> LEAVING), which costs the second rebalance, and
`lost_race` says so for the report.

It is a member the one driver (driver/member_driver.py) drives, through the DrivenMember
interface: `next_requests(now_ms)` hands out each request as an `Outgoing` on its route
(JoinGroup on the join route, DescribeGroups and LeaveGroup on the control route), and
`on_response` / `on_failure` take the answers; its state moves through the members'
StateTracker (every move with its reason). The steps are also inputs of their own, each
returning the requests it asks for (and queueing them for `next_requests`): `start()`,
`on_join(resp)`, `on_describe(state, member_ids)`, `on_leave(resp)`, `on_join_failed(why)`,
`abort(why)`. No I/O, no clock.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...client.routes import ROUTE_CONTROL, ROUTE_JOIN
from ...errors import GroupctlError
from ...events import Event
from ...protocol import messages as M
from ...protocol.errors import ErrorCode, error_for
from ..members.interface import (
    REASON_MAX, Coordinator, DocumentedState, Outgoing, StateTracker, Transition,
)

JOIN, CONTROL = ROUTE_JOIN, ROUTE_CONTROL
POLL_MS = 10                  # DescribeGroups while our JoinGroup parks: the leave must be quick
DESCRIBE_TIMEOUT_MS = 5_000
LEAVE_TIMEOUT_MS = 5_000
JOIN_MIN_VERSION = 4          # KIP-394: the member-id round


class TriggerState(DocumentedState):
    """Where the trigger is. `TriggerState.X.__doc__` says what it waits for."""

    IDLE = ("idle", """Nothing sent yet; nothing to undo.""")
    ASKING_ID = ("asking_id", """The first JoinGroup (empty member id) is in flight. If it
        is abandoned now the broker drops the pending member after the session timeout,
        without a rebalance.""")
    JOINING = ("joining", """The JoinGroup with our member id is sent; DescribeGroups is
        polled until it shows the group in PreparingRebalance with us in it.""")
    LEAVING = ("leaving", """The LeaveGroup for our member id is sent on the control link;
        the parked JoinGroup will be answered with UNKNOWN_MEMBER_ID.""")
    JOINED = ("joined", """Lost the race: our JoinGroup completed with a generation, so we
        are a member of it. Passes straight on to LEAVING.""")
    LEFT = ("left", """Terminal: the broker removed us (or we never became a member).""")
    FAILED = ("failed", """Terminal: the broker refused the join; `error` says why. Any
        member id we had was left first.""")


S = TriggerState
LEGAL: dict[TriggerState, frozenset] = {
    S.IDLE: frozenset({S.ASKING_ID, S.LEFT}),
    S.ASKING_ID: frozenset({S.JOINING, S.LEFT, S.FAILED}),
    S.JOINING: frozenset({S.LEAVING, S.JOINED}),
    S.JOINED: frozenset({S.LEAVING}),
    S.LEAVING: frozenset({S.LEFT, S.FAILED}),
    S.LEFT: frozenset(),
    S.FAILED: frozenset(),
}


@dataclass(frozen=True)
class Protocol:
    """What the trigger offers in its JoinGroup: the group's own protocol type and name,
    with metadata that asks for nothing (an empty consumer-protocol subscription)."""

    protocol_type: str
    name: str
    metadata: bytes


class ClassicTrigger:
    """See the module doc. `transitions` records every move with its reason."""

    def __init__(self, group: str, protocol: Protocol, reason: str, *,
                 session_timeout_ms: int = 10_000, rebalance_timeout_ms: int = 10_000):
        self.group = self.group_id = group
        self.protocol = protocol
        self.reason = reason[:REASON_MAX]
        self.session_timeout_ms = session_timeout_ms
        self.rebalance_timeout_ms = rebalance_timeout_ms
        self.member_id = ""   # the broker's, from its MEMBER_ID_REQUIRED answer
        self.coordinator: Coordinator | None = None
        self.fatal_error: GroupctlError | None = None   # a refusal is `error`, for the flow
        self.joined_generation: int | None = None  # set only when the race was lost
        self.error: str | None = None
        self.error_code: int | None = None     # the broker's, when it refused the join
        self.leave_error: str | None = None
        self.states_seen: list[str | None] = []   # the group's state in each DescribeGroups
        self._sm: StateTracker[TriggerState] = StateTracker(S.IDLE, LEGAL)
        self._now_ms = 0
        self._tag = 0
        self._queue: list[Outgoing] = []
        self._inflight: dict[int, str] = {}    # tag -> api
        self._describe_at_ms = 0

    # ---- read side ----------------------------------------------------------------------
    @property
    def state(self) -> TriggerState:
        return self._sm.state

    @property
    def transitions(self) -> list[Transition]:
        return list(self._sm.transitions)

    @property
    def done(self) -> bool:
        return self.state in (S.LEFT, S.FAILED)

    @property
    def lost_race(self) -> bool:
        return self.joined_generation is not None

    @property
    def member_to_leave(self) -> str | None:
        """Our member id while the broker may still hold it (pending or joined)."""
        if self.member_id and self.state in (S.JOINING, S.JOINED, S.LEAVING):
            return self.member_id
        return None

    @property
    def join_parked(self) -> bool:
        """The JoinGroup with our member id went out and is not answered yet."""
        return self.state is S.JOINING and M.JOIN_GROUP.name in self._inflight.values() \
            and not any(o.api == M.JOIN_GROUP.name for o in self._queue)

    # ---- the driver's side (DrivenMember) -----------------------------------------------
    def coordinator_found(self, node_id: int, host: str, port: int) -> None:
        self.coordinator = Coordinator(node_id, host, port)

    def next_requests(self, now_ms: int) -> list[Outgoing]:
        self._now_ms = now_ms
        if self.state is S.IDLE and self.coordinator is not None:
            self.start()
        if (self.state is S.JOINING and now_ms >= self._describe_at_ms
                and M.DESCRIBE_GROUPS.name not in self._inflight.values()):
            self._describe_at_ms = now_ms + POLL_MS
            self._queue.append(self._out(M.DESCRIBE_GROUPS, CONTROL, {
                "groups": [self.group], "include_authorized_operations": False},
                timeout_ms=DESCRIBE_TIMEOUT_MS))
        out, self._queue = self._queue, []
        for o in out:
            self._inflight[o.tag] = o.api
        return out

    def next_deadline_ms(self) -> int | None:
        if self.state is S.JOINING and M.DESCRIBE_GROUPS.name not in self._inflight.values():
            return self._describe_at_ms
        return None

    def on_response(self, api: str, body: dict, now_ms: int, *, tag: int | None = None) -> bool:
        self._now_ms = now_ms
        if not self._awaited(tag):
            return False
        if api == M.JOIN_GROUP.name:
            self.on_join(body)
        elif api == M.DESCRIBE_GROUPS.name:
            entry = (body.get("groups") or [{}])[0]
            self.on_describe(entry.get("group_state"),
                             {m["member_id"] for m in entry.get("members") or ()})
        elif api == M.LEAVE_GROUP.name:
            self.on_leave(body)
        return True

    def on_failure(self, api: str, kind: str, now_ms: int, *, tag: int | None = None) -> bool:
        self._now_ms = now_ms
        if not self._awaited(tag):
            return False
        if api == M.JOIN_GROUP.name:
            self.on_join_failed(kind)
        elif api == M.LEAVE_GROUP.name:
            self.on_leave(None, why=kind)
        return True   # a DescribeGroups that failed is asked again at the next poll

    def poll_events(self) -> list[Event]:
        return []

    def _awaited(self, tag: int | None) -> bool:
        """Whether an answer (or failure) is for a request still out (then no longer)."""
        return tag is None or self._inflight.pop(tag, None) is not None

    def leave(self, reason: str, now_ms: int) -> bool:
        """Stop: leave if the broker may hold our member (see abort). False when done or
        the LeaveGroup is already on its way."""
        self._now_ms = now_ms
        if self.done or (self.state is S.LEAVING and (
                M.LEAVE_GROUP.name in self._inflight.values()
                or any(o.api == M.LEAVE_GROUP.name for o in self._queue))):
            return False
        self.abort(reason)
        return True

    # ---- inputs -------------------------------------------------------------------------
    def start(self) -> list[Outgoing]:
        self._move(S.ASKING_ID, "asking the coordinator for a member id")
        return self._queued([self._join("")])

    def on_join(self, resp: dict) -> list[Outgoing]:
        code = resp.get("error_code") or 0
        if self.state == S.ASKING_ID:
            if code == ErrorCode.MEMBER_ID_REQUIRED:
                self.member_id = resp["member_id"]
                self._move(S.JOINING, f"member id {self.member_id}: joining with it")
                return self._queued([self._join(self.member_id)])
            if code == ErrorCode.NONE:  # a broker without KIP-394 (JoinGroup < v4) joins at once
                self.member_id = resp["member_id"]
                self.joined_generation = resp.get("generation_id")
                self._move(S.JOINING, "joined without a member-id round")
                return self._lost_race()
            self.error_code = code
            return self._fail(f"JoinGroup failed: {_name(code)}")
        if self.state == S.JOINING:
            if code == ErrorCode.NONE:
                self.joined_generation = resp.get("generation_id")
                return self._lost_race()
            # e.g. UNKNOWN_MEMBER_ID: the pending member expired before the second join
            self.error, self.error_code = f"JoinGroup failed: {_name(code)}", code
            return self._leave("the JoinGroup failed")
        if code == ErrorCode.NONE and self.joined_generation is None:
            # answered with a generation after all: the members rejoined before our
            # LeaveGroup arrived, so we were in that generation (and leaving cost another)
            self.joined_generation = resp.get("generation_id")
        return []  # else the parked JoinGroup answered UNKNOWN_MEMBER_ID: expected

    def on_join_failed(self, why: str) -> list[Outgoing]:
        """The JoinGroup's connection failed (not an error code)."""
        if self.state == S.ASKING_ID:
            return self._fail(f"JoinGroup failed: {why}")
        if self.state == S.JOINING:
            self.error = f"JoinGroup failed: {why}"
            return self._leave("the JoinGroup connection failed")
        return []

    def on_describe(self, state: str | None, member_ids: set[str]) -> list[Outgoing]:
        """A DescribeGroups answer seen while JOINING."""
        self.states_seen.append(state)
        if self.state != S.JOINING or not self.member_id:
            return []
        if self.member_id in member_ids:
            if state == "PreparingRebalance":
                return self._leave("our JoinGroup is parked in PreparingRebalance")
            self.joined_generation = -1  # past the join phase with us in it: lost the race
            return self._lost_race()
        return []

    def on_leave(self, resp: dict | None, why: str | None = None) -> list[Outgoing]:
        if self.state != S.LEAVING:
            return []
        code = (resp or {}).get("error_code") or 0
        members = (resp or {}).get("members") or []
        member_code = next((m.get("error_code") or 0 for m in members), 0)
        if why is not None:
            self.leave_error = why
        elif code or member_code not in (ErrorCode.NONE, ErrorCode.UNKNOWN_MEMBER_ID):
            self.leave_error = f"LeaveGroup failed: {_name(code or member_code)}"
        self._move(S.LEFT if self.error is None else S.FAILED, "the LeaveGroup was answered"
                   if why is None else f"the LeaveGroup failed: {why}")
        return []

    def abort(self, why: str) -> list[Outgoing]:
        """Stop (interrupted, out of time): the LeaveGroup to send if we may be a member."""
        if self.member_to_leave:
            if self.state == S.LEAVING:  # the LeaveGroup may not have gone out: again
                return self._queued([self._leave_request()])
            return self._leave(why)
        if self.state in (S.IDLE, S.ASKING_ID):
            self._move(S.LEFT, why)
        return []

    # ---- moves --------------------------------------------------------------------------
    def _lost_race(self) -> list[Outgoing]:
        self._move(S.JOINED, "the join phase completed with us in it (the members rejoined "
                             "before our LeaveGroup)")
        return self._leave("leaving the generation we joined")

    def _leave(self, why: str) -> list[Outgoing]:
        self._move(S.LEAVING, why)
        return self._queued([self._leave_request()])

    def _queued(self, sends: list[Outgoing]) -> list[Outgoing]:
        self._queue.extend(sends)
        return sends

    def _out(self, spec, route: str, body: dict, *, min_version: int = 0,
             timeout_ms: int | None = None) -> Outgoing:
        self._tag += 1
        return Outgoing(spec, body, self._tag, route, min_version, timeout_ms)

    def _leave_request(self) -> Outgoing:
        return self._out(M.LEAVE_GROUP, CONTROL, {
            "group_id": self.group, "member_id": self.member_id,
            "members": [{"member_id": self.member_id, "group_instance_id": None,
                         "reason": self.reason}]}, timeout_ms=LEAVE_TIMEOUT_MS)

    def _fail(self, error: str) -> list[Outgoing]:
        self.error = error
        self._move(S.FAILED, error)
        return []

    def _join(self, member_id: str) -> Outgoing:
        p = self.protocol
        # parked for up to the group's rebalance timeout: never cut short by the deadline
        return self._out(M.JOIN_GROUP, JOIN, {
            "group_id": self.group, "session_timeout_ms": self.session_timeout_ms,
            "rebalance_timeout_ms": self.rebalance_timeout_ms, "member_id": member_id,
            "group_instance_id": None, "protocol_type": p.protocol_type,
            "protocols": [{"name": p.name, "metadata": p.metadata}], "reason": self.reason},
            min_version=JOIN_MIN_VERSION, timeout_ms=self.rebalance_timeout_ms + 5_000)

    def _move(self, to: S, why: str) -> None:
        self._sm.move(to, why, self._now_ms)


def _name(code: int) -> str:
    return f"{error_for(code).name} ({code})"
