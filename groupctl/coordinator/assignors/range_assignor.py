"""Port of org.apache.kafka.clients.consumer.RangeAssignor (Kafka 4.3), rack-aware (KIP-881).

Per topic, members are ordered as AbstractPartitionAssignor.MemberInfo compares them
(static members by group.instance.id first, then dynamic members by member id) and each
takes a contiguous range; the first ``partitions % members`` get one extra.  With consumer
and replica racks, partitions are first matched on racks within the same quotas (topics
with the same subscribers and partition count are matched together, partition by
partition), then the rest is handed out as ranges.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping

from ._base import (
    TP,
    EagerAssignor,
    Prepared,
)
from ._java import jkey


def member_sort_key(member_id: str, instance_id: str | None) -> tuple:
    """AbstractPartitionAssignor.MemberInfo.compareTo as a key."""
    if instance_id is not None:
        return (0, jkey(instance_id))
    return (1, jkey(member_id))


def uses_rack_aware(consumer_racks: set[str], partition_racks: Mapping[TP, frozenset[str]]) -> bool:
    """AbstractPartitionAssignor.useRackAwareAssignment (preferRackAwareLogic off)."""
    all_partition_racks = frozenset().union(*partition_racks.values()) if partition_racks else frozenset()
    if not consumer_racks or consumer_racks.isdisjoint(all_partition_racks):
        return False
    return not all(r == all_partition_racks for r in partition_racks.values())


class _TopicState:
    def __init__(self, topic: str, count: int, consumers: dict[str, str | None],
                 racks: Mapping[TP, frozenset[str]]):
        self.topic = topic
        self.consumers = consumers
        self.unassigned = [(topic, p) for p in range(count)]
        self.assigned_count = dict.fromkeys(consumers, 0)
        n = len(consumers)
        self.per_consumer = count // n if n else 0
        self.with_extra = count % n if n else 0
        consumer_racks = {r for r in consumers.values() if r is not None}
        self.partition_racks: dict[TP, frozenset[str]] = {}
        if consumer_racks:
            self.partition_racks = {tp: racks.get(tp, frozenset()) for tp in self.unassigned}
        self.needs_rack_aware = uses_rack_aware(consumer_racks, self.partition_racks)

    def racks_match(self, consumer: str, tp: TP) -> bool:
        rack = self.consumers[consumer]
        return rack is None or rack in self.partition_racks.get(tp, ())

    def max_assignable(self, consumer: str) -> int:
        extra = 1 if self.with_extra > 0 else 0
        return max(0, self.per_consumer + extra - self.assigned_count[consumer])

    def on_assigned(self, consumer: str, partitions: list[TP]) -> None:
        self.assigned_count[consumer] += len(partitions)
        if self.assigned_count[consumer] > self.per_consumer:
            self.with_extra -= 1
        taken = set(partitions)
        self.unassigned = [tp for tp in self.unassigned if tp not in taken]


def _assign(out: dict[str, list[TP]], state: _TopicState, consumer: str, partitions: list[TP]) -> None:
    out[consumer].extend(partitions)
    state.on_assigned(consumer, partitions)


def _assign_ranges(out: dict[str, list[TP]], state: _TopicState,
                   may_assign: Callable[[str, TP], bool]) -> None:
    for consumer in state.consumers:
        if not state.unassigned:
            break
        limit = state.max_assignable(consumer)
        chosen = [tp for tp in state.unassigned if may_assign(consumer, tp)][:limit]
        if chosen:
            _assign(out, state, consumer, chosen)


def _assign_co_partitioned(out: dict[str, list[TP]], consumers: list[str], count: int,
                           states: list[_TopicState]) -> None:
    remaining = list(consumers)
    for p in range(count):
        match = next((c for c in remaining
                      if all(s.racks_match(c, (s.topic, p)) and s.max_assignable(c) > 0 for s in states)),
                     None)
        if match is None:
            continue
        for s in states:
            _assign(out, s, match, [(s.topic, p)])
        if not any(s.max_assignable(match) > 0 for s in states):
            remaining.remove(match)
            if not remaining:
                break


def _assign_with_rack_matching(out: dict[str, list[TP]], states: list[_TopicState]) -> None:
    groups: dict[tuple, list[_TopicState]] = {}
    for s in states:
        key = (frozenset(s.consumers.items()), len(s.partition_racks))
        groups.setdefault(key, []).append(s)
    for (_, count), group in groups.items():
        if len(group) > 1:
            _assign_co_partitioned(out, list(group[0].consumers), count, group)
        elif group[0].needs_rack_aware:
            _assign_ranges(out, group[0], group[0].racks_match)


def _topic_consumers(prepared: Prepared) -> dict[str, list[str]]:
    per_topic: dict[str, list[str]] = {}
    for member in prepared.order:
        for topic in prepared.subs[member].topics:
            per_topic.setdefault(topic, []).append(member)
    return per_topic


def range_assign(prepared: Prepared) -> dict[str, list[TP]]:
    per_topic = _topic_consumers(prepared)
    states = []
    for topic, count in prepared.partitions.items():
        members = sorted(per_topic.get(topic, []),
                         key=lambda m: member_sort_key(m, prepared.subs[m].group_instance_id))
        consumers = {m: prepared.rack(m) for m in members}
        states.append(_TopicState(topic, count, consumers, prepared.racks))
    out: dict[str, list[TP]] = {m: [] for m in prepared.order}
    if any(s.needs_rack_aware for s in states):
        _assign_with_rack_matching(out, states)
    for s in states:
        _assign_ranges(out, s, lambda c, tp: True)
    return out


class RangeAssignor(EagerAssignor):
    name = "range"
    compute = staticmethod(range_assign)
