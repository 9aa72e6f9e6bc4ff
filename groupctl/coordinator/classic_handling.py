"""How the classic member reacts: its response handlers, the state changes they make
(rejoin, fatal, leave) and the events they record. A mixin of ClassicMember (classic.py),
split out to keep each module readable; it uses the member's attributes directly."""
from __future__ import annotations

from ..errors import AuthError, GroupctlError, KafkaError
from .classic_types import (
    COORDINATOR_MOVED, FATAL_CODES, FENCED_INSTANCE_ID, FIND_COORDINATOR,
    GROUP_AUTHORIZATION_FAILED, HEARTBEAT, ILLEGAL_GENERATION, INCONSISTENT_GROUP_PROTOCOL,
    JOIN_GROUP, LEAVE_GROUP, MEMBER_ID_REQUIRED, NONE, REBALANCE_IN_PROGRESS, SYNC_GROUP,
    UNKNOWN_MEMBER_ID, Coordinator, GenerationRecord, JoinedMember, PendingAssignment, S,
    _FATAL_HINTS, _InFlight, _default_decode_assignment, _describe, _topic_list, error_name,
    error_retriable, kip800,
)


class MemberHandling:
    """Response handlers, state changes and events of ClassicMember."""

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
        if self._rejoin_on_membership_error(code, now_ms, why, name):
            pass
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

    def _rejoin_on_membership_error(self, code: int, now_ms: int, why: str, name: str) -> bool:
        """SyncGroup and Heartbeat share these: the group moved on without us
        (REBALANCE_IN_PROGRESS), our generation is stale, or our member id is unknown."""
        if code == REBALANCE_IN_PROGRESS:
            self._rejoin(now_ms, why, error=name)
        elif code == ILLEGAL_GENERATION:
            self._rejoin(now_ms, why, error=name, reset_generation=True)
        elif code == UNKNOWN_MEMBER_ID:
            self._rejoin(now_ms, why, error=name, reset_member_id=True)
        else:
            return False
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
        if self._rejoin_on_membership_error(code, now_ms, why, name):
            pass
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
