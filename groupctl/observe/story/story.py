"""One rebalance story: observations of a group (sources/observations.py) -> the events of
docs/reference/events.md. `story.feed(Seen("orders", at, "describe", desc))` returns the new
events ([Event], maybe []); `feed` is the only entry. The group's state (state, type,
generation or epochs, members with their assignments and subscriptions) is `story.status`,
a GroupStatus (state/reducer.py) changed only by folding the events the story tells, in
order (`story.take_told()`: their envelopes): a replay of them gives the same state, and
a Watcher's reducer holds that very object. The story keeps only the round: its clock, the
point it is told from while it is under way (story/from_point.py) and the witnesses of the
looks. The passive watch, `wait`, the KIP-848 probe (snapshots: Seen) and the classic probe (its
member's observations: BeforeJoin, MemberState, RebalanceNoticed, MemberSynced,
GenerationDescribed) all feed a RebalanceStory, so they tell the same story the same way:

- the first look at a group, and the first after a gap in contact (ContactLost), is told
  in full as a `snapshot` (state, type, generation or epochs, protocol, every member with
  its assignment and target);
- `type_changed` when the group changed type (a classic group converted to a consumer
  group and back), `state` on every change of state (a rebalancing state marks the start
  of a round), `epoch` each time a consumer/share/streams group's epochs move;
- once a Stable / Empty group shows a generation or epoch not seen yet (epoch groups: every
  member at its target), the settled round: `generation` (classic), `member_joined` /
  `member_left`, per-member `assignment` diffs and one `rebalance` with `moved_partitions`
  when both sides' assignments are known and the reason (reasons.explain). The round's
  life and its duration's basis (exact / interval / lower bound / unknown) are round.py's;
  a classic generation that moved on by more than one tells each round between (unseen_round).
  A round seen starting whose coordinator then went (a gap in contact) and that the next
  look shows undone (the generation, members and assignments of before: the new
  coordinator loaded the group's last stored generation) is no rebalance (the round's
  UNDO move, its guard RoundClock.undone): only its `state` changes are told. A new
  coordinator's first looks may show the group's past (story/story_stale.py): a classic
  group's settled look is held (the round's HELD state) until a look tells which; each
  verdict is a move of the round's table, and the story acts on the move (_ON_MOVE).

Every group type goes through the same code; what differs is data (epochs instead of
generations, a share partition held by several members, a streams member's tasks).
KIP-848 members are told one by one as they converge (story/convergence.py).

What the observer tells elsewhere is data of the story's construction: the classic probe's
member tells its own `generation` events (told_elsewhere) and assignment (MemberSynced).
"""
from __future__ import annotations

import time
from dataclasses import replace
from typing import Any, Callable, Iterable

from ...events import (
    EpochChanged, Event, EventKind, GenerationStarted, Rebalanced, Snapshot, Source, StateChanged, TaskRebalanced, TypeChanged, iso_ts,
)
from ..sources import observations as obs
from ..sources.contact import Gap, Looks
from ..state.reducer import GroupStatus
from .convergence import Behind, Convergence, HoldingUp
from ..reads.model import (CLASSIC, CONSUMER, DEAD, REBALANCING_STATES, SETTLED_STATES, SHARE,
                    STREAMS, GroupDescription)
from .story_stale import StaleView, shape
from .probe_sync import ProbeSync
from .from_point import FromPoint, RoundStart
from .telling import Tell, Telling, Was
from .reasons import explain
from .round import Move, RoundClock, RoundState, SettledRound, unseen_generations, unseen_round
from .unowned import UnownedPartitions
from .story_data import (
    _assignment_changes, _converged, _has_tasks, _moved, _replaced_in_place, joins_and_leaves,
    members_after, members_of, reached_before_next, snapshot_members, task_dict)


class RebalanceStory:
    """Follows one group from observation to observation; `feed` returns the new events."""

    def __init__(self, group: str, *, clock: Callable[[], float] = time.time,
                 told_elsewhere: Iterable[EventKind] = frozenset(),
                 status: GroupStatus | None = None, tell: Tell | None = None):
        self._group = group
        self._clock = clock
        self._elsewhere = frozenset(EventKind(k) for k in told_elsewhere)
        # the group as told (`status`): changed only by the fold of the events told
        self._told = Telling(group, GroupStatus(group) if status is None else status, tell)
        self._round = RoundClock()                # the round under way (observe.round)
        self._start = RoundStart(self.status)   # where it is told from (story/from_point)
        self._convergence = Convergence()
        self._unowned = UnownedPartitions()   # what each round cost (observe.unowned)
        self._behind = Behind()               # epoch groups: who held each round up
        self._holding = HoldingUp()           # share, streams: members told holding it up
        self._looks = Looks()           # the looks and the gap before each (sources/contact)
        self._probe = ProbeSync()   # the classic probe's own member (story/probe_sync)
        self._same_as: GroupDescription | None = None   # the last look, while nothing else came
        self._stale = StaleView()     # a new coordinator's view of the past (story_stale)

    # ---- the one entry ---------------------------------------------------------------------
    def feed(self, o: obs.Observation) -> list[Event]:
        handler = _HANDLERS.get(type(o))
        if handler is None:
            raise TypeError(f"not an observation the story knows: {o!r}")
        if type(o) is not obs.Seen:
            self._same_as = None   # anything else may move the story: read the next look whole
        self._start.begin()
        self._told.begin(o, self._start.freeze)
        events = handler(self, o)
        self._told.end()
        return events

    @property
    def status(self) -> GroupStatus:
        """The group as told: state, type, generation or epochs, members... (state/reducer.py);
        a Watcher's reducer holds this very object."""
        return self._told.status

    def _start_round(self, at: float) -> None:
        self._start.start()
        self._round.start(at)

    def take_told(self) -> list[dict]:
        """The last feed's events as told (their envelopes, folded), in order; a second
        take gives []."""
        return self._told.take()

    # ---- what a look shows -----------------------------------------------------------------
    def _seen(self, o: obs.Seen) -> list[Event]:
        desc, at = o.desc, o.at
        if not self._looks.blind and self._same_as is not None and desc == self._same_as:
            # the group as the last look showed it: the story tells nothing new of the same
            # look twice (a watch of --all sees most groups unchanged every round)
            self._looks.look(at)
            self._round.look(at, changes_only=o.source == Source.RECORDS)
            self._unowned.same_look(at)
            return []
        was = Was(self.status)   # the group as told before this look's snapshot
        events = self._told(self._snapshot(desc, at))
        gap = self._looks.look(at)
        self._round.look(at, changes_only=o.source == Source.RECORDS, after_gap=gap == Gap.LOST)
        events += self._observe(desc, at, gap, was)
        self._start.done(self._round.under_way)
        self._same_as = None if self._round.state == RoundState.HELD else desc   # re-judged
        return events

    def _snapshot(self, desc: GroupDescription | None, at: float) -> list[Event]:
        last = self._looks.last
        if desc is None or desc.state == DEAD or (
                last is not None and not self._looks.blind and self.status.state != DEAD):
            return []   # told in full: the first look, after a gap, a group created again
        gap = None if last is None else int(round((at - last) * 1000))
        return [Snapshot(desc.state, desc.type, desc.generation, desc.group_epoch,
                         desc.assignment_epoch, desc.protocol, snapshot_members(desc), gap)]

    def _missing(self, o: obs.Missing) -> list[Event]:
        gap = self._looks.look(None)
        # no group: a round of one created again begins after it
        self._round.look(o.at, after_gap=gap == Gap.LOST)
        # kept, should its members show again (story_stale); a held look goes with it
        self._round.make(self._stale.forgot(self._start.kept(), self.status.type == CLASSIC))
        events = self._change_state(DEAD, o.at)   # as describe answers a missing group
        # known to be empty (the fold's Dead): a group created again is told from nothing
        # (its first generation a rebalance whose members all joined), maybe of another type
        self._start.held = FromPoint({}, None, until_settled=True)
        self._unowned, self._behind, self._holding = UnownedPartitions(), Behind(), HoldingUp()
        return events

    def _appeared(self, o: obs.Appeared) -> list[Event]:
        if self._start.before() == FromPoint(None, None):   # not listed before: its first
            self._start.held = FromPoint({}, None, until_settled=True)   # round tells all
        return []

    def _gap(self, o: obs.Observation) -> list[Event]:
        """Contact lost, or a round answered late: the gap before the next look."""
        (self._looks.lost if type(o) is obs.ContactLost else self._looks.late)()
        return []

    def _observe(self, desc: GroupDescription, at: float, gap: Gap, was: Was) -> list[Event]:
        """A look's state; for epoch groups each new (group, assignment) epoch and each
        member as it converges; and a settled generation / epoch when new (classic:
        Stable or Empty with a generation not seen yet, or other members after a
        rebalancing state when the subscriptions carry no generation; epoch groups: every
        member at its target). Members replaced without a rebalance (a static member
        restarted with a new member id) are told as member_left / member_joined."""
        told = EventKind.ASSIGNMENT not in self._elsewhere and desc.type == CONSUMER
        members = members_of(desc) or {}   # a description: never None
        move = self._stale.judge(desc, members, at, self._start.kept)
        self._round.make(move)   # a held look: the round's HELD state (round.MOVES)
        events = _ON_MOVE[move](self, told) if move in _ON_MOVE else []
        changed_type = self._type_of(desc, was.type)
        events += changed_type
        # an epoch group's round begins with its epoch's move (_epoch), not with a state: a
        # static member away (member epoch -2) makes it Reconciling with no new epoch
        events += self._change_state(desc.state, at, previous=was.state,
                                     rounds=desc.group_epoch is None)
        if self._round.state == RoundState.HELD:   # told from the group as before
            self._start.held = replace(self._start.before(), until_settled=True)
            return events   # its state told; its round not yet (observe.story_stale)
        # a classic look mid-round shows the last generation's assignments, or no member
        self._unowned.look(None if desc.group_epoch is None and desc.state in REBALANCING_STATES
                           else members, at, gap)
        if desc.type == CONSUMER or desc.group_epoch is not None:
            events += self._epoch(desc, at, () if changed_type else was.epochs)
            self._behind.observe(desc, at, gap)
            if desc.type in (SHARE, STREAMS) and EventKind.ASSIGNMENT not in self._elsewhere:
                events += self._told(self._holding.observe(
                    desc, self._behind, lambda: self._start.before().members))
        if told:   # each member as it converges, with its reconciliation time
            events += self._told(self._convergence.observe(
                desc, at, self._start.members_then, lambda: self._start.before().members))
        over = reached_before_next(desc) if self._round.changes_only else None   # records
        mark = None if over is None else self._start.mark()
        if over is not None and mark is not None and over > mark:
            events += self._settle(desc, replace(SettledRound.of(desc, over, at, told),
                                                 passed=True))
        if desc.state not in SETTLED_STATES or not _converged(desc):
            # under way at this look: its start not seen (the first look, after a gap), or
            # after the look that found no group (one created again began after it)
            if not self._round.under_way and (gap in (Gap.FIRST, Gap.LOST) or was.state == DEAD):
                self._start_round(at)
            return events
        now = members
        mark = desc.group_epoch if desc.group_epoch is not None else desc.generation
        if self._round.undone(self._start.kept() if gap in (Gap.LOST, Gap.LATE) else None,
                              shape(now, mark)):
            return events   # no round came of it (round.Move.UNDO): only its states told
        start = self._start.mark()
        if start is None and not self._round.under_way and self._start.before().members is None:
            return events   # the first look, settled: the next round starts from it
        if mark is not None and mark != start or mark is None and (
                self._round.under_way or set(now) != set(self._start.before().members or {})
                and not _replaced_in_place(self._start.before().members or {}, now)):
            return events + self._settle(desc, SettledRound.of(desc, mark, at, told))
        before = None if told else self._start.before().members
        if told:
            self._start.rebase(now)   # joins and leaves without a new epoch were told already
        elif before is not None and _replaced_in_place(before, now):
            joined, left = joins_and_leaves(before, now)
            events += self._told(left + list(joined.values()))
            self._start.rebase(now)
        return events

    def _restore(self, told: bool) -> list[Event]:
        """DROP / RESTORE: the group as before a new coordinator's view of its past."""
        kept = self._stale.take_kept()
        self._start.held = FromPoint(kept.members, kept.generation, until_settled=True)
        return []

    def _settle_held(self, told: bool) -> list[Event]:
        """SETTLE_HELD: the held look was true: its round told, at its own time."""
        held = self._stale.take_held()
        return self._settle(held.desc, SettledRound.of(held.desc, held.desc.generation,
                                                      held.at, told))

    def _type_of(self, desc: GroupDescription, previous: str | None) -> list[Event]:
        """type_changed when the group is seen with another type than `previous`, the type
        told before this look (not on the first look, nor after it was gone: a group created
        again is a new group, told by its snapshot). The epochs start over: the first ones
        of the new type are told."""
        if previous is None or desc.type is None or desc.type == previous:
            return []
        return self._told([TypeChanged(desc.type, previous)])

    def _epoch(self, desc: GroupDescription, at: float, previous: tuple | None) -> list[Event]:
        """`previous`: the epochs told before this look (None: none yet, the look's
        snapshot tells them; (): a new type, whose first epochs are told)."""
        epochs = (desc.group_epoch, desc.assignment_epoch)
        if previous is None or epochs == previous:
            return []
        if not self._round.under_way:
            self._start_round(at)   # the epoch moved between two looks
        elif previous and epochs[0] != previous[0]:
            self._round.epoch_seen(desc.group_epoch, at)   # where the next round began
        return self._told([EpochChanged(*epochs)])

    def _change_state(self, state: str | None, at: float, member_state: str | None = None,
                      *, rounds: bool = True, previous: Any = False) -> list[Event]:
        """`previous`: the state told before this look (its snapshot retells the state);
        not given: the state told."""
        previous = self.status.state if previous is False else previous
        if state is None or state == previous:
            return []
        # a round starts on entering PreparingRebalance (again: a failed SyncGroup sends the
        # probe back to joining), or on any rebalancing state first seen (not `rounds`: StateSeen)
        if rounds and (state == "PreparingRebalance" or (
                state in REBALANCING_STATES and previous not in REBALANCING_STATES)):
            self._start_round(at)
        return self._told([StateChanged(state, previous, member_state)])

    # ---- the probe's own member --------------------------------------------------------------
    def _before_join(self, o: obs.BeforeJoin) -> list[Event]:
        """The group before the probe joined: told in full; a settled classic group's
        members are the baseline of the first generation; an epoch group's epoch is the
        one the probe's join moves on from."""
        desc, was = o.desc, self._start.before()   # the group as told before its snapshot
        events = self._told(self._snapshot(desc, o.at))
        if desc is not None and desc.state != DEAD:
            self._round.look(o.at, after_gap=self._looks.look(o.at) == Gap.LOST)
            self._unowned.look(members_of(desc), o.at)
        if desc is None:
            return events
        # the probe's join is the round: told from here
        if EventKind.GENERATION in self._elsewhere:
            self._start.held = replace(was, members=members_of(desc)) \
                if desc.state in SETTLED_STATES else was
        else:
            self._start.held = was if desc.group_epoch is None else replace(
                was, mark=desc.group_epoch)
        return events

    def _member_state(self, o: obs.MemberState) -> list[Event]:
        return self._change_state(o.group_state, o.at, o.member_state)

    def _noticed(self, o: obs.RebalanceNoticed) -> list[Event]:
        self._probe.noticed(o)
        return []

    def _synced(self, o: obs.MemberSynced) -> list[Event]:
        self._probe.synced(o, self._round.first_look if self._round.under_way else None)
        return []

    def _described(self, o: obs.GenerationDescribed) -> list[Event]:
        settled = self._probe.described(o)
        return [] if settled is None else self._settle(*settled)

    # ---- a settled round ---------------------------------------------------------------------
    def _settle(self, desc: GroupDescription | None, r: SettledRound) -> list[Event]:
        """Members and assignments from `desc` (None: not known). The reason is what
        changed between the members before and after (reasons.explain); `r.reason` (or one
        noticed) is how the observer noticed, used when the members are not known."""
        ended = self._clock() if r.ended is None else r.ended
        was = self._start.before()
        before, after = was.members, members_of(desc)
        began, duration, unseen = r.timed(self._round, ended)
        events: list[Event] = []
        if EventKind.GENERATION not in self._elsewhere and r.announce:
            if r.epochs is not None:
                events.append(EpochChanged(*r.epochs))
            else:
                events.append(GenerationStarted(r.mark, desc.protocol if desc else None,
                                                members=None if after is None else sorted(after)))
        if after is not None and before is not None and not r.members_told:
            joined, left = joins_and_leaves(before, after)
            events += list(joined.values()) + left
        if EventKind.ASSIGNMENT not in self._elsewhere and after is not None and not r.members_told:
            events += [e for e in _assignment_changes(before or {}, after, r.mark)
                       if r.own_id is None or getattr(e, "member_id", None) != r.own_id]
        reason = explain(before, after, r.reason if r.reason is not None else self._probe.reason)
        hidden = [] if r.epochs is not None or r.keep_round else unseen_generations(
            was.mark, r.mark)
        if hidden:   # rounds the broker completed between two looks: told, figures unknown
            events += [unseen_round(g, ended, was.mark, r.mark) for g in hidden]
            before = None   # the members at the generation before this round: not seen
        summary: dict[str, Any] = dict(
            from_generation=hidden[-1] if hidden else was.mark, to_generation=r.mark,
            started=None if began is None else iso_ts(began), ended=iso_ts(ended),
            members_before=None if before is None else sorted(before),
            members_after=None if after is None else sorted(after),
            moved_partitions=_moved(before, after), reason=reason,
            **members_after(after),
            **duration.fields(), **self._cost(desc, after, ended, unseen))
        if after is not None and _has_tasks(after):
            events.append(TaskRebalanced(**summary, tasks={
                m: task_dict(s.tasks or frozenset()) for m, s in sorted(after.items())}))
        else:
            events.append(Rebalanced(**summary))
        # what the fold holds once this is told; the next round may have begun (keep_round,
        # passed)
        self._start.settled(FromPoint(after, r.mark), self._round.under_way)
        if r.reason is None:
            self._probe.reason = None
        return self._told(events)

    def _cost(self, desc: GroupDescription | None, after, ended: float, unseen: bool) -> dict:
        """What the round cost (observe.unowned) and, for epoch groups, who held it up
        (observe.convergence.Behind); classic groups: no member's own progress is seen."""
        epochs = desc is not None and desc.group_epoch is not None
        eager = not epochs and "cooperative" not in ((desc.protocol if desc else None) or "")
        figures = self._unowned.settle(after, ended, eager=eager, converged=epochs,
                                       seen_whole=not unseen, desc=desc,
                                       changes_only=self._round.changes_only)
        slowest, after_ms, held_ms = self._behind.settle() if epochs else (None, None, None)
        return {**figures.fields(), "slowest_member": slowest, "slowest_member_ms": after_ms,
                "slowest_member_held_ms": held_ms}


# what the story does on a move judged of a look (story_stale), beside making it
_ON_MOVE: dict[Move | None, Callable[[RebalanceStory, bool], list[Event]]] = {
    Move.DROP: RebalanceStory._restore,
    Move.RESTORE: RebalanceStory._restore,
    Move.SETTLE_HELD: RebalanceStory._settle_held,
}

_HANDLERS: dict[type, Callable[..., list[Event]]] = {
    obs.Seen: RebalanceStory._seen,
    obs.Missing: RebalanceStory._missing,
    obs.Appeared: RebalanceStory._appeared,
    obs.ContactLost: RebalanceStory._gap,
    obs.ContactRegained: lambda story, o: [],
    obs.ContactLate: RebalanceStory._gap,
    obs.StateSeen: lambda story, o: story._change_state(o.state, o.at, rounds=False),
    obs.BeforeJoin: RebalanceStory._before_join,
    obs.MemberState: RebalanceStory._member_state,
    obs.RebalanceNoticed: RebalanceStory._noticed,
    obs.MemberSynced: RebalanceStory._synced,
    obs.GenerationDescribed: RebalanceStory._described,
}
