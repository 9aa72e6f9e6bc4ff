"""Sources of observations (observations.py). The describe poller is the one place that
describes groups in a loop: `watch`, `wait`, the KIP-848 probe's polling, force-rebalance's
waits for Stable and the CLI's wait before it all take their observations from it.

    poller = DescribePoller(cluster, ["g"], interval=1.0)
    async for o in poller.observations():      # Seen / Missing / Appeared / ContactLost ...
        ...
    await poller.round()                       # one round, as a list (tests, one-shots)

GroupSource (interface.py) is what the Watcher asks of a source. A replay of the
coordinator's records yields the same Seen
observations with the records' timestamps and label "records".

Each round: (with `all_groups`) ListGroups when `list_every` seconds have passed since the
last (a group listed since the last listing is `Appeared`, one gone and unlisted is
`Missing` once and then forgotten), then observe.describe.describe_groups(offsets=False, or
True for wait --max-lag) for every followed group: `Seen` per group described, `Missing`
per group not found. `types` ({group: type}) asks only that type's describe API (e.g. a
classic group: DescribeGroups only). A round that fails as a whole (nothing answered) is
`ContactLost` once, and the rounds go on with back-off until one answers: then
`ContactRegained`; a round answered more than `interval` after it was asked begins with
`ContactLate` (sources/contact.py: the figures of its looks span the wait). Rounds run every `interval` (`hurry(s)`: the next one sooner), until
`until` (loop time) or the `deadline` (a client Deadline) has passed.

`coordinator(group)`: the broker that last described the group, and whether the last
round got no description of it (its coordinator unreachable, timed out, or answering
with an error until the round's deadline; every group when the round failed as a whole):
the fleet view's COORD column.
"""
from __future__ import annotations

import asyncio
import re
import time
from typing import AsyncIterator, Callable, Iterable

from ...client.retry import Backoff
from ...client.errors import UnsupportedVersionError
from ...errors import AuthError, GroupctlError, NotFoundError, OutOfDescriptors
from ...events import Source
from ..reads.model import GroupDescription
from .contact import Contact
from .interface import GroupSource
from .observations import Appeared, ContactLost, Missing, Observation, Seen


class DescribePoller:
    def __init__(self, cluster, groups: Iterable[str] = (), *, all_groups: bool = False,
                 regex: re.Pattern | None = None, interval: float = 1.0,
                 list_every: float = 5.0, types: dict[str, str] | None = None,
                 offsets: bool = False, label: str = Source.DESCRIBE,
                 clock: Callable[[], float] = time.time, poll_deadline: float = 10.0,
                 deadline=None):
        self.cluster = cluster
        self.label = str(label.value if isinstance(label, Source) else label)
        self.all_groups, self.regex = all_groups, regex
        self.interval, self.list_every = interval, list_every
        self.offsets = offsets
        self.clock = clock
        self.poll_deadline, self.deadline = poll_deadline, deadline
        # an ordered set: follows() is asked once per observation (--all: thousands a round)
        self.groups: dict[str, None] = dict.fromkeys(groups)
        self.listings: dict = {}
        if types:
            from ..reads.listing import GroupListing

            self.listings = {g: GroupListing(g, None, t, None) for g, t in types.items()}
        self._listed_at: float | None = None
        # lost, regained, late (answered after the interval): sources/contact.py
        self.contact = Contact(self.label, clock, late_after=interval)
        self._hurry: float | None = None
        self._built: dict = {}   # the last round's descriptions, reused when unchanged
        self._coordinators: dict[str, int] = {}   # group -> the broker that described it
        self._unanswered: set[str] = set()        # groups the last round got nothing of
        # each round's outcome (seconds, failed as a whole): watch --metrics-port
        self.on_round: Callable[[float, bool], None] | None = None
        self.first_round = asyncio.Event()   # set once a round is over (watch --lag waits)
        self.resumes_exactly = False   # a round after a fault looks again: the stories have a gap

    def follows(self, group: str) -> bool:
        return group in self.groups

    def amend(self, event: dict, desc: GroupDescription) -> dict:
        return event   # a look tells all it can: nothing to amend

    def coordinator(self, group: str) -> tuple[int | None, bool]:
        """(the broker that last described `group` (None: none yet), whether the last
        round got no description of it)."""
        return self._coordinators.get(group), group in self._unanswered

    def hurry(self, seconds: float) -> None:
        """The next round in at most `seconds` (e.g. wait --settled ends before the next
        interval)."""
        self._hurry = seconds if self._hurry is None else min(self._hurry, seconds)

    # ---- rounds ------------------------------------------------------------------------
    async def observations(self, *, until: float | None = None) -> AsyncIterator[Observation]:
        loop = asyncio.get_running_loop()
        backoff = Backoff(base=self.interval, cap=max(5.0, self.interval))
        while True:
            started = loop.time()
            if until is None:
                told = await self.round()
            else:   # --duration ends a round in flight too (a frozen broker answers nothing)
                try:
                    told = await asyncio.wait_for(self.round(), max(0.0, until - started))
                except asyncio.TimeoutError:
                    if loop.time() >= until:
                        return
                    raise
            failed = self.contact.lost
            self.first_round.set()
            if self.on_round is not None:
                self.on_round(loop.time() - started, failed)
            for o in told:
                yield o
            wait = backoff.next() if failed else self.interval - (loop.time() - started)
            if not failed:
                backoff.reset()
            if self._hurry is not None:
                wait, self._hurry = min(wait, self._hurry), None
            if self.deadline is not None:
                if self.deadline.expired:
                    return
                wait = min(wait, self.deadline.remaining())
            if until is not None:
                if loop.time() >= until:
                    return
                wait = min(wait, until - loop.time())
            if wait > 0:
                await asyncio.sleep(wait)

    async def round(self) -> list[Observation]:
        """One round's observations (see the module doc); a failed round is one
        ContactLost (the first of a streak) or nothing; a round answered more than an
        interval after it was asked begins with ContactLate (sources/contact.py)."""
        from ..reads import describe

        self.contact.late_after = self.interval   # the probe moves its interval
        asked = self.clock()
        d = self.deadline if self.deadline is not None else self.cluster.deadline(self.poll_deadline)
        out: list[Observation] = []
        try:
            if self.all_groups:
                out += await self._relist(d)
            names = list(self.groups)
            result = await describe.describe_groups(self.cluster, names, listings=self.listings,
                                                    deadline=d, offsets=self.offsets,
                                                    built=self._built)
            denied = [e for e in result.failures.values() if isinstance(e, AuthError)]
            if denied and not self.all_groups:
                # a group named that the principal may not describe: no round will show
                # it (a watch gate would pass on nothing seen); exit 4 as describe's
                raise _Denied(denied[0])
            failed = [e for e in result.failures.values() if not isinstance(e, NotFoundError)]
            if failed and len(failed) == len(names):
                raise failed[0]  # nothing answered: contact lost, not a group's own trouble
        except _Denied as denial:
            raise denial.error from None
        except OutOfDescriptors:
            raise   # the machine's limit, not lost contact: no later round does better
        except GroupctlError as exc:
            if isinstance(exc, UnsupportedVersionError):
                raise   # what the broker cannot describe it never will: no retrying
            self._unanswered = set(self.groups)
            return self.contact.failed(exc)
        at = self.clock()
        out[:0] = self.contact.answered(asked, at)
        out += [Seen(desc.group, at, self.label, desc) for desc in result.groups]
        self._unanswered = set()
        for desc in result.groups:
            if desc.coordinator:
                self._coordinators[desc.group] = desc.coordinator["id"]
        for group, error in result.failures.items():
            if isinstance(error, NotFoundError):
                out.append(Missing(group, at, self.label))
                self._coordinators.pop(group, None)
                if self.all_groups and group not in self.listings:
                    del self.groups[group]   # --all: forgotten; followed again if listed
            elif not isinstance(error, AuthError):
                self._unanswered.add(group)
        return out

    async def _relist(self, deadline) -> list[Observation]:
        from ..reads.listing import list_groups

        now = self.clock()
        if self._listed_at is not None and now - self._listed_at < self.list_every:
            return []
        listed = await list_groups(self.cluster, regex=self.regex, deadline=deadline)
        first = self._listed_at is None
        self._listed_at = now
        self.listings = {g.group: g for g in listed.groups}
        out: list[Observation] = []
        for g in self.listings:
            if g not in self.groups:
                self.groups[g] = None
                if not first:   # new since the last list: told from nothing
                    out.append(Appeared(g, now, self.label))
        return out


class _Denied(Exception):
    """Carries a named group's AuthError past the contact-lost handling of a round."""

    def __init__(self, error: GroupctlError):
        self.error = error


async def looks(source: GroupSource) -> AsyncIterator:
    """The followed group's descriptions as the source sees them (None: it does not
    exist), for commands that wait on a condition of one group (force-rebalance). A round
    cut short by the deadline is skipped; any other failure is raised."""
    from ...errors import DeadlineError

    async for o in source.observations():
        if isinstance(o, Seen):
            yield o.desc
        elif isinstance(o, Missing):
            yield None
        elif isinstance(o, ContactLost) and not isinstance(o.error, DeadlineError):
            raise o.error
