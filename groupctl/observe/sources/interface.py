"""What a source gives the Watcher (and `wait`, the probe, force-rebalance's waits): the
observations of the groups it follows, and what the Watcher must know of it to tell them.
The describe poller (poller.py) and the tail of the coordinator's records (records_tail.py)
are two of them; the Watcher asks only this, never which one it holds.

    async for o in source.observations(until=end):   # Seen / Missing / Appeared / faults
        ...
    source.follows(group)        # still followed (--all: a group gone and unlisted is not)
    source.groups                # the groups followed now (the lag poller reads them)
    source.amend(event, desc)    # an event told from one of its looks, as this source can
                                 # know it (the records cannot say a classic round's start)
    source.resumes_exactly       # a fault blinds no story (the source goes on from where
                                 # it was): said, and fed to no story
    source.first_round           # set once its first round is over (None: it has none)
"""
from __future__ import annotations

import asyncio
from typing import AsyncIterator, Mapping, Protocol

from ..reads.model import GroupDescription
from .observations import Observation


class GroupSource(Protocol):
    @property
    def label(self) -> str: ...

    @property
    def resumes_exactly(self) -> bool: ...

    @property
    def first_round(self) -> asyncio.Event | None: ...

    @property
    def groups(self) -> Mapping[str, None]: ...

    def observations(self, *, until: float | None = None) -> AsyncIterator[Observation]: ...

    def follows(self, group: str) -> bool: ...

    def amend(self, event: dict, desc: GroupDescription) -> dict: ...
