"""The past the records watch replays before its first look (records_source.RecordsTail):
each group's last rebalances, as `history` tells them, told with the group's first look.

    past = RecordsPast(cluster_id, writes=PAST_WRITES)
    past.batch(partition, batch)                    # each batch replayed (completeness)
    past.keep(group, partition, at, records)        # after each write of a group, untold
    past.take(group, names, assignors)   # its last rebalances (envelopes), once, at its first look

The tail replays each followed partition from its earliest offset before it tells anything;
what the records held of each group's past is known then, and a view started on a group
should show it (its timeline, the time since its last rebalance) rather than nothing until
the group's next round. The rebalances go with the `snapshot` event as its extra field
`recent_rebalances`: they are no events of the watch (not counted, not in the metrics).

Cost: while replaying, a group's state after each of its last `writes` writes is kept (a
reference; a consumer group's member tables copied); the story runs over them only at the
group's first look, so a long history costs no more than its last writes. A classic round
is one write; a consumer group's round is several (its epoch bump, then each member
reaching its target), so the rounds told are those the last writes hold. As in `history`,
a group whose writes are all kept, from a partition read with no gap (compaction) before
its first record, is told from its creation: its first round is a rebalance from nothing.
"""
from __future__ import annotations

from collections import deque

from ...events import EventKind
from ..reads.model import DEAD
from .observations import Missing, Seen
from ..state.reducer import TIMELINE
from .history import GapTracker
from ..reads.replay import GroupRecords, describe
from ..story.story import RebalanceStory

RECORDS = "records"
PAST_WRITES = 100        # a named group's writes kept for its first look
PAST_WRITES_ALL = 2      # --all: a classic group's last rebalance (the top view shows it)


class RecordsPast:
    def __init__(self, cluster_id: str | None = None, writes: int = PAST_WRITES):
        self.cluster_id = cluster_id
        self.writes = writes
        self._kept: dict[str, deque] = {}   # group -> (at, GroupRecords) after its writes
        self._whole: dict[str, bool] = {}   # group -> every write of it kept, from its first
        self._gaps: dict[int, tuple[int, GapTracker]] = {}   # partition -> (first offset, gaps)

    def batch(self, partition: int, batch) -> None:
        """A batch of `partition` replayed (its offsets tell whether compaction left gaps)."""
        first, gaps = self._gaps.setdefault(partition, (batch.base_offset, GapTracker()))
        gaps.batch(batch.base_offset, batch.last_offset, batch.count, batch.max_timestamp / 1000)

    def keep(self, group: str, partition: int, at: float, records: GroupRecords) -> None:
        kept = self._kept.get(group)
        if kept is None:
            kept = self._kept[group] = deque(maxlen=self.writes)
            first, gaps = self._gaps.get(partition, (None, None))
            self._whole[group] = gaps is not None and gaps.complete_from == first
        elif len(kept) == kept.maxlen:
            self._whole[group] = False   # its first writes dropped
        kept.append((at, records.copy()))

    def take(self, group: str, names: dict[str, str], assignors: dict[str, str]) -> list[dict]:
        """The group's last rebalances before the watch, oldest first (told once)."""
        whole = self._whole.pop(group, False)
        kept = self._kept.pop(group, None)
        if not kept:
            return []   # no write kept (most of a fleet: commits only): no story to run
        from .history import created_from_nothing, told_from_records

        story = RebalanceStory(group, tell=told_from_records(self.cluster_id))
        recent: deque[dict] = deque(maxlen=TIMELINE)
        for at, records in kept:
            desc = describe(group, records, names, assignors)
            if whole and desc.state != DEAD:   # from its creation (module doc)
                story.feed(Seen(group, at, RECORDS, created_from_nothing(desc)))
            whole = False
            if desc.state == DEAD:
                story.feed(Missing(group, at, RECORDS))
                continue
            story.feed(Seen(group, at, RECORDS, desc))
            recent.extend(e for e in story.take_told() if e["event"] == EventKind.REBALANCE)
        return list(recent)

    def clear(self) -> None:
        self._kept.clear()
        self._whole.clear()
        self._gaps.clear()
