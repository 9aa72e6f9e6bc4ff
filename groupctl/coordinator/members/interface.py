"""The member interface the probe driver depends on, and the base every member protocol
builds on (the shape of the Java client's AbstractMembershipManager).

A member protocol lives in its own subpackage (members/classic/, members/consumer/)
as a sans-IO state machine: no sockets, no asyncio, no clock.
The driver asks `next_requests(now_ms)` for what to send (each an `Outgoing` carrying its
API spec, its route and its timeout), reports each answer with `on_response(api, body,
now_ms, tag=...)` or a transport failure with `on_failure(api, kind, now_ms, tag=...)`,
drains `poll_events()` (groupctl.events dataclasses) and calls `leave(reason, now_ms)` on
the way out. `GroupMember` spells out that contract; `BaseMember` (base.py) holds the
bookkeeping every protocol shares: send-and-take of in-flight requests, the exponential
back-off, the state tracker (generic, here), events, the coordinator lookup, heartbeat and
session timing, fatal errors and the leave skeleton. A protocol's error handling is a table
(error code -> Reaction) that `classify` reads.

Routes (`Outgoing.route`): ROUTE_ANY goes to any broker (FindCoordinator); ROUTE_JOIN to the
coordinator on a connection that may be parked for a whole rebalance (JoinGroup, SyncGroup);
ROUTE_CONTROL to the coordinator on a connection that never waits behind a parked request
(Heartbeat, LeaveGroup), since a broker answers one connection's requests in order.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from enum import Enum
from typing import Any, Generic, Mapping, Protocol, TypeVar, runtime_checkable

from ...client.routes import ROUTE_ANY, ROUTE_CONTROL, ROUTE_JOIN
from ...errors import GroupctlError
from ...events import Event
from ...protocol.errors import error_for

ROUTES = (ROUTE_ANY, ROUTE_JOIN, ROUTE_CONTROL)

REASON_MAX = 255  # the Java client truncates KIP-800 reasons to 255 characters


def kip800(text: str) -> str:
    return text[:REASON_MAX]


def error_name(code: int) -> str:
    return error_for(code).name


def error_retriable(code: int) -> bool:
    return error_for(code).retriable


@dataclass(frozen=True)
class Outgoing:
    """One request the driver must send.

    `spec`: the API (groupctl.protocol.spec.Api) to send it with; `api` is its name.
    `route`: ROUTE_ANY, ROUTE_JOIN or ROUTE_CONTROL (see the module doc).
    `min_version`: the lowest API version that can carry this request's meaning (static
    membership needs JoinGroup v5 / SyncGroup and Heartbeat v3; LeaveGroup's members list
    needs v3). `timeout_ms`: the request timeout (a JoinGroup may be parked for the whole
    rebalance timeout), or None for the driver's default. Report the answer with `tag`."""

    spec: Any
    body: dict
    tag: int
    route: str = ROUTE_CONTROL
    min_version: int = 0
    timeout_ms: int | None = None

    @property
    def api(self) -> str:
        return self.spec.name


@dataclass(frozen=True)
class Coordinator:
    node_id: int
    host: str
    port: int

    def to_dict(self) -> dict:
        return {"id": self.node_id, "host": self.host, "port": self.port}


# ---- states ---------------------------------------------------------------------------------
class DocumentedState(str, Enum):
    """Base of a state enum whose members are ("value", "what happens there") pairs: the
    paragraph becomes the member's __doc__ (the style of Kafka's MemberState)."""

    def __new__(cls, value: str, doc: str):
        obj = str.__new__(cls, value)
        obj._value_ = value
        obj.__doc__ = doc
        return obj


S_ = TypeVar("S_", bound=Enum)


class IllegalTransitionError(GroupctlError):
    """A transition the table does not allow: a bug in the state machine or its driver."""

    def __init__(self, from_state: Enum, to_state: Enum, reason: str,
                 table: Mapping[Any, frozenset] | None = None):
        self.from_state, self.to_state, self.reason = from_state, to_state, reason
        allowed = ", ".join(sorted(s.name for s in (table or {}).get(from_state, ()))) or "none"
        super().__init__(f"illegal member state transition {from_state.name} -> {to_state.name} "
                         f"({reason}); allowed from {from_state.name}: {allowed}")


@dataclass(frozen=True)
class Transition(Generic[S_]):
    from_state: S_
    to_state: S_
    reason: str
    at_ms: int

    def to_dict(self) -> dict:
        return {"from": self.from_state.name, "to": self.to_state.name,
                "reason": self.reason, "at_ms": self.at_ms}


class StateTracker(Generic[S_]):
    """Holds the current state of a member; `move` validates against the protocol's table
    of legal transitions and records (from, to, reason, at_ms)."""

    def __init__(self, initial: S_, table: Mapping[S_, frozenset], *, keep: int = 1000):
        self.state = initial
        self.table = table
        self.transitions: deque[Transition[S_]] = deque(maxlen=keep)

    def move(self, to: S_, reason: str, at_ms: int) -> Transition[S_]:
        if not reason:
            raise ValueError("every transition needs a reason")
        if to not in self.table[self.state]:
            raise IllegalTransitionError(self.state, to, reason, self.table)
        t = Transition(self.state, to, reason, at_ms)
        self.transitions.append(t)
        self.state = to
        return t


# ---- error classification -------------------------------------------------------------------
class Reaction(str, Enum):
    """What a member does about an error code in a response (one row of its table)."""

    REJOIN = "rejoin"                       # the group moved on: join again, keep identity
    RESET_GENERATION = "reset_generation"   # our generation/epoch is stale: reset, rejoin
    RESET_MEMBER = "reset_member"           # our member id is unknown: start as a new member
    REDISCOVER = "rediscover"               # the coordinator moved: find it, retry there
    RETRY = "retry"                         # transient: back off, retry
    FATAL = "fatal"                         # membership cannot go on


def classify(code: int, table: Mapping[int, Reaction]) -> Reaction:
    """The table's reaction to `code`; codes it does not name: RETRY when Kafka calls them
    retriable, else FATAL."""
    reaction = table.get(code)
    if reaction is not None:
        return reaction
    return Reaction.RETRY if error_retriable(code) else Reaction.FATAL


def find_reactions(table: Mapping[int, Reaction]) -> dict[int, Reaction]:
    """A member's table narrowed to FindCoordinator errors: retry (back off) or rediscover,
    else give up; membership reactions do not apply to a lookup."""
    return {code: (r if r in (Reaction.RETRY, Reaction.REDISCOVER) else Reaction.FATAL)
            for code, r in table.items()}


# ---- the interface ----------------------------------------------------------------------------
class DrivenMember(Protocol):
    """What the one member driver (driver/member_driver.py) needs from a member: its
    requests and deadlines in, answers and failures out, its events and transitions, and
    its leave. The probe's members, the force-rebalance trigger and the transient KIP-848
    member all are one."""

    group_id: str
    member_id: str
    coordinator: Coordinator | None
    fatal_error: GroupctlError | None

    @property
    def state(self) -> Enum: ...
    @property
    def done(self) -> bool: ...
    @property
    def transitions(self) -> list[Transition]: ...   # every move, with its reason
    def next_requests(self, now_ms: int) -> list[Outgoing]: ...
    def next_deadline_ms(self) -> int | None: ...
    def on_response(self, api: str, body: dict, now_ms: int, *, tag: int | None = None) -> bool: ...
    def on_failure(self, api: str, kind: str, now_ms: int, *, tag: int | None = None) -> bool: ...
    def poll_events(self) -> list[Event]: ...
    def leave(self, reason: str, now_ms: int) -> bool: ...


class GroupMember(DrivenMember, Protocol):
    """A member that stays in its group (the probe's): what the probe reads of it, whatever
    its protocol."""

    group_instance_id: str | None
    leader_id: str | None       # classic: the generation's leader; None where none is elected
    protocol_name: str | None

    @property
    def stable(self) -> bool: ...
    @property
    def generation(self) -> int: ...
    @property
    def is_leader(self) -> bool: ...
    def assigned_partitions(self) -> dict[str, list[int]]: ...
    def implied_group_state(self) -> str | None: ...
    def after_stable(self, now_ms: int) -> None: ...
    def coordinator_found(self, node_id: int, host: str, port: int) -> None: ...


@runtime_checkable
class ClientSideAssignment(Protocol):
    """The capability of a member whose group's leader assigns (classic): while it leads a
    generation, `pending_assignment` holds the members' subscriptions; the probe runs the
    assignor and calls `provide_assignment` or `assignment_failed`. A member without it
    (KIP-848: the broker assigns, and the group counts epochs) is told apart by type."""

    pending_assignment: Any

    def provide_assignment(self, assignments: dict[str, bytes], now_ms: int, *,
                           generation_id: int | None = None) -> bool: ...
    def assignment_failed(self, reason: str, now_ms: int, *,
                          error: BaseException | None = None) -> bool: ...
