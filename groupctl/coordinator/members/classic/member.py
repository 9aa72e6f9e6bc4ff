"""A sans-IO classic group member: the Java client's AbstractCoordinator contract as a state
machine driven by inputs, on the shared BaseMember (coordinator/members/interface.py).

The driver contract (next_requests / on_response / on_failure / poll_events / leave) is
GroupMember's, in coordinator/members/interface.py. Bodies are dicts with the snake_case field names of
Kafka's JSON specs (requests.py builds them); `Outgoing.min_version` says the lowest version
that can carry a request's meaning.

The contract followed (docs/commands/join.md; the Java client's ConsumerCoordinator):

- FindCoordinator (key type 0) whenever the coordinator is unknown, then JoinGroup.
- JoinGroup with an empty member id -> MEMBER_ID_REQUIRED carries the member id -> rejoin at
  once with it (KIP-394). A static member (group_instance_id) gets its id at once.
- Leader (leader == member_id, skip_assignment false): the driver runs the assignor over
  `pending_assignment` and calls `provide_assignment` (or an `assign` callback given to the
  constructor does it); a leader that cannot assign leaves at once and ends FATAL.
  Follower, or KIP-814 leader with skip_assignment: SyncGroup with no assignments.
- Heartbeat every heartbeat interval while ASSIGNING or STABLE, one at a time, measured
  from the previous heartbeat's send; none while a JoinGroup or SyncGroup is under way.
  No successful heartbeat for a whole session timeout: membership is treated as lost
  (generation reset, coordinator rediscovered, rejoin).
- Errors: one table in data, types.REACTIONS (error code -> rejoin, reset generation,
  reset member id, rediscover the coordinator, retry, fatal). Back-off is exponential
  (base.py), reset by a successful JoinGroup, SyncGroup or Heartbeat.
- JoinGroup and LeaveGroup carry a KIP-800 reason ("groupctl probe: joining",
  "groupctl probe: rejoining: <why>", "groupctl probe: leaving: <why>"), at most 255 chars.
- `leave(reason, now_ms)` works in every non-terminal state, also while a JoinGroup is
  parked at the broker; any outcome of the LeaveGroup ends LEFT.
- Routes: FindCoordinator to any broker; JoinGroup and SyncGroup on the join route (they
  may be parked for the rebalance timeout, their timeout_ms says so); Heartbeat and
  LeaveGroup on the control route, never behind a parked request.
"""
from __future__ import annotations

from typing import Callable

from ....errors import GroupctlError, UsageError
from ....events import AssignmentChanged, GenerationStarted, tp_list
from ....protocol import messages as M
from ....protocol.errors import ErrorCode
from ..base import BaseMember
from ..interface import Reaction
from . import requests as R
from .state import ClassicMemberState, LEGAL_TRANSITIONS, Transition  # noqa: F401 - re-exported
from .types import (  # noqa: F401 - re-exported: the member's vocabulary
    APIS, FATAL_HINTS, FIND_COORDINATOR, FIND_REACTIONS, HEARTBEAT, JOIN_GROUP, LEAVE_GROUP,
    REACTIONS, RELEVANT, ROUTE_ANY, ROUTE_CONTROL, ROUTE_JOIN, SYNC_GROUP, Coordinator,
    GenerationRecord, JoinedMember, Outgoing, PendingAssignment, S, check_settings,
    default_decode_assignment, describe_exception, error_name, kip800,
)

NONE = ErrorCode.NONE
_MEMBERSHIP = {Reaction.REJOIN: {}, Reaction.RESET_GENERATION: {"reset_generation": True},
               Reaction.RESET_MEMBER: {"reset_member_id": True}}


class ClassicMember(BaseMember):
    """A classic group member as a sans-IO state machine. See the module docstring."""

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

    def next_requests(self, now_ms: int) -> list:
        """What to send now. Call after every input and at `next_deadline_ms()`."""
        if self._sm.state.terminal:
            return []
        self._check_session(now_ms)
        if self._sm.state is S.UNJOINED:
            self._round_started_ms = now_ms
            self._join_reason = kip800(f"{self.reason_prefix}: joining")
            self._move(S.JOINING, f"start: joining group {self.group_id}", now_ms)
        s, due = self._sm.state, now_ms >= self._not_before_ms
        if self.coordinator is None:
            return self._find_coordinator(now_ms)
        static = bool(self.group_instance_id)
        ids = R.member_ids(self.group_id, self.generation_id, self.member_id,
                           self.group_instance_id)
        if s is S.LEAVING:
            if LEAVE_GROUP in self._inflight:
                return []
            return [self._send(M.LEAVE_GROUP, R.leave_group(
                self.group_id, self.member_id, self.group_instance_id, self._leave_reason,
                former=self.former_member_ids), now_ms, route=ROUTE_CONTROL, min_version=3)]
        if s is S.JOINING:
            if JOIN_GROUP in self._inflight or not due:
                return []
            return [self._send(M.JOIN_GROUP, R.join_group(
                self.group_id, session_timeout_ms=self.session_timeout_ms,
                rebalance_timeout_ms=self.rebalance_timeout_ms, member_id=self.member_id,
                group_instance_id=self.group_instance_id, protocol_type=self.protocol_type,
                protocols=self.protocols, reason=self._join_reason),
                now_ms, route=ROUTE_JOIN, min_version=5 if static else 0,
                timeout_ms=self.rebalance_timeout_ms + 5000)]
        if s is S.AWAITING_SYNC:
            if SYNC_GROUP in self._inflight or not due:
                return []
            return [self._send(M.SYNC_GROUP, R.sync_group(
                ids, protocol_type=self.protocol_type, protocol_name=self.protocol_name,
                assignments=self._sync_assignments),
                now_ms, route=ROUTE_JOIN, min_version=3 if static else 0,
                timeout_ms=self.rebalance_timeout_ms + 5000)]
        if self._heartbeat_due(HEARTBEAT, now_ms):
            return [self._send(M.HEARTBEAT, ids, now_ms, route=ROUTE_CONTROL,
                               min_version=3 if static else 0,
                               timeout_ms=self.session_timeout_ms)]
        return []

    def on_response(self, api: str, body: dict, now_ms: int, *, tag: int | None = None) -> bool:
        """A decoded response to a request this machine asked for. Returns False when the
        answer no longer matters (stale tag, or the member moved on) and was ignored."""
        fl = self._take(api, tag)
        if fl is None:
            return False
        if api == LEAVE_GROUP:
            return self._leave_answered(api, body, now_ms)
        handler = {FIND_COORDINATOR: lambda b, t, _: self._coordinator_answered(b, t),
                   JOIN_GROUP: self._on_join,
                   SYNC_GROUP: self._on_sync, HEARTBEAT: self._on_heartbeat}[api]
        return handler(body, now_ms, fl)

    def on_failure(self, api: str, kind: str, now_ms: int, *, tag: int | None = None) -> bool:
        """A request got no answer: `kind` is "timeout", "disconnected" or another short
        word. The coordinator is then treated as unknown (as the Java client does)."""
        if self._take(api, tag) is None:
            return False
        if self._failed_outside_membership(api, kind, now_ms):
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

    def after_stable(self, now_ms: int) -> None:
        """The driver saw this generation become stable: offer the owned partitions in the
        next JoinGroup (KIP-429, when a `subscribe` callback is given), and rejoin when
        cooperative-sticky revoked partitions (they reach their new owner only in the next
        generation, which needs the revoking member to rejoin)."""
        if self._subscribe is not None:
            self.set_protocols(self._subscribe(self.assigned_partitions(), self.generation_id))
        if self._revoked and self.protocol_name == "cooperative-sticky":
            self.request_rejoin(f"revoked {len(self._revoked)} partitions (cooperative)", now_ms)

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

    # ---- internals: response handlers ----------------------------------------------------
    def _on_join(self, body: dict, now_ms: int, fl) -> bool:
        if self._sm.state is not S.JOINING:
            return False
        code = body.get("error_code", NONE)
        if code == NONE:
            self._joined(body, now_ms)
            return True
        if code == ErrorCode.MEMBER_ID_REQUIRED:
            self._give_up_member_id(body.get("member_id") or "")
            self.member_id = body.get("member_id") or ""
            self._move(S.JOINING, f"MEMBER_ID_REQUIRED: rejoining at once with member id "
                                  f"{self.member_id} (KIP-394)", now_ms)
            return True
        name, reaction = self._react(JOIN_GROUP, code, now_ms)
        if reaction is None:
            return True
        if reaction in (Reaction.RESET_MEMBER, Reaction.RESET_GENERATION):
            member = reaction is Reaction.RESET_MEMBER
            self._reset_generation(member_id=member)
            what = "member id reset, rejoining" if member else "generation reset, rejoining"
        elif reaction is Reaction.REJOIN:
            what = "rejoining"
        else:
            if reaction is Reaction.REDISCOVER:
                self.coordinator = None
            delay = self._backoff(now_ms)
            what = (f"rediscovering the coordinator, retrying in {delay} ms"
                    if reaction is Reaction.REDISCOVER else f"retrying in {delay} ms")
        self._move(S.JOINING, f"{name}: {what}", now_ms)
        return True

    def _joined(self, body: dict, now_ms: int) -> None:
        ptype = body.get("protocol_type")
        if ptype is not None and ptype != self.protocol_type:
            self._error_event(JOIN_GROUP, ErrorCode.INCONSISTENT_GROUP_PROTOCOL)
            self._fatal(JOIN_GROUP, ErrorCode.INCONSISTENT_GROUP_PROTOCOL, now_ms,
                        f"the group's protocol type is {ptype!r}, ours {self.protocol_type!r}")
            return
        self._progress()
        self._give_up_member_id(body.get("member_id") or self.member_id)
        self.member_id = body.get("member_id") or self.member_id
        self.generation_id = gen = body.get("generation_id", -1)
        self.leader_id = body.get("leader") or None
        self.protocol_name = body.get("protocol_name")
        leader = self.is_leader
        self.members = [JoinedMember(m.get("member_id", ""), m.get("group_instance_id"),
                                     bytes(m.get("metadata") or b""))
                        for m in body.get("members") or []] if leader else []
        member_ids = [m.member_id for m in self.members] if leader else None
        self.history.append(GenerationRecord(
            gen, self.protocol_name, self.leader_id or "", leader, member_ids,
            self._round_started_ms if self._round_started_ms is not None else now_ms, now_ms))
        del self.history[:-self._keep_history]
        self._probe("joined")
        self._events.append(GenerationStarted(gen, self.protocol_name, self.leader_id, member_ids))
        if leader and not body.get("skip_assignment"):
            self.pending_assignment = PendingAssignment(gen, self.protocol_name, self.member_id,
                                                        tuple(self.members))
            self._heartbeats_from(now_ms)
            self._move(S.ASSIGNING, f"joined generation {gen} as leader of "
                                    f"{len(self.members)} members: assignment needed", now_ms)
            if self._assign is not None:
                self._assign_now(now_ms)
            return
        self._sync_assignments = []
        how = ("as leader told to skip assignment (KIP-814): empty SyncGroup" if leader
               else f"as follower (leader {self.leader_id})")
        self._move(S.AWAITING_SYNC, f"joined generation {gen} {how}", now_ms)

    def _assign_now(self, now_ms: int) -> None:
        assign, pending = self._assign, self.pending_assignment
        assert assign is not None and pending is not None  # called once both are set
        try:
            result = assign(pending)
        except Exception as exc:  # unknown assignor, or the assignor failed
            self.assignment_failed(describe_exception(exc), now_ms, error=exc)
            return
        try:
            self.provide_assignment(result, now_ms)
        except ValueError as exc:
            self.assignment_failed(str(exc), now_ms, error=exc)

    def _on_sync(self, body: dict, now_ms: int, fl) -> bool:
        if self._sm.state is not S.AWAITING_SYNC or fl.generation_id != self.generation_id:
            return False
        code = body.get("error_code", NONE)
        if code == NONE:
            ptype, pname = body.get("protocol_type"), body.get("protocol_name")
            if (ptype is not None and ptype != self.protocol_type) or (
                    pname is not None and self.protocol_name is not None
                    and pname != self.protocol_name):
                self._error_event(SYNC_GROUP, ErrorCode.INCONSISTENT_GROUP_PROTOCOL)
                self._fatal(SYNC_GROUP, ErrorCode.INCONSISTENT_GROUP_PROTOCOL, now_ms,
                            f"SyncGroup answered protocol {ptype}/{pname}, JoinGroup chose "
                            f"{self.protocol_type}/{self.protocol_name}")
                return True
            self._progress()
            self.assignment = bytes(body.get("assignment") or b"")
            if self.history and self.history[-1].generation == self.generation_id:
                self.history[-1].synced_ms = now_ms
            self._heartbeats_from(now_ms)
            self._move(S.STABLE, f"synced generation {self.generation_id}", now_ms)
            self._probe("synced")
            self._assignment_event()
            return True
        name, reaction = self._react(SYNC_GROUP, code, now_ms)
        if reaction is None:
            return True
        if reaction not in _MEMBERSHIP:  # coordinator moved, or transient: back off first
            if reaction is Reaction.REDISCOVER:
                self.coordinator = None
            self._backoff(now_ms)
        self._rejoin(now_ms, f"{name} on SyncGroup", error=name, **_MEMBERSHIP.get(reaction, {}))
        return True

    def _on_heartbeat(self, body: dict, now_ms: int, fl) -> bool:
        if (not self._sm.state.heartbeating or fl.generation_id != self.generation_id
                or fl.member_id != self.member_id):
            return False
        code = body.get("error_code", NONE)
        if code == NONE:
            self._heartbeat_ok(now_ms)
            return True
        name, reaction = self._react(HEARTBEAT, code, now_ms)
        why = f"{name} on Heartbeat"
        if reaction is None:
            pass
        elif reaction in _MEMBERSHIP:
            self._rejoin(now_ms, why, error=name, **_MEMBERSHIP[reaction])
        elif reaction is Reaction.REDISCOVER:
            self.coordinator = None
            self._next_heartbeat_ms = now_ms + self._backoff(now_ms)
            self._probe("heartbeat_error", error=name, reason=f"{why}: rediscovering the coordinator")
        else:
            delay = self._backoff(now_ms)
            self._next_heartbeat_ms = now_ms + delay
            self._probe("heartbeat_error", error=name, reason=f"{why}: retrying in {delay} ms")
        return True
