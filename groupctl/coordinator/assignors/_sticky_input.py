"""AbstractStickyAssignor's input stage: previously owned partitions and rack information.

``MemberData`` is what each sticky flavour reads from a subscription (sticky: the
previous assignment and generation in user data; cooperative-sticky: owned partitions
plus the v2+ generation field, or the generation in user data).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ._base import TP, Prepared
from .range_assignor import uses_rack_aware

DEFAULT_GENERATION = -1


@dataclass
class MemberData:
    partitions: list[TP]
    generation: int | None


MemberDataFn = Callable[[Prepared, str], MemberData]


@dataclass
class Owned:
    """Result of allSubscriptionsEqual."""
    all_equal: bool
    max_generation: int
    by_member: dict[str, list[TP]]          # in member (HashMap) order
    multiply_claimed: set[TP] = field(default_factory=set)


def _same_topics(subscribed: set[str], topics: list[str]) -> bool:
    return len(topics) == len(subscribed) and subscribed.issuperset(topics)


def collect_owned(prepared: Prepared, member_data: MemberDataFn) -> Owned:
    owned = Owned(True, DEFAULT_GENERATION, {})
    subscribed: set[str] = set()
    previous_owner: dict[TP, str] = {}
    for member in prepared.order:
        topics = prepared.subs[member].topics
        if not subscribed:
            subscribed.update(topics)
        elif owned.all_equal and not _same_topics(subscribed, topics):
            owned.all_equal = False
        data = member_data(prepared, member)
        generation = DEFAULT_GENERATION if data.generation is None else data.generation
        owned.max_generation = max(owned.max_generation, generation)
        owned.by_member[member] = []
        for tp in data.partitions:
            if tp[0] in prepared.partitions:
                _claim(prepared, owned, previous_owner, member, generation, tp)
    return owned


def _claim(prepared: Prepared, owned: Owned, previous_owner: dict[TP, str],
           member: str, generation: int, tp: TP) -> None:
    other = previous_owner.get(tp)
    if other is None:
        owned.by_member[member].append(tp)
        previous_owner[tp] = member
        return
    other_generation = prepared.generation(other)
    other_generation = DEFAULT_GENERATION if other_generation is None else other_generation
    if generation == other_generation:
        owned.multiply_claimed.add(tp)
        _remove_first(owned.by_member[other], tp)
        previous_owner[tp] = member
    elif generation > other_generation:
        owned.by_member[member].append(tp)
        _remove_first(owned.by_member[other], tp)
        previous_owner[tp] = member


def _remove_first(items: list, item: object) -> None:
    if item in items:
        items.remove(item)


class RackInfo:
    """AbstractStickyAssignor.RackInfo: consumer and replica racks when rack-aware applies."""

    def __init__(self, prepared: Prepared):
        by_rack: dict[str, list[str]] = {}
        for member in prepared.order:
            rack = prepared.rack(member)
            if rack is not None:
                by_rack.setdefault(rack, []).append(member)
        partition_racks: dict[TP, frozenset[str]] = {}
        if by_rack:
            partition_racks = {(t, p): prepared.racks.get((t, p), frozenset())
                               for t, n in prepared.partitions.items() for p in range(n)}
        self.consumer_racks: dict[str, str] = {}
        self.partition_racks: dict[TP, frozenset[str]] = {}
        if uses_rack_aware(set(by_rack), partition_racks):
            self.consumer_racks = {m: r for r, ms in by_rack.items() for m in ms}
            self.partition_racks = partition_racks
        self.consumers_by_partition = {
            tp: sum(len(by_rack.get(r, ())) for r in racks) for tp, racks in partition_racks.items()}

    def mismatch(self, consumer: str, tp: TP) -> bool:
        rack = self.consumer_racks.get(consumer)
        return rack is not None and rack not in self.partition_racks.get(tp, ())

    def sort_by_rack_consumers(self, partitions: list[TP]) -> list[TP]:
        if not self.consumers_by_partition:
            return partitions
        return sorted(partitions, key=lambda tp: self.consumers_by_partition.get(tp, 0))

    def next_rack_consumer(self, tp: TP, consumers: list[str], first: int) -> int:
        racks = self.partition_racks.get(tp)
        if not racks:
            return -1
        for i in range(len(consumers)):
            index = (first + i) % len(consumers)
            if self.consumer_racks.get(consumers[index]) in racks:
                return index
        return -1
