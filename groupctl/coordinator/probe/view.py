"""The group as the probe sees it, generation by generation: what it adds to its member's
own events. The story itself (state changes, members joined and left, rebalance summaries)
is told by observe/story.py, the same code the passive watcher feeds.

The sans-IO member emits `probe`, `generation`, `assignment` and `error` events itself.
This view feeds the RebalanceStory:

- the group state the member's own state implies (JOINING -> PreparingRebalance, ASSIGNING /
  AWAITING_SYNC -> CompletingRebalance, STABLE -> Stable), with the member state in the
  extra field `member_state`;
- after each synced generation, the member list and every member's assignment (told as
  per-member `assignment` diffs, as the passive watch tells them; the probe's own is left
  to its member, which saw it first-hand): from a
  describe (an observe.model GroupDescription) taken while the probe is still in that
  generation and the group is Stable; the leader also knows them from its JoinGroup and its
  own assignment, which wins for assignments and stands in when the describe raced with the
  next rebalance.

Times: `started` is when the probe saw the group start rebalancing (its own join, or the
error that sent it back to joining); `ended` when it synced. Both from the injected clock.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Callable

from ...events import AssignmentChanged, Event, GenerationStarted, ProbeAction, tp_list
from ...observe.model import GroupDescription, Member, TopicPartitions
from ...observe.story import RebalanceStory


@dataclass(frozen=True)
class _Pending:
    generation: int
    started: float | None
    ended: float
    reason: str
    leader_members: GroupDescription | None = None
    own_id: str | None = None


class GroupView:
    def __init__(self, group: str, *, clock: Callable[[], float] = time.time):
        self.group = group
        self.story = RebalanceStory(group, clock=clock, report_generations=False,
                                    report_assignments=True)
        self.stable_generation: int | None = None
        self.leader_members: list[dict] | None = None          # decoded subscriptions
        self.own_assignment: dict[str, list[int]] = {}
        self.leader_assignment: dict[str, dict[str, list[int]]] | None = None
        self._leader_pending = None
        self._pending: _Pending | None = None
        self._events: list[Event] = []
        self._held: GenerationStarted | None = None   # a follower's, until its describe

    @property
    def members(self):
        return self.story.members

    # ---- inputs ------------------------------------------------------------------------
    def before_join(self, described: GroupDescription | None) -> None:
        """The group before the probe joined (its description, when taken)."""
        self.story.baseline(described)

    def note_member_event(self, event: Event) -> None:
        if isinstance(event, ProbeAction) and event.action == "rejoining":
            self.story.note_reason(event.reason or event.error)

    def member_event(self, event: Event) -> list[Event]:
        """The member's own event as published: a follower's `generation` (its JoinGroup
        names no members) is held until the describe of that generation gives them."""
        self.note_member_event(event)
        if isinstance(event, GenerationStarted) and event.members is None:
            out, self._held = self._release(None), event
            return out
        return [event]

    def _release(self, generation: int | None, members: list[str] | None = None) -> list[Event]:
        held = self._held
        if held is None or (generation is not None and held.generation != generation):
            return []
        self._held = None
        return [held if members is None else replace(held, members=members)]

    def poll_state(self, member) -> list[Event]:
        if self._held is not None and member.generation != self._held.generation:
            self._events += self._release(None)   # never described: told without members
        self._events += self.story.state(member.implied_group_state(),
                                         member_state=member.state.name)
        return self.poll_events()

    def leader_joined(self, pending) -> None:
        from .setup import decoded_subscriptions

        self._leader_pending = pending
        self.leader_members = decoded_subscriptions(pending)
        self.leader_assignment = None

    def leader_assigned(self, generation: int, assignment: dict) -> None:
        p = self._leader_pending
        if p is not None and generation == p.generation_id:
            self.leader_assignment = {m: {t: sorted(ps) for t, ps in a.items() if ps}
                                      for m, a in assignment.items()}

    def synced(self, member, own: dict[str, list[int]], now: float) -> None:
        self.own_assignment = own
        self.stable_generation = gen = member.generation
        p = self._leader_pending
        leader_view = None
        if member.is_leader and p is not None and p.generation_id == gen:
            asg = self.leader_assignment or {}
            leader_view = GroupDescription(self.group, state="Stable", generation=gen, members=[
                Member(m.member_id, instance_id=m.group_instance_id,
                       assignment=_tps(asg.get(m.member_id, {}))) for m in p.members])
        else:
            self.leader_members = None
            self.leader_assignment = None
        self._pending = _Pending(gen, self.story.round_started, now,
                                 self.story.reason or "probe joined", leader_view,
                                 member.member_id or None)
        self.story.reason = None

    def described(self, generation: int, described: GroupDescription | None) -> None:
        """The describe taken for `generation` (None: failed, or raced with a rebalance)."""
        p = self._pending
        if p is None or p.generation != generation:
            self._events += self._release(generation)
            return
        after = described if described is not None else p.leader_members
        self._events += self._release(generation, None if after is None else
                                      sorted(m.member_id for m in after.members))
        if described is not None and p.leader_members is not None:
            exact = {m.member_id: m.assignment for m in p.leader_members.members}
            after = replace(described, members=[  # the leader's view of assignments is exact
                replace(m, assignment=exact[m.member_id]) if m.member_id in exact else m
                for m in described.members])
        started = p.started if p.started is not None else p.ended
        self._events += [e for e in self.story.settled(after, generation=generation,
                                                       started=started, ended=p.ended,
                                                       reason=p.reason)
                         if not (isinstance(e, AssignmentChanged) and e.member_id == p.own_id)]
        self._pending = None

    # ---- KIP-848 groups: told from ConsumerGroupDescribe snapshots ----------------------
    def follow_epochs(self, described: GroupDescription | None) -> None:
        """The probe's member is broker-assigned (KIP-848): the story is told from the
        group's snapshots (`observed`), as the passive watcher tells it, with epochs and
        every member's assignment as it converges (current vs target, reconciliation time),
        starting from the group as described before joining."""
        self.story.report_generations = True
        if described is not None and described.group_epoch is not None:
            self.story.generation = described.group_epoch

    def observed(self, described: GroupDescription, at: float | None = None) -> None:
        """One snapshot of a KIP-848 group (see follow_epochs)."""
        self._events += self.story.observe(described, at=at)

    # ---- outputs -----------------------------------------------------------------------
    def poll_events(self) -> list[Event]:
        out, self._events = self._events, []
        return out

    def own_assignment_list(self) -> list[dict]:
        return tp_list(self.own_assignment) or []

    def leader_assignment_list(self) -> list[dict] | None:
        if self.leader_assignment is None:
            return None
        return [{"member_id": m, "assignment": tp_list(a) or []}
                for m, a in self.leader_assignment.items()]


def _tps(assignment: dict[str, list[int]]) -> list[TopicPartitions]:
    return [TopicPartitions(t, sorted(ps)) for t, ps in sorted(assignment.items()) if ps]
