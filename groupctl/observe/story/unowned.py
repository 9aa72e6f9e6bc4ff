"""What a rebalance cost: how long partitions went without an owner (issue 19).

The story (observe/story.py) hands every look whose assignments are all known to
`UnownedPartitions.look` and asks `settle` for the figures of each rebalance it tells:

- `unowned_partition_ms`: the sum, over partitions, of the time from leaving one member's
  assignment to entering the next one's, as the looks showed it (a partition may go
  unowned more than once in a round: its gaps add up);
- `unowned_partitions_max_ms`: the longest single partition's time; `unowned_longest`
  names the partitions with the longest times (wide output, --debug);
- `unowned_basis`: how far the figure can be trusted:
  * "measured": every gap was seen open and closed by looks (describe: within one poll
    interval per partition; records: the broker's own timestamps). Consumer, share and
    streams groups: from members' assignment changes. Cooperative classic groups: a
    revoked partition is unowned from the Stable generation that took it away to the one
    that gave it out again (their assignments are known only when Stable); read from the
    coordinator's records, a partition whose holder left the group goes to another member
    in one generation: it is unowned at least over that generation's sync phase (as eager's,
    below), and the round's basis is "lower_bound";
  * "upper_bound": eager classic groups, described. The coordinator voids every assignment
    when the round starts, but a member stops only when it hears so (its next heartbeat),
    which no observer sees: every partition given out counts as unowned for the whole
    window the observer knows holds the round (from the last look before it to the look
    that showed it over). `analyze` gives the clients' own figure from their logs;
    any other group whose partition went from one member to another between two looks
    (no look showed it unowned: a cooperative generation that revoked it shorter than a
    poll, a leaver's partitions handed on in one generation, a consumer group's round
    shorter than the interval): it was unowned for at most that window, and so is the
    round, each of its other gaps then counted from the last look that showed the
    partition held to the first that showed it held again (a witness measures a gap
    only when its looks saw both ends: a partition never seen unowned is no measured 0);
  * "lower_bound" for eager classic groups read from the coordinator's records: they hold
    no start of a round (the looks are the generations themselves, so the window between
    two looks is the time between two rounds, no bound of either). What they hold is the
    generation's sync phase: its join phase ended at the record's `current_state_timestamp`
    (the broker's "Stabilized" line: replay.JOINED) and its assignments were written at
    the record's time. Every member revoked all it held before it rejoined (eager) and
    gets its new assignment only from that write on, so each partition held before the
    round and given out by it was unowned at least over that phase (partitions nobody
    held before lost no owner: not counted). No such phase known (a record without the
    timestamp, or one older than the generation before): the figures are null;
  * "lower_bound": part of the round was not seen (it was under way at the first look, or
    contact was lost): gaps count from the first look that showed them;
  * "upper_bound" too when a gap opened or closed at a look answered late (a describe
    round held up for seconds: sources/contact.py): the group may have changed at any time
    since the look before, so every gap of the round counts from the last look that showed
    the partition held to the first that showed it held again.
- `unowned_unsubscribed`: partitions left without an owner that no live member subscribes
  to (its topic's last subscriber left, a subscription changed) are reported apart, as a
  list, and dropped: they are not summed forever.

A partition the looks never showed unowned (it moved from one member to the next between
two looks) is no 0: an upper bound over those looks (above), except from the records,
whose looks come only with a change (the move was at the write: the records' own rules
above tell what they hold). A static member's restart under a new member id is no move.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from ...events import tp_list
from ..reads.replay import JOINED
from ..sources.contact import Gap

MEASURED, UPPER_BOUND, LOWER_BOUND = "measured", "upper_bound", "lower_bound"
BASES = (MEASURED, UPPER_BOUND, LOWER_BOUND)
LONGEST_NAMED = 5        # partitions named in `unowned_longest`

TP = tuple   # (topic, partition)


@dataclass(frozen=True)
class UnownedFigures:
    """One rebalance's figures, as the event's fields."""
    total_ms: int | None = None
    max_ms: int | None = None
    basis: str | None = None
    longest: list[dict] | None = None        # [{"topic", "partition", "ms"}], longest first
    unsubscribed: list[dict] | None = None   # tp_list, reported apart

    def fields(self) -> dict:
        return {"unowned_partition_ms": self.total_ms,
                "unowned_partitions_max_ms": self.max_ms, "unowned_basis": self.basis,
                "unowned_longest": self.longest, "unowned_unsubscribed": self.unsubscribed}


def _held(members) -> dict[TP, frozenset[str]] | None:
    """Every partition some member holds, with its holders; None when any member's
    assignment is unknown."""
    if members is None or any(s.assignment is None for s in members.values()):
        return None
    out: dict[TP, set[str]] = {}
    for mid, s in members.items():
        for t, ps in s.assignment.items():
            for p in ps:
                out.setdefault((t, p), set()).add(mid)
    return {tp: frozenset(ms) for tp, ms in out.items()}


def _holders(members) -> dict[str, str]:
    """Each member id's holder: a static member (its instance id) holds its partitions
    across the member ids of its restarts."""
    return {mid: s.instance_id or mid for mid, s in members.items()}


def _subscribed(members) -> set[str] | None:
    """Topics some member subscribes to; None when any member's subscription is unknown."""
    if members is None or any(s.topics is None for s in members.values()):
        return None
    return {t for s in members.values() for t in s.topics or ()}


def _named(gaps: dict[TP, float]) -> list[dict]:
    ranked = sorted(gaps.items(), key=lambda kv: (-kv[1], kv[0]))[:LONGEST_NAMED]
    return [{"topic": t, "partition": p, "ms": _ms(s)} for (t, p), s in ranked]


def _ms(seconds: float) -> int:
    return int(round(seconds * 1000))


class UnownedPartitions:
    """Follows which partitions are held, look by look, for one group (module doc)."""

    def __init__(self):
        self._held: dict[TP, frozenset[str]] | None = None   # holders, at the last look
                                                 # with every assignment known
        self._who: dict[str, str] = {}           # ... each one's holder (_holders)
        self._bounded: dict[TP, float] = {}     # moved between two looks this round: at most
        self._since: dict[TP, float] = {}       # unowned since the first look that showed it
        self._held_at: dict[TP, float] = {}     # ... and the last look that showed it held
        self._opened_after: dict[TP, Gap] = {}  # opened at a look after lost contact / late
        self._upper: dict[TP, float] = {}       # closed gaps, from held to held again
        self._late = False                       # a gap opened or closed at a late look
        self._gaps: dict[TP, float] = {}        # closed gaps this round, seconds (summed)
        self._known_at: float | None = None     # the last look with every assignment known
        self._known_before: float | None = None  # the one before it
        self._held_prior: dict[TP, frozenset[str]] | None = None   # holders at that one
        self._before_round: float | None = None  # that look, as of the round's first unknown
        self._blind = False                      # contact lost since: gaps start unseen
        self._unknown_now = False                # the last look's assignments were unknown
        self._round_blind = False                # a look after lost contact this round

    def same_look(self, at: float) -> None:
        """A look equal to the last one: nothing moved, but the group was seen at `at` (as
        it was: a repeat of a look with unknown assignments shows none either)."""
        if self._known_at is not None and not self._unknown_now:
            self._known_at = at

    def look(self, members, at: float, gap: Gap = Gap.NONE) -> None:
        """A look at the group's members (story MemberSnapshots) and the gap before it
        (sources/contact.Gap); assignments not all known (a classic group rebalancing)
        tell nothing."""
        held = _held(members)
        self._unknown_now = held is None
        self._blind = self._blind or gap == Gap.LOST
        if held is None:
            if self._before_round is None:
                self._before_round = self._known_at
            return
        if self._held is not None:
            opened = [tp for tp in set(self._held) - set(held) if tp not in self._since]
            closed = set(held) & set(self._since)
            self._late = self._late or gap == Gap.LATE and bool(closed)
            for tp in opened:
                self._since[tp] = at
                self._held_at[tp] = at if self._known_at is None else self._known_at
                if gap in (Gap.LOST, Gap.LATE):   # its start not seen: whichever round ends it
                    self._opened_after[tp] = gap
            for tp in closed:
                self._gaps[tp] = self._gaps.get(tp, 0.0) + at - self._since.pop(tp)
                self._upper[tp] = self._upper.get(tp, 0.0) + at - self._held_at.pop(tp)
                after = self._opened_after.pop(tp, None)
                self._late = self._late or after == Gap.LATE
                self._round_blind = self._round_blind or after == Gap.LOST
            if self._known_at is not None:
                # held at both looks, by other members: it went from one to the next with
                # no look between that showed it unowned (a round shorter than the
                # interval, a classic round's unknown assignments, a late look). Unowned
                # for at most the window between the two looks, never a measured 0
                who = _holders(members)
                for tp in set(held) & set(self._held):
                    if not {who[m] for m in held[tp]} & {self._who[m] for m in self._held[tp]}:
                        self._bounded[tp] = self._bounded.get(tp, 0.0) + at - self._known_at
        if at != self._known_at or held != self._held:   # (a record's looks may share a ms)
            self._known_before, self._held_prior = self._known_at, self._held
        self._held, self._known_at, self._who = held, at, _holders(members)
        self._round_blind = self._round_blind or self._blind
        self._blind = False

    def settle(self, members, at: float, *, eager: bool, converged: bool,
               seen_whole: bool, desc=None, changes_only: bool = False) -> UnownedFigures:
        """The figures of the round settled at `at` with `members`, and a new round.
        `converged`: every member is at its target (epoch groups), so a partition nobody
        holds is one nobody is meant to; `seen_whole`: the round's start was seen; `desc`:
        the look that settled it (a record's tells its sync phase: module doc);
        `changes_only`: looks come only with a change (the coordinator's records), so a
        partition that went from one member to another between two looks did so at the
        write, and the time between the looks bounds nothing."""
        # eager: the round lies after the last look that showed the assignments before it
        self.look(members, at)
        started = self._before_round if self._before_round is not None else self._known_before
        blind, self._round_blind = self._round_blind or self._blind, False
        apart = self._unsubscribed(members, everything=converged)
        gaps, self._gaps, self._before_round = self._gaps, {}, None
        upper, self._upper, late, self._late = self._upper, {}, self._late, False
        bounded, self._bounded = self._bounded, {}
        if eager and desc is not None and JOINED in desc.extra:   # the coordinator's records
            return self._sync_phase(self._held_prior, self._known_before, members, at,
                                    desc.extra[JOINED], apart)
        if eager:
            return self._upper_bound(members, at, started, apart)
        basis = MEASURED if seen_whole and not blind else LOWER_BOUND
        if self._held is None:
            return UnownedFigures(unsubscribed=apart)
        if changes_only:
            bounded = {}
        if late and basis == MEASURED:   # a gap's end at a late look: the whole window
            basis, gaps = UPPER_BOUND, upper
        if bounded and basis != LOWER_BOUND:
            # a partition no look showed unowned is bounded by its looks' window, and so is
            # every other one of the round: each from the look that showed it held to the
            # one that showed it held again (a lower bound stays one: those add at least 0)
            basis, gaps = UPPER_BOUND, {tp: upper.get(tp, 0.0) + bounded.get(tp, 0.0)
                                        for tp in {*upper, *bounded}}
        if desc is not None and JOINED in desc.extra:   # cooperative, from the records
            handed = self._from_leavers(self._held_prior, self._known_before, members, at,
                                        desc.extra[JOINED], gaps)
            if handed is None:
                return UnownedFigures(unsubscribed=apart)
            if handed:
                basis, gaps = LOWER_BOUND, {**gaps, **handed}
        total = sum(gaps.values())
        return UnownedFigures(_ms(total), _ms(max(gaps.values(), default=0.0)), basis,
                              _named(gaps), apart)

    def _upper_bound(self, members, at: float, started: float | None,
                     apart: list[dict] | None) -> UnownedFigures:
        """Eager: every partition given out was revoked at some point of the round."""
        held = _held(members)
        if held is None or started is None:
            return UnownedFigures(unsubscribed=apart)
        window = at - started
        return UnownedFigures(_ms(window * len(held)), _ms(window) if held else 0, UPPER_BOUND,
                              _named({tp: window for tp in held}), apart)

    def _sync_phase(self, before, looked_before: float | None, members, at: float,
                    joined_ms: int | None, apart: list[dict] | None) -> UnownedFigures:
        """Eager, from the records: each partition held before the round and given out by
        it, unowned at least from the end of the join phase to the write (module doc)."""
        held = _held(members)
        if held is None or before is None:
            return UnownedFigures(unsubscribed=apart)
        given_again = set(before) & set(held)
        if not given_again:   # nothing held before lost its owner
            return UnownedFigures(0, 0, MEASURED, [], apart)
        joined = None if joined_ms is None else joined_ms / 1000
        if joined is None or joined >= at or (looked_before is not None and joined < looked_before):
            return UnownedFigures(unsubscribed=apart)   # no sync phase of this round known
        window = at - joined
        return UnownedFigures(_ms(window * len(given_again)), _ms(window), LOWER_BOUND,
                              _named({tp: window for tp in given_again}), apart)

    def _from_leavers(self, before, looked_before: float | None, members, at: float,
                      joined_ms: int | None, gaps: dict[TP, float]) -> dict[TP, float] | None:
        """Cooperative, from the records: a partition whose holders before the round are
        no longer members went straight to another member in this one generation (no
        generation shows it unowned), yet its leaver gave it up before the round's join
        phase ended and its next holder got it only from the write: unowned at least over
        the sync phase, as eager's. {} when no such partition; None when one is but no
        sync phase of this round is known."""
        held = _held(members)
        if held is None or before is None:
            return {}
        handed = [tp for tp in set(before) & set(held)   # its holders all gone
                  if tp not in gaps and not before[tp] & members.keys()]
        if not handed:
            return {}
        joined = None if joined_ms is None else joined_ms / 1000
        if joined is None or joined >= at or (looked_before is not None and joined < looked_before):
            return None
        return {tp: at - joined for tp in handed}

    def _unsubscribed(self, members, *, everything: bool) -> list[dict] | None:
        """Partitions still unowned that no live member subscribes to (all of them once an
        epoch group converged), dropped from the watch."""
        topics = _subscribed(members)
        if everything:
            gone: Iterable[TP] = list(self._since)
        elif topics is None:
            return None
        else:
            gone = [tp for tp in self._since if tp[0] not in topics]
        by_topic: dict[str, set[int]] = {}
        for tp in gone:
            del self._since[tp]
            self._held_at.pop(tp, None)
            self._opened_after.pop(tp, None)
            by_topic.setdefault(tp[0], set()).add(tp[1])
        return tp_list(by_topic)
