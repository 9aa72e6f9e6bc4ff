"""`watch`: follow groups passively, without joining them (docs/commands/watch.md, docs/reference/events.md).

    watcher = Watcher(cluster, WatchSettings(groups=["g"], interval=1.0), emit=sink)
    code = await watcher.run()        # 0, or ExitCode.CONDITION_VIOLATED via ConditionViolated
    watcher.summaries()               # per group: rebalances, time rebalancing, flappers

The pipeline of observe/ (see its package doc): the describe poller (source.py; `--all`
relisting, back-off), or with `source="records"` the tail of the coordinator's records
(records_tail.py), or with `source="auto"` both (sources/auto.py: the records' rounds,
describe's states and starts; describe alone where the records may not be read) -> one
RebalanceStory per group (story.py) -> event envelopes (source "describe" or "records") -> `emit`.
Each story folds what it tells into its group's GroupStatus (reducer.py), and the Watcher's
reducer holds those very objects: one state per group, which gives the summary and
--max-rebalances. A group that disappears is told as `state` Dead once and then
forgotten (with --all) or watched for a comeback.

`--lag` (settings.lag_interval): a second source beside the describe poller, the lag
poller (lag.py, its own interval), whose reads the reducer holds (per group and topic) and
which gives each `rebalance` its `lag_before` / `lag_after` (lag_rounds.py; a rebalance is
held until the lag read after its end is in, and counts for --max-rebalances once told). OffsetFetch, Metadata and ListOffsets only.

Observation only: DescribeGroups, ConsumerGroupDescribe, ShareGroupDescribe,
StreamsGroupDescribe, FindCoordinator, ListGroups, Metadata (the records tail: Metadata,
ListOffsets, Fetch). Never a JoinGroup, SyncGroup, Heartbeat, LeaveGroup or OffsetCommit.

Faults: a round that fails as a whole (every broker down, the coordinator moving) is a
ContactLost observation, said once on `notice` ("lost contact ...") and retried with
back-off; the stories keep their last look, so the next good round continues from it: no
event is repeated, each group is told again in full (`snapshot`, with `gap_ms`), and a
rebalance that happened meanwhile is told once, from before to after. The records tail
resumes at the first record it has not read: its faults are said but blind no story.
"""
from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field
from typing import Callable

from ..client.interface import ClusterLike
from ..errors import GroupctlError
from ..events import Event, Source, envelope
from ..exitcodes import ExitCode
from .sources.auto import AUTO, AutoSource
from .sources.lag import LagPoller
from .story.lag_rounds import LagRounds
from .sources.observations import FAULTS, Missing, Observation, Seen
from .sources.records_tail import RecordsTail
from .state.reducer import GroupStatus, Reducer
from .sources.interface import GroupSource
from .sources.poller import DescribePoller
from .story.story import RebalanceStory

DEAD = "Dead"


class ConditionViolated(GroupctlError):
    """A watched condition was violated (`watch --max-rebalances`): exit 8."""
    exit_code = ExitCode.CONDITION_VIOLATED


@dataclass
class WatchSettings:
    groups: list[str] = field(default_factory=list)
    all_groups: bool = False
    regex: re.Pattern | None = None
    interval: float = 1.0
    duration: float | None = None
    max_rebalances: int | None = None
    list_every: float = 5.0          # --all: seconds between ListGroups
    source: str = "describe"         # "records": tail the coordinator's records; "auto":
                                     # both, or describe alone (sources/auto.py)
    lag_interval: float | None = None   # --lag: seconds between lag rounds (None: no lag)
    must_exist: bool = False         # a named group missing at the first look: exit 5


# `watch`'s summary of a group is the reducer's (GroupStatus.summary)
GroupSummary = GroupStatus


class Watcher:
    def __init__(self, cluster: ClusterLike, settings: WatchSettings, *,
                 emit: Callable[[dict], None],
                 clock=None, notice: Callable[[str], None] | None = None,
                 poll_deadline: float = 10.0, source: GroupSource | None = None):
        import time

        self.cluster = cluster
        self.settings = settings
        self.emit = emit
        self.clock = clock or time.time
        self.notice = notice or (lambda text: None)
        self.source: GroupSource
        if source is not None:   # any source (sources/interface.py)
            self.source = source
        elif settings.source == AUTO:   # the records and describe, or describe alone
            self.source = AutoSource(cluster, settings.groups, all_groups=settings.all_groups,
                                     regex=settings.regex, interval=settings.interval,
                                     list_every=settings.list_every, clock=self.clock,
                                     poll_deadline=poll_deadline, notice=self.notice)
        elif settings.source == Source.RECORDS:
            tail = RecordsTail(cluster, settings.groups, all_groups=settings.all_groups,
                               regex=settings.regex, clock=self.clock, timeout=poll_deadline)
            tail.notice = self.notice
            self.source = tail
        else:
            self.source = DescribePoller(cluster, settings.groups,
                                         all_groups=settings.all_groups, regex=settings.regex,
                                         interval=settings.interval,
                                         list_every=settings.list_every, clock=self.clock,
                                         poll_deadline=poll_deadline)
        self.stories: dict[str, RebalanceStory] = {}
        self._looked: set[str] = set()   # named groups seen (or found missing) once
        self.reducer = Reducer()
        self.lag: LagRounds | None = None
        self.lag_source: LagPoller | None = None
        if settings.lag_interval is not None:   # --lag: a source of its own, beside describe
            self.lag_source = LagPoller(cluster, lambda: self.source.groups,
                                        interval=settings.lag_interval,
                                        on_round=self._lag_round, clock=self.clock,
                                        poll_deadline=poll_deadline)
            self.lag = LagRounds(self.reducer, deliver=lambda told: self.emit(told),
                                 hurry=self.lag_source.hurry)
        for g in settings.groups:
            self._follow(g)

    # ---- the loop --------------------------------------------------------------------
    async def run(self) -> int:
        loop = asyncio.get_running_loop()
        end = None if self.settings.duration is None else loop.time() + self.settings.duration
        if self.lag_source is None:
            await self._describe(end)
            return ExitCode.OK
        self.lag_source.monotonic = loop.time
        describe = asyncio.ensure_future(self._describe(end))
        pending = {describe, asyncio.ensure_future(
            self.lag_source.run(until=end, after=self.source.first_round))}
        try:
            while describe in pending:   # the watch ends with the describe source
                done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
                for task in done:
                    task.result()   # a failure (exit 8 from a held rebalance) ends the watch
        finally:
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
            assert self.lag is not None
            self.lag.flush()
        return ExitCode.OK

    async def _describe(self, end: float | None) -> None:
        async for o in self.source.observations(until=end):
            self.take(o)

    def take(self, o: Observation) -> None:
        """One observation through its story (faults: through every story) to the sinks."""
        if isinstance(o, FAULTS):
            text = o.text()
            if text is not None:   # a late round is not said (sources/contact.py)
                self.notice(text)
            if not self.source.resumes_exactly:   # one that resumes where it was: no gap
                for story in self.stories.values():
                    story.feed(o)
            return
        group = o.group
        assert group is not None   # per-group observations name their group
        if group not in self._looked and not self.settings.all_groups:
            self._looked.add(group)
            if isinstance(o, Missing):
                self._missing_at_start(group)
        story = self._follow(group)
        story.feed(o)
        self._tell(group, story.take_told())
        if not self.source.follows(group):
            del self.stories[group]   # --all: gone and unlisted; followed again if listed

    def _missing_at_start(self, group: str) -> None:
        """A named group that does not exist at the first look: said once (the watch
        goes on, for it to appear), or the end of the watch with --must-exist."""
        if self.settings.must_exist:
            from ..errors import NotFoundError

            raise NotFoundError(f"group {group!r} does not exist (--must-exist)")
        self.notice(f"group {group!r} does not exist; watching for it to appear")

    # ---- per group -------------------------------------------------------------------
    def _follow(self, group: str) -> RebalanceStory:
        if group not in self.stories:   # the story folds into the reducer's own status
            status = self.reducer.groups.setdefault(group, GroupStatus(group))
            self.stories[group] = RebalanceStory(group, clock=self.clock, status=status,
                                                 tell=self._envelope)
        return self.stories[group]

    def _envelope(self, event: Event, o: Observation, group: str) -> dict:
        told = envelope(event, group=group, source=o.source, at=o.at,
                        cluster=getattr(self.cluster, "cluster_id", None))
        if isinstance(o, Seen):
            told = self.source.amend(told, o.desc)   # what the source cannot say: null
        return told

    def _tell(self, group: str, told: list[dict]) -> None:
        """The story's events, folded already, to the sinks."""
        for event in told:
            if self.lag is None:
                self.emit(event)
            else:
                self.lag.route(event)   # a rebalance waits for the lag after it
        self._check_limit(group)

    def _lag_round(self, asked_at: float, lags: dict) -> None:
        assert self.lag is not None
        held = list(self.lag.held)
        self.lag.round_done(asked_at, lags)
        for group in held:
            if group in self.reducer.groups:
                self._check_limit(group)   # a held rebalance told now counts now

    def _check_limit(self, group: str) -> None:
        if self.lag is not None and group in self.lag.held:
            return   # a rebalance held for its lag read counts once told
        status = self.reducer.groups[group]
        limit = self.settings.max_rebalances
        if limit is not None and status.rebalances > limit:
            times = "time" if status.rebalances == 1 else "times"
            raise ConditionViolated(f"group {group!r} rebalanced {status.rebalances} "
                                    f"{times} (--max-rebalances {limit})")

    def summaries(self) -> list[dict]:
        return [s.summary() for _, s in sorted(self.reducer.groups.items())]
