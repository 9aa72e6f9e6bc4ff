"""Tailing partitions of one topic with long-poll Fetch: `watch --source records` follows
`__consumer_offsets` with it.

    tail = TopicTail(cluster, "__consumer_offsets", [3, 17], max_wait_ms=500, timeout=10)
    await tail.locate()                          # leaders, topic id (errors raised)
    tail.offsets = await tail.offsets_at(EARLIEST)
    async for item in tail.items(until=loop_time):   # Chunk / Stalled / Resumed / Restart
        ...

One Fetch in flight per leader, for every followed partition it leads, on a connection of
its own (a long poll parks the connection: the broker answers one request of a connection
at a time), `min_bytes` 1 and `max_wait_ms`: the broker answers as soon as a record is
committed, or after max_wait_ms with nothing. Nothing is polled on an interval.

Exactly once: `offsets` holds the next offset to read of each partition and moves only
when a batch is handed out, in order; an answer to a request made at an offset that has
moved since (two leaders asked across a leadership change) is dropped. A leader that moved
(NOT_LEADER_OR_FOLLOWER and friends), a connection lost, a request unanswered within
`timeout`: the leaders are looked up again and the fetch resumes at the same offset, with
back-off; the first failure of a streak is a `Stalled` item, the next answer `Resumed`.
OFFSET_OUT_OF_RANGE (the log was truncated under us): `Restart(partition)` and the
partition is read again from its earliest offset. Not authorized: TopicAuthorizationError
(exit 4), raised.
"""
from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field

from ..errors import AuthError, DeadlineError, GroupctlError, KafkaError
from ..protocol.errors import ErrorCode, error_for
from ..protocol.messages import FETCH, LIST_OFFSETS
from ..protocol.records.batch import Batch, BatchError, read_batches
from .connection import BrokerConnection
from .partition_reader import (
    EARLIEST, FETCH_MAX_BYTES, LATEST, LEADER_MOVED, check, fetch_body, list_offsets_body,
    topic_info,
)
from .retry import Backoff

__all__ = ["EARLIEST", "LATEST", "Chunk", "Restart", "Resumed", "Stalled", "TopicTail"]


@dataclass
class Chunk:
    """The batches of one partition one answer held, in order, from the tail's offset (the
    first answer of each partition is a Chunk even when empty: it proves READ)."""

    partition: int
    batches: list[Batch]
    high_watermark: int
    damaged: list[BatchError] = field(default_factory=list)
    # (offset, key) of the records passed over by skip_keys that have a value (collect_skipped)
    skipped: list[tuple[int, bytes]] = field(default_factory=list)


@dataclass
class Stalled:
    """The first failure of a streak (the tail goes on retrying)."""

    error: GroupctlError
    at: float                      # loop time


@dataclass
class Resumed:
    """The first answer after a Stalled."""

    stalled_at: float              # loop time of the Stalled


@dataclass
class Restart:
    """The partition's log no longer holds the tail's offset: read again from `offset`."""

    partition: int
    offset: int


_Item = Chunk | Stalled | Resumed | Restart


class TopicTail:
    def __init__(self, cluster, topic: str, partitions: Iterable[int], *,
                 max_wait_ms: int = 500, timeout: float = 10.0,
                 skip_keys: frozenset | None = None, collect_skipped: bool = False):
        self.cluster = cluster
        self.topic = topic
        self.partitions = sorted(set(partitions))
        self.max_wait_ms = max_wait_ms
        self.timeout = timeout
        self.skip_keys = skip_keys
        self.collect_skipped = collect_skipped
        self.offsets: dict[int, int] = {}            # partition -> next offset to read
        self.leaders: dict[int, int | None] = {}
        self.topic_id: str | None = None
        self.partition_count: int | None = None
        self._conns: dict[int, BrokerConnection] = {}   # leader -> its own connection
        self._stalled_at: float | None = None
        self._closing: set[asyncio.Future] = set()   # connections dropped, closing
        self._answered: set[int] = set()             # partitions fetched once at least
        self._inflight: dict[asyncio.Task, int] = {}   # request -> its leader
        self._asked: set[int] = set()                  # partitions in a request in flight
        self._relocate_at: float | None = None         # loop time to look the leaders up
        self._backoff = Backoff(base=0.05, cap=2.0)
        # each answer (seconds it took, failed): watch --metrics-port
        self.on_fetch: Callable[[float, bool], None] | None = None

    # ---- where ---------------------------------------------------------------------------
    async def locate(self) -> None:
        """The topic's id and the followed partitions' leaders (Metadata)."""
        info = await topic_info(self.cluster, self.topic, self.timeout)
        self.topic_id, self.partition_count = info.topic_id, info.partition_count
        for p in self.partitions:
            part = info.partitions.get(p)
            self.leaders[p] = part.leader if part is not None else None

    async def offsets_at(self, timestamp: int, partitions: Iterable[int] | None = None
                         ) -> dict[int, int]:
        """ListOffsets (EARLIEST, LATEST or a time), one request per leader. A partition
        whose leader is moving or not ready yet (a topic just created) is asked again,
        with back-off, for up to `timeout` seconds."""
        from .retry import Deadline, sleep_within

        wanted = sorted(self.partitions if partitions is None else partitions)
        out: dict[int, int] = {}
        deadline, backoff = Deadline(self.timeout), Backoff(0.05, 1.0)
        while True:
            if len(out) == len(wanted):
                return out
            by_leader = self._by_leader([p for p in wanted if p not in out])
            last = ErrorCode.LEADER_NOT_AVAILABLE
            for leader, parts in by_leader.items():
                body = list_offsets_body(self.topic, parts, timestamp)
                resp = await self.cluster.request(LIST_OFFSETS, body, node_id=leader,
                                                  deadline=deadline)
                for p in resp["topics"][0]["partitions"]:
                    code = p["error_code"]
                    if code in LEADER_MOVED:
                        last = code
                        continue
                    self._check("ListOffsets", code, "describe", p["partition_index"])
                    out[p["partition_index"]] = p["offset"]
            if len(out) < len(wanted):
                if not await sleep_within(deadline, backoff.next()):
                    raise KafkaError("ListOffsets", last, f"{self.topic}: no leader ready "
                                     f"within {self.timeout:g} s")
                await self.locate()

    def _by_leader(self, partitions: Iterable[int]) -> dict[int, list[int]]:
        """The partitions by leader (those with no leader now are left out)."""
        out: dict[int, list[int]] = {}
        for p in partitions:
            leader = self.leaders.get(p)
            if leader is not None:
                out.setdefault(leader, []).append(p)
        return out

    def _check(self, api: str, code: int, operation: str, partition: int | None = None) -> None:
        check(api, code, self.topic, operation,
              self.topic if partition is None else f"{self.topic}-{partition}")

    # ---- the tail ------------------------------------------------------------------------
    async def items(self, *, until: float | None = None) -> AsyncIterator[_Item]:
        """Chunks as they come (and the faults), until loop time `until` (None: for ever)."""
        loop = asyncio.get_running_loop()
        self._inflight, self._asked, self._relocate_at = {}, set(), None
        try:
            while True:
                for item in await self._relocate_if_due(until):
                    yield item
                done = await self._next_answers(until)
                if until is not None and loop.time() >= until:
                    return
                for task in done:
                    for item in self._outcome(task):
                        yield item
        finally:
            for task in self._inflight:
                task.cancel()
            await asyncio.gather(*self._inflight, return_exceptions=True)
            self._inflight = {}
            await self._close()

    async def _relocate_if_due(self, until: float | None) -> list[_Item]:
        """The leaders looked up again when due (a failure: Stalled, and later again)."""
        loop = asyncio.get_running_loop()
        if self._relocate_at is None or loop.time() < self._relocate_at:
            return []
        self._relocate_at = None
        try:
            await self._within(self.locate(), until)
        except AuthError:
            raise
        except GroupctlError as exc:
            self._relocate_later()
            return self._stall(exc)
        return []

    def _relocate_later(self) -> None:
        if self._relocate_at is None:
            self._relocate_at = asyncio.get_running_loop().time() + self._backoff.next()

    async def _next_answers(self, until: float | None) -> set[asyncio.Task]:
        """New requests where none is in flight; then the answers that came first (or none,
        when a relocation or `until` is due)."""
        if self._relocate_at is None:
            self._ask()
        wake = [t for t in (self._relocate_at, until) if t is not None]
        timeout = None if not wake else max(0.0, min(wake) - asyncio.get_running_loop().time())
        if not self._inflight:
            await asyncio.sleep(timeout if timeout is not None else self._backoff.next())
            return set()
        done, _ = await asyncio.wait(self._inflight, timeout=timeout,
                                     return_when=asyncio.FIRST_COMPLETED)
        return done

    def _outcome(self, task: asyncio.Task) -> list[_Item]:
        """The items of one finished request (a failure: its connection dropped, Stalled)."""
        loop = asyncio.get_running_loop()
        leader = self._inflight.pop(task)
        requested, started, outcome = task.result()   # an AuthError is raised here
        self._asked.difference_update(requested)
        failed = isinstance(outcome, GroupctlError)
        if self.on_fetch is not None:
            self.on_fetch(loop.time() - started, failed)
        if isinstance(outcome, GroupctlError):
            self._drop(leader)
            self._relocate_later()
            return self._stall(outcome)
        out: list[_Item] = []
        for item in self._take(requested, outcome):
            if isinstance(item, _Relocate):
                self._relocate_later()
            else:
                out.append(item)
        return out

    @staticmethod
    async def _within(aw, until: float | None):
        """`aw`, cut short at loop time `until` (a DeadlineError, then the loop returns)."""
        if until is None:
            return await aw
        left = until - asyncio.get_running_loop().time()
        try:
            return await asyncio.wait_for(aw, max(0.0, left))
        except asyncio.TimeoutError:
            raise DeadlineError("the end of --duration came first") from None

    def _stall(self, exc: GroupctlError) -> list[_Item]:
        """A Stalled for the first failure of a streak, nothing for the next ones."""
        if self._stalled_at is not None:
            return []
        self._stalled_at = asyncio.get_running_loop().time()
        return [Stalled(exc, self._stalled_at)]

    def _ask(self) -> None:
        """A Fetch to every leader with no request in flight, for its partitions not asked."""
        busy = set(self._inflight.values())
        wanted: dict[int, dict[int, int]] = {}
        for p in self.partitions:
            leader = self.leaders.get(p)
            if leader is None or leader in busy or p in self._asked or p not in self.offsets:
                continue
            wanted.setdefault(leader, {})[p] = self.offsets[p]
        for leader, offsets in wanted.items():
            self._asked.update(offsets)
            self._inflight[asyncio.ensure_future(self._fetch(leader, offsets))] = leader

    async def _fetch(self, leader: int, offsets: dict[int, int]):
        """(offsets asked, loop time sent, the response or the GroupctlError)."""
        loop = asyncio.get_running_loop()
        started = loop.time()
        try:
            conn = self._conns.get(leader)
            if conn is None or conn.closed:
                conn = self._conns[leader] = await self.cluster.open_connection(
                    leader, deadline=self.timeout)
            body = fetch_body(conn, self.topic, self.topic_id, offsets, self.max_wait_ms)
            resp = await conn.request(FETCH, body, timeout=self.max_wait_ms / 1000 + self.timeout)
        except AuthError:
            raise
        except GroupctlError as exc:
            return offsets, started, exc
        return offsets, started, resp

    def _take(self, requested: dict[int, int], resp: dict) -> list:
        """The items of one answer (Resumed first, when it ends a stall); offsets move
        past what is handed out."""
        if resp.get("error_code"):
            self._check("Fetch", resp["error_code"], "read")
        out: list = []
        answered = False
        # partitions past max_bytes come back empty: only a short answer proves a gap
        limited = sum(len(p["records"] or b"") for t in resp["responses"]
                      for p in t["partitions"]) >= FETCH_MAX_BYTES // 2
        for topic in resp["responses"]:
            for p in topic["partitions"]:
                index, code = p["partition_index"], p["error_code"]
                if index not in requested or self.offsets.get(index) != requested[index]:
                    continue   # asked at an offset that has moved on since: told already
                if code == ErrorCode.OFFSET_OUT_OF_RANGE:
                    self.offsets.pop(index)   # asked again once the caller has restarted it
                    self._answered.discard(index)
                    out.append(Restart(index, EARLIEST))
                    continue
                if code in LEADER_MOVED or code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION or (
                        code and code != ErrorCode.TOPIC_AUTHORIZATION_FAILED
                        and error_for(code).retriable):
                    out.append(_Relocate())
                    continue
                self._check("Fetch", code, "read", index)
                answered = True
                chunk = self._chunk(index, p, limited)
                if chunk is not None:
                    out.append(chunk)
        if answered:
            self._backoff.reset()
            if self._stalled_at is not None:
                out.insert(0, Resumed(self._stalled_at))
                self._stalled_at = None
        return out

    def _chunk(self, partition: int, p: dict, limited: bool) -> Chunk | None:
        offset, hw = self.offsets[partition], p["high_watermark"]
        data = p["records"] or b""
        chunk = Chunk(partition, [], hw)
        skipped: list | None = [] if self.collect_skipped else None
        for batch in read_batches(data, partial_tail=True, skip_keys=self.skip_keys,
                                  skipped=skipped):
            if isinstance(batch, BatchError):
                chunk.damaged.append(batch)
                if batch.offset is not None and batch.offset >= offset:
                    offset = batch.offset + 1   # cannot frame past it: the next batch on
                    break
                continue
            if batch.last_offset >= offset:
                chunk.batches.append(batch)
                offset = batch.last_offset + 1
        if skipped:   # those of the batches handed out only
            start = self.offsets[partition]
            chunk.skipped = [s for s in skipped if start <= s[0] < offset]
        if not data and offset < hw and not limited:
            offset = hw   # no batch left below the high watermark (compacted away)
        self.offsets[partition] = offset
        first = partition not in self._answered   # told even empty: the partition is readable
        self._answered.add(partition)
        return chunk if chunk.batches or chunk.damaged or first else None

    def _drop(self, leader: int) -> None:
        conn = self._conns.pop(leader, None)
        if conn is not None:
            task = asyncio.ensure_future(conn.close())
            self._closing.add(task)
            task.add_done_callback(self._closing.discard)

    async def _close(self) -> None:
        conns, self._conns = list(self._conns.values()), {}
        await asyncio.gather(*(c.close() for c in conns), *self._closing,
                             return_exceptions=True)


class _Relocate:
    """Internal: the leaders must be looked up again."""
