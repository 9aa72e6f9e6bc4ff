"""Vocabulary of the sans-IO classic member (member.py): API names, what it does about each
error code (a table, in data), and the values it exchanges with its driver (the leader's
PendingAssignment, GenerationRecord history)."""
from __future__ import annotations

from dataclasses import dataclass

from ....errors import UsageError
from ....protocol.errors import ErrorCode
from ..interface import (  # noqa: F401 - re-exported: the classic member's vocabulary
    REASON_MAX, ROUTE_ANY, ROUTE_CONTROL, ROUTE_JOIN, Coordinator, Outgoing, Reaction,
    error_name, error_retriable, find_reactions, kip800,
)
from .state import ClassicMemberState

S = ClassicMemberState

FIND_COORDINATOR = "FindCoordinator"
JOIN_GROUP = "JoinGroup"
SYNC_GROUP = "SyncGroup"
HEARTBEAT = "Heartbeat"
LEAVE_GROUP = "LeaveGroup"
APIS = (FIND_COORDINATOR, JOIN_GROUP, SYNC_GROUP, HEARTBEAT, LEAVE_GROUP)

# What the classic member does about an error code in a JoinGroup, SyncGroup or Heartbeat
# answer (the Java client's AbstractCoordinator handlers, as one table). Codes not named
# here: RETRY when Kafka calls them retriable, else FATAL (member.classify). Each handler
# applies the reaction in its own state: a JoinGroup that must be resent is already joining;
# a SyncGroup or Heartbeat error sends a member of a generation back to joining.
# MEMBER_ID_REQUIRED is not an error of the member: JoinGroup handles it as a step (KIP-394).
REACTIONS: dict[int, Reaction] = {
    ErrorCode.REBALANCE_IN_PROGRESS: Reaction.REJOIN,
    ErrorCode.ILLEGAL_GENERATION: Reaction.RESET_GENERATION,
    ErrorCode.UNKNOWN_MEMBER_ID: Reaction.RESET_MEMBER,
    ErrorCode.COORDINATOR_NOT_AVAILABLE: Reaction.REDISCOVER,
    ErrorCode.NOT_COORDINATOR: Reaction.REDISCOVER,
    ErrorCode.COORDINATOR_LOAD_IN_PROGRESS: Reaction.RETRY,
    ErrorCode.FENCED_INSTANCE_ID: Reaction.FATAL,
    ErrorCode.INCONSISTENT_GROUP_PROTOCOL: Reaction.FATAL,
    ErrorCode.INVALID_SESSION_TIMEOUT: Reaction.FATAL,
    ErrorCode.GROUP_MAX_SIZE_REACHED: Reaction.FATAL,
    ErrorCode.GROUP_AUTHORIZATION_FAILED: Reaction.FATAL,
    ErrorCode.INVALID_GROUP_ID: Reaction.FATAL,
}

FIND_REACTIONS = find_reactions(REACTIONS)   # a FindCoordinator error: retry or give up

FATAL_HINTS: dict[int, str] = {
    ErrorCode.FENCED_INSTANCE_ID: "another member joined with the same group.instance.id",
    ErrorCode.INCONSISTENT_GROUP_PROTOCOL: "the group uses another protocol type, or no "
                                           "protocol in common",
    ErrorCode.INVALID_SESSION_TIMEOUT: "the session timeout is outside the broker's "
                                       "group.min/max.session.timeout.ms",
    ErrorCode.GROUP_MAX_SIZE_REACHED: "the group is at group.max.size",
    ErrorCode.INVALID_GROUP_ID: "the group id is not valid",
}


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


# Which state(s) an in-flight request still matters in; leaving them forgets the request
# (a late answer is then ignored).
RELEVANT = {
    JOIN_GROUP: lambda s: s is S.JOINING,
    SYNC_GROUP: lambda s: s is S.AWAITING_SYNC,
    HEARTBEAT: lambda s: s.heartbeating,
    LEAVE_GROUP: lambda s: s is S.LEAVING,
    FIND_COORDINATOR: lambda s: not s.terminal,
}


def default_decode_assignment(data: bytes) -> dict[str, list[int]]:
    from ....protocol.consumer import decode_assignment  # imported late: payload codec

    return {tp.topic: list(tp.partitions) for tp in decode_assignment(data).assigned_partitions}


def describe_exception(exc: BaseException) -> str:
    if isinstance(exc, KeyError) and exc.args:  # str(KeyError) would add quotes
        return str(exc.args[0])
    return str(exc) or type(exc).__name__


def check_settings(group_id: str, session_timeout_ms: int, rebalance_timeout_ms: int,
                   heartbeat_interval_ms: int, group_instance_id: str | None) -> None:
    """UsageError for settings no broker would accept from a classic member."""
    if not group_id:
        raise UsageError("the group id must not be empty")
    if session_timeout_ms <= 0 or rebalance_timeout_ms <= 0 or heartbeat_interval_ms <= 0:
        raise UsageError("session timeout, rebalance timeout and heartbeat interval must be > 0")
    if heartbeat_interval_ms >= session_timeout_ms:
        raise UsageError(f"the heartbeat interval ({heartbeat_interval_ms} ms) must be lower "
                         f"than the session timeout ({session_timeout_ms} ms)")
    if group_instance_id == "":
        raise UsageError("the group instance id must not be empty")
