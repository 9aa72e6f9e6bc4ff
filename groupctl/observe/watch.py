"""`watch`: follow groups passively, without joining them (DESIGN §2, §4).

    watcher = Watcher(cluster, WatchSettings(groups=["g"], interval=1.0), emit=sink)
    code = await watcher.run()        # 0, or ExitCode.CONDITION_VIOLATED via ConditionViolated
    watcher.summaries()               # per group: rebalances, time rebalancing, flappers

Every interval: one describe round (observe.describe.describe_groups(offsets=False): one
FindCoordinator batch, then per coordinator one request per group type's describe API for
all the groups it coordinates); each group's snapshot goes to that group's RebalanceStory
(story.py), the same story the probe tells, and its events to `emit` (§4 envelopes,
source "describe"). `--all` (`all_groups`) lists the groups every `list_every` seconds
(ListGroups on every broker) and follows those that appear; a group that disappears is told
as `state` Dead once and then forgotten (with --all) or watched for a comeback.

Observation only: DescribeGroups, ConsumerGroupDescribe, ShareGroupDescribe,
StreamsGroupDescribe, FindCoordinator, ListGroups, Metadata. Never a JoinGroup, SyncGroup,
Heartbeat, LeaveGroup or OffsetCommit.

Faults: a round that fails as a whole (every broker down, the coordinator moving) is told
once on `notice` ("lost contact ...") and retried with back-off; the stories keep their last
snapshot, so the next good round continues from it: no event is repeated, and a rebalance
that happened meanwhile is told once, from before to after.
"""
from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field
from typing import Callable

from ..client.retry import Backoff
from ..errors import GroupctlError, NotFoundError, UsageError
from ..events import Event, MemberJoined, MemberLeft, Rebalanced, StateChanged, envelope
from ..exitcodes import ExitCode
from .story import RebalanceStory

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


@dataclass
class GroupSummary:
    """What a --duration watch says about one group at its end."""

    group: str
    rebalances: int = 0
    rebalancing_ms_total: int = 0
    rebalancing_ms_longest: int = 0
    changes: dict[str, int] = field(default_factory=dict)   # member key -> joins + leaves
    last_state: str | None = None

    def count(self, event: Event) -> None:
        if isinstance(event, Rebalanced):
            self.rebalances += 1
            self.rebalancing_ms_total += event.duration_ms
            self.rebalancing_ms_longest = max(self.rebalancing_ms_longest, event.duration_ms)
        elif isinstance(event, (MemberJoined, MemberLeft)):
            key = event.instance_id or event.client_id or event.member_id
            self.changes[key] = self.changes.get(key, 0) + 1
        elif isinstance(event, StateChanged):
            self.last_state = event.state

    @property
    def flapping(self) -> list[str]:
        """Members (by instance id, else client id) that joined and left more than once
        in all: came and went, or went and came back."""
        return sorted(k for k, n in self.changes.items() if n >= 2)

    def to_dict(self) -> dict:
        return {"group": self.group, "state": self.last_state, "rebalances": self.rebalances,
                "rebalancing_ms_total": self.rebalancing_ms_total,
                "rebalancing_ms_longest": self.rebalancing_ms_longest,
                "flapping_members": self.flapping}


class Watcher:
    def __init__(self, cluster, settings: WatchSettings, *, emit: Callable[[dict], None],
                 clock=None, notice: Callable[[str], None] | None = None,
                 poll_deadline: float = 10.0):
        import time

        self.cluster = cluster
        self.settings = settings
        self.emit = emit
        self.clock = clock or time.time
        self.notice = notice or (lambda text: None)
        self.poll_deadline = poll_deadline
        self.stories: dict[str, RebalanceStory] = {}
        self.summary: dict[str, GroupSummary] = {}
        self.listings: dict = {}
        self._listed_at: float | None = None
        self._trouble: str | None = None
        for g in settings.groups:
            self._follow(g)

    # ---- the loop --------------------------------------------------------------------
    async def run(self) -> int:
        loop = asyncio.get_running_loop()
        end = None if self.settings.duration is None else loop.time() + self.settings.duration
        backoff = Backoff(base=self.settings.interval, cap=max(5.0, self.settings.interval))
        while end is None or loop.time() < end:
            started = loop.time()
            try:
                await self.poll_once()
                wait = self.settings.interval - (loop.time() - started)
                backoff.reset()
            except GroupctlError as exc:
                if isinstance(exc, (ConditionViolated, UsageError)):
                    raise  # not lost contact: e.g. the --record file cannot be written
                self._lost(exc)
                wait = backoff.next()
            if end is not None:
                wait = min(wait, end - loop.time())
            if wait > 0:
                await asyncio.sleep(wait)
        return ExitCode.OK

    async def poll_once(self) -> None:
        """One round: (with --all) the group list when due, then every group's snapshot."""
        from .describe import describe_groups

        deadline = self.cluster.deadline(self.poll_deadline)
        if self.settings.all_groups:
            await self._relist(deadline)
        names = list(self.stories)
        result = await describe_groups(self.cluster, names, listings=self.listings,
                                       deadline=deadline, offsets=False)
        failed = [e for e in result.failures.values() if not isinstance(e, NotFoundError)]
        if failed and len(failed) == len(names):
            raise failed[0]  # nothing answered: contact lost, not a group's own trouble
        self._back()
        at = self.clock()
        for desc in result.groups:
            self._tell(desc.group, self.stories[desc.group].observe(desc, at=at))
        for group, error in result.failures.items():
            if isinstance(error, NotFoundError):
                self._gone(group, at)

    async def _relist(self, deadline) -> None:
        from .listing import list_groups

        now = self.clock()
        if self._listed_at is not None and now - self._listed_at < self.settings.list_every:
            return
        listed = await list_groups(self.cluster, regex=self.settings.regex, deadline=deadline)
        first = self._listed_at is None
        self._listed_at = now
        self.listings = {g.group: g for g in listed.groups}
        for g in self.listings:
            if g not in self.stories:
                self._follow(g)
                if not first:   # new since the last list: told from nothing, so its first
                    self.stories[g].members = {}   # generation is a rebalance

    # ---- per group -------------------------------------------------------------------
    def _follow(self, group: str) -> None:
        if group not in self.stories:
            self.stories[group] = RebalanceStory(group, clock=self.clock)
            self.summary.setdefault(group, GroupSummary(group))

    def _gone(self, group: str, at: float) -> None:
        story = self.stories[group]
        self._tell(group, story.state(DEAD, at=at))
        # known to be empty: a group created again is told from nothing (its first
        # generation a rebalance whose members all joined)
        story.members, story.generation, story.epochs = {}, None, None
        story.group_type = None   # a group created again may be of another type
        if self.settings.all_groups and group not in self.listings:
            del self.stories[group]   # --all: forget it; it is followed again if listed

    def _tell(self, group: str, events: list[Event]) -> None:
        summary = self.summary[group]
        for event in events:
            summary.count(event)
            self.emit(envelope(event, group=group, source="describe", at=self.clock(),
                               cluster=getattr(self.cluster, "cluster_id", None)))
        limit = self.settings.max_rebalances
        if limit is not None and summary.rebalances > limit:
            raise ConditionViolated(f"group {group!r} rebalanced {summary.rebalances} times "
                                    f"(--max-rebalances {limit})")

    # ---- faults ----------------------------------------------------------------------
    def _lost(self, exc: GroupctlError) -> None:
        if self._trouble is None:
            self.notice(f"lost contact with the groups' coordinators ({exc}); retrying")
        self._trouble = str(exc)

    def _back(self) -> None:
        if self._trouble is not None:
            self.notice("reconnected; carrying on from the last snapshot")
        self._trouble = None

    def summaries(self) -> list[dict]:
        return [s.to_dict() for _, s in sorted(self.summary.items())]
