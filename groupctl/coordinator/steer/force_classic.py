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

Inputs: `start()`, `on_join(resp)`, `on_describe(state, member_ids)`, `on_leave(resp)`,
`on_join_failed(exc)`, `abort(why)`. Each returns the requests to send now: `Send(link,
api, body)` with link "join" or "control". No I/O, no clock.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...client.routes import ROUTE_CONTROL, ROUTE_JOIN
from ...protocol.errors import ErrorCode, error_for
from ..members.interface import REASON_MAX, DocumentedState

JOIN, CONTROL = ROUTE_JOIN, ROUTE_CONTROL


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
LEGAL = {
    S.IDLE: {S.ASKING_ID, S.LEFT},
    S.ASKING_ID: {S.JOINING, S.LEFT, S.FAILED},
    S.JOINING: {S.LEAVING, S.JOINED},
    S.JOINED: {S.LEAVING},
    S.LEAVING: {S.LEFT, S.FAILED},
    S.LEFT: set(),
    S.FAILED: set(),
}


@dataclass(frozen=True)
class Send:
    """One request to send now over `link` ("join" or "control")."""

    link: str
    api: str          # "JoinGroup", "LeaveGroup"
    body: dict


@dataclass(frozen=True)
class Protocol:
    """What the trigger offers in its JoinGroup: the group's own protocol type and name,
    with metadata that asks for nothing (an empty consumer-protocol subscription)."""

    protocol_type: str
    name: str
    metadata: bytes


class ClassicTrigger:
    """See the module doc. `transitions` records (from, to, why) of every move."""

    def __init__(self, group: str, protocol: Protocol, reason: str, *,
                 session_timeout_ms: int = 10_000, rebalance_timeout_ms: int = 10_000):
        self.group = group
        self.protocol = protocol
        self.reason = reason[:REASON_MAX]
        self.session_timeout_ms = session_timeout_ms
        self.rebalance_timeout_ms = rebalance_timeout_ms
        self.state = S.IDLE
        self.member_id: str | None = None
        self.joined_generation: int | None = None  # set only when the race was lost
        self.error: str | None = None
        self.error_code: int | None = None     # the broker's, when it refused the join
        self.leave_error: str | None = None
        self.transitions: list[tuple[str, str, str]] = []

    # ---- read side ----------------------------------------------------------------------
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

    # ---- inputs -------------------------------------------------------------------------
    def start(self) -> list[Send]:
        self._move(S.ASKING_ID, "asking the coordinator for a member id")
        return [self._join("")]

    def on_join(self, resp: dict) -> list[Send]:
        code = resp.get("error_code") or 0
        if self.state == S.ASKING_ID:
            if code == ErrorCode.MEMBER_ID_REQUIRED:
                self.member_id = resp["member_id"]
                self._move(S.JOINING, f"member id {self.member_id}: joining with it")
                return [self._join(self.member_id)]
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

    def on_join_failed(self, why: str) -> list[Send]:
        """The JoinGroup's connection failed (not an error code)."""
        if self.state == S.ASKING_ID:
            return self._fail(f"JoinGroup failed: {why}")
        if self.state == S.JOINING:
            self.error = f"JoinGroup failed: {why}"
            return self._leave("the JoinGroup connection failed")
        return []

    def on_describe(self, state: str | None, member_ids: set[str]) -> list[Send]:
        """A DescribeGroups answer seen while JOINING."""
        if self.state != S.JOINING or not self.member_id:
            return []
        if self.member_id in member_ids:
            if state == "PreparingRebalance":
                return self._leave("our JoinGroup is parked in PreparingRebalance")
            self.joined_generation = -1  # past the join phase with us in it: lost the race
            return self._lost_race()
        return []

    def on_leave(self, resp: dict | None, why: str | None = None) -> list[Send]:
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

    def abort(self, why: str) -> list[Send]:
        """Stop (interrupted, out of time): the LeaveGroup to send if we may be a member."""
        if self.member_to_leave:
            if self.state == S.LEAVING:  # the LeaveGroup may not have gone out: again
                return [self._leave_request()]
            return self._leave(why)
        if self.state in (S.IDLE, S.ASKING_ID):
            self._move(S.LEFT, why)
        return []

    # ---- moves --------------------------------------------------------------------------
    def _lost_race(self) -> list[Send]:
        self._move(S.JOINED, "the join phase completed with us in it (the members rejoined "
                             "before our LeaveGroup)")
        return self._leave("leaving the generation we joined")

    def _leave(self, why: str) -> list[Send]:
        self._move(S.LEAVING, why)
        return [self._leave_request()]

    def _leave_request(self) -> Send:
        return Send(CONTROL, "LeaveGroup", {
            "group_id": self.group, "member_id": self.member_id,
            "members": [{"member_id": self.member_id, "group_instance_id": None,
                         "reason": self.reason}]})

    def _fail(self, error: str) -> list[Send]:
        self.error = error
        self._move(S.FAILED, error)
        return []

    def _join(self, member_id: str) -> Send:
        p = self.protocol
        return Send(JOIN, "JoinGroup", {
            "group_id": self.group, "session_timeout_ms": self.session_timeout_ms,
            "rebalance_timeout_ms": self.rebalance_timeout_ms, "member_id": member_id,
            "group_instance_id": None, "protocol_type": p.protocol_type,
            "protocols": [{"name": p.name, "metadata": p.metadata}], "reason": self.reason})

    def _move(self, to: S, why: str) -> None:
        if to not in LEGAL[self.state]:
            raise AssertionError(f"illegal trigger transition {self.state.value} -> {to.value} ({why})")
        self.transitions.append((self.state.value, to.value, why))
        self.state = to


def _name(code: int) -> str:
    return f"{error_for(code).name} ({code})"
