"""A classic member's membership: its identity in the group (member id, the ids it gave
up, generation, leader, the members a leader assigns), its own assignment, what the probe
and the live view read of it, and the moves every answer may lead to (rejoin, reset,
assignment done or failed). The requests and their answers: member.py.
"""
from __future__ import annotations

from typing import Callable

from ....errors import GroupctlError, UsageError
from ....events import AssignmentChanged, tp_list
from ..base import BaseMember
from . import requests as R
from .state import LEGAL_TRANSITIONS
from .types import (
    APIS, FATAL_HINTS, FIND_REACTIONS, HEARTBEAT, JOIN_GROUP, REACTIONS, RELEVANT, SYNC_GROUP,
    GenerationRecord, JoinedMember, PendingAssignment, S, check_settings,
    default_decode_assignment, kip800,
)


class ClassicMembership(BaseMember):
    """What a classic member holds (its member id, generation, leader, assignment) and
    how it changes; member.ClassicMember adds the requests and their answers."""

    UNJOINED, LEAVING, LEFT, FATAL = S.UNJOINED, S.LEAVING, S.LEFT, S.FATAL
    TRANSITIONS = LEGAL_TRANSITIONS
    RELEVANT = RELEVANT
    APIS = APIS
    HEARTBEATING = frozenset({S.ASSIGNING, S.STABLE})
    REACTIONS = REACTIONS
    FIND_REACTIONS = FIND_REACTIONS
    FATAL_HINTS = FATAL_HINTS

    def __init__(self, group_id: str, *, protocol_type: str = "consumer",
                 protocols: list[tuple[str, bytes]], session_timeout_ms: int,
                 rebalance_timeout_ms: int, heartbeat_interval_ms: int,
                 group_instance_id: str | None = None, reason_prefix: str = "groupctl probe",
                 retry_backoff_ms: int = 100, retry_backoff_max_ms: int = 1000,
                 assign: Callable[[PendingAssignment], dict[str, bytes]] | None = None,
                 decode_assignment: Callable[[bytes], dict[str, list[int]]] | None = None,
                 subscribe: Callable[[dict[str, list[int]], int], list[tuple[str, bytes]]]
                 | None = None, keep_history: int = 1000):
        check_settings(group_id, session_timeout_ms, rebalance_timeout_ms,
                       heartbeat_interval_ms, group_instance_id)
        self.generation_id = -1
        super().__init__(group_id, session_timeout_ms=session_timeout_ms,
                         heartbeat_interval_ms=heartbeat_interval_ms, reason_prefix=reason_prefix,
                         retry_backoff_ms=retry_backoff_ms,
                         retry_backoff_max_ms=retry_backoff_max_ms, keep_history=keep_history)
        self.protocol_type = protocol_type
        self.protocols: list[tuple[str, bytes]] = []
        self.set_protocols(protocols)
        self.rebalance_timeout_ms = rebalance_timeout_ms
        self.group_instance_id = group_instance_id
        self._assign = assign
        self._decode = decode_assignment
        self._subscribe = subscribe
        self.leader_id: str | None = None
        self.protocol_name: str | None = None
        self.members: list[JoinedMember] = []     # filled for the leader only
        # member ids the broker gave this (dynamic) member and it gave up since (an
        # UNKNOWN_MEMBER_ID after a session expired): a coordinator that unloads and loads
        # the group again can bring one back from its last stored generation, so the leave
        # names them too (bench/leave_soak.py's probe-frozen found such survivors)
        self.former_member_ids: list[str] = []
        self.assignment: bytes | None = None      # own assignment bytes, last SyncGroup
        self.history: list[GenerationRecord] = []
        self.pending_assignment: PendingAssignment | None = None
        self._sync_assignments: list[dict] = []
        self._round_started_ms: int | None = None
        self._join_reason = kip800(f"{reason_prefix}: joining")
        self._assigned_map: dict[str, list[int]] | None = {}
        self._revoked: set[tuple[str, int]] = set()

    # ---- read side -------------------------------------------------------------------
    @property
    def generation(self) -> int:
        return self.generation_id

    @property
    def stable(self) -> bool:
        return self._sm.state is S.STABLE

    @property
    def is_leader(self) -> bool:
        return bool(self.member_id) and self.leader_id == self.member_id

    def implied_group_state(self) -> str | None:
        return self._sm.state.group_state

    def assigned_partitions(self) -> dict[str, list[int]]:
        """The own assignment of the last SyncGroup, decoded ({} when not decodable)."""
        return {t: list(p) for t, p in (self._assigned_map or {}).items()}

    def as_dict(self) -> dict:
        """A snapshot for --debug output and the live view."""
        c = self.coordinator
        return {
            "state": self.state.name, "member_id": self.member_id or None,
            "group_instance_id": self.group_instance_id,
            "generation": self.generation_id if self.generation_id >= 0 else None,
            "leader": self.leader_id, "is_leader": self.is_leader,
            "protocol": self.protocol_name,
            "coordinator": None if c is None else c.to_dict(),
            "members": [m.member_id for m in self.members] if self.is_leader else None,
            "history": [g.to_dict() for g in self.history],
        }

    def next_deadline_ms(self) -> int | None:
        """The earliest time at which `next_requests` may have something new to do without
        any other input (a heartbeat due, a back-off ending, the session expiring), or None
        when only an answer or a driver call can move the member on."""
        s = self._sm.state
        if s.terminal:
            return None
        if s is S.UNJOINED:
            return self._not_before_ms
        times = self._lookup_deadline()
        if self.coordinator is None or s is S.LEAVING:
            pass
        elif (s is S.JOINING and JOIN_GROUP not in self._inflight) or (
                s is S.AWAITING_SYNC and SYNC_GROUP not in self._inflight):
            times.append(self._not_before_ms)
        times += self._heartbeat_deadlines(HEARTBEAT)
        return min(times) if times else None

    def set_protocols(self, protocols: list[tuple[str, bytes]]) -> None:
        """The protocols (name, metadata) the next JoinGroup offers, in preference order."""
        protocols = [(str(n), bytes(m)) for n, m in protocols]
        if not protocols:
            raise UsageError("a classic member offers at least one protocol")
        names = [n for n, _ in protocols]
        if len(set(names)) != len(names):
            raise UsageError(f"protocol names must be unique: {names}")
        self.protocols = protocols

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

    # ---- internals: state changes ------------------------------------------------------
    def _has_identity(self) -> bool:
        return bool(self.member_id or self.group_instance_id or self.former_member_ids)

    def _former_ids(self) -> frozenset[str]:
        return frozenset(self.former_member_ids)

    def _give_up_member_id(self, replaced_by: str = "") -> None:
        """The current member id is no longer this member's (reset, or replaced by
        `replaced_by`): kept to be named in the leave (dynamic members only: a static
        member's instance id is what the broker fences by)."""
        old = self.member_id
        if old and old != replaced_by and not self.group_instance_id \
                and old not in self.former_member_ids:
            self.former_member_ids.append(old)

    def _clear_pending(self) -> None:
        self.pending_assignment = None

    def _reset_generation(self, *, member_id: bool) -> None:
        self.generation_id = -1
        self.leader_id = None
        self.members = []
        self.pending_assignment = None
        if member_id:
            self._give_up_member_id()
            self.member_id = ""

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

    def _check_session(self, now_ms: int) -> None:
        silent = self._session_lost_for(now_ms)
        if silent is not None:
            self.coordinator = None
            self._rejoin(now_ms, f"session timeout expired: no successful heartbeat for "
                                 f"{silent} ms", error=None, reset_generation=True)

    def _assignment_event(self) -> None:
        assigned: dict[str, list[int]] | None
        if self.protocol_type != "consumer" and self._decode is None:
            assigned = None
        elif not self.assignment:
            assigned = {}
        else:
            try:
                assigned = (self._decode or default_decode_assignment)(self.assignment)
            except Exception:  # undecodable bytes, or the payload codec is missing
                assigned = None
        added, revoked = R.assignment_change(self._assigned_map, assigned)
        self._revoked = {(t, p) for t, ps in (revoked or {}).items() for p in ps}
        self._events.append(AssignmentChanged(self.member_id or None, self.generation_id,
                                              tp_list(assigned), tp_list(added), tp_list(revoked)))
        self._assigned_map = assigned
