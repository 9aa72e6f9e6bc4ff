"""The group as the probe sees it, generation by generation, and the events derived from it
(DESIGN §4): `state`, `member_joined` / `member_left`, `rebalance`.

The sans-IO member emits `probe`, `generation`, `assignment` and `error` events itself.
This view adds:

- `state`: the group state the probe's own member state implies (JOINING ->
  PreparingRebalance, ASSIGNING / AWAITING_SYNC -> CompletingRebalance, STABLE -> Stable),
  emitted when it changes, with the member state in the extra field `member_state`.
- after each synced generation, the member list and every member's assignment: from a
  DescribeGroups taken while the probe is still in that generation and the group is
  Stable (the leader also knows them from its JoinGroup and its own assignment, used when
  the describe raced with the next rebalance). From consecutive generations it derives
  `member_joined` / `member_left` and one `rebalance` event per generation, with
  `moved_partitions` when both generations' assignments are known (else null).

Times: `started` is when the probe saw the group start rebalancing (its own join, or the
error that sent it back to joining); `ended` when it synced.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..events import iso_ts, moved_partitions, tp_list
from .classic_state import ClassicMemberState as S

GROUP_STATE = {S.JOINING: "PreparingRebalance", S.ASSIGNING: "CompletingRebalance",
               S.AWAITING_SYNC: "CompletingRebalance", S.STABLE: "Stable"}


@dataclass
class MemberInfo:
    member_id: str
    instance_id: str | None = None
    client_id: str | None = None
    host: str | None = None
    assignment: dict[str, set[int]] | None = None

    def identity(self) -> dict:
        return {"member_id": self.member_id, "instance_id": self.instance_id,
                "client_id": self.client_id, "host": self.host}


@dataclass
class _Pending:
    generation: int
    started: float | None
    ended: float
    reason: str | None
    leader_members: dict[str, MemberInfo] | None = None


@dataclass
class GroupView:
    group: str
    stable_generation: int | None = None
    members: dict[str, MemberInfo] | None = None      # as of stable_generation, when known
    leader_members: list[dict] | None = None          # decoded subscriptions (leader only)
    own_assignment: dict[str, list[int]] = field(default_factory=dict)
    leader_assignment: dict[str, dict[str, list[int]]] | None = None
    _group_state: str | None = None
    _round_started: float | None = None
    _reason: str | None = None
    _pending: _Pending | None = None
    _leader_gen: int | None = None
    _events: list[dict] = field(default_factory=list)

    # ---- inputs ------------------------------------------------------------------------
    def before_join(self, described: dict | None) -> None:
        """The group before the probe joined (its DescribeGroups entry, when taken)."""
        if described and described.get("group_state") == "Stable":
            self.members = _members_of(described)

    def note_member_event(self, body: dict) -> None:
        if body.get("event") == "probe" and body.get("action") == "rejoining":
            self._reason = body.get("reason") or body.get("error")

    def poll_state(self, member) -> list[dict]:
        state = GROUP_STATE.get(member.state)
        if state is not None and state != self._group_state:
            if state == "PreparingRebalance":
                self._round_started = _now()
            self._events.append({"event": "state", "state": state,
                                 "previous": self._group_state,
                                 "member_state": member.state.name})
            self._group_state = state
        return self.poll_events()

    def leader_joined(self, pending) -> None:
        from .probe_setup import decoded_subscriptions

        self._leader_gen = pending.generation_id
        self.leader_members = decoded_subscriptions(pending)
        self.leader_assignment = None

    def leader_assigned(self, generation: int, assignment: dict) -> None:
        if generation == self._leader_gen:
            self.leader_assignment = {m: {t: sorted(p) for t, p in a.items() if p}
                                      for m, a in assignment.items()}

    def synced(self, member, own: dict[str, list[int]], now: float) -> None:
        self.own_assignment = own
        self.stable_generation = member.generation_id
        leader_members = None
        if member.is_leader and self._leader_gen == member.generation_id:
            asg = self.leader_assignment or {}
            leader_members = {m.member_id: MemberInfo(
                m.member_id, m.group_instance_id,
                assignment={t: set(p) for t, p in asg.get(m.member_id, {}).items()})
                for m in member.members}
        else:
            self.leader_members = None
            self.leader_assignment = None
        self._pending = _Pending(member.generation_id, self._round_started, now,
                                 self._reason or "probe joined", leader_members)
        self._reason = None

    def described(self, generation: int, described: dict | None) -> None:
        """The describe taken for `generation` (None: failed, or raced with a rebalance)."""
        p = self._pending
        if p is None or p.generation != generation:
            return
        after = _members_of(described) if described else p.leader_members
        if after is not None and p.leader_members:
            for mid, info in after.items():  # the leader's view of assignments is exact
                if mid in p.leader_members:
                    info.assignment = p.leader_members[mid].assignment
        self._emit_rebalance(p, after)
        self._pending = None

    # ---- outputs -----------------------------------------------------------------------
    def poll_events(self) -> list[dict]:
        out, self._events = self._events, []
        return out

    def own_assignment_list(self) -> list[dict]:
        return tp_list(self.own_assignment) or []

    def leader_assignment_list(self) -> list[dict] | None:
        if self.leader_assignment is None:
            return None
        return [{"member_id": m, "assignment": tp_list(a) or []}
                for m, a in self.leader_assignment.items()]

    def _emit_rebalance(self, p: _Pending, after: dict[str, MemberInfo] | None) -> None:
        before = self.members
        if after is not None and before is not None:
            for mid in sorted(set(after) - set(before)):
                self._events.append({"event": "member_joined", **after[mid].identity()})
            for mid in sorted(set(before) - set(after)):
                self._events.append({"event": "member_left", **before[mid].identity()})
        moved = None
        if after is not None and before is not None and _all_known(before) and _all_known(after):
            moved = moved_partitions({m: i.assignment for m, i in before.items()},
                                     {m: i.assignment for m, i in after.items()})
        started = p.started if p.started is not None else p.ended
        self._events.append({
            "event": "rebalance", "from_generation": self._from_generation,
            "to_generation": p.generation, "started": iso_ts(started), "ended": iso_ts(p.ended),
            "duration_ms": int(round((p.ended - started) * 1000)),
            "members_before": None if before is None else sorted(before),
            "members_after": None if after is None else sorted(after),
            "moved_partitions": moved, "reason": p.reason,
            "assignments": None if after is None else {
                m: tp_list(i.assignment) for m, i in sorted(after.items())},
        })
        self._from_generation = p.generation
        self.members = after

    _from_generation: int | None = None


def _all_known(members: dict[str, MemberInfo]) -> bool:
    return all(i.assignment is not None for i in members.values())


def _members_of(described: dict) -> dict[str, MemberInfo]:
    out = {}
    for m in described.get("members") or ():
        out[m["member_id"]] = MemberInfo(
            m["member_id"], m.get("group_instance_id"), m.get("client_id") or None,
            m.get("client_host") or None, _assignment_of(m.get("member_assignment")))
    return out


def _assignment_of(data) -> dict[str, set[int]] | None:
    from .probe_setup import decode_assignment_map

    try:
        return {t: set(p) for t, p in decode_assignment_map(bytes(data or b"")).items()}
    except Exception:  # not consumer-protocol bytes
        return None


def _now() -> float:
    import time

    return time.time()
