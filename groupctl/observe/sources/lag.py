"""The lag source of `watch --lag`: every followed group's lag, read on its own interval.

    poller = LagPoller(cluster, groups=lambda: watcher.source.groups, interval=10.0,
                       on_round=tracker.round_done)
    await poller.run(until=end)        # a round now, then every `interval` seconds
    poller.hurry("orders")             # read this group's lag now (a round started / ended)
    lags = await fetch_lag(cluster, ["g1", "g2"], deadline=d)   # one round, no loop

A round: FindCoordinator for the groups (one batched request), per coordinator OffsetFetch
for many groups per request (v8+, observe.offsets), one Metadata for the committed topics,
then ListOffsets (latest) per partition leader (observe.offsets.log_end_offsets). A group's
lag is the sum over its partitions with a committed offset and a known log-end offset of
log-end - committed (never below 0), as ConsumerGroupCommand's LAG column; partitions
without a commit count nowhere (their lag is unknown, not 0).

It runs beside the describe poller (observe/source.py), never in its loop: lag needs four
requests a round where describe needs one or two, and changes slowly; the default interval
is ten describe intervals. A group asked by `hurry` is read in a small round of its own as
soon as the current one ends (the rebalance events' lag_after waits for it).

Read-only: FindCoordinator, OffsetFetch (no require_stable), Metadata, ListOffsets.
"""
from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Awaitable, Callable, Iterable

from ...client.coordinators import REDISCOVER, WAIT
from ...client.sharded import Retry, coordinator_route, request_sharded
from ...client.interface import ClusterLike
from ...client.retry import Backoff
from ...errors import GroupctlError
from ...protocol.messages import OFFSET_FETCH
from ..reads.offsets import (
    TP, log_end_offsets, offset_fetch_body, offset_fetch_version, parse_offset_fetch,
)

BATCH = 200             # groups per OffsetFetch request (as describe's)
DEFAULT_INTERVAL = 10.0


@dataclass(frozen=True)
class GroupLag:
    """One group's lag as one round read it. `asked_at`: wall time the round began (its
    offsets are no older); `at`: when its answers were in. `partitions`: lag per partition
    with a committed offset and a known log-end offset. `error`: why nothing was read
    (the group's OffsetFetch error, its coordinator moving, ...), partitions then empty."""
    group: str
    asked_at: float
    at: float
    partitions: dict[TP, int] = field(default_factory=dict)
    error: str | None = None

    @property
    def total(self) -> int | None:
        """The sum of the known lags; None when none is known (no commits, an error)."""
        return sum(self.partitions.values()) if self.partitions else None

    @property
    def by_topic(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for (topic, _), lag in sorted(self.partitions.items()):
            out[topic] = out.get(topic, 0) + lag
        return out

    @property
    def max(self) -> int | None:
        return max(self.partitions.values()) if self.partitions else None


# ---- one round ---------------------------------------------------------------------------

async def fetch_lag(cluster: ClusterLike, groups: list[str], *, deadline,
                    clock: Callable[[], float] = time.time) -> dict[str, GroupLag]:
    """{group: GroupLag} for every group asked (see the module doc). A group whose
    coordinator cannot be found or moved has an `error` this round (the next one asks its
    coordinator again); a round where nothing answers raises (the caller backs off)."""
    asked_at = clock()
    if not groups:
        return {}
    errors: dict[str, str] = {}
    committed = await _committed(cluster, groups, deadline, errors)
    topics = sorted({t for offsets in committed.values() for t, _ in offsets})
    log_end: dict[TP, int | None] = {}
    if topics:
        metadata = await cluster.metadata(topics, deadline=deadline)
        wanted = {tp for offsets in committed.values() for tp, off in offsets.items()
                  if off is not None}
        log_end = await log_end_offsets(cluster, metadata, wanted, deadline=deadline)
    at = clock()
    out = {}
    for g in groups:
        if g in errors:
            out[g] = GroupLag(g, asked_at, at, error=errors[g])
            continue
        out[g] = GroupLag(g, asked_at, at, _lags(committed.get(g, {}), log_end))
    return out


def _lags(committed: dict[TP, int | None], log_end: dict[TP, int | None]) -> dict[TP, int]:
    """log-end - committed (never below 0) where both are known."""
    out: dict[TP, int] = {}
    for tp, offset in committed.items():
        end = log_end.get(tp)
        if offset is not None and end is not None:
            out[tp] = max(0, end - offset)
    return out


async def _committed(cluster: ClusterLike, groups: list[str], deadline, errors: dict
                     ) -> dict[str, dict[TP, int | None]]:
    """Every group's committed offsets, OffsetFetch batched per coordinator, asked once: a
    group whose coordinator moved or did not answer has an error this round and its
    coordinator forgotten (the next round is its retry)."""
    async def fetch(node: int, batch: list[str]) -> dict:
        conn = await cluster.broker(node, deadline=deadline)
        version = offset_fetch_version(conn)
        batches = [batch] if version >= 8 else [[g] for g in batch]
        answers = await asyncio.gather(*(
            cluster.request(OFFSET_FETCH, offset_fetch_body(b, version), node_id=node,
                            version=version, deadline=deadline) for b in batches))
        out: dict = {}
        for b, resp in zip(batches, answers):
            for g, got in parse_offset_fetch(resp, b).items():
                moved = isinstance(got, GroupctlError) and getattr(got, "code", 0) in REDISCOVER | WAIT
                out[g] = Retry(got) if isinstance(got, GroupctlError) and moved else got
        return out

    got = await request_sharded(groups, route=coordinator_route(cluster, deadline), send=fetch,
                                deadline=deadline, what="OffsetFetch for group", batch=BATCH, attempts=1,
                                forget=cluster.invalidate_coordinator)
    if got.nothing_answered and got.last is not None:
        raise got.last   # no coordinator answered: the round failed as a whole
    errors.update((g, str(exc)) for g, exc in got.errors.items())
    return got.results


# ---- the loop ----------------------------------------------------------------------------

class LagPoller:
    """Reads the lag of `groups()` every `interval` seconds and of hurried groups at once;
    each round's {group: GroupLag} goes to `on_round(asked_at, lags)` (a round failed as a
    whole: lags empty, and the rounds back off). `sleep` and `clock` (wall) are injected
    for tests; `monotonic` times the interval."""

    def __init__(self, cluster: ClusterLike, groups: Callable[[], Iterable[str]], *,
                 interval: float = DEFAULT_INTERVAL,
                 on_round: Callable[[float, dict[str, GroupLag]], None],
                 clock: Callable[[], float] = time.time,
                 monotonic: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Awaitable[None]] | None = None,
                 poll_deadline: float = 10.0):
        self.cluster = cluster
        self.groups = groups
        self.interval = interval
        self.on_round = on_round
        self.clock, self.monotonic = clock, monotonic
        self.sleep = sleep or asyncio.sleep
        self.poll_deadline = poll_deadline
        self._hurried: dict[str, None] = {}
        self._wake: asyncio.Event | None = None
        # read by the metrics: rounds, failed rounds, the last round's seconds
        self.rounds = self.failed = 0
        self.last_round_seconds: float | None = None

    def hurry(self, group: str) -> None:
        """Read `group`'s lag as soon as the round under way (if any) ends."""
        self._hurried[group] = None
        if self._wake is not None:
            self._wake.set()

    async def run(self, *, until: float | None = None,
                  after: asyncio.Event | None = None) -> None:
        """Rounds until `until` (monotonic), or for ever; the first once `after` is set
        (the describe source's first round: before it, --all has listed no group and
        named groups' coordinators are unknown, so a first round read only some)."""
        self._wake = asyncio.Event()
        if after is not None and not after.is_set():
            waiting = asyncio.ensure_future(after.wait())
            timer = asyncio.ensure_future(self.sleep(max(0.0, until - self.monotonic()))
                                          if until is not None else asyncio.Event().wait())
            try:
                await asyncio.wait({waiting, timer}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for task in (waiting, timer):
                    task.cancel()
        backoff = Backoff(base=self.interval, cap=max(5.0, self.interval))
        next_full = self.monotonic()
        while until is None or self.monotonic() < until:
            now = self.monotonic()
            if now >= next_full:
                ok = await self.round(None)
                next_full = now + (self.interval if ok else backoff.next())
                if ok:
                    backoff.reset()
                continue
            if self._hurried:
                await self.round(list(self._hurried))
                continue
            wait = next_full - now if until is None else min(next_full, until) - now
            await self._idle(wait)

    async def _idle(self, seconds: float) -> None:
        """Sleep `seconds`, or less if a group is hurried meanwhile."""
        assert self._wake is not None
        self._wake.clear()
        if self._hurried:
            return
        sleeping = asyncio.ensure_future(self.sleep(seconds))
        woken = asyncio.ensure_future(self._wake.wait())
        try:
            await asyncio.wait({sleeping, woken}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (sleeping, woken):
                task.cancel()

    async def round(self, groups: list[str] | None) -> bool:
        """One round over `groups` (None: every followed group and the hurried ones);
        False when it failed as a whole."""
        asked = list(dict.fromkeys([*(self.groups() if groups is None else ()),
                                    *(groups or ()), *self._hurried]))
        self._hurried.clear()
        asked_at, started = self.clock(), self.monotonic()
        ok = True
        try:
            lags = await fetch_lag(self.cluster, asked, clock=self.clock,
                                   deadline=self.cluster.deadline(self.poll_deadline))
        except GroupctlError:
            lags, ok = {}, False
            self.failed += 1
        self.rounds += 1
        self.last_round_seconds = self.monotonic() - started
        self.on_round(asked_at, lags)
        return ok
