"""The coordinator's records, tailed live: the source of `watch --source records`.

    tail = RecordsTail(cluster, ["orders"])            # or all_groups=True (regex=...)
    async for o in tail.observations(until=t):         # Seen / Missing / Appeared, faults
        ...

The same GroupSource interface as the describe poller (source.py), and the same replay of
the coordinator's records as `history` (replay.py): every batch the coordinator writes to
`__consumer_offsets` is one change of a group, told with the broker's record timestamp
(source "records"). Nothing is polled: the partitions are tailed with long-poll Fetch
(client.topic_tail: max_wait_ms 500, answered as soon as a record is committed), so no
change falls between two looks.

Start: the story needs the groups as they are now before it can tell a change, and the
records are the only thing that can say it exactly: each followed partition is read from
its earliest offset up to its end at the start (ListOffsets LATEST), replayed without
telling anything (offset commits skipped on their key type, unread), and then each group
is told once as it stands (the first look: a `snapshot`, at the local time of the look);
every record after that end is told as it comes. Reading from the end only would leave the
story blind until each group's next full write (a classic group's next generation), and a
consumer group's members are written only when they change: they would never be known.

Faults: a lost leader, a broker restart or a coordinator move stalls the tail, which
resumes at the next offset it has not read (nothing told twice, nothing skipped); said
once as ContactLost / ContactRegained, which do not blind the stories (`resumes_exactly`).
A truncated log (OFFSET_OUT_OF_RANGE) is read again from its start and only what differs
from what was told is told. Without READ / DESCRIBE on `__consumer_offsets`:
TopicAuthorizationError (exit 4) naming the ACL. Only groups the principal may describe
are shown (observe/acl.py): a named group refused is exit 4, one found under --all is
said once on stderr and never shown.

Groups: the named ones (their partitions only: abs(hashCode) % partitions, as the broker
places them); a named group without records is `Missing` (told `state` Dead) until it has
members (a classic group's creation record, Empty at generation 0, is not told: its first
generation is the rebalance from nothing, as a describe would see it). `--all`: every
group with group records in any partition (`regex` filters names), a group created
meanwhile `Appeared` once it has members, a deleted one `Missing` once and then forgotten.
"""
from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterator, Callable, Iterable

from typing import TYPE_CHECKING

from ..events import Source
from .model import DEAD, GroupDescription, coordinator_partition
from .observations import Appeared, ContactLost, ContactRegained, Missing, Observation, Seen
from .records import coordinator_batches
from .replay import GroupRecords, apply, describe

TOPIC = "__consumer_offsets"
RECORDS = Source.RECORDS.value
OFFSET_COMMIT_KEYS = frozenset({b"\x00\x00", b"\x00\x01"})   # key types 0, 1: skipped unread
MAX_WAIT_MS = 500

if TYPE_CHECKING:
    from ..client.topic_tail import TopicTail


class RecordsTail:
    label = RECORDS
    resumes_exactly = True   # a lost contact hides nothing: the tail resumes where it was

    def __init__(self, cluster, groups: Iterable[str] = (), *, all_groups: bool = False,
                 regex: re.Pattern | None = None, clock: Callable[[], float] = time.time,
                 max_wait_ms: int = MAX_WAIT_MS, timeout: float = 10.0):
        self.cluster = cluster
        self.all_groups, self.regex = all_groups, regex
        self.clock = clock
        self.max_wait_ms, self.timeout = max_wait_ms, timeout
        self.groups: dict[str, None] = dict.fromkeys(groups)   # followed (an ordered set)
        self.named = frozenset(self.groups)
        self.order = list(self.groups)                # the named groups, as given
        self.on_round: Callable[[float, bool], None] | None = None   # per Fetch answer
        # damaged batches, waiting for the topic: said on stderr by the watch
        self.notice: Callable[[str], None] = lambda text: None
        self.tail: TopicTail | None = None
        self._records: dict[str, GroupRecords] = {}      # group -> its records replayed so far
        self._told: dict[str, dict | None] = {}    # group -> the look last told (None: missing)
        self._names: dict[str, str] = {}           # topic id -> name
        self._unnamed: set[str] = set()            # ids no metadata names (deleted topics)
        self._quiet: dict[int, int] = {}           # partition -> offset to replay up to, untold
        self._looked = False                       # the first look was told
        self._until: float | None = None           # loop time: the end of --duration
        self._describable: dict[str, bool] = {}    # group -> may this principal describe it

    def follows(self, group: str) -> bool:
        return group in self.groups

    def _wanted(self, group: str) -> bool:
        if self.all_groups:
            return self.regex is None or self.regex.search(group) is not None
        return group in self.named

    async def _check_describable(self, groups) -> None:
        """Only groups the principal may describe are shown (observe/acl.py): a named one
        refused is an AuthError (exit 4); under --all a refused one is said once, never
        shown. A group whose check fails otherwise is asked again at its next record."""
        from ..errors import AuthError, GroupctlError
        from .acl import describable, refused_message

        new = [g for g in groups if g not in self._describable]
        if not new:
            return
        try:
            allowed, refused = await describable(self.cluster, new, deadline=self.timeout)
        except GroupctlError:
            return   # unknown for now: not shown
        self._describable.update(dict.fromkeys(allowed, True))
        self._describable.update(dict.fromkeys(refused, False))
        named = [g for g in refused if g in self.named]
        if named:
            raise AuthError(refused_message(named, refused[named[0]]))
        for group in refused:
            self.notice(f"group {group!r} not shown: {refused_message([group])}")

    # ---- the observations -----------------------------------------------------------------
    async def observations(self, *, until: float | None = None) -> AsyncIterator[Observation]:
        from ..client.topic_tail import Chunk, Restart, Resumed, Stalled

        loop = asyncio.get_running_loop()
        if until is None:
            tail = await self._start()
        else:   # --duration ends the start too (a frozen broker answers nothing)
            try:
                tail = await asyncio.wait_for(self._start(), max(0.0, until - loop.time()))
            except asyncio.TimeoutError:
                if loop.time() >= until:
                    return
                raise
        self._until, lost_at = until, None
        async for item in tail.items(until=until):
            out: list[Observation] = []
            if isinstance(item, Chunk):
                try:
                    out = await self._bounded(self._chunk(item))
                except asyncio.TimeoutError:
                    return   # the end of --duration, in a metadata lookup
            elif isinstance(item, Stalled):
                lost_at = self.clock()
                out = [ContactLost(None, lost_at, self.label, item.error)]
            elif isinstance(item, Resumed):
                out = [ContactRegained(None, self.clock(), self.label, lost_at or self.clock())]
            elif isinstance(item, Restart):
                try:
                    await self._bounded(self._restart(tail, [item.partition]))
                except asyncio.TimeoutError:
                    return
            if not self._looked and not self._quiet:
                out += self._first_looks()
            for o in out:
                yield o

    async def _start(self):
        from ..client.topic_tail import TopicTail

        tail = self.tail = TopicTail(self.cluster, TOPIC, [], max_wait_ms=self.max_wait_ms,
                                     timeout=self.timeout, skip_keys=OFFSET_COMMIT_KEYS)
        await self._topic_located(tail)   # its partitions and their leaders; authorization
        await self._check_describable(self.named)   # Read on the topic is not enough
        await self._name_topics(None)
        await self._restart(tail, tail.partitions)
        if self.on_round is not None:
            tail.on_fetch = self.on_round
        return tail

    async def _topic_located(self, tail) -> None:
        """The topic located, and the followed partitions' leaders. On a cluster where no
        group was ever coordinated it does not exist yet: FindCoordinator of a named group
        has the broker create it (as a describe or any consumer would), and it is looked
        for again until it appears with its leaders elected."""
        from ..client.retry import Backoff
        from ..errors import GroupctlError, NotFoundError

        backoff, asked = Backoff(0.2, 2.0), False
        while True:
            try:
                await tail.locate()
            except NotFoundError:
                if not asked:
                    self.notice(f"waiting for topic {TOPIC}: no group has been coordinated "
                                f"on this cluster yet")
                if not asked and self.named:
                    try:
                        await self.cluster.find_coordinators(sorted(self.named)[:1],
                                                              deadline=self.timeout)
                    except GroupctlError:
                        pass   # the topic is what is waited for
                asked = True
            else:
                count = tail.partition_count
                tail.partitions = (list(range(count)) if self.all_groups else
                                   sorted({coordinator_partition(g, count) for g in self.named}))
                await tail.locate()
                if all(tail.leaders.get(p) is not None for p in tail.partitions):
                    return
            await asyncio.sleep(backoff.next())

    async def _restart(self, tail, parts: list[int]) -> None:
        """Read `parts` again from their earliest offsets, untold up to their ends now;
        their groups' records start over."""
        from ..client.topic_tail import EARLIEST, LATEST

        starts = await tail.offsets_at(EARLIEST, parts)
        ends = await tail.offsets_at(LATEST, parts)
        for group in [g for g in self._records if self._partition(g) in parts]:
            del self._records[group]
        for p in parts:   # untold until its first answer (READ proven), and its end now
            tail.offsets[p], self._quiet[p] = starts[p], max(starts[p], ends[p])

    async def _bounded(self, aw):
        """`aw` within the end of --duration (asyncio.TimeoutError when it comes)."""
        if self._until is None:
            return await aw
        return await asyncio.wait_for(aw, max(0.0, self._until - asyncio.get_running_loop().time()))

    def _partition(self, group: str) -> int:
        assert self.tail is not None and self.tail.partition_count is not None
        return coordinator_partition(group, self.tail.partition_count)

    # ---- one answer -----------------------------------------------------------------------
    async def _chunk(self, chunk) -> list[Observation]:
        for damaged in chunk.damaged:
            self.notice(f"{TOPIC}-{chunk.partition}: {damaged}")
        groups = None if self.all_groups else set(self.named)
        out: list[Observation] = []
        quiet_until = self._quiet.get(chunk.partition)
        for _, recs in coordinator_batches(chunk.batches, groups=groups):
            await self._name_topics(recs)
            await self._check_describable({r.group for r in recs if r.group is not None
                                           and self._wanted(r.group)})
            touched: dict[str, float] = {}
            for rec in recs:
                group = rec.group
                if group is None or rec.error is not None or rec.type is None:
                    continue
                if not self._wanted(group) or not self._describable.get(group):
                    continue
                if apply(self._records.setdefault(group, GroupRecords()), rec):
                    touched[group] = max(touched.get(group, 0.0), rec.timestamp / 1000)
            if quiet_until is None and self._looked:
                for group, at in touched.items():
                    out += self._look(group, at)
        if quiet_until is not None and self.tail is not None and \
                self.tail.offsets.get(chunk.partition, 0) >= quiet_until:
            del self._quiet[chunk.partition]
            if self._looked:   # a partition read again (truncated): what differs, told
                out += self._relook(chunk.partition)
        return out

    def _relook(self, partition: int) -> list[Observation]:
        at = self.clock()
        groups = {g for g in [*self._records, *self._told] if self._partition(g) == partition}
        return [o for g in sorted(groups) for o in self._look(g, at)]

    def _look(self, group: str, at: float) -> list[Observation]:
        """The group as its records now say, if that differs from what was told."""
        records = self._records.get(group)
        desc = None if records is None else describe(group, records, self._names)
        shown = None if desc is None or desc.state == DEAD else desc.to_dict()
        if group in self._told and self._told[group] == shown:
            return []
        if desc is not None and self._told.get(group) is None and not desc.members \
                and desc.state == "Empty":
            return []   # created (a classic group's generation 0): told once it has members
        new = group not in self.groups
        self._told[group] = shown
        if desc is None or shown is None:
            if new:
                return []
            if self.all_groups:
                del self.groups[group]   # forgotten; followed again if created again
            return [Missing(group, at, self.label)]
        if new:
            self.groups[group] = None
            return [Appeared(group, at, self.label), Seen(group, at, self.label, desc)]
        return [Seen(group, at, self.label, desc)]

    def _first_looks(self) -> list[Observation]:
        """Every followed group as it stands now (all records up to the start replayed)."""
        self._looked = True
        at = self.clock()
        out: list[Observation] = []
        names = self.order if not self.all_groups else sorted(self._records)
        for group in names:
            records = self._records.get(group)
            desc: GroupDescription | None = None
            if records is not None:
                desc = describe(group, records, self._names)
            if desc is None or desc.state == DEAD:
                self._told[group] = None
                if not self.all_groups:
                    out.append(Missing(group, at, self.label))
                continue
            self.groups[group] = None
            self._told[group] = desc.to_dict()
            out.append(Seen(group, at, self.label, desc))
        return out

    async def _name_topics(self, recs) -> None:
        """Topic ids named from the cluster's metadata, fetched again when a record names
        an id not known yet (a topic created during the watch): before the group is
        described, so an assignment never changes from an id to a name."""
        if recs is not None:
            ids = {i for rec in recs for i in _topic_ids(rec.value)}
            if not ids - self._names.keys() - self._unnamed:
                return
        try:
            md = await self.cluster.metadata(None, deadline=self.timeout)
        except asyncio.CancelledError:
            raise
        except Exception:   # noqa: BLE001 - ids stay ids; the tail's own faults say why
            if recs is None:
                raise
            return
        self._names = {t.topic_id: name for name, t in md.topics.items() if t.topic_id}
        if recs is not None:
            self._unnamed |= ids - self._names.keys()


def _topic_ids(value: dict | None) -> Iterable[str]:
    """The topic ids a record's value names (assignments: [{topic_id, partitions}])."""
    if not value:
        return ()
    return [item["topic_id"] for field in value.values() if isinstance(field, list)
            for item in field if isinstance(item, dict) and item.get("topic_id")]


def records_event(event: dict, desc: GroupDescription) -> dict:
    """An event told from the records, as `history` tells it: a classic round's start is
    not in the records (no start, no duration); the generation's leader and a modern
    member's epochs and state are."""
    from .history import amend_from_records

    return amend_from_records(event, desc)
