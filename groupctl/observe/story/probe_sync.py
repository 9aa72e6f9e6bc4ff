"""The classic probe's own member as the story hears it (observe/story/story.py): the reason
it noticed a round (RebalanceNoticed), the generation it synced (MemberSynced), held until
the describe of that generation (GenerationDescribed) gives the members after it. Round
bookkeeping of the probe alone: the group's state is the story's told fold."""
from __future__ import annotations

from dataclasses import dataclass, replace

from ..reads.model import GroupDescription
from ..sources import observations as obs
from .round import SettledRound


@dataclass(frozen=True)
class _Pending:
    """A generation the probe's member synced, waiting for its describe."""
    generation: int
    started: float | None
    ended: float
    reason: str | None
    leader_view: GroupDescription | None
    own_id: str | None


class ProbeSync:
    __slots__ = ("reason", "_pending")   # one per story: 100,000 at fleet size

    def __init__(self) -> None:
        self.reason: str | None = None   # how the member noticed the round under way
        self._pending: _Pending | None = None

    def noticed(self, o: obs.RebalanceNoticed) -> None:
        if o.reason:
            self.reason = o.reason

    def synced(self, o: obs.MemberSynced, started: float | None) -> None:
        """`started`: when the round was first seen under way (None: not seen)."""
        self._pending = _Pending(o.generation, started, o.at,
                                 self.reason or o.reason_if_unnoticed, o.leader_view,
                                 o.member_id or None)
        self.reason = None

    def described(self, o: obs.GenerationDescribed
                  ) -> tuple[GroupDescription | None, SettledRound] | None:
        """The synced generation's round, with the members after it (the leader's view of
        assignments is exact); None when `o` is not of the generation waiting."""
        p = self._pending
        if p is None or p.generation != o.generation:
            return None
        self._pending = None
        after, leader = o.desc if o.desc is not None else p.leader_view, p.leader_view
        if o.desc is not None and leader is not None:
            exact = {m.member_id: m.assignment for m in leader.members}
            after = replace(o.desc, members=[
                replace(m, assignment=exact[m.member_id]) if m.member_id in exact else m
                for m in o.desc.members])
        return after, SettledRound(o.generation, started=p.started, ended=p.ended,
                                   reason=p.reason, own_id=p.own_id, keep_round=True)
