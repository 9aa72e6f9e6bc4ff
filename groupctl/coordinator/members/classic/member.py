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

from ....events import GenerationStarted
from ....protocol import messages as M
from ....protocol.errors import ErrorCode
from ..interface import Reaction
from . import requests as R
from .state import ClassicMemberState, LEGAL_TRANSITIONS, Transition  # noqa: F401 - re-exported
from .membership import ClassicMembership
from .types import (  # noqa: F401 - re-exported: the member's vocabulary
    APIS, FATAL_HINTS, FIND_COORDINATOR, FIND_REACTIONS, HEARTBEAT, JOIN_GROUP, LEAVE_GROUP,
    REACTIONS, RELEVANT, ROUTE_ANY, ROUTE_CONTROL, ROUTE_JOIN, SYNC_GROUP, Coordinator,
    GenerationRecord, JoinedMember, Outgoing, PendingAssignment, S, check_settings,
    default_decode_assignment, describe_exception, error_name, kip800,
)

NONE = ErrorCode.NONE
_MEMBERSHIP = {Reaction.REJOIN: {}, Reaction.RESET_GENERATION: {"reset_generation": True},
               Reaction.RESET_MEMBER: {"reset_member_id": True}}


class ClassicMember(ClassicMembership):
    """A classic group member as a sans-IO state machine. See the module docstring."""

    # ---- driver inputs -----------------------------------------------------------------
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

    def after_stable(self, now_ms: int) -> None:
        """The driver saw this generation become stable: offer the owned partitions in the
        next JoinGroup (KIP-429, when a `subscribe` callback is given), and rejoin when
        cooperative-sticky revoked partitions (they reach their new owner only in the next
        generation, which needs the revoking member to rejoin)."""
        if self._subscribe is not None:
            self.set_protocols(self._subscribe(self.assigned_partitions(), self.generation_id))
        if self._revoked and self.protocol_name == "cooperative-sticky":
            self.request_rejoin(f"revoked {len(self._revoked)} partitions (cooperative)", now_ms)

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
