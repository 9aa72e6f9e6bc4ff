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

from dataclasses import dataclass
from typing import Callable, Iterable

from ..errors import AuthError, GroupctlError, KafkaError, UsageError
from ..protocol.errors import error_for
from .classic_state import ClassicMemberState, LEGAL_TRANSITIONS, StateTracker, Transition

__all__ = [
    "ClassicMember", "ClassicMemberState", "LEGAL_TRANSITIONS", "Outgoing", "Coordinator",
    "JoinedMember", "PendingAssignment", "GenerationRecord", "Transition",
    "FIND_COORDINATOR", "JOIN_GROUP", "SYNC_GROUP", "HEARTBEAT", "LEAVE_GROUP",
]

S = ClassicMemberState

FIND_COORDINATOR = "FindCoordinator"
JOIN_GROUP = "JoinGroup"
SYNC_GROUP = "SyncGroup"
HEARTBEAT = "Heartbeat"
LEAVE_GROUP = "LeaveGroup"
APIS = (FIND_COORDINATOR, JOIN_GROUP, SYNC_GROUP, HEARTBEAT, LEAVE_GROUP)

ROUTE_ANY = "any"
ROUTE_COORDINATOR = "coordinator"

# Error codes this machine acts on (Kafka's Errors.java).
NONE = 0
COORDINATOR_LOAD_IN_PROGRESS = 14
COORDINATOR_NOT_AVAILABLE = 15
NOT_COORDINATOR = 16
ILLEGAL_GENERATION = 22
INCONSISTENT_GROUP_PROTOCOL = 23
INVALID_GROUP_ID = 24
UNKNOWN_MEMBER_ID = 25
INVALID_SESSION_TIMEOUT = 26
REBALANCE_IN_PROGRESS = 27
GROUP_AUTHORIZATION_FAILED = 30
MEMBER_ID_REQUIRED = 79
GROUP_MAX_SIZE_REACHED = 81
FENCED_INSTANCE_ID = 82

FATAL_CODES = frozenset({FENCED_INSTANCE_ID, INCONSISTENT_GROUP_PROTOCOL, INVALID_SESSION_TIMEOUT,
                         GROUP_MAX_SIZE_REACHED, GROUP_AUTHORIZATION_FAILED, INVALID_GROUP_ID})
COORDINATOR_MOVED = frozenset({COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR})

# Names and retriability of the codes above, used while (or where) the protocol error
# table does not know them; the protocol table wins when it does.
_KNOWN = {
    14: ("COORDINATOR_LOAD_IN_PROGRESS", True), 15: ("COORDINATOR_NOT_AVAILABLE", True),
    16: ("NOT_COORDINATOR", True), 22: ("ILLEGAL_GENERATION", False),
    23: ("INCONSISTENT_GROUP_PROTOCOL", False), 24: ("INVALID_GROUP_ID", False),
    25: ("UNKNOWN_MEMBER_ID", False), 26: ("INVALID_SESSION_TIMEOUT", False),
    27: ("REBALANCE_IN_PROGRESS", False), 30: ("GROUP_AUTHORIZATION_FAILED", False),
    79: ("MEMBER_ID_REQUIRED", False), 81: ("GROUP_MAX_SIZE_REACHED", False),
    82: ("FENCED_INSTANCE_ID", False),
}

_FATAL_HINTS = {
    FENCED_INSTANCE_ID: "another member joined with the same group.instance.id",
    INCONSISTENT_GROUP_PROTOCOL: "the group uses another protocol type, or no protocol in common",
    INVALID_SESSION_TIMEOUT: "the session timeout is outside the broker's "
                             "group.min/max.session.timeout.ms",
    GROUP_MAX_SIZE_REACHED: "the group is at group.max.size",
    INVALID_GROUP_ID: "the group id is not valid",
}

REASON_MAX = 255  # the Java client truncates KIP-800 reasons to 255 characters


def error_name(code: int) -> str:
    info = error_for(code)
    if info.name.startswith("UNKNOWN_ERROR_") and code in _KNOWN:
        return _KNOWN[code][0]
    return info.name


def error_retriable(code: int) -> bool:
    info = error_for(code)
    if info.name.startswith("UNKNOWN_ERROR_") and code in _KNOWN:
        return _KNOWN[code][1]
    return info.retriable


def kip800(text: str) -> str:
    return text[:REASON_MAX]


@dataclass(frozen=True)
class Outgoing:
    """One request the driver must send.

    `route` is "coordinator" (send to `member.coordinator`) or "any" (any broker).
    `min_version`: the lowest API version that can carry this request's meaning (static
    membership needs JoinGroup v5 / SyncGroup and Heartbeat v3; LeaveGroup's members list
    needs v3). `timeout_ms`: a request timeout to use instead of the driver's default (a
    JoinGroup may be parked for the whole rebalance timeout), or None.
    Report the answer with the same `tag`."""

    api: str
    body: dict
    tag: int
    route: str = ROUTE_COORDINATOR
    min_version: int = 0
    timeout_ms: int | None = None


@dataclass(frozen=True)
class Coordinator:
    node_id: int
    host: str
    port: int


@dataclass(frozen=True)
class JoinedMember:
    """A member as the leader's JoinGroup response lists it."""

    member_id: str
    group_instance_id: str | None
    metadata: bytes


@dataclass(frozen=True)
class PendingAssignment:
    """What the leader must assign: the generation, the chosen protocol (assignor name) and
    every member with its subscription metadata (consumer-protocol bytes)."""

    generation_id: int
    protocol_name: str | None
    leader_id: str
    members: tuple[JoinedMember, ...]


@dataclass
class GenerationRecord:
    """One generation the member joined. `started_ms` is when its join round began (the
    first JoinGroup, or the error or session expiry that sent the member back to joining);
    `duration_ms` is that round's length up to the SyncGroup answer."""

    generation: int
    protocol: str | None
    leader: str
    is_leader: bool
    members: list[str] | None   # the leader sees them all; a follower does not
    started_ms: int
    joined_ms: int
    synced_ms: int | None = None

    @property
    def duration_ms(self) -> int | None:
        return None if self.synced_ms is None else self.synced_ms - self.started_ms

    def to_dict(self) -> dict:
        return {"generation": self.generation, "protocol": self.protocol, "leader": self.leader,
                "is_leader": self.is_leader, "members": self.members,
                "started_ms": self.started_ms, "joined_ms": self.joined_ms,
                "synced_ms": self.synced_ms, "duration_ms": self.duration_ms}


@dataclass
class _InFlight:
    tag: int
    sent_ms: int
    generation_id: int
    member_id: str


# Which state(s) an in-flight request still matters in; leaving them forgets the request
# (a late answer is then ignored).
_RELEVANT = {
    JOIN_GROUP: lambda s: s is S.JOINING,
    SYNC_GROUP: lambda s: s is S.AWAITING_SYNC,
    HEARTBEAT: lambda s: s.heartbeating,
    LEAVE_GROUP: lambda s: s is S.LEAVING,
    FIND_COORDINATOR: lambda s: not s.terminal,
}


def _default_decode_assignment(data: bytes) -> dict[str, list[int]]:
    from ..protocol.consumer import decode_assignment  # imported late: written alongside

    return {tp.topic: list(tp.partitions) for tp in decode_assignment(data).assigned_partitions}


def _describe(exc: BaseException) -> str:
    if isinstance(exc, KeyError) and exc.args:  # str(KeyError) would add quotes
        return str(exc.args[0])
    return str(exc) or type(exc).__name__


def _topic_list(mapping: dict[str, Iterable[int]]) -> list[dict]:
    return [{"topic": t, "partitions": sorted(p)} for t, p in sorted(mapping.items()) if p]


class ClassicMember:
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

    def as_dict(self) -> dict:
        """A snapshot for --debug output and the live view."""
        c = self.coordinator
        return {
            "state": self.state.name, "member_id": self.member_id or None,
            "group_instance_id": self.group_instance_id,
            "generation": self.generation_id if self.generation_id >= 0 else None,
            "leader": self.leader_id, "is_leader": self.is_leader,
            "protocol": self.protocol_name,
            "coordinator": None if c is None else {"id": c.node_id, "host": c.host, "port": c.port},
            "members": [m.member_id for m in self.members] if self.is_leader else None,
            "history": [g.to_dict() for g in self.history],
        }

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

    # ---- internals: events ---------------------------------------------------------
    def _probe(self, action: str, *, error: str | None = None, reason: str | None = None) -> None:
        self._events.append({
            "event": "probe", "action": action, "member_id": self.member_id or None,
            "generation": self.generation_id if self.generation_id >= 0 else None,
            "error": error, "reason": reason,
        })

    def _error_event(self, api: str, code: int) -> str:
        name = error_name(code)
        self._events.append({"event": "error", "api": api, "code": code, "name": name,
                             "retriable": error_retriable(code)})
        return name

    def _assignment_event(self) -> None:
        assigned: dict[str, list[int]] | None
        if self.protocol_type != "consumer" and self._decode is None:
            assigned = None
        elif not self.assignment:
            assigned = {}
        else:
            try:
                assigned = (self._decode or _default_decode_assignment)(self.assignment)
            except Exception:  # undecodable bytes, or the payload codec is missing
                assigned = None
        prev = self._assigned_map
        added = revoked = None
        if assigned is not None and prev is not None:
            added = {t: set(p) - set(prev.get(t, ())) for t, p in assigned.items()}
            revoked = {t: set(p) - set(assigned.get(t, ())) for t, p in prev.items()}
            added, revoked = _topic_list(added), _topic_list(revoked)
        self._events.append({
            "event": "assignment", "member_id": self.member_id or None,
            "generation": self.generation_id,
            "assigned": None if assigned is None else _topic_list(assigned),
            "added": added, "revoked": revoked,
        })
        self._assigned_map = assigned

    # ---- internals: state changes ------------------------------------------------------
    def _rejoin(self, now_ms: int, why: str, *, error: str | None,
                reset_generation: bool = False, reset_member_id: bool = False) -> None:
        """Leave the current generation's states for a new join round."""
        self._probe("rejoining", error=error, reason=why)
        if reset_generation or reset_member_id:
            self._reset_generation(member_id=reset_member_id)
        self.pending_assignment = None
        self._round_started_ms = now_ms
        self._join_reason = kip800(f"{self.reason_prefix}: rejoining: {why}")
        what = ("member id and generation reset; " if reset_member_id
                else "generation reset; " if reset_generation else "")
        self._move(S.JOINING, f"{why}: {what}rejoining", now_ms)

    def _fatal(self, api: str, code: int, now_ms: int, detail: str | None = None) -> None:
        name = error_name(code)
        detail = detail or _FATAL_HINTS.get(code)
        if code == GROUP_AUTHORIZATION_FAILED:
            exc: GroupctlError = AuthError(
                f"{api} failed: {name} ({code}): not authorized to access group {self.group_id}")
            exc.api, exc.code = api, code  # type: ignore[attr-defined]
        else:
            exc = KafkaError(api, code, detail)
        self.fatal_error = exc
        self.pending_assignment = None
        self._move(S.FATAL, f"{api}: {name} ({code}) is fatal"
                            + (f": {detail}" if detail else ""), now_ms)
        self._probe("fenced" if code == FENCED_INSTANCE_ID else "failed", error=name,
                    reason=detail)

    def _start_leave(self, why: str, now_ms: int) -> None:
        self._leave_reason = kip800(f"{self.reason_prefix}: leaving: {why}")
        self.pending_assignment = None
        if self._sm.state is S.UNJOINED or (not self.member_id and not self.group_instance_id):
            self._move(S.LEFT, f"leave ({why}): not a member yet, nothing to leave", now_ms)
            self._probe("left", reason=self._leave_reason)
            return
        self._move(S.LEAVING, f"leave: {why}", now_ms)

    def _finish_leave(self, now_ms: int, *, error: str | None, why: str) -> None:
        self._probe("left", error=error, reason=self._leave_reason)
        if self._fatal_after_leave is not None:
            self._move(S.FATAL, f"{self._fatal_after_leave} ({why})", now_ms)
            self._probe("failed", reason=self._fatal_after_leave)
        else:
            self._move(S.LEFT, why, now_ms)

    def _check_session(self, now_ms: int) -> None:
        if not self._sm.state.heartbeating or self._last_heartbeat_ok_ms is None:
            return
        if now_ms - self._last_heartbeat_ok_ms < self.session_timeout_ms:
            return
        why = (f"session timeout expired: no successful heartbeat for "
               f"{now_ms - self._last_heartbeat_ok_ms} ms")
        self.coordinator = None
        self._rejoin(now_ms, why, error=None, reset_generation=True)

    # ---- internals: response handlers --------------------------------------------------
    def _on_find_coordinator(self, body: dict, now_ms: int, fl: _InFlight) -> bool:
        coords = body.get("coordinators") or []
        entry = next((c for c in coords if c.get("key") == self.group_id),
                     coords[0] if coords else body)
        code = entry.get("error_code", 0)
        if code == NONE:
            self.coordinator = Coordinator(entry.get("node_id"), entry.get("host"),
                                           entry.get("port"))
            return True
        name = self._error_event(FIND_COORDINATOR, code)
        if self._sm.state is S.LEAVING:
            self._finish_leave(now_ms, error=name,
                               why=f"could not find the coordinator to leave ({name})")
        elif code in FATAL_CODES or not (error_retriable(code) or code in COORDINATOR_MOVED):
            self._fatal(FIND_COORDINATOR, code, now_ms, entry.get("error_message"))
        else:
            self._backoff(now_ms)
        return True

    def _on_join(self, body: dict, now_ms: int, fl: _InFlight) -> bool:
        if self._sm.state is not S.JOINING:
            return False
        code = body.get("error_code", 0)
        if code == NONE:
            self._joined(body, now_ms)
            return True
        if code == MEMBER_ID_REQUIRED:
            self.member_id = body.get("member_id") or ""
            self._move(S.JOINING, f"MEMBER_ID_REQUIRED: rejoining at once with member id "
                                  f"{self.member_id} (KIP-394)", now_ms)
            return True
        name = self._error_event(JOIN_GROUP, code)
        if code == UNKNOWN_MEMBER_ID:
            self._reset_generation(member_id=True)
            self._move(S.JOINING, f"{name}: member id reset, rejoining", now_ms)
        elif code == ILLEGAL_GENERATION:
            self._reset_generation(member_id=False)
            self._move(S.JOINING, f"{name}: generation reset, rejoining", now_ms)
        elif code == REBALANCE_IN_PROGRESS:
            self._move(S.JOINING, f"{name}: rejoining", now_ms)
        elif code in COORDINATOR_MOVED:
            self.coordinator = None
            delay = self._backoff(now_ms)
            self._move(S.JOINING, f"{name}: rediscovering the coordinator, retrying in "
                                  f"{delay} ms", now_ms)
        elif code in FATAL_CODES or not error_retriable(code):
            self._fatal(JOIN_GROUP, code, now_ms)
        else:
            delay = self._backoff(now_ms)
            self._move(S.JOINING, f"{name}: retrying in {delay} ms", now_ms)
        return True

    def _joined(self, body: dict, now_ms: int) -> None:
        ptype = body.get("protocol_type")
        if ptype is not None and ptype != self.protocol_type:
            self._error_event(JOIN_GROUP, INCONSISTENT_GROUP_PROTOCOL)
            self._fatal(JOIN_GROUP, INCONSISTENT_GROUP_PROTOCOL, now_ms,
                        f"the group's protocol type is {ptype!r}, ours {self.protocol_type!r}")
            return
        self._progress()
        self.member_id = body.get("member_id") or self.member_id
        self.generation_id = body.get("generation_id", -1)
        self.leader_id = body.get("leader") or None
        self.protocol_name = body.get("protocol_name")
        leader = self.is_leader
        self.members = [JoinedMember(m.get("member_id", ""), m.get("group_instance_id"),
                                     bytes(m.get("metadata") or b""))
                        for m in body.get("members") or []] if leader else []
        member_ids = [m.member_id for m in self.members] if leader else None
        self.history.append(GenerationRecord(
            self.generation_id, self.protocol_name, self.leader_id or "", leader, member_ids,
            self._round_started_ms if self._round_started_ms is not None else now_ms, now_ms))
        del self.history[:-self._keep_history]
        self._probe("joined")
        self._events.append({"event": "generation", "generation": self.generation_id,
                             "protocol": self.protocol_name, "leader": self.leader_id,
                             "members": member_ids})
        gen = self.generation_id
        if leader and not body.get("skip_assignment"):
            self.pending_assignment = PendingAssignment(gen, self.protocol_name, self.member_id,
                                                        tuple(self.members))
            self._last_heartbeat_ok_ms = now_ms
            self._next_heartbeat_ms = now_ms + self.heartbeat_interval_ms
            self._move(S.ASSIGNING, f"joined generation {gen} as leader of "
                                    f"{len(self.members)} members: assignment needed", now_ms)
            if self._assign is not None:
                try:
                    result = self._assign(self.pending_assignment)
                except Exception as exc:  # unknown assignor, or the assignor failed
                    self.assignment_failed(_describe(exc), now_ms, error=exc)
                else:
                    try:
                        self.provide_assignment(result, now_ms)
                    except ValueError as exc:
                        self.assignment_failed(str(exc), now_ms, error=exc)
            return
        self._sync_assignments = []
        how = ("as leader told to skip assignment (KIP-814): empty SyncGroup" if leader
               else f"as follower (leader {self.leader_id})")
        self._move(S.AWAITING_SYNC, f"joined generation {gen} {how}", now_ms)

    def _on_sync(self, body: dict, now_ms: int, fl: _InFlight) -> bool:
        if self._sm.state is not S.AWAITING_SYNC or fl.generation_id != self.generation_id:
            return False
        code = body.get("error_code", 0)
        if code == NONE:
            ptype, pname = body.get("protocol_type"), body.get("protocol_name")
            if (ptype is not None and ptype != self.protocol_type) or (
                    pname is not None and self.protocol_name is not None
                    and pname != self.protocol_name):
                self._error_event(SYNC_GROUP, INCONSISTENT_GROUP_PROTOCOL)
                self._fatal(SYNC_GROUP, INCONSISTENT_GROUP_PROTOCOL, now_ms,
                            f"SyncGroup answered protocol {ptype}/{pname}, JoinGroup chose "
                            f"{self.protocol_type}/{self.protocol_name}")
                return True
            self._progress()
            self.assignment = bytes(body.get("assignment") or b"")
            if self.history and self.history[-1].generation == self.generation_id:
                self.history[-1].synced_ms = now_ms
            self._last_heartbeat_ok_ms = now_ms
            self._next_heartbeat_ms = now_ms + self.heartbeat_interval_ms
            self._move(S.STABLE, f"synced generation {self.generation_id}", now_ms)
            self._probe("synced")
            self._assignment_event()
            return True
        name = self._error_event(SYNC_GROUP, code)
        why = f"{name} on SyncGroup"
        if code == REBALANCE_IN_PROGRESS:
            self._rejoin(now_ms, why, error=name)
        elif code == ILLEGAL_GENERATION:
            self._rejoin(now_ms, why, error=name, reset_generation=True)
        elif code == UNKNOWN_MEMBER_ID:
            self._rejoin(now_ms, why, error=name, reset_member_id=True)
        elif code in COORDINATOR_MOVED:
            self.coordinator = None
            self._backoff(now_ms)
            self._rejoin(now_ms, why, error=name)
        elif code in FATAL_CODES or not error_retriable(code):
            self._fatal(SYNC_GROUP, code, now_ms)
        else:
            self._backoff(now_ms)
            self._rejoin(now_ms, why, error=name)
        return True

    def _on_heartbeat(self, body: dict, now_ms: int, fl: _InFlight) -> bool:
        if (not self._sm.state.heartbeating or fl.generation_id != self.generation_id
                or fl.member_id != self.member_id):
            return False
        code = body.get("error_code", 0)
        if code == NONE:
            self._failures = 0
            self._last_heartbeat_ok_ms = now_ms
            return True
        name = self._error_event(HEARTBEAT, code)
        why = f"{name} on Heartbeat"
        if code == REBALANCE_IN_PROGRESS:
            self._rejoin(now_ms, why, error=name)
        elif code == ILLEGAL_GENERATION:
            self._rejoin(now_ms, why, error=name, reset_generation=True)
        elif code == UNKNOWN_MEMBER_ID:
            self._rejoin(now_ms, why, error=name, reset_member_id=True)
        elif code in COORDINATOR_MOVED:
            self.coordinator = None
            self._next_heartbeat_ms = now_ms + self._backoff(now_ms)
            self._probe("heartbeat_error", error=name, reason=f"{why}: rediscovering the coordinator")
        elif code in FATAL_CODES or not error_retriable(code):
            self._fatal(HEARTBEAT, code, now_ms)
        else:
            delay = self._backoff(now_ms)
            self._next_heartbeat_ms = now_ms + delay
            self._probe("heartbeat_error", error=name, reason=f"{why}: retrying in {delay} ms")
        return True

    def _on_leave(self, body: dict, now_ms: int, fl: _InFlight) -> bool:
        if self._sm.state is not S.LEAVING:
            return False
        code = body.get("error_code", 0)
        if code == NONE:
            code = next((m.get("error_code", 0) for m in body.get("members") or []
                         if m.get("error_code", 0)), NONE)
        if code == NONE:
            self._finish_leave(now_ms, error=None, why="left the group")
        else:
            name = self._error_event(LEAVE_GROUP, code)
            self._finish_leave(now_ms, error=name, why=f"LeaveGroup answered {name}; "
                                                        f"membership ends anyway")
        return True
