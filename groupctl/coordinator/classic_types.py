"""Vocabulary of the sans-IO classic member (classic.py): API names, the error codes it acts
on, KIP-800 reasons, and the values it exchanges with its driver (Outgoing requests, the
Coordinator, the leader's PendingAssignment, GenerationRecord history)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from ..protocol.errors import error_for
from .classic_state import ClassicMemberState

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

