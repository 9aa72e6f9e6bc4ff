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
from .story_stale import Kept


@dataclass(frozen=True, slots=True)
class FromPoint:
    """The members (None: not known) and the generation or epoch (`mark`) a round is told
    from. `until_settled`: held until a round settles, also between rounds (the group as
    it was before a new coordinator's view of its past, story_stale; a group known new)."""
    members: dict[str, MemberSnapshot] | None
    mark: int | None
    until_settled: bool = False


def _fields(m: MemberStatus) -> tuple:
    """What the story compares of a member as the fold holds it. The fold sets a member's
    fields anew, never changes a list of them in place: these stay as they are now."""
    return (m.member_id, m.instance_id, m.client_id, m.host, m.assignment, m.subscription,
            m.tasks)


def _member(member_id, instance_id, client_id, host, assignment, subscription, tasks
            ) -> MemberSnapshot:
    asg = None if assignment is None else {t: frozenset(ps) for t, ps in tp_map(assignment).items()}
    return MemberSnapshot(member_id, instance_id, client_id, host, asg,
                          None if subscription is None else tuple(subscription), task_set(tasks))


def _mark(status: GroupStatus) -> int | None:
    """The group's generation, or its group epoch for the epoch-counting types."""
    return status.group_epoch if status.group_epoch is not None else status.generation


def told_point(status: GroupStatus) -> FromPoint:
    """The group as told: its members (None until known) and its generation or epoch."""
    members = {mid: _member(*_fields(m)) for mid, m in status.members.items()} \
        if status.members_known else None
    return FromPoint(members, _mark(status))


class RoundStart:
    """One story's point its rounds are told from: `held` while a round is under way (or
    `until_settled`), otherwise the group as told before the observation being judged,
    kept as it stood before the observation's first event changed the fold (`freeze`), and
    read on demand (`before`; `mark` alone costs nothing)."""
    __slots__ = ("held", "members_then", "_pre", "_frozen", "_status")

    def __init__(self, status: GroupStatus):
        self.held: FromPoint | None = None
        self._pre: FromPoint | None = None
        self._frozen: tuple | None = None   # (mark, each member's _fields or None: not known)
        self._status = status
        self.members_then: dict[str, MemberStatus] = status.members

    def begin(self) -> None:
        """A new observation: the group as told before it is read afresh. `members_then`:
        the fold's members as they stand now (a snapshot or a group gone replaces them, so
        they stay as told before the observation until its members' own events)."""
        self._pre = self._frozen = None
        self.members_then = self._status.members

    def freeze(self) -> None:
        """The observation's first event is about to be folded: the group as told before it
        is kept, as it is now."""
        if self.held is None and self._pre is None and self._frozen is None:
            s = self._status
            self._frozen = (_mark(s), [_fields(m) for m in s.members.values()]
                            if s.members_known else None)

    def mark(self) -> int | None:
        """before().mark, without reading the members."""
        if self.held is not None:
            return self.held.mark
        if self._pre is not None:
            return self._pre.mark
        return self._frozen[0] if self._frozen is not None else _mark(self._status)

    def before(self) -> FromPoint:
        if self.held is not None:
            return self.held
        if self._pre is None:
            if self._frozen is None:
                self._pre = told_point(self._status)
            else:
                mark, rows = self._frozen
                self._pre = FromPoint(None if rows is None else {r[0]: _member(*r) for r in rows},
                                      mark)
        return self._pre

    def kept(self) -> Kept | None:
        """What a round is told from, as story_stale compares it (None: members not known)."""
        was = self.before()
        return None if was.members is None else Kept(was.members, was.mark)

    def start(self) -> None:
        """A round begins: it is told from the group as it stands before this observation."""
        if self.held is None:
            self.held = self.before()

    def rebase(self, members: dict) -> None:
        """The members the next round is told from, changed without a round (told already)."""
        if self.held is not None:
            self.held = replace(self.held, members=members)
        else:
            self._pre = FromPoint(members, self.mark())

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
