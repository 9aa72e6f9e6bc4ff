"""What the records tail (records_tail.py) settles before it reads a record: where its
topic is (created first on a cluster where no group was ever coordinated) and which
groups the principal may be shown.

    created = await locate(tail, cluster, named, all_groups=False, notice=say, timeout=10)
    shown = ShownGroups(cluster, named, notice=say, timeout=10)
    await shown.check(groups)      # AuthError for a named group refused
    shown.get(group)               # True / False, None while unknown (not shown)
"""
from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable

from ...client.retry import Backoff
from ...errors import AuthError, GroupctlError, NotFoundError
from ..reads.acl import describable, refused_message
from ..reads.model import coordinator_partition

TOPIC = "__consumer_offsets"


async def locate(tail, cluster, named: frozenset[str], *, all_groups: bool,
                 notice: Callable[[str], None], timeout: float) -> bool:
    """The topic located, and the followed partitions' leaders. On a cluster where no
    group was ever coordinated it does not exist yet: FindCoordinator of a named group
    has the broker create it (as a describe or any consumer would), and it is looked
    for again until it appears with its leaders elected. Whether it had to be waited
    for."""
    backoff, asked = Backoff(0.2, 2.0), False
    while True:
        try:
            await tail.locate()
        except NotFoundError:
            if not asked:
                notice(f"waiting for topic {TOPIC}: no group has been coordinated "
                       f"on this cluster yet")
            if not asked and named:
                try:
                    await cluster.find_coordinators(sorted(named)[:1], deadline=timeout)
                except GroupctlError:
                    pass   # the topic is what is waited for
            asked = True
        else:
            count = tail.partition_count
            tail.partitions = (list(range(count)) if all_groups else
                               sorted({coordinator_partition(g, count) for g in named}))
            await tail.locate()
            if all(tail.leaders.get(p) is not None for p in tail.partitions):
                return asked
            asked = True   # its leaders not elected yet: it was just created
        await asyncio.sleep(backoff.next())


class ShownGroups:
    """Only groups the principal may describe are shown (observe/acl.py): a named one
    refused is an AuthError (exit 4); under --all a refused one is said once, never
    shown. A group whose check fails otherwise is asked again at its next record."""

    def __init__(self, cluster, named: frozenset[str], notice: Callable[[str], None],
                 timeout: float):
        self.cluster, self.named, self.notice, self.timeout = cluster, named, notice, timeout
        self._describable: dict[str, bool] = {}    # group -> may this principal describe it

    def get(self, group: str) -> bool | None:
        return self._describable.get(group)

    async def check(self, groups: Iterable[str]) -> None:
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
