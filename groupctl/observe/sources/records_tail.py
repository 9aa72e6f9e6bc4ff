"""The coordinator's records, tailed live: the source of `watch --source records`.

    tail = RecordsTail(cluster, ["orders"])            # or all_groups=True (regex=...)
    async for o in tail.observations(until=t):         # Seen / Missing / Appeared, faults
        ...

The same GroupSource interface as the describe poller (poller.py), and the same replay of
the coordinator's records as `history` (replay.py): each write of the coordinator is one
change of a group (a batch may hold several: replay.Write), told with the broker's record
timestamp (source "records"). Nothing is polled: long-poll Fetch (client.topic_tail:
max_wait_ms 500, answered as soon as a record is committed), so no change falls between
two looks.

Start: the story needs the groups as they are now before it can tell a change, and the
records are the only thing that can say it exactly: each followed partition is read from
its earliest offset up to its end at the start (ListOffsets LATEST), replayed without
telling anything (offset commits skipped on their key type, unread), and then each group
is told once as it stands (the first look: a `snapshot`, at the local time of the look);
every record after that end is told as it comes, after the first looks, even one the same
Fetch answer read (a generation written while the watch started is news); a topic that did
not exist at the start holds only news. Reading from the end only would leave the story
blind until each group's next full write, and a consumer group's members are written only
when they change. The first look carries the group's past (records_past).

Faults: a lost leader, a broker restart or a coordinator move stalls the tail, which
resumes at the next offset it has not read (nothing told twice, nothing skipped); said
once as ContactLost / ContactRegained, which do not blind the stories (`resumes_exactly`).
A truncated log (OFFSET_OUT_OF_RANGE) is read again from its start and only what differs
from what was told is told. Without READ / DESCRIBE on `__consumer_offsets`:
TopicAuthorizationError (exit 4) naming the ACL. Only groups the principal may describe
are shown (observe/acl.py): a named group refused is exit 4, one found under --all is
said once on stderr and never shown.

Groups: the named ones (their partitions only: abs(hashCode) % partitions, as the broker
places them); a named group without records is `Missing` (not told: it never went Dead) until
it has members (a classic group's creation record, Empty at generation 0, is not told: its first
generation is the rebalance from nothing, as a describe would see it). `--all`: every
group with records in any partition (`regex` filters names), a group created meanwhile
`Appeared` once it has members, a deleted one `Missing` once and then forgotten. A group
that only committed offsets (most of a fleet: no member ever joined it) exists as
DescribeGroups shows it, an Empty classic group with no protocol type: its commits are
passed over unread but their keys name it (client.topic_tail's `skipped`), so it is told
once as it stands (and `Appeared` when it first commits during the watch).
"""
from __future__ import annotations

import asyncio
import re
import time
from hashlib import blake2b
from collections.abc import AsyncIterator, Callable, Iterable

from typing import TYPE_CHECKING, NamedTuple

import orjson

from ...events import Source
from ..reads.model import DEAD, GroupDescription, coordinator_partition
from .contact import Contact
from .observations import Appeared, Missing, Observation, Seen
from ..reads.records import commits_by_batch, coordinator_batches, topic_ids
from ..reads.records_assignors import DefaultAssignors
from .records_past import PAST_WRITES, PAST_WRITES_ALL, RecordsPast
from .records_start import TOPIC, ShownGroups, locate
from ..reads.replay import GROUP_METADATA, GroupRecords, Write, apply, describe

RECORDS = Source.RECORDS.value
OFFSET_COMMIT_KEYS = frozenset({b"\x00\x00", b"\x00\x01"})   # key types 0, 1: skipped unread
MAX_WAIT_MS = 500

if TYPE_CHECKING:
    from ...client.topic_tail import TopicTail


class Told(NamedTuple):
    """What a look told, to compare the next one with: its state, whether it had members,
    a digest of the whole (the look itself, ~1 KB a group, is 100 MB at 100,000)."""
    state: str | None
    members: bool
    digest: bytes


def told(desc: GroupDescription) -> Told:
    shown = desc.to_dict()
    whole = orjson.dumps(shown, default=repr,   # keys sorted: a dict's order is no change
                         option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)
    return Told(shown["state"], bool(shown["members"]), blake2b(whole, digest_size=16).digest())


class RecordsTail:
    label = RECORDS
    resumes_exactly = True   # a lost contact hides nothing: the tail resumes where it was
    first_round = None       # no rounds: it reads each record as it comes

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
        self._told: dict[str, Told | None] = {}    # group -> the look last told (None: missing)
        self._names: dict[str, str] = {}           # topic id -> name
        self._unnamed: set[str] = set()            # ids no metadata names (deleted topics)
        self._quiet: dict[int, int] = {}           # partition -> offset to replay up to, untold
        self._looked = False                       # the first look was told
        self._waiting: list = []                   # batches after the start, read before it
        self.past = RecordsPast(getattr(cluster, "cluster_id", None),   # replayed, untold
                                PAST_WRITES_ALL if all_groups else PAST_WRITES)
        self._recent: dict[str, list[dict]] = {}   # group -> its past, for its first look
        self.assignors = DefaultAssignors(cluster, timeout)   # not in the records: asked
        self._until: float | None = None           # loop time: the end of --duration
        self._shown = ShownGroups(cluster, self.named, lambda text: self.notice(text), timeout)

    def follows(self, group: str) -> bool:
        return group in self.groups

    def _wanted(self, group: str) -> bool:
        if self.all_groups:
            return self.regex is None or self.regex.search(group) is not None
        return group in self.named

    # ---- the observations -----------------------------------------------------------------
    async def observations(self, *, until: float | None = None) -> AsyncIterator[Observation]:
        from ...client.topic_tail import Chunk, Restart, Resumed, Stalled

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
        self._until = until
        contact = Contact(self.label, self.clock)   # lost and regained (sources/contact.py)
        async for item in tail.items(until=until):
            out: list[Observation] = []
            if isinstance(item, Chunk):
                try:
                    out = await self._bounded(self._chunk(item))
                except asyncio.TimeoutError:
                    return   # the end of --duration, in a metadata lookup
            elif isinstance(item, Stalled):
                out = contact.failed(item.error)
            elif isinstance(item, Resumed):
                out = contact.answered(None, self.clock())
            elif isinstance(item, Restart):
                try:
                    await self._bounded(self._restart(tail, [item.partition]))
                except asyncio.TimeoutError:
                    return
            if not self._looked and not self._quiet:
                try:
                    out += await self._bounded(self._caught_up())
                except asyncio.TimeoutError:
                    return
            for o in out:
                yield o

    async def _start(self):
        from ...client.topic_tail import TopicTail

        tail = self.tail = TopicTail(self.cluster, TOPIC, [], max_wait_ms=self.max_wait_ms,
                                     timeout=self.timeout, skip_keys=OFFSET_COMMIT_KEYS,
                                     collect_skipped=True)
        # no topic at the start: no group had a record then, and all it holds is news
        created = await locate(tail, self.cluster, self.named, all_groups=self.all_groups,
                               notice=self.notice, timeout=self.timeout)
        await self._shown.check(self.named)   # Read on the topic is not enough
        await self._name_topics(None)
        await self._restart(tail, tail.partitions, replay=not created)
        if self.on_round is not None:
            tail.on_fetch = self.on_round
        return tail

    async def _restart(self, tail, parts: list[int], replay: bool = True) -> None:
        """Read `parts` again from their earliest offsets, untold up to their ends now
        (`replay` False: nothing untold); their groups' records start over."""
        from ...client.topic_tail import EARLIEST, LATEST

        starts = await tail.offsets_at(EARLIEST, parts)
        ends = await tail.offsets_at(LATEST, parts) if replay else starts
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
        """One answer's batches in order. Up to a partition's end at the start (`_quiet`)
        they are replayed untold; the batches after it are told as they come, once every
        followed partition has reached its end and the first looks are told (until then
        they wait, unread: `_waiting`), so a change made while the watch started is told,
        not folded into the first look."""
        for damaged in chunk.damaged:
            self.notice(f"{TOPIC}-{chunk.partition}: {damaged}")
        p, out = chunk.partition, []
        groups = None if self.all_groups else set(self.named)
        commits = commits_by_batch(chunk)
        batches = list(coordinator_batches(chunk.batches, groups=groups))
        # the answer's new groups asked about at once (a batch holds one group's write
        # mostly: asked batch by batch, a fleet's start was 100,000 FindCoordinators)
        await self._shown.check(
            {r.group for _, recs in batches for r in recs
             if r.group is not None and self._wanted(r.group)}
            | {g for done in commits.values() for g in done if self._wanted(g)})
        for batch, recs in batches:
            base = getattr(batch, "base_offset", -1)   # (a chunk's batches are not damaged)
            quiet_until = self._quiet.get(p)
            if quiet_until is not None and base >= quiet_until:
                out += await self._caught_up(p)   # this batch is the first after the start
            done = commits.get(base, {})
            if p in self._quiet:   # (compaction's gaps: records_past)
                self.past.batch(p, batch)
            if not self._looked and p not in self._quiet:
                self._waiting.append((recs, done))   # told after the first looks
                continue
            out += await self._apply(recs, done, tell=p not in self._quiet)
        quiet_until = self._quiet.get(p)
        if quiet_until is not None and self.tail is not None and \
                self.tail.offsets.get(p, 0) >= quiet_until:
            out += await self._caught_up(p)
        return out

    async def _caught_up(self, partition: int | None = None) -> list[Observation]:
        """`partition` read up to its end at the start: a partition read again (truncated)
        tells what differs; the last one of the start tells the first looks, then what
        waited for them."""
        if partition is not None:
            del self._quiet[partition]
            if self._looked:
                return self._relook(partition)
        if self._looked or self._quiet:
            return []
        await self.assignors.learn(self._records)
        out = self._first_looks()
        waiting, self._waiting = self._waiting, []
        for recs, done in waiting:
            out += await self._apply(recs, done, tell=True)
        return out

    async def _apply(self, recs, commits: dict, *, tell: bool) -> list[Observation]:
        """One batch's group records, and its offset commits (`commits`: group -> (its
        last commit's offset, the batch's time)), into the groups' records; each group
        looked at after each coordinator write this changed (a batch may hold several:
        replay.Write), told (`tell`) or, before the first looks, kept as its past. A group
        that committed is known to exist."""
        await self._name_topics(recs)
        await self._shown.check({r.group for r in recs if r.group is not None
                                       and self._wanted(r.group)}
                                      | {g for g in commits if self._wanted(g)})
        writes: dict[str, Write] = {}    # group -> its write being read
        deleted: dict[str, int] = {}     # group -> offset of its tombstone in this batch
        out: list[Observation] = []
        for rec in recs:
            group = rec.group
            if group is None or rec.error is not None or rec.type is None:
                continue
            if not self._wanted(group) or not self._shown.get(group):
                continue
            write = writes.get(group)
            if write is not None and write.ends_before(rec):   # the write before it, seen
                out += self._after_write(group, writes.pop(group).timestamp / 1000, tell)
            if apply(self._records.setdefault(group, GroupRecords()), rec):
                writes.setdefault(group, Write(rec.timestamp)).add(rec)
                if rec.type == GROUP_METADATA and rec.value is None:
                    deleted[group] = rec.offset
        ends = {group: write.timestamp / 1000 for group, write in writes.items()}
        for group, (offset, at) in commits.items():
            if not self._wanted(group) or not self._shown.get(group) \
                    or offset < deleted.get(group, -1):
                continue   # (committed, then deleted in the same batch)
            records = self._records.setdefault(group, GroupRecords())
            if not records.committed:
                records.committed = True
                ends[group] = max(ends.get(group, at), at)
        if tell:
            await self.assignors.learn({g: self._records[g] for g in ends})
        for group, at in ends.items():
            out += self._after_write(group, at, tell)
        return out

    def _after_write(self, group: str, at: float, tell: bool) -> list[Observation]:
        records = self._records[group]
        if tell:
            return self._look(group, at)
        if not self._looked and records.seen:   # its past, with its first look (no commits)
            self.past.keep(group, self._partition(group), at, records)
        return []

    def _relook(self, partition: int) -> list[Observation]:
        at = self.clock()
        groups = {g for g in [*self._records, *self._told] if self._partition(g) == partition}
        return [o for g in sorted(groups) for o in self._look(g, at)]

    def _look(self, group: str, at: float) -> list[Observation]:
        """The group as its records now say, if that differs from what was told."""
        records = self._records.get(group)
        desc = None if records is None else describe(group, records, self._names,
                                                     self.assignors.known)
        shown = None if desc is None or desc.state == DEAD else told(desc)
        if group in self._told and self._told[group] == shown:
            return []
        before = self._told.get(group)
        if desc is not None and not desc.members and desc.state == "Empty" \
                and desc.generation is not None and (before is None or (
                    not before.members and before.state == "Empty")):
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
                desc = describe(group, records, self._names, self.assignors.known)
            if desc is None or desc.state == DEAD:
                self._told[group] = None
                if not self.all_groups:
                    out.append(Missing(group, at, self.label))
                continue
            self.groups[group] = None
            self._told[group] = told(desc)
            self._recent[group] = self.past.take(group, self._names, self.assignors.known)
            out.append(Seen(group, at, self.label, desc))
        self.past.clear()
        return out

    def amend(self, event: dict, desc: GroupDescription) -> dict:
        """An event told from a look of this source, as `history` tells it (what the
        records cannot say null: a classic round's start and duration); a group's first
        look (`snapshot`) with the rebalances its records held before the watch
        (`recent_rebalances`, oldest first: records_past)."""
        from .history import amend_from_records, unowned_unknown

        event = unowned_unknown(amend_from_records(event, desc), desc)
        if event["event"] == "snapshot":
            recent = self._recent.pop(event["group"], None)
            if recent:
                event["recent_rebalances"] = recent
        return event

    async def _name_topics(self, recs) -> None:
        """Topic ids named from the cluster's metadata, fetched again when a record names
        an id not known yet (a topic created during the watch): before the group is
        described, so an assignment never changes from an id to a name."""
        if recs is not None:
            ids = {i for rec in recs for i in topic_ids(rec.value)}
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

