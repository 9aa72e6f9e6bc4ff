"""The group as the probe sees it, generation by generation: what it adds to its member's
own events. The story itself (state changes, members joined and left, rebalance summaries)
is told by observe/story/story.py, the same code the passive watcher feeds.

The sans-IO member emits `probe`, `generation`, `assignment` and `error` events itself.
This view turns what its member does into observations (observe/sources/observations.py) and
feeds them to the RebalanceStory (its only entry, `feed`):

- the group state the member's own state implies (JOINING -> PreparingRebalance, ASSIGNING /
  AWAITING_SYNC -> CompletingRebalance, STABLE -> Stable), with the member state in the
  extra field `member_state`;
- after each synced generation, the member list and every member's assignment (told as
  per-member `assignment` diffs, as the passive watch tells them; the probe's own is left
  to its member, which saw it first-hand): from a
  describe (an observe.reads.model GroupDescription) taken while the probe is still in that
  generation and the group is Stable; the leader also knows them from its JoinGroup and its
  own assignment, which wins for assignments and stands in when the describe raced with the
  next rebalance.

The group's state in the probe is one GroupStatus, `status` (observe/state/reducer.py): its
story folds the events it tells into it, and the view folds its member's own events (`probe`,
`generation`, its own `assignment`, `error`) as it hands them out to be published; the live
view of `join --watch` draws it (render/watch.py). None of the member's events moves what the
story reads of it (state, type, epochs).

Times: `started` is when the probe saw the group start rebalancing (its own join, or the
error that sent it back to joining); `ended` when it synced. Both from the injected clock.
"""
from __future__ import annotations

import time
from dataclasses import replace
from typing import Callable

from ...events import (Event, EventKind, GenerationStarted, ProbeAction, Source, envelope,
                       tp_list)
from ...observe.sources import observations as obs
from ...observe.reads.model import GroupDescription, Member, TopicPartitions
from ...observe.state.reducer import GroupStatus
from ...observe.story.story import RebalanceStory

PROBE = Source.PROBE.value


class GroupView:
    def __init__(self, group: str, *, clock: Callable[[], float] = time.time):
        self.group = group
        self._clock = clock
        self.status = GroupStatus(group)   # the group as told: the story's and the member's
        # a classic member tells its own generations (and its own assignment)
        self._story = RebalanceStory(group, clock=clock, status=self.status,
                                     told_elsewhere={EventKind.GENERATION})
        self.stable_generation: int | None = None
        self.leader_members: list[dict] | None = None          # decoded subscriptions
        self.own_assignment: dict[str, list[int]] = {}
        self.leader_assignment: dict[str, dict[str, list[int]]] | None = None
        self._leader_pending = None
        self._events: list[Event] = []
        self._held: GenerationStarted | None = None   # a follower's, until its describe
        self._noticed_join = False

    def feed(self, o: obs.Observation) -> None:
        self._events += self._story.feed(o)

    # ---- inputs ------------------------------------------------------------------------
    def before_join(self, described: GroupDescription | None, *, epochs: bool = False) -> None:
        """The group before the probe joined (its description, when taken). `epochs`: the
        probe's member is broker-assigned (KIP-848): the story is told from the group's
        snapshots (`observed`), as the passive watcher tells it, with epochs and every
        member's assignment as it converges (current vs target, reconciliation time),
        starting from the group as described before joining."""
        if epochs:   # before anything was told: the same status
            self._story = RebalanceStory(self.group, clock=self._clock, status=self.status)
        self.feed(obs.BeforeJoin(self.group, self._clock(), PROBE, described))

    def note_member_event(self, event: Event) -> None:
        if isinstance(event, ProbeAction) and event.action == "rejoining":
            self.feed(obs.RebalanceNoticed(self.group, self._clock(), PROBE,
                                           event.reason or event.error))

    def member_event(self, event: Event) -> list[Event]:
        """The member's own event as published: a follower's `generation` (its JoinGroup
        names no members) is held until the describe of that generation gives them."""
        self.note_member_event(event)
        if isinstance(event, GenerationStarted) and event.members is None:
            out, self._held = self._release(None), event
            return out
        return self._own([event])

    def _release(self, generation: int | None, members: list[str] | None = None) -> list[Event]:
        held = self._held
        if held is None or (generation is not None and held.generation != generation):
            return []
        self._held = None
        return self._own([held if members is None else replace(held, members=members)])

    def _own(self, events: list[Event]) -> list[Event]:
        """The member's own events, folded into `status` as they go out to be published
        (the story folds its own as it tells them)."""
        for event in events:
            self.status.apply(envelope(event, group=self.group, cluster=None, source=PROBE,
                                       at=self._clock()))
        return events

    def poll_state(self, member) -> list[Event]:
        if self._held is not None and member.generation != self._held.generation:
            self._events += self._release(None)   # never described: told without members
        self.feed(obs.MemberState(self.group, self._clock(), PROBE,
                                  member.implied_group_state(), member.state.name))
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
        self.feed(obs.MemberSynced(self.group, now, PROBE, gen, member.member_id or None,
                                   leader_view, reason_if_unnoticed="probe joined"))

    def described(self, generation: int, described: GroupDescription | None) -> None:
        """The describe taken for `generation` (None: failed, or raced with a rebalance)."""
        told = self._story.feed(obs.GenerationDescribed(self.group, self._clock(), PROBE,
                                                        generation, described))
        rebalance = [e for e in told if e.KIND == EventKind.REBALANCE]
        if not rebalance:
            self._events += self._release(generation) + told
            return
        self._events += self._release(generation, getattr(rebalance[0], "members_after", None)) + told

    # ---- KIP-848 groups: told from ConsumerGroupDescribe snapshots ----------------------
    def observed(self, o: obs.Observation) -> None:
        """One observation of a KIP-848 group from the probe's source (see before_join)."""
        self.feed(o)

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
