"""A round's life as the story sees it through looks (describe polls, record timestamps),
and what its duration is known to be.

The states and the legal moves between them are data (MOVES), each move with its reason:

    SETTLED ──look shows a round begin──────────> SEEN_STARTING
    SETTLED ──first look / look after a gap
              shows one under way───────────────> UNDER_WAY_UNSEEN
    SEEN_STARTING / UNDER_WAY_UNSEEN ──settled──> SETTLED   (its Duration told)
    SEEN_STARTING / UNDER_WAY_UNSEEN ──undone───> SETTLED   (no round came of it)
    SEEN_STARTING ──started again───────────────> SEEN_STARTING (PreparingRebalance again)

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

from ...events import Rebalanced, iso_ts
from ..reads.model import GroupDescription


class RoundState(str, Enum):
    SETTLED = "settled"                     # no round under way
    SEEN_STARTING = "seen_starting"         # a look showed it begin
    UNDER_WAY_UNSEEN = "under_way_unseen"   # under way at the first look or after a gap


class Basis(str, Enum):
    """How a published figure is known."""
    EXACT = "exact"
    INTERVAL = "interval"
    LOWER_BOUND = "lower_bound"
    UNKNOWN = "unknown"


S = RoundState
# (from, to) -> why the story may make that move
MOVES: dict[tuple[RoundState, RoundState], str] = {
    (S.SETTLED, S.SEEN_STARTING): "a look shows a round the look before did not",
    (S.SETTLED, S.UNDER_WAY_UNSEEN): "the first look (or the first after a gap) shows a round "
                                     "under way",
    (S.SEEN_STARTING, S.SEEN_STARTING): "the round begins again (PreparingRebalance again)",
    (S.UNDER_WAY_UNSEEN, S.SEEN_STARTING): "a look shows a new round begin",
    (S.SEEN_STARTING, S.UNDER_WAY_UNSEEN): "the first look after a gap shows a round begin: "
                                           "which round is not known",
    (S.UNDER_WAY_UNSEEN, S.UNDER_WAY_UNSEEN): "the first look after a gap shows a round "
                                              "begin: which round is not known",
    (S.SEEN_STARTING, S.SETTLED): "a look shows the round settled",
    (S.UNDER_WAY_UNSEEN, S.SETTLED): "a look shows the round settled",
}


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
    `undo` are the moves."""

    def __init__(self) -> None:
        self.state = RoundState.SETTLED
        self.first_look: float | None = None     # the first look that showed the round
        self.look_before: float | None = None    # the look before it (None: not bounded)
        self.last_look: float | None = None      # the latest look
        self.previous_look: float | None = None  # the look before the latest
        self.after_gap = False                   # the latest look is the first after a gap
        self.changes_only = False                # looks come only with a change (records)
        self.reason: str | None = None           # the last move's

    @property
    def under_way(self) -> bool:
        return self.state != RoundState.SETTLED

    @property
    def start_unseen(self) -> bool:
        """Its start was not seen: under way at the first look or the first after a gap,
        or (settled) settled at such a look."""
        if self.state == RoundState.SETTLED:
            return self.after_gap or self.previous_look is None
        return self.state == RoundState.UNDER_WAY_UNSEEN

    def _move(self, to: RoundState) -> None:
        reason = MOVES.get((self.state, to))
        if reason is None:
            raise ValueError(f"no move of a round from {self.state.value} to {to.value}")
        self.state, self.reason = to, reason

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
        was = self.state
        self._move(RoundState.SEEN_STARTING if seen else RoundState.UNDER_WAY_UNSEEN)
        self.first_look = at
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
        if self.state == RoundState.SETTLED:
            return between_looks
        start, before = self.first_look, self.look_before
        assert start is not None
        if self.changes_only and start == ended:   # one change shows it begun and over
            self._move(RoundState.SETTLED)
            return between_looks
        if self.changes_only:   # began at its first look, ended at this one
            self._move(RoundState.SETTLED)
            if before is None:
                return Duration.at_least(_ms(ended - start))
            return Duration.exact(_ms(ended - start))
        low = 0 if before_end is None or before_end < start else _ms(before_end - start)
        self._move(RoundState.SETTLED)
        if before is None:   # under way at the very first look: no bound above
            return Duration.at_least(low)
        return Duration.between(low, _ms(ended - before))

    def settle_round(self, ended: float) -> tuple[float | None, Duration, bool]:
        """settle(), with when a look saw the round begin (None: none did, or the look
        that showed it begun showed it over) and whether its start went unseen."""
        unseen = self.start_unseen
        began = self.first_look if self.state == RoundState.SEEN_STARTING else None
        duration = self.settle(ended)
        return (None if began == ended else began), duration, unseen

    def undo(self) -> None:
        """The round came to nothing (a new coordinator loaded the group as before it)."""
        if self.state != RoundState.SETTLED:
            self._move(RoundState.SETTLED)


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
