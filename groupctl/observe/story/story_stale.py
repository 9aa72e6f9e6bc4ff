"""A coordinator that has just taken a group over may describe the group's past: the
story's guard against telling that as rebalances (observe/story.py asks it).

Kafka's group coordinator answers DescribeGroups (and the KIP-848 describes) from its last
*committed* offset of the group's __consumer_offsets partition (CoordinatorRuntime's
read operations), which after a leader change is the new leader's high watermark: it lags
the log end the group was loaded from until the followers fetch from the new leader. A
group whose last records are above it is described as it was before them: not there at
all (GROUP_ID_NOT_FOUND: Missing) or as an earlier stored state (the Empty record a new
classic group starts with: no members). Seen on the 3-broker lab (issue 21, 4 of 34 traced runs
of the coordinator failover test) when the coordinator stopped within half a second of
the group's first "Stabilized" line: the new leader logged "starts ... from offset 2 ...
high watermark 1" (Empty seen) or "high watermark 0" (Missing), "Loaded classic group G
with 1 members", and answered that past for 0.4-0.9 s; then it showed the group exactly
as the old coordinator had (the same member ids and assignments), and no node logged a
generation in between. Told as they came, those looks were rebalances to [] and back.

So, for classic groups (whose member ids never return: a dynamic member that left and
joins again gets a new id from the broker, and so does a static one), the story (not the
source: the looks are what the coordinator answered, and their states are told as they
come) holds back what it cannot trust yet:
- a settled look from another coordinator than the last look's that differs from what
  the story holds is not settled at once: the round's HELD state (round.py, move HOLD).
  While the looks stay alike it waits, at most STALE_S. A look showing again a member id
  the held look lacked proves the held look stale: it is dropped (DROP, then the look is
  told as usual). Anything else, or the time up, tells the held look first (SETTLE_HELD),
  then the look.
- after `Missing` the story forgets the group (a group created again is a new one) but
  keeps what it forgot: a look showing one of those member ids again restores it
  (RESTORE), so the look is told against the group as it was.
Epoch groups (KIP-848 consumer, share, streams) are not covered: their member ids do come
back (the client keeps its id across a rejoin), so an id proves nothing there.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from ..reads.model import CLASSIC, SETTLED_STATES, GroupDescription
from .round import Move

STALE_S = 10.0   # the longest a look from a new coordinator waits while the looks stay alike


def shape(members: dict | None, mark: Any) -> tuple:
    """What a settled look says of the group: its generation / epoch and each member's
    assignment (member id -> {topic: partitions})."""
    return (mark, tuple(sorted(
        (m, None if s.assignment is None else tuple(sorted(
            (t, tuple(sorted(ps))) for t, ps in s.assignment.items())))
        for m, s in (members or {}).items())))


def coordinator_id(desc: GroupDescription) -> Any:
    return (desc.coordinator or {}).get("id")


@dataclass(frozen=True)
class Kept:
    """What the story held before a look it could not trust yet."""
    members: dict
    generation: Any

    @property
    def shape(self) -> tuple:
        return shape(self.members, self.generation)


@dataclass(frozen=True)
class Held:
    """A settled look whose telling waits."""
    desc: GroupDescription
    at: float
    shape: tuple


class StaleView:
    """Judges each look of a group (`judge`): its verdict is a move of the round's table
    (round.MOVES: HOLD, DROP, SETTLE_HELD, RESTORE, FORGET; None: told as it comes)."""

    def __init__(self) -> None:
        self.kept: Kept | None = None
        self.held: Held | None = None
        self.coordinator: Any = None   # the last look's coordinator id

    def forgot(self, kept: Kept | None, classic: bool) -> Move | None:
        """The group went missing; `kept`: what the story forgot, kept if a classic group
        seen through a coordinator. A held look goes with it (FORGET): the story still
        holds what came before it."""
        if kept is None or not classic or self.coordinator is None:
            return None
        dropped, self.held = self.held is not None, None
        if kept.members:
            self.kept = kept
        return Move.FORGET if dropped else None

    def judge(self, desc: GroupDescription, members: dict, at: float,
              held_by: Callable[[], Kept | None]) -> Move | None:
        """What the story does with a look (`members`: members_of(desc)); `held_by()`:
        what the story holds. A look from another coordinator than the last look's may
        show the group's past."""
        cid = coordinator_id(desc)
        moved = None not in (cid, self.coordinator) and cid != self.coordinator
        self.coordinator = cid if cid is not None else self.coordinator
        if desc.type != CLASSIC:
            dropped = self.held is not None
            self.kept = self.held = None
            return Move.FORGET if dropped else None
        if self.held is None and self.kept is None and not moved:
            return None   # the usual look: nothing held, nothing kept, the same coordinator
        settled = desc.state in SETTLED_STATES
        now = shape(members, desc.generation) if settled else None
        if self.held is not None:
            if now == self.held.shape and at - self.held.at < STALE_S:
                return Move.HOLD
            assert self.kept is not None
            lacked = set(self.kept.members) - {m for m, _ in self.held.shape[1]}
            if lacked & set(members):
                self.held = None
                return Move.DROP   # the caller restores the group as kept (take_kept)
            return Move.SETTLE_HELD   # the caller takes the held look (take_held) first
        if self.kept is not None:   # after Missing
            if set(self.kept.members) & set(members):
                return Move.RESTORE
            self.kept = None
        story = held_by() if moved and now is not None else None
        if now is not None and story is not None and story.members and now != story.shape:
            self.kept, self.held = story, Held(desc, at, now)
            return Move.HOLD
        return None

    def take_kept(self) -> Kept:
        kept, self.kept = self.kept, None
        assert kept is not None
        return kept

    def take_held(self) -> Held:
        held, self.held, self.kept = self.held, None, None
        assert held is not None
        return held
