"""The server assignor of a consumer or share group read from the records: the one the most
members name (a ConsumerGroupMemberMetadata's `server_assignor`), as the broker picks it
(ConsumerGroup.computePreferredServerAssignor), else the broker's default (the first of
`group.consumer.assignors` / `group.share.assignors`), which no record holds. The records
tail asks the broker once per group type for it: the assignor a ConsumerGroupDescribe (or
ShareGroupDescribe) names for a group whose members name none is that default.

    defaults = DefaultAssignors(cluster)
    await defaults.learn(groups_records)      # {group: replay.GroupRecords}, async, once a type
    describe(group, records, names, defaults.known)
"""
from __future__ import annotations

import asyncio

from .model import CONSUMER, SHARE

ASKED_OF = (CONSUMER, SHARE)   # streams groups: StreamsGroupDescribe v0 names no assignor


def preferred(metadata: dict) -> str | None:
    """The assignor the most members name (ties: the first name), None when none does."""
    counts: dict[str, int] = {}
    for value in metadata.values():
        name = (value or {}).get("server_assignor")
        if name:
            counts[name] = counts.get(name, 0) + 1
    return min(counts, key=lambda n: (-counts[n], n)) if counts else None


class DefaultAssignors:
    def __init__(self, cluster, timeout: float = 10.0):
        self.cluster, self.timeout = cluster, timeout
        self.known: dict[str, str] = {}    # group type -> the broker's default assignor
        self._asked: set[str] = set()

    async def learn(self, records: dict) -> None:
        """Once per group type: describe one group of it whose members name no assignor."""
        from .describe import describe_groups

        for group, g in records.items():
            m = g.modern
            if m is None or m.type not in ASKED_OF or m.type in self._asked or not m.metadata \
                    or preferred(m.metadata) is not None:
                continue
            self._asked.add(m.type)
            try:
                result = await describe_groups(self.cluster, [group], offsets=False,
                                               deadline=self.timeout)
            except asyncio.CancelledError:
                raise
            except Exception:   # noqa: BLE001 - no DESCRIBE on the group: the name stays unknown
                continue
            for desc in result.groups:
                if desc.type == m.type and desc.protocol:
                    self.known[m.type] = desc.protocol
