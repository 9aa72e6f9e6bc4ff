"""A sans-IO classic group member: the Java client's AbstractCoordinator contract as a state
machine driven by inputs.

No sockets, no asyncio, no clock: the driver asks `next_requests(now_ms)` for what to send,
reports each answer with `on_response(api, body, now_ms, tag=...)` or a transport failure
with `on_failure(api, kind, now_ms, tag=...)`, and drains `poll_events()`. Request and
response bodies are plain dicts with the snake_case field names of Kafka's JSON message
specs; a request body carries the fields of every version (the codec writes those the
negotiated version has), and `Outgoing.min_version` says the lowest version that can carry
its meaning.

The contract followed (DESIGN §2, KAFKA-FACTS "Client behaviour worth copying"):

- FindCoordinator (key type 0) whenever the coordinator is unknown, then JoinGroup.
- JoinGroup with an empty member id -> MEMBER_ID_REQUIRED (79) carries the member id ->
  rejoin at once with it (KIP-394). A static member (group_instance_id) gets its id at once.
- Leader (leader == member_id, skip_assignment false): the driver runs the assignor over
  `pending_assignment` and calls `provide_assignment` (or an `assign` callback given to the
  constructor does it); a leader that cannot assign leaves at once and ends FATAL.
  Follower, or KIP-814 leader with skip_assignment: SyncGroup with no assignments.
- Heartbeat every heartbeat interval while ASSIGNING or STABLE, one at a time, measured
  from the previous heartbeat's send; none while a JoinGroup or SyncGroup is under way.
  No successful heartbeat for a whole session timeout: membership is treated as lost
  (generation reset, coordinator rediscovered, rejoin).
- Errors: 27 -> rejoin keeping the member id; 22 -> reset the generation and rejoin; 25 ->
  reset generation and member id and rejoin; 15/16 -> rediscover the coordinator and retry;
  14 (and any other retriable error) -> back off and retry; 82, 23, 26, 81, 30, 24 (and
  any other non-retriable error) -> FATAL. Back-off is exponential (retry_backoff_ms,
  doubling, capped at retry_backoff_max_ms, no jitter), reset by a successful JoinGroup,
  SyncGroup or Heartbeat.
- JoinGroup and LeaveGroup carry a KIP-800 reason ("groupctl probe: joining",
  "groupctl probe: rejoining: <why>", "groupctl probe: leaving: <why>"), at most 255 chars.
- `leave(reason, now_ms)` works in every non-terminal state, also while a JoinGroup is
  parked at the broker; any outcome of the LeaveGroup ends LEFT.
"""
from __future__ import annotations

from typing import Callable

from ..errors import GroupctlError, UsageError
from .classic_handling import MemberHandling
from .classic_state import ClassicMemberState, LEGAL_TRANSITIONS, StateTracker, Transition
from .classic_types import (  # noqa: F401 - re-exported: the member's vocabulary
    APIS, COORDINATOR_MOVED, FATAL_CODES, FIND_COORDINATOR, HEARTBEAT, JOIN_GROUP,
    LEAVE_GROUP, REASON_MAX, ROUTE_ANY, ROUTE_COORDINATOR, SYNC_GROUP, Coordinator,
    GenerationRecord, JoinedMember, Outgoing, PendingAssignment, S, _InFlight, _RELEVANT,
    _describe, error_name, error_retriable, kip800,
)

__all__ = [
    "ClassicMember", "ClassicMemberState", "LEGAL_TRANSITIONS", "Outgoing", "Coordinator",
    "JoinedMember", "PendingAssignment", "GenerationRecord", "Transition",
    "FIND_COORDINATOR", "JOIN_GROUP", "SYNC_GROUP", "HEARTBEAT", "LEAVE_GROUP",
]


class ClassicMember(MemberHandling):
    """A classic group member as a sans-IO state machine. See the module docstring."""

    def __init__(self, group_id: str, *, protocol_type: str = "consumer",
                 protocols: list[tuple[str, bytes]], session_timeout_ms: int,
                 rebalance_timeout_ms: int, heartbeat_interval_ms: int,
                 group_instance_id: str | None = None, reason_prefix: str = "groupctl probe",
                 retry_backoff_ms: int = 100, retry_backoff_max_ms: int = 1000,
                 assign: Callable[[PendingAssignment], dict[str, bytes]] | None = None,
                 decode_assignment: Callable[[bytes], dict[str, list[int]]] | None = None,
                 keep_history: int = 1000):
        if not group_id:
            raise UsageError("the group id must not be empty")
        if session_timeout_ms <= 0 or rebalance_timeout_ms <= 0 or heartbeat_interval_ms <= 0:
            raise UsageError("session timeout, rebalance timeout and heartbeat interval must be > 0")
        if heartbeat_interval_ms >= session_timeout_ms:
            raise UsageError(f"the heartbeat interval ({heartbeat_interval_ms} ms) must be lower "
                             f"than the session timeout ({session_timeout_ms} ms)")
        if group_instance_id == "":
            raise UsageError("the group instance id must not be empty")
        self.group_id = group_id
        self.protocol_type = protocol_type
        self.protocols: list[tuple[str, bytes]] = []
        self.set_protocols(protocols)
        self.session_timeout_ms = session_timeout_ms
        self.rebalance_timeout_ms = rebalance_timeout_ms
        self.heartbeat_interval_ms = heartbeat_interval_ms
        self.group_instance_id = group_instance_id
        self.reason_prefix = reason_prefix
        self.retry_backoff_ms = retry_backoff_ms
        self.retry_backoff_max_ms = retry_backoff_max_ms
        self._assign = assign
        self._decode = decode_assignment
        self._keep_history = keep_history

        self._sm = StateTracker(S.UNJOINED, keep=keep_history)
        # generation bookkeeping
        self.member_id = ""
        self.generation_id = -1
        self.leader_id: str | None = None
        self.protocol_name: str | None = None
        self.members: list[JoinedMember] = []     # filled for the leader only
        self.assignment: bytes | None = None      # own assignment bytes, last SyncGroup
        self.history: list[GenerationRecord] = []
        self.coordinator: Coordinator | None = None
        self.pending_assignment: PendingAssignment | None = None
        self.fatal_error: GroupctlError | None = None

        self._events: list[dict] = []
        self._inflight: dict[str, _InFlight] = {}
        self._tag = 0
        self._sync_assignments: list[dict] = []
        self._not_before_ms = 0
        self._failures = 0
        self._next_heartbeat_ms: int | None = None
        self._last_heartbeat_ok_ms: int | None = None
        self._round_started_ms: int | None = None
        self._join_reason = kip800(f"{reason_prefix}: joining")
        self._leave_reason: str | None = None
        self._fatal_after_leave: str | None = None
        self._assigned_map: dict[str, list[int]] | None = {}

    # ---- read side -------------------------------------------------------------------
    @property
    def state(self) -> ClassicMemberState:
        return self._sm.state

    @property
    def transitions(self) -> list[Transition]:
        return list(self._sm.transitions)

    @property
    def done(self) -> bool:
        """True in LEFT and FATAL: nothing more will be sent."""
        return self._sm.state.terminal

    @property
    def is_leader(self) -> bool:
        return bool(self.member_id) and self.leader_id == self.member_id

    @property
    def in_flight(self) -> dict[str, int]:
        """{api: tag} of the requests whose answers still matter."""
        return {api: f.tag for api, f in self._inflight.items()}

    def poll_events(self) -> list[dict]:
        """Events since the last call (DESIGN §4 without v/ts/source/cluster/group)."""
        out, self._events = self._events, []
        return out

    def next_deadline_ms(self) -> int | None:
        """The earliest time at which `next_requests` may have something new to do without
        any other input (a heartbeat due, a back-off ending, the session expiring), or None
        when only an answer or a driver call can move the member on."""
        s = self._sm.state
        if s.terminal:
            return None
        if s is S.UNJOINED:
            return self._not_before_ms
        times = []
        if self.coordinator is None:
            if FIND_COORDINATOR not in self._inflight:
                times.append(0 if s is S.LEAVING else self._not_before_ms)
        elif s is S.LEAVING:
            if LEAVE_GROUP not in self._inflight:
                times.append(0)
        elif (s is S.JOINING and JOIN_GROUP not in self._inflight) or (
                s is S.AWAITING_SYNC and SYNC_GROUP not in self._inflight):
            times.append(self._not_before_ms)
        if s.heartbeating:
            if self.coordinator is not None and HEARTBEAT not in self._inflight:
                times.append(self._next_heartbeat_ms)
            times.append(self._last_heartbeat_ok_ms + self.session_timeout_ms)
        return min(times) if times else None

    # ---- driver inputs -----------------------------------------------------------------
    def set_protocols(self, protocols: list[tuple[str, bytes]]) -> None:
        """The protocols (name, metadata) the next JoinGroup offers, in preference order."""
        protocols = [(str(n), bytes(m)) for n, m in protocols]
        if not protocols:
            raise UsageError("a classic member offers at least one protocol")
        names = [n for n, _ in protocols]
        if len(set(names)) != len(names):
            raise UsageError(f"protocol names must be unique: {names}")
        self.protocols = protocols

    def coordinator_found(self, node_id: int, host: str, port: int) -> None:
        """For a driver that looks the coordinator up itself (instead of sending the
        FindCoordinator this machine asks for)."""
        self.coordinator = Coordinator(node_id, host, port)

    def next_requests(self, now_ms: int) -> list[Outgoing]:
        """What to send now. Call after every input and at `next_deadline_ms()`."""
        s = self._sm.state
        if s.terminal:
            return []
        self._check_session(now_ms)
        if self._sm.state is S.UNJOINED:
            self._round_started_ms = now_ms
            self._join_reason = kip800(f"{self.reason_prefix}: joining")
            self._move(S.JOINING, f"start: joining group {self.group_id}", now_ms)
        s = self._sm.state
        out: list[Outgoing] = []
        if self.coordinator is None:
            # A leaving member does not wait out a back-off: leaving is urgent, and a failed
            # lookup ends the leave anyway.
            if FIND_COORDINATOR not in self._inflight and (
                    s is S.LEAVING or now_ms >= self._not_before_ms):
                out.append(self._send(FIND_COORDINATOR, {
                    "key": self.group_id, "key_type": 0, "coordinator_keys": [self.group_id],
                }, now_ms, route=ROUTE_ANY))
            return out
        if s is S.LEAVING:
            if LEAVE_GROUP not in self._inflight:
                out.append(self._send(LEAVE_GROUP, {
                    "group_id": self.group_id,
                    "members": [{"member_id": self.member_id,
                                 "group_instance_id": self.group_instance_id,
                                 "reason": self._leave_reason}],
                }, now_ms, min_version=3))
            return out
        if s is S.JOINING:
            if JOIN_GROUP not in self._inflight and now_ms >= self._not_before_ms:
                out.append(self._send(JOIN_GROUP, {
                    "group_id": self.group_id,
                    "session_timeout_ms": self.session_timeout_ms,
                    "rebalance_timeout_ms": self.rebalance_timeout_ms,
                    "member_id": self.member_id,
                    "group_instance_id": self.group_instance_id,
                    "protocol_type": self.protocol_type,
                    "protocols": [{"name": n, "metadata": m} for n, m in self.protocols],
                    "reason": self._join_reason,
                }, now_ms, min_version=5 if self.group_instance_id else 0,
                    timeout_ms=self.rebalance_timeout_ms + 5000))
            return out
        if s is S.AWAITING_SYNC:
            if SYNC_GROUP not in self._inflight and now_ms >= self._not_before_ms:
                out.append(self._send(SYNC_GROUP, {
                    "group_id": self.group_id,
                    "generation_id": self.generation_id,
                    "member_id": self.member_id,
                    "group_instance_id": self.group_instance_id,
                    "protocol_type": self.protocol_type,
                    "protocol_name": self.protocol_name,
                    "assignments": [dict(a) for a in self._sync_assignments],
                }, now_ms, min_version=3 if self.group_instance_id else 0))
            return out
        if s.heartbeating and HEARTBEAT not in self._inflight and now_ms >= self._next_heartbeat_ms:
            self._next_heartbeat_ms = now_ms + self.heartbeat_interval_ms
            out.append(self._send(HEARTBEAT, {
                "group_id": self.group_id,
                "generation_id": self.generation_id,
                "member_id": self.member_id,
                "group_instance_id": self.group_instance_id,
            }, now_ms, min_version=3 if self.group_instance_id else 0))
        return out

    def on_response(self, api: str, body: dict, now_ms: int, *, tag: int | None = None) -> bool:
        """A decoded response to a request this machine asked for. Returns False when the
        answer no longer matters (stale tag, or the member moved on) and was ignored."""
        fl = self._take(api, tag)
        if fl is None:
            return False
        return {
            FIND_COORDINATOR: self._on_find_coordinator, JOIN_GROUP: self._on_join,
            SYNC_GROUP: self._on_sync, HEARTBEAT: self._on_heartbeat, LEAVE_GROUP: self._on_leave,
        }[api](body, now_ms, fl)

    def on_failure(self, api: str, kind: str, now_ms: int, *, tag: int | None = None) -> bool:
        """A request got no answer: `kind` is "timeout", "disconnected" or another short
        word. The coordinator is then treated as unknown (as the Java client does)."""
        fl = self._take(api, tag)
        if fl is None:
            return False
        s = self._sm.state
        if api == FIND_COORDINATOR:
            if s is S.LEAVING:
                self._finish_leave(now_ms, error=kind,
                                   why=f"could not find the coordinator to leave ({kind})")
            else:
                self._backoff(now_ms)
            return True
        if api == LEAVE_GROUP:
            self._finish_leave(now_ms, error=kind, why=f"LeaveGroup failed ({kind})")
            return True
        self.coordinator = None
        delay = self._backoff(now_ms)
        if api == JOIN_GROUP:
            self._move(S.JOINING, f"JoinGroup failed ({kind}): rediscovering the coordinator, "
                                  f"retrying in {delay} ms", now_ms)
        elif api == SYNC_GROUP:
            self._rejoin(now_ms, f"SyncGroup failed ({kind})", error=kind)
        else:  # HEARTBEAT
            self._next_heartbeat_ms = now_ms + delay
            self._probe("heartbeat_error", error=kind,
                        reason=f"Heartbeat failed ({kind}): rediscovering the coordinator")
        return True

    def provide_assignment(self, assignments: dict[str, bytes], now_ms: int, *,
                           generation_id: int | None = None) -> bool:
        """The leader's assignment ({member_id: consumer-protocol assignment bytes}) for
        `pending_assignment`. Returns False (and does nothing) when it came too late: the
        member is no longer ASSIGNING that generation."""
        p = self.pending_assignment
        if self._sm.state is not S.ASSIGNING or p is None:
            return False
        if generation_id is not None and generation_id != p.generation_id:
            return False
        known = [m.member_id for m in p.members]
        unknown = set(assignments) - set(known)
        if unknown:
            raise ValueError(f"assignment names members not in generation {p.generation_id}: "
                             f"{sorted(unknown)}")
        self._sync_assignments = [{"member_id": mid, "assignment": bytes(assignments[mid])}
                                  for mid in known if mid in assignments]
        self.pending_assignment = None
        self._move(S.AWAITING_SYNC, f"assignment computed for generation {p.generation_id} "
                                    f"({len(self._sync_assignments)} members)", now_ms)
        return True

    def assignment_failed(self, reason: str, now_ms: int, *,
                          error: BaseException | None = None) -> bool:
        """The leader cannot assign (unknown assignor, assignor error): leave at once, then
        end FATAL. `error` becomes `fatal_error` when it is a GroupctlError."""
        if self._sm.state is not S.ASSIGNING:
            return False
        self.pending_assignment = None
        why = f"leader cannot assign: {reason}"
        self.fatal_error = error if isinstance(error, GroupctlError) else GroupctlError(
            f"the probe became leader of group {self.group_id} but cannot assign: {reason}")
        self._fatal_after_leave = why
        self._start_leave(why, now_ms)
        return True

    def request_rejoin(self, reason: str, now_ms: int) -> bool:
        """Start a new join round from STABLE keeping member id and generation (the Java
        client's requestRejoin: e.g. a cooperative member after revoking partitions, so
        the leader can hand them on). Returns False outside STABLE."""
        if self._sm.state is not S.STABLE:
            return False
        self._rejoin(now_ms, reason, error=None)
        return True

    def leave(self, reason: str, now_ms: int) -> bool:
        """Leave the group (LeaveGroup with a KIP-800 reason). Works in every non-terminal
        state, also while a JoinGroup is in flight. Returns False when already leaving or
        done."""
        s = self._sm.state
        if s.terminal or s is S.LEAVING:
            return False
        self._start_leave(reason, now_ms)
        return True

    # ---- internals: sending and bookkeeping ------------------------------------------
    def _send(self, api: str, body: dict, now_ms: int, *, route: str = ROUTE_COORDINATOR,
              min_version: int = 0, timeout_ms: int | None = None) -> Outgoing:
        self._tag += 1
        self._inflight[api] = _InFlight(self._tag, now_ms, self.generation_id, self.member_id)
        return Outgoing(api, body, self._tag, route, min_version, timeout_ms)

    def _take(self, api: str, tag: int | None) -> _InFlight | None:
        if api not in APIS:
            raise ValueError(f"not an API of the classic member: {api!r}")
        fl = self._inflight.get(api)
        if fl is None or (tag is not None and tag != fl.tag):
            return None
        del self._inflight[api]
        return fl

    def _move(self, to: ClassicMemberState, reason: str, now_ms: int) -> None:
        self._sm.move(to, reason, now_ms)
        for api in [a for a in self._inflight if not _RELEVANT[a](to)]:
            del self._inflight[api]

    def _backoff(self, now_ms: int) -> int:
        self._failures += 1
        delay = min(self.retry_backoff_max_ms, self.retry_backoff_ms * 2 ** (self._failures - 1))
        self._not_before_ms = now_ms + delay
        return delay

    def _progress(self) -> None:
        self._failures = 0
        self._not_before_ms = 0

    def _reset_generation(self, *, member_id: bool) -> None:
        self.generation_id = -1
        self.leader_id = None
        self.members = []
        self.pending_assignment = None
        if member_id:
            self.member_id = ""

