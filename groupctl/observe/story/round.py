"""A round's life as the story sees it through looks (describe polls, record timestamps),
and what its duration is known to be.

The states and the legal moves between them are data (MOVES: each named Move from each
state, where it goes and its reason):

    SETTLED ──BEGIN: look shows a round begin───> SEEN_STARTING
    SETTLED ──BEGIN_UNSEEN: first look / look
              after a gap shows one under way───> UNDER_WAY_UNSEEN
    SEEN_STARTING / UNDER_WAY_UNSEEN ──SETTLE───> SETTLED   (its Duration told)
    SEEN_STARTING ──UNDO (guard: undone)────────> SETTLED   (no round came of it)
    SEEN_STARTING ──BEGIN: started again────────> SEEN_STARTING (PreparingRebalance again)
    SEEN_STARTING / UNDER_WAY_UNSEEN ──SETTLE, then BEGIN at the first look of the next
          group epoch (the records: its members reached its target after the next
          bump; settle_passed)──────────────> SEEN_STARTING
    any ──HOLD: a new coordinator's settled look
          differs from what the story holds─────> HELD      (story_stale.py judges each look)
    HELD ──HOLD: the looks stay alike───────────> HELD
    HELD ──DROP: a later look shows a member id
           the held look lacked: the past───────> the round beneath (held over, going on)
    HELD ──SETTLE_HELD: anything else, or
           STALE_S up: the held look was true───> SETTLED   (told at its own time)
    HELD ──FORGET: the group missing / retyped──> the round beneath
    any but HELD ──RESTORE: a member of a group
           gone missing shows again─────────────> the same (told against the group as was)

A held look sits over the round (`beneath`): the round's own moves go on under it, and
its Duration, when the held look settles it, is the round's.

A look is a sample: a round seen starting at look t_s (the look before, t_p, showed no
round) and seen settled at look t_e (the look before, t_e', still showed it under way)
began in (t_p, t_s] and ended in (t_e', t_e]: its duration lies in
[t_e' - t_s, t_e - t_p], never 0 for a round that took time. Its basis (Basis) says how
the figure is known: exact (the member's own times), interval (both ends measured to the
looks), lower_bound (its start not seen: under way at the first look), unknown.

A classic group's generation that jumps by more than one between two looks hides rounds
the broker completed between them (`unseen_generations`): each is a round, its figures
unknown.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Protocol

from ...events import Rebalanced, iso_ts
from ..reads.model import GroupDescription


class Shaped(Protocol):
    """What a round is told from, as story_stale.shape gives it (story_stale.Kept)."""
    @property
    def shape(self) -> tuple: ...


class RoundState(str, Enum):
    SETTLED = "settled"                     # no round under way
    SEEN_STARTING = "seen_starting"         # a look showed it begin
    UNDER_WAY_UNSEEN = "under_way_unseen"   # under way at the first look or after a gap
    HELD = "held"   # a new coordinator's settled look, held over the round until judged


class Move(str, Enum):
    """The moves of a round, by name (MOVES: from where each goes, and why)."""
    BEGIN = "begin"                 # a look shows a round begin
    BEGIN_UNSEEN = "begin_unseen"   # the first look (after a gap) shows one under way
    SETTLE = "settle"               # a look shows it settled: its Duration told
    UNDO = "undo"                   # no round came of it (guard: RoundClock.undone)
    HOLD = "hold"                   # a new coordinator's settled look is held (story_stale)
    DROP = "drop"                   # the held look was the past: dropped
    SETTLE_HELD = "settle_held"     # the held look was true: settled at its own time
    RESTORE = "restore"             # a look shows again a member of a group gone missing
    FORGET = "forget"               # the held look goes with the group (missing, retyped)


class Basis(str, Enum):
    """How a published figure is known."""
    EXACT = "exact"
    INTERVAL = "interval"
    LOWER_BOUND = "lower_bound"
    UNKNOWN = "unknown"


S = RoundState
_GAP = "the first look after a gap shows a round begin: which round is not known"
_PAST = ("a later look showed a member id the held look lacked: it was the past, dropped; "
         "the round beneath goes on")
_GONE = "the group went missing or changed type: the held look goes with it"
_BACK = ("a look shows again a member of the group gone missing: the group as it was "
         "(its Missing was the new coordinator's past)")
# (from, move) -> (to, why the story may make that move); to None: back to the round the
# held look was held over (RoundClock.beneath), which goes on under it meanwhile
MOVES: dict[tuple[RoundState, Move], tuple[RoundState | None, str]] = {
    (S.SETTLED, Move.BEGIN): (S.SEEN_STARTING, "a look shows a round the look before did not"),
    (S.SEEN_STARTING, Move.BEGIN): (S.SEEN_STARTING,
                                    "the round begins again (PreparingRebalance again)"),
    (S.UNDER_WAY_UNSEEN, Move.BEGIN): (S.SEEN_STARTING, "a look shows a new round begin"),
    (S.SETTLED, Move.BEGIN_UNSEEN): (S.UNDER_WAY_UNSEEN, "the first look (or the first "
                                     "after a gap) shows a round under way"),
    (S.SEEN_STARTING, Move.BEGIN_UNSEEN): (S.UNDER_WAY_UNSEEN, _GAP),
    (S.UNDER_WAY_UNSEEN, Move.BEGIN_UNSEEN): (S.UNDER_WAY_UNSEEN, _GAP),
    (S.SEEN_STARTING, Move.SETTLE): (S.SETTLED, "a look shows the round settled"),
    (S.UNDER_WAY_UNSEEN, Move.SETTLE): (S.SETTLED, "a look shows the round settled"),
    (S.SEEN_STARTING, Move.UNDO): (S.SETTLED, "a round seen starting, a gap in contact, then "
                                   "the group exactly as before it: the new coordinator "
                                   "loaded its last stored generation; no round came of it"),
    **{(s, Move.HOLD): (S.HELD, "a new coordinator's settled look differs from what the "
                        "story holds: held until a later look judges it")
       for s in (S.SETTLED, S.SEEN_STARTING, S.UNDER_WAY_UNSEEN)},
    (S.HELD, Move.HOLD): (S.HELD, "the looks stay alike, within STALE_S: still held"),
    (S.HELD, Move.DROP): (None, _PAST),
    (S.HELD, Move.SETTLE_HELD): (S.SETTLED, "the looks stayed alike past STALE_S, or "
                                 "anything else came: the held look was true, settled "
                                 "at its own time"),
    (S.HELD, Move.FORGET): (None, _GONE),
    **{(s, Move.RESTORE): (s, _BACK) for s in (S.SETTLED, S.SEEN_STARTING,
                                                 S.UNDER_WAY_UNSEEN)},
}
# moves of the round itself: made beneath a held look, which stays held
_ROUND_MOVES = frozenset({Move.BEGIN, Move.BEGIN_UNSEEN, Move.SETTLE, Move.UNDO})


@dataclass(frozen=True)
class Duration:
    """A round's duration: `ms` the figure (exact; the middle of the interval; the lower
    bound), `min_ms` / `max_ms` the interval it lies in (None: not bounded that way)."""
    basis: Basis
    ms: int | None = None
    min_ms: int | None = None
    max_ms: int | None = None

    @staticmethod
    def exact(ms: int) -> Duration:
        return Duration(Basis.EXACT, ms, ms, ms)

    @staticmethod
    def between(low_ms: int, high_ms: int) -> Duration:
        low_ms, high_ms = max(0, low_ms), max(0, high_ms)
        if low_ms == high_ms:
            return Duration.exact(low_ms)
        return Duration(Basis.INTERVAL, (low_ms + high_ms + 1) // 2, low_ms, high_ms)

    @staticmethod
    def at_least(low_ms: int) -> Duration:
        if low_ms <= 0:   # a bound of nothing: not known
            return UNKNOWN_DURATION
        return Duration(Basis.LOWER_BOUND, low_ms, low_ms, None)

    def fields(self) -> dict:
        """The `rebalance` event's duration fields."""
        return {"duration_ms": self.ms, "duration_min_ms": self.min_ms,
                "duration_max_ms": self.max_ms, "duration_basis": self.basis.value,
                "duration_is_lower_bound": self.basis == Basis.LOWER_BOUND}


UNKNOWN_DURATION = Duration(Basis.UNKNOWN)


def _ms(seconds: float) -> int:
    return int(round(seconds * 1000))


class RoundClock:
    """One group's round as the looks show it: its state and the looks around its start
    and its end. `look(at)` before each look is judged; `start`, `under_way`, `settle`,
    `undone` and `make` (a new coordinator's held look, story_stale) are the moves."""

    def __init__(self) -> None:
        self.state = RoundState.SETTLED
        self.beneath = RoundState.SETTLED        # HELD: the round's own state under the look
        self.first_look: float | None = None     # the first look that showed the round
        self.look_before: float | None = None    # the look before it (None: not bounded)
        self.last_look: float | None = None      # the latest look
        self.previous_look: float | None = None  # the look before the latest
        self.after_gap = False                   # the latest look is the first after a gap
        self.changes_only = False                # looks come only with a change (records)
        self.reason: str | None = None           # the last move's
        # while a round is under way: the first look of each group epoch it moved on to,
        # with the look before it (where the next round began, should this one end after)
        self.epoch_looks: dict[int, tuple[float, float | None]] = {}

    @property
    def round(self) -> RoundState:
        """The round's own state (beneath a held look: the round it was held over)."""
        return self.beneath if self.state == RoundState.HELD else self.state

    @property
    def under_way(self) -> bool:
        return self.round != RoundState.SETTLED

    @property
    def start_unseen(self) -> bool:
        """Its start was not seen: under way at the first look or the first after a gap,
        or (settled) settled at such a look."""
        if self.round == RoundState.SETTLED:
            return self.after_gap or self.previous_look is None
        return self.round == RoundState.UNDER_WAY_UNSEEN

    def _move(self, move: Move) -> None:
        below = self.state == RoundState.HELD and move in _ROUND_MOVES
        at = self.beneath if below else self.state
        to, reason = MOVES.get((at, move), (None, None))
        if reason is None:
            raise ValueError(f"no move {move.value} of a round from {at.value}")
        to = self.beneath if to is None else to
        if below:   # the round goes on beneath the held look
            self.beneath, self.reason = to, reason
            return
        if to == RoundState.HELD and self.state != RoundState.HELD:
            self.beneath = self.state
        self.state, self.reason = to, reason

    def make(self, move: Move | None) -> None:
        """A move judged of a look (story_stale.StaleView; None: none). SETTLE_HELD is made
        by settle() as the story tells the held look: its duration is the round's beneath."""
        if move is not None and move != Move.SETTLE_HELD:
            self._move(move)

    def undone(self, kept: Shaped | None, now: tuple) -> bool:
        """UNDO's guard, and the move when it holds: a round seen starting, then a gap in
        contact (lost, or a round held through a restart: `kept`, what the round is told
        from; None: no gap), then a look showing `now` (story_stale.shape) the very
        members, assignments and generation of `kept`: the coordinator went (stopped,
        moved) mid-round and the next one loaded the group from its last stored
        generation. No generation came of the round (the broker logs no Stabilized line)."""
        if kept is None or self.state != RoundState.SEEN_STARTING or now != kept.shape:
            return False
        self._move(Move.UNDO)
        return True

    def look(self, at: float, *, changes_only: bool = False, after_gap: bool = False) -> None:
        """A look made at `at` (before the story judges it). `changes_only`: a look comes
        only when the group changed (the coordinator's records, at the broker's time), so
        the look that shows a change is its moment, exactly. `after_gap`: contact was lost
        since the last look (sources/contact.Looks). A late look needs nothing here: the
        look before it bounds the round as any look does."""
        self.changes_only = changes_only
        if self.last_look is None or at >= self.last_look:
            self.previous_look, self.last_look = self.last_look, at
        self.after_gap = after_gap and self.previous_look is not None

    def start(self, at: float) -> None:
        """A round begins at this look: seen beginning, or already under way at the first
        look or the first after a gap."""
        seen = self.previous_look is not None and not self.after_gap
        was = self.round
        self._move(Move.BEGIN if seen else Move.BEGIN_UNSEEN)
        self.first_look, self.epoch_looks = at, {}
        # the look before did not show this round begun: it began after that look (a gap
        # between the two included), unless a gap hides whether it is the round that
        # look showed under way
        self.look_before = self.previous_look if seen or was == RoundState.SETTLED else None

    def settle(self, ended: float) -> Duration:
        """The round settled at the look made at `ended`: its duration. A round never seen
        under way (settled at the very look that showed it) lasted between nothing and
        the time since the look before."""
        latest = self.last_look
        before_end = self.previous_look if latest == ended else (
            latest if latest is not None and latest < ended else None)
        # begun and over between the look before and this one
        between_looks = UNKNOWN_DURATION if before_end is None or before_end >= ended \
            else Duration.between(0, _ms(ended - before_end))
        if self.round == RoundState.SETTLED:
            self._settled()
            return between_looks
        start, before = self.first_look, self.look_before
        assert start is not None
        if self.changes_only and start == ended:   # one change shows it begun and over
            self._settled()
            return between_looks
        if self.changes_only:   # began at its first look, ended at this one
            self._settled()
            if before is None:
                return Duration.at_least(_ms(ended - start))
            return Duration.exact(_ms(ended - start))
        low = 0 if before_end is None or before_end < start else _ms(before_end - start)
        self._settled()
        if before is None:   # under way at the very first look: no bound above
            return Duration.at_least(low)
        return Duration.between(low, _ms(ended - before))

    def settle_round(self, ended: float) -> tuple[float | None, Duration, bool]:
        """settle(), with when a look saw the round begin (None: none did, or the look
        that showed it begun showed it over) and whether its start went unseen."""
        unseen = self.start_unseen
        began = self.first_look if self.round == RoundState.SEEN_STARTING else None
        duration = self.settle(ended)
        return (None if began == ended else began), duration, unseen

    def epoch_seen(self, epoch: int | None, at: float) -> None:
        """A look shows the group epoch moved on while a round is under way (the records:
        the bump's record): the moment the next round began, should this one end after it
        (settle_passed)."""
        if epoch is not None and self.under_way:
            self.epoch_looks.setdefault(epoch, (at, self.previous_look))

    def settle_passed(self, ended: float, epoch: int) -> tuple[float | None, Duration, bool]:
        """settle_round() of a round over at `ended` after the group epoch had moved past
        its own `epoch` (the records: the members reached its target after the next bump).
        The next round began at the first look that showed a later group epoch (BEGIN); a
        round whose beginning no look showed (under way at the first look) BEGIN_UNSEEN
        from the same look as before."""
        later = sorted((e, looks) for e, looks in self.epoch_looks.items() if e > epoch)
        first_look, settled = self.first_look, self.settle_round(ended)
        if later:
            self._move(Move.BEGIN)
            (self.first_look, self.look_before), self.epoch_looks = later[0][1], dict(later[1:])
        else:
            self._move(Move.BEGIN_UNSEEN)
            self.first_look, self.look_before = first_look, None
        return settled

    def _settled(self) -> None:
        """The round settles; a held look (settled at its own time) with it."""
        if self.state == RoundState.HELD:
            self._move(Move.SETTLE_HELD)
        elif self.state != RoundState.SETTLED:
            self._move(Move.SETTLE)


@dataclass(frozen=True)
class SettledRound:
    """How a settled round is told (story.RebalanceStory._settle)."""
    mark: int | None
    started: float | None = None
    ended: float | None = None
    reason: str | None = None
    epochs: tuple | None = None       # epoch groups: (group epoch, assignment epoch)
    announce: bool = True             # tell `generation` / `epoch` here
    members_told: bool = False        # joins, leaves, assignments told as they converged
    own_id: str | None = None         # the observer's own member: its assignment told elsewhere
    keep_round: bool = False          # the caller named the round: the next may have begun
    passed: bool = False              # over after the group epoch moved past `mark` (records)

    @staticmethod
    def of(desc: GroupDescription, mark: int | None, at: float, told: bool) -> SettledRound:
        """A look's round: settled at `at` at `mark`; `told`: its members told as they
        converged."""
        return SettledRound(mark, ended=at, epochs=None if desc.group_epoch is None else (
            desc.group_epoch, desc.assignment_epoch), announce=desc.group_epoch is None,
            members_told=told)

    def timed(self, clock: RoundClock, ended: float) -> tuple[float | None, Duration, bool]:
        """(seen starting at, its duration, its start unseen). A caller that names the
        round gives its own start (the probe's member: exact) and may follow the next
        round already: the clock is left as it is; a look's round settles on `clock`."""
        if self.passed and self.mark is not None:
            return clock.settle_passed(ended, self.mark)
        if self.keep_round:
            return self.started, UNKNOWN_DURATION if self.started is None else Duration.exact(
                _ms(ended - self.started)), False
        return clock.settle_round(ended)


def unseen_generations(before: int | None, after: int | None) -> list[int]:
    """The classic generations completed between two settled looks that showed `before`
    and then `after`: every generation in between (the broker's Stabilized / "is now
    empty" lines of each)."""
    if before is None or after is None or after - before <= 1:
        return []
    return list(range(before + 1, after))


def unseen_round(generation: int, by: float, last_seen: int | None, now: int | None
                  ) -> Rebalanced:
    """A round the broker completed between two looks (classic: the generation went from
    `last_seen` to `now`): it happened; when, how long and who took part are not known."""
    return Rebalanced(
        from_generation=generation - 1, to_generation=generation, started=None,
        ended=iso_ts(by), members_before=None, members_after=None, moved_partitions=None,
        reason=f"not seen: generation {last_seen} -> {now} between two looks",
        seen=False, **UNKNOWN_DURATION.fields())
