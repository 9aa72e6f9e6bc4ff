"""KIP-848 groups, member by member: each member's current assignment against its target as
they converge, and how long each member took to reconcile.

In a consumer group there is no global round: the broker sets every member's target at
once (a new assignment epoch) and each member reconciles on its own heartbeats (revoke what
it must, take what was freed, acknowledge). RebalanceStory.observe feeds every
ConsumerGroupDescribe snapshot here; this tells, as soon as a snapshot shows it:

- `member_joined` / `member_left` the first time a member is (no longer) in the group, so a
  member that joins a group which then never converges is still told;
- an `assignment` event for a member whenever its current assignment or its target
  changed, with two fields beyond §4's (`Converging`): `target` (its target assignment) and
  `reconciled_ms` on the snapshot where it reached its target: the time from the first
  snapshot that showed it away from its target to the first that showed it there. Null when
  no snapshot caught it away (it reconciled within one poll interval) or the start was not
  seen (it was already reconciling when the watch began).

A member is away from its target when its current assignment differs from it, or when its
target changed and its member epoch has not caught up with the assignment epoch yet; it is
back when both hold (assignment equal, epoch caught up). The epoch matters because a member
that still holds partitions pending revocation keeps its old member epoch, and a broker may
list only the partitions it keeps as its current assignment (Kafka 4.3.1 lists them all,
measured). An epoch bump that leaves a member's partitions and target alone is not told.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..events import (AssignmentChanged, Event, EventKind, MemberJoined, MemberLeft,
                      partition_changes, tp_list)
from .model import GroupDescription, Member, partition_map

Partitions = dict[str, frozenset[int]]


@dataclass(frozen=True)
class Converging(AssignmentChanged):
    """A consumer-group member's assignment as a snapshot showed it (§4 `assignment`, with
    `generation` the group epoch) plus its target and, once there, its reconciliation time."""
    KIND: ClassVar[str] = EventKind.ASSIGNMENT
    target: list[dict] | None = None
    reconciled_ms: int | None = None


@dataclass(frozen=True)
class _Told:
    """What was last told of a member."""
    identity: dict
    assigned: Partitions | None
    target: Partitions | None



def at_target(m: Member, assignment_epoch: int | None) -> bool:
    """The member holds its target and acknowledged it (unknown target: counted as there)."""
    target = partition_map(m.target_assignment)
    if target is None:
        return True
    caught_up = m.member_epoch is None or assignment_epoch is None or \
        m.member_epoch >= assignment_epoch
    return caught_up and partition_map(m.assignment) == target


def _identity(m: Member) -> dict:
    return {"member_id": m.member_id, "instance_id": m.instance_id,
            "client_id": m.client_id or None, "host": m.host or None}


class Convergence:
    """Follows the members of one KIP-848 group from snapshot to snapshot (module doc)."""

    def __init__(self):
        self.told: dict[str, _Told] | None = None   # None: no snapshot (or baseline) yet
        self.away_since: dict[str, float | None] = {}  # member -> first seen away (None: unseen)

    def seed(self, members: dict | None) -> None:
        """The members known before the first snapshot (observe.story MemberSnapshots, e.g.
        the group as described before the probe joined), assumed at their targets."""
        if self.told is None and members is not None:
            self.told = {mid: _Told(s.identity(), s.assignment, s.assignment)
                         for mid, s in members.items()}

    def observe(self, desc: GroupDescription, at: float) -> list[Event]:
        now = {m.member_id: m for m in desc.members}
        if self.told is None:   # the first look: remember, tell nothing
            self.told = {mid: self._remember(m) for mid, m in now.items()}
            self.away_since = {mid: None for mid, m in now.items()
                               if not at_target(m, desc.assignment_epoch)}
            return []
        events: list[Event] = []
        for mid in sorted(set(self.told) - set(now)):
            events.append(MemberLeft(**self.told.pop(mid).identity))
            self.away_since.pop(mid, None)
        for mid in sorted(now):
            events += self._member(now[mid], desc, at)
        return events

    def _member(self, m: Member, desc: GroupDescription, at: float) -> list[Event]:
        mid, told = m.member_id, self.told
        assert told is not None  # observe() calls _member after the first look
        events: list[Event] = []
        was = told.get(mid)
        if was is None:
            events.append(MemberJoined(**_identity(m)))
        now = self._remember(m)
        reconciled = None
        if mid in self.away_since:
            if at_target(m, desc.assignment_epoch):
                since = self.away_since.pop(mid)
                reconciled = None if since is None else int(round((at - since) * 1000))
        elif now.assigned != now.target and now.target is not None or (
                was is not None and now.target != was.target
                and not at_target(m, desc.assignment_epoch)):
            self.away_since[mid] = at   # a new target to reach (or one it is still short of)
        if was is None or (now.assigned, now.target) != (was.assigned, was.target) \
                or reconciled is not None:
            events.append(self._assignment(mid, desc.group_epoch, was, now, reconciled))
        told[mid] = now
        return events

    @staticmethod
    def _remember(m: Member) -> _Told:
        return _Told(_identity(m), partition_map(m.assignment), partition_map(m.target_assignment))

    @staticmethod
    def _assignment(mid: str, epoch: int | None, was: _Told | None, now: _Told,
                    reconciled: int | None) -> Converging:
        added, revoked = partition_changes(None if was is None else was.assigned, now.assigned,
                                           known_before=was is not None)
        return Converging(mid, epoch, tp_list(now.assigned), added, revoked,
                          target=tp_list(now.target), reconciled_ms=reconciled)
