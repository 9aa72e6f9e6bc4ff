"""The past the records watch replays before its first look (records_source.RecordsTail):
each group's last rebalances, as `history` tells them, told with the group's first look.

    past = RecordsPast(cluster_id)
    past.look(group, at, desc)       # every change of a group while replaying, untold
    past.take(group)                 # its last rebalances (envelopes), once, at its first look

The tail replays each followed partition from its earliest offset before it tells anything;
what the records held of each group's past is known then, and a view started on a group
should show it (its timeline, the time since its last rebalance) rather than nothing until
the group's next round. The rebalances go with the `snapshot` event as its extra field
`recent_rebalances`: they are no events of the watch (not counted, not in the metrics).
"""
from __future__ import annotations

from collections import deque

from ..events import EventKind, envelope
from .model import DEAD, GroupDescription
from .observations import Missing, Seen
from .reducer import TIMELINE
from .story import RebalanceStory

RECORDS = "records"


class RecordsPast:
    def __init__(self, cluster_id: str | None = None):
        self.cluster_id = cluster_id
        self._stories: dict[str, RebalanceStory] = {}
        self._recent: dict[str, deque] = {}

    def look(self, group: str, at: float, desc: GroupDescription | None) -> None:
        """The group as its records stood after a write at `at` (None, Dead: gone)."""
        from .history import amend_from_records

        story = self._stories.get(group)
        if story is None:
            story = self._stories[group] = RebalanceStory(group)
        if desc is None or desc.state == DEAD:
            story.feed(Missing(group, at, RECORDS))
            return
        for event in story.feed(Seen(group, at, RECORDS, desc)):
            if event.KIND == EventKind.REBALANCE:
                told = amend_from_records(envelope(event, group=group, cluster=self.cluster_id,
                                                   source=RECORDS, at=at), desc)
                self._recent.setdefault(group, deque(maxlen=TIMELINE)).append(told)

    def take(self, group: str) -> list[dict]:
        """The group's last rebalances before the watch, oldest first (told once)."""
        self._stories.pop(group, None)
        return list(self._recent.pop(group, ()))

    def clear(self) -> None:
        self._stories.clear()
        self._recent.clear()
