"""A source's contact with the cluster, round by round: the one place that decides what a
round's outcome says about the looks (the describe poller and the records tail ask it).

    contact = Contact("describe", clock, late_after=1.0)
    contact.failed(error)         # [ContactLost] the first of a streak, then []
    contact.answered(asked, at)   # [ContactRegained] after a failure, [ContactLate] when
                                  # the answer came late, else []

Three kinds of gap, each told once to the stories (sources/observations.py):
- lost: a round failed as a whole. The next look is told in full (a `snapshot`) and what
  happened meanwhile was not seen (its figures are lower bounds or unknown). Said on
  stderr ("lost contact ...") once per streak.
- late: a round answered, but more than `late_after` seconds (the poll interval) after it
  was asked (a coordinator moving or a broker restarting holds a describe for seconds,
  under the round's deadline). The group may have changed at any time between the last
  look before and the answer: a figure that starts or ends at this look spans that whole
  window (a bound), not one poll interval (measured). Not said: a slow round at fleet
  scale is no lost contact, it only widens the figures' window.
- regained: the first good round after a lost one.

`Looks` is the other side: one group's looks as its story follows them, each with the
`Gap` before it (first, lost, late, none).
"""
from __future__ import annotations

from enum import Enum
from typing import Callable

from .observations import ContactLate, ContactLost, ContactRegained, Observation


class Contact:
    def __init__(self, label: str, clock: Callable[[], float], *,
                 late_after: float | None = None):
        self.label, self.clock, self.late_after = label, clock, late_after
        self.lost_at: float | None = None   # the failure that began the streak, if any

    @property
    def lost(self) -> bool:
        return self.lost_at is not None

    def failed(self, error: Exception, at: float | None = None) -> list[Observation]:
        """A round failed as a whole: ContactLost once per streak."""
        if self.lost_at is not None:
            return []
        self.lost_at = self.clock() if at is None else at
        return [ContactLost(None, self.lost_at, self.label, error)]

    def answered(self, asked: float | None, at: float) -> list[Observation]:
        """A round asked at `asked` (None: not timed) answered at `at`."""
        if self.lost_at is not None:
            lost_at, self.lost_at = self.lost_at, None
            return [ContactRegained(None, at, self.label, lost_at)]
        if asked is not None and self.late_after is not None and at - asked > self.late_after:
            return [ContactLate(None, at, self.label, asked)]
        return []


class Gap(str, Enum):
    """What came between a group's look and the one before it."""
    FIRST = "first"   # no look before: the group's past is not seen
    LOST = "lost"     # contact was lost since the last look: what happened meanwhile unseen
    LATE = "late"     # the answer came late: the group may have changed at any time since
                      # the last look (a figure at this look spans that window)
    NONE = "none"     # the look after the last, within one poll interval


class Looks:
    """One group's looks as its story follows them, and the gap before each: the story
    and its helpers (round, unowned, convergence's Behind) ask the gap of each look here,
    none of them follows the faults on its own."""

    def __init__(self) -> None:
        self.last: float | None = None   # the last look that showed the group
        self.looked = False              # any look at all (one that found it missing too)
        self.blind = False               # contact lost since the last look
        self._late = False               # a late round since the last look

    def lost(self) -> None:
        self.blind = self.looked

    def late(self) -> None:
        self._late = self.looked

    def look(self, at: float | None) -> Gap:
        """A look made at `at` (None: it found no group); the gap before it."""
        gap = Gap.FIRST if not self.looked else Gap.LOST if self.blind else \
            Gap.LATE if self._late else Gap.NONE
        self.looked, self.blind, self._late = True, False, False
        if at is not None:
            self.last = at
        return gap
