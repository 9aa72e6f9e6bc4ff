"""AbstractStickyAssignor.PartitionMovements and its sorted member set.

Movements remember, per topic, which partitions moved between which pair of members, so
that a later move in the opposite direction moves one of those partitions back instead
(the one Java's ``HashSet.iterator().next()`` yields).
"""
from __future__ import annotations

from ._base import TP
from ._java import JavaHashSet, jkey, tp_hash

Pair = tuple[str, str]


class PartitionMovements:
    def __init__(self) -> None:
        self.by_topic: dict[str, dict[Pair, JavaHashSet[TP]]] = {}
        self.moves: dict[TP, Pair] = {}

    def _remove_record(self, tp: TP) -> Pair:
        pair = self.moves.pop(tp)
        per_pair = self.by_topic[tp[0]]
        per_pair[pair].discard(tp)
        if not per_pair[pair]:
            del per_pair[pair]
        if not per_pair:
            del self.by_topic[tp[0]]
        return pair

    def _add_record(self, tp: TP, pair: Pair) -> None:
        self.moves[tp] = pair
        per_pair = self.by_topic.setdefault(tp[0], {})
        per_pair.setdefault(pair, JavaHashSet(tp_hash)).add(tp)

    def move(self, tp: TP, old: str, new: str) -> None:
        if tp in self.moves:
            src, _ = self._remove_record(tp)
            if src != new:
                self._add_record(tp, (src, new))
        else:
            self._add_record(tp, (old, new))

    def partition_to_move(self, tp: TP, old: str | None, new: str) -> TP:
        per_pair = self.by_topic.get(tp[0])
        if per_pair is None:
            return tp
        if tp in self.moves:
            old = self.moves[tp][0]
        reverse = per_pair.get((new, old)) if old is not None else None
        return tp if reverse is None else reverse.first()


class SortedMembers:
    """TreeSet<String> ordered by (assigned partition count, member id)."""

    def __init__(self, assignment: dict[str, list[TP]]):
        self.assignment = assignment
        self.members: set[str] = set()

    def _key(self, member: str) -> tuple[int, bytes]:
        return len(self.assignment[member]), jkey(member)

    def add(self, member: str) -> None:
        self.members.add(member)

    def remove(self, member: str) -> None:
        self.members.discard(member)

    def ordered(self) -> list[str]:
        return sorted(self.members, key=self._key)

    def first(self) -> str:
        return min(self.members, key=self._key)

    def last(self) -> str:
        return max(self.members, key=self._key)
