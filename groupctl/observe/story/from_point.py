"""Where a round is told from (observe/story/story.py): the members and the generation (or
epoch) at its start. The group's members and generation are kept in one place, the fold
of the events the story told (state/reducer.py GroupStatus); the story reads them from
there. A round under way is told against the group as it stood when the round began,
while the fold moves on (a look after lost contact retells the group before the round
across the gap settles; KIP-848 members are told one by one as they converge), so the
story holds that point, a FromPoint, from the round's start until it settles, and no
longer."""
from __future__ import annotations

from dataclasses import dataclass, replace

from ...events import tp_map
from ..state.reducer import GroupStatus, MemberStatus
from .story_data import MemberSnapshot, task_set


@dataclass(frozen=True, slots=True)
class FromPoint:
    """The members (None: not known) and the generation or epoch (`mark`) a round is told
    from. `until_settled`: held until a round settles, also between rounds (the group as
    it was before a new coordinator's view of its past, story_stale; a group known new)."""
    members: dict[str, MemberSnapshot] | None
    mark: int | None
    until_settled: bool = False


def member_of(m: MemberStatus) -> MemberSnapshot:
    """A member as the fold holds it, in the form the story compares."""
    asg = None if m.assignment is None else {
        t: frozenset(ps) for t, ps in tp_map(m.assignment).items()}
    return MemberSnapshot(m.member_id, m.instance_id, m.client_id, m.host, asg,
                          None if m.subscription is None else tuple(m.subscription),
                          task_set(m.tasks))


def told_point(status: GroupStatus) -> FromPoint:
    """The group as told: its members (None until known) and its generation, or its group
    epoch for the epoch-counting types."""
    members = {mid: member_of(m) for mid, m in status.members.items()} \
        if status.members_known else None
    mark = status.group_epoch if status.group_epoch is not None else status.generation
    return FromPoint(members, mark)


class RoundStart:
    """One story's point its rounds are told from: `held` while a round is under way (or
    `until_settled`), otherwise the group as told before the observation being judged,
    read from the fold once (`before`) before the observation's first event changes it."""
    __slots__ = ("held", "members_then", "_pre", "_status")

    def __init__(self, status: GroupStatus):
        self.held: FromPoint | None = None
        self._pre: FromPoint | None = None
        self._status = status
        self.members_then: dict[str, MemberStatus] = status.members

    def begin(self) -> None:
        """A new observation: the group as told before it is read afresh. `members_then`:
        the fold's members as they stand now (a snapshot or a group gone replaces them, so
        they stay as told before the observation until its members' own events)."""
        self._pre = None
        self.members_then = self._status.members

    def before(self) -> FromPoint:
        if self.held is not None:
            return self.held
        if self._pre is None:
            self._pre = told_point(self._status)
        return self._pre

    def start(self) -> None:
        """A round begins: it is told from the group as it stands before this observation."""
        if self.held is None:
            self.held = self.before()

    def rebase(self, members: dict) -> None:
        """The members the next round is told from, changed without a round (told already)."""
        if self.held is not None:
            self.held = replace(self.held, members=members)
        else:
            self._pre = replace(self.before(), members=members)

    def settled(self, point: FromPoint, under_way: bool) -> None:
        """A round settled at `point` (what the fold holds once it is told); `under_way`:
        the next one has begun already."""
        if under_way:
            self.held = point
        else:
            self.held, self._pre = None, point

    def done(self, under_way: bool) -> None:
        """The end of a look: no round under way, the fold is where the next one starts."""
        if self.held is not None and not self.held.until_settled and not under_way:
            self.held = None
