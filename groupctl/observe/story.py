"""One rebalance story: successive snapshots of a group -> the events of DESIGN §4.

The probe (coordinator/probe.py, through its ProbeView) and the passive watcher both feed a
RebalanceStory, so they tell the same story the same way. Inputs are observe.model
GroupDescriptions and the times they were taken (from an injected clock):

- `baseline(desc)`: the group before the story starts (no events).
- `state(state, ...)`: a group state seen (by a describe, or implied by the probe's own
  member state) -> `state` when it changed; a rebalancing state marks the start of a round.
- `settled(desc, generation=..., group_epoch=..., ...)`: a settled generation (classic) or
  epoch (KIP-848) with its members and their assignments (desc None: not known) ->
  `generation` / `epoch` (when reported here), `member_joined` / `member_left`, per-member
  `assignment` diffs (when reported here), and one `rebalance` summary with
  `moved_partitions` when both sides' assignments are known (else null).
- `observe(desc)`: a watcher's poll; `state`, then `settled` once a Stable/ Empty group shows
  a generation or epoch not seen yet.

The probe's own member reports its generation and its own assignment (richer: leader,
added/revoked as it saw them), so the probe's story is built with report_generations and
report_assignments off.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

from ..events import (
    AssignmentChanged, EpochChanged, Event, GenerationStarted, MemberJoined, MemberLeft,
    Rebalanced, StateChanged, iso_ts, moved_partitions, tp_list,
)
from .convergence import Convergence
from .model import CONSUMER, REBALANCING_STATES, GroupDescription, Member
from .reasons import explain

SETTLED_STATES = ("Stable", "Empty")


@dataclass(frozen=True)
class MemberSnapshot:
    """A member as the story remembers it between snapshots."""

    member_id: str
    instance_id: str | None
    client_id: str | None
    host: str | None
    assignment: dict[str, frozenset[int]] | None   # None: not known
    topics: tuple[str, ...] | None = None            # subscribed topics; None: not known

    @classmethod
    def of(cls, m: Member) -> "MemberSnapshot":
        asg = None if m.assignment is None else {
            tp.topic: frozenset(tp.partitions) for tp in m.assignment if tp.partitions}
        topics = (m.subscription or {}).get("topics")
        return cls(m.member_id, m.instance_id, m.client_id or None, m.host or None, asg,
                   None if topics is None else tuple(sorted(topics)))

    def identity(self) -> dict:
        return {"member_id": self.member_id, "instance_id": self.instance_id,
                "client_id": self.client_id, "host": self.host}


def members_of(desc: GroupDescription | None) -> dict[str, MemberSnapshot] | None:
    if desc is None:
        return None
    return {m.member_id: MemberSnapshot.of(m) for m in desc.members}


class RebalanceStory:
    """Follows one group from snapshot to snapshot; each input returns the new events."""

    def __init__(self, group: str, *, clock: Callable[[], float] = time.time,
                 report_generations: bool = True, report_assignments: bool = True):
        self.group = group
        self.clock = clock
        self.report_generations = report_generations
        self.report_assignments = report_assignments
        self.members: dict[str, MemberSnapshot] | None = None   # as of the last settled one
        self.generation: int | None = None          # the last settled generation / epoch
        self.group_state: str | None = None
        self.round_started: float | None = None
        self.reason: str | None = None
        self.epochs: tuple | None = None            # consumer groups: (group, assignment)
        self.convergence = Convergence()            # consumer groups: member by member

    # ---- inputs --------------------------------------------------------------------------
    def baseline(self, desc: GroupDescription | None) -> None:
        """The group before the story starts (taken while it was settled), or None."""
        if desc is not None and desc.state in SETTLED_STATES:
            self.members = members_of(desc)

    def note_reason(self, reason: str | None) -> None:
        """Why the current (or next) rebalance happened, when the observer knows."""
        if reason:
            self.reason = reason

    def state(self, state: str | None, *, at: float | None = None,
              member_state: str | None = None) -> list[Event]:
        if state is None or state == self.group_state:
            return []
        at = self.clock() if at is None else at
        # a round starts on entering PreparingRebalance (again: a failed SyncGroup sends the
        # probe back to joining), or on any rebalancing state first seen
        if state == "PreparingRebalance" or (
                state in REBALANCING_STATES and self.group_state not in REBALANCING_STATES):
            self.round_started = at
        event = StateChanged(state, self.group_state, member_state)
        self.group_state = state
        return [event]

    def settled(self, desc: GroupDescription | None, *, generation: int | None,
                started: float | None = None, ended: float | None = None,
                reason: str | None = None, group_epoch: int | None = None,
                assignment_epoch: int | None = None, announce: bool = True,
                members_told: bool = False) -> list[Event]:
        """A settled generation (or epoch): members and assignments from `desc` (None: not
        known). `started`/`ended` default to the round's start and now. The reason is what
        changed between the members before and after (reasons.explain); `reason` (or one
        noted) is how the observer noticed, used when the members are not known.
        `announce=False`: the `epoch` event was already told (the watcher tells each
        epoch as it moves). `members_told`: members joined / left and their assignments
        were already told as the snapshots showed them (KIP-848: observe.convergence)."""
        ended = self.clock() if ended is None else ended
        explicit_round = started
        started = started if started is not None else (
            self.round_started if self.round_started is not None else ended)
        before, after = self.members, members_of(desc)
        events: list[Event] = []
        if self.report_generations and announce:
            if group_epoch is not None:
                events.append(EpochChanged(group_epoch, assignment_epoch))
            else:
                events.append(GenerationStarted(generation, desc.protocol if desc else None,
                                                members=None if after is None else sorted(after)))
        if after is not None and before is not None and not members_told:
            events += [MemberJoined(**after[m].identity()) for m in sorted(set(after) - set(before))]
            events += [MemberLeft(**before[m].identity()) for m in sorted(set(before) - set(after))]
        if self.report_assignments and after is not None and not members_told:
            events += _assignment_changes(before or {}, after, generation)
        events.append(Rebalanced(
            from_generation=self.generation, to_generation=generation,
            started=iso_ts(started), ended=iso_ts(ended),
            duration_ms=int(round((ended - started) * 1000)),
            members_before=None if before is None else sorted(before),
            members_after=None if after is None else sorted(after),
            moved_partitions=_moved(before, after),
            reason=explain(before, after, reason if reason is not None else self.reason),
            assignments=None if after is None else {
                m: tp_list(s.assignment) for m, s in sorted(after.items())}))
        self.generation, self.members = generation, after
        if explicit_round is None:  # the round this snapshot ended (a caller that names
            self.round_started = None  # the round itself may already follow the next one)
        if reason is None:
            self.reason = None
        return events

    def observe(self, desc: GroupDescription, *, at: float | None = None) -> list[Event]:
        """A watcher's snapshot: its state; for consumer groups each new (group, assignment)
        epoch; and a settled generation / epoch when new (classic: Stable or Empty with a
        generation not seen yet, or other members after a rebalancing state when the
        subscriptions carry no generation; consumer: every member's assignment equal to
        its target). Members replaced without a rebalance (a static member restarted with
        a new member id) are told as member_left / member_joined."""
        at = self.clock() if at is None else at
        events = self.state(desc.state, at=at)
        told = self.report_assignments and desc.type == CONSUMER   # KIP-848 reconciliation
        if desc.type == CONSUMER or desc.group_epoch is not None:
            events += self._epoch(desc, at)
        if told:   # each member as it converges, with its reconciliation time
            self.convergence.seed(self.members)
            events += self.convergence.observe(desc, at)
        if desc.state not in SETTLED_STATES or not _converged(desc):
            return events
        now = members_of(desc)
        mark = desc.group_epoch if desc.group_epoch is not None else desc.generation
        if self.generation is None and self.members is None:
            self.generation, self.members = mark, now   # the first look
            return events
        if mark is not None and mark != self.generation or mark is None and (
                self.round_started is not None or set(now) != set(self.members or {})
                and not _replaced_in_place(self.members or {}, now)):
            return events + self.settled(desc, generation=mark, ended=at,
                                         group_epoch=desc.group_epoch,
                                         assignment_epoch=desc.assignment_epoch,
                                         announce=desc.group_epoch is None, members_told=told)
        if told:
            self.members = now   # joins and leaves without a new epoch were told already
        elif self.members is not None and _replaced_in_place(self.members, now):
            before, self.members = self.members, now
            events += [MemberLeft(**before[m].identity()) for m in sorted(set(before) - set(now))]
            events += [MemberJoined(**now[m].identity()) for m in sorted(set(now) - set(before))]
        return events

    def _epoch(self, desc: GroupDescription, at: float) -> list[Event]:
        epochs = (desc.group_epoch, desc.assignment_epoch)
        if epochs == self.epochs:
            return []
        first, self.epochs = self.epochs is None, epochs
        if first:
            return []
        if self.round_started is None:
            self.round_started = at   # the epoch moved between two polls
        return [EpochChanged(*epochs)]


def _converged(desc: GroupDescription) -> bool:
    """Consumer groups: the assignment epoch caught up with the group epoch and every
    member holds its target assignment. Other types: always."""
    if desc.group_epoch is None:
        return True
    if desc.assignment_epoch != desc.group_epoch:
        return False
    return all(m.target_assignment is None or
               {(t.topic, p) for t in m.assignment or () for p in t.partitions}
               == {(t.topic, p) for t in m.target_assignment for p in t.partitions}
               for m in desc.members)


def _replaced_in_place(before: dict, after: dict) -> bool:
    """Only static members changed member id (same instance ids, no one else moved)."""
    gone = [before[m] for m in set(before) - set(after)]
    new = [after[m] for m in set(after) - set(before)]
    return bool(gone) and all(m.instance_id for m in gone + new) and sorted(
        m.instance_id for m in gone) == sorted(m.instance_id for m in new)


def _known(members: dict[str, MemberSnapshot] | None) -> bool:
    return members is not None and all(s.assignment is not None for s in members.values())


def _moved(before, after) -> int | None:
    if not (_known(before) and _known(after)):
        return None
    return moved_partitions({m: s.assignment for m, s in before.items()},
                            {m: s.assignment for m, s in after.items()})


def _assignment_changes(before: dict[str, MemberSnapshot], after: dict[str, MemberSnapshot],
                        generation: int | None) -> list[Event]:
    out = []
    for mid, now in sorted(after.items()):
        was = before.get(mid)
        old = None if was is None else was.assignment
        if was is not None and old == now.assignment:
            continue
        added = revoked = None
        if now.assignment is not None and (old is not None or was is None):
            old = old or {}
            added = tp_list({t: p - old.get(t, frozenset()) for t, p in now.assignment.items()})
            revoked = tp_list({t: p - now.assignment.get(t, frozenset()) for t, p in old.items()})
        out.append(AssignmentChanged(mid, generation, tp_list(now.assignment), added, revoked))
    return out
