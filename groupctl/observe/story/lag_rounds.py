"""`watch --lag`: the lag source's rounds into the reducer, and each `rebalance` event's lag
when its round started and when it ended (docs/reference/events.md: `lag_before` / `lag_after`).

    rounds = LagRounds(reducer, deliver=watcher.emit, hurry=poller.hurry)
    rounds.route(event)              # every told event: delivered now, or held (below)
    rounds.round_done(asked_at, lags)   # the lag poller's rounds (LagPoller.on_round)
    rounds.flush()                   # the end of the watch: nothing held is lost

- `lag_before`: the group's total lag from the lag read nearest the round's start
  (`started`; a round whose start was not seen: the first look that showed it), among
  those read before the round was told; `lag_before_ts` when that read began. A
  rebalancing `state` event asks the lag source for a read at once, so a round that lasts
  longer than a lag round has one close to its start.
- `lag_after`: from the first read that began after the round ended (`lag_after_ts`). The
  lag source is asked for it at once, and the `rebalance` event (with the group's later
  events behind it, so their order stays) is held until that read is in: one lag round
  (tens of milliseconds), or the lag source's deadline when a broker does not answer.
  Only the telling waits: the story folded the rebalance into its group's status when it
  told it (the same dict, which gets its lag fields here).
- Either is null when unknown: no lag read yet (the round began before the first lag
  round), the group commits no offsets (nothing to measure; share groups commit none), or
  the read failed (coordinator moving, brokers down, not authorized for the group).
"""
from __future__ import annotations

from collections import deque
from typing import Callable

from ...events import EventKind, duration_of, iso_ts
from ..sources.lag import GroupLag
from ..reads.model import DEAD, REBALANCING_STATES
from ..state.reducer import Reducer, _seconds

RECENT = 4   # the last lag reads kept per group: (began at, total); 20k groups stay small


class LagRounds:
    def __init__(self, reducer: Reducer, *, deliver: Callable[[dict], None],
                 hurry: Callable[[str], None]):
        self.reducer = reducer
        self.deliver = deliver
        self.hurry = hurry
        self.reads: dict[str, deque[tuple[float, int]]] = {}   # per group, oldest first
        # a group whose rebalancing state was told: the reads around its start (the
        # recent ones then, and the first after), kept however long the round lasts
        self.at_start: dict[str, list[tuple[float, int]]] = {}
        self.held: dict[str, list[dict]] = {}           # per group, in the order told

    # ---- events --------------------------------------------------------------------------
    def route(self, event: dict) -> None:
        group = event["group"]
        kind = event["event"]
        if kind == EventKind.STATE and event.get("state") in REBALANCING_STATES:
            if group not in self.at_start:
                self.at_start[group] = list(self.reads.get(group, ()))
            self.hurry(group)   # a read near the round's start
        elif kind == EventKind.STATE and event.get("state") == DEAD:
            self.at_start.pop(group, None)
        if kind == EventKind.REBALANCE:
            self._before(event)
            self.held.setdefault(group, []).append(event)
            self.hurry(group)   # the read after its end
        elif group in self.held:
            self.held[group].append(event)   # behind a held rebalance: order kept
        else:
            self.deliver(event)

    def _before(self, event: dict) -> None:
        ended = _seconds(event["ended"]) or 0.0
        started = _seconds(event.get("started"))
        if started is None:   # its earliest possible start, where its duration says it
            ms, _, most = duration_of(event)
            started = None if ms is None else ended - (ms if most is None else most) / 1000
        group = event["group"]
        known = self.at_start.pop(group, []) + list(self.reads.get(group, ()))
        nearest = None if started is None else min(   # no start known: no read before it
            known, key=lambda r: abs(r[0] - started), default=None)
        event["lag_before"] = None if nearest is None else nearest[1]
        event["lag_before_ts"] = None if nearest is None else iso_ts(nearest[0])
        event["lag_after"] = event["lag_after_ts"] = None

    # ---- lag rounds ----------------------------------------------------------------------
    def round_done(self, asked_at: float, lags: dict[str, GroupLag]) -> None:
        """A lag round that began at `asked_at`: its reads kept and folded; every held
        rebalance that ended before it began is told, with this read (or null)."""
        for group, read in lags.items():
            if read.error is None and read.total is not None:
                kept = (read.asked_at, read.total)
                self.reads.setdefault(group, deque(maxlen=RECENT)).append(kept)
                start = self.at_start.get(group)
                if start is not None and len(start) <= RECENT:
                    start.append(kept)   # a read since the round started (at least one)
            self.reducer.apply_lag(read)
        for group in list(self.held):
            self._release(group, lags.get(group), asked_at)

    def _release(self, group: str, read: GroupLag | None, asked_at: float) -> None:
        queue = self.held[group]
        while queue:
            event = queue[0]
            if event["event"] == EventKind.REBALANCE:
                if (_seconds(event["ended"]) or 0.0) > asked_at:
                    break   # ended after this read began: the next read tells it
                if read is not None and read.error is None and read.total is not None:
                    event["lag_after"], event["lag_after_ts"] = read.total, iso_ts(read.asked_at)
            self.deliver(queue.pop(0))
        if not queue:
            del self.held[group]

    def flush(self) -> None:
        """Tell everything held (the watch ends): lag_after stays null."""
        for group in list(self.held):
            for event in self.held.pop(group):
                self.deliver(event)
