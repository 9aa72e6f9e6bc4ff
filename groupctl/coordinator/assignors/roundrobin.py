"""Port of org.apache.kafka.clients.consumer.RoundRobinAssignor (Kafka 4.3).

All subscribed partitions, topics in name order, go round a circle of the members (sorted
as MemberInfo compares them); a member not subscribed to the partition's topic is skipped.
"""
from __future__ import annotations

from ._base import (
    TP,
    EagerAssignor,
    Prepared,
)
from .range_assignor import member_sort_key


def roundrobin_assign(prepared: Prepared) -> dict[str, list[TP]]:
    out: dict[str, list[TP]] = {m: [] for m in prepared.order}
    circle = sorted(prepared.order, key=lambda m: member_sort_key(m, prepared.subs[m].group_instance_id))
    if not circle:
        return out
    position = 0
    for topic, count in prepared.partitions.items():
        for partition in range(count):
            while topic not in prepared.subs[circle[position]].topics:
                position = (position + 1) % len(circle)
            out[circle[position]].append((topic, partition))
            position = (position + 1) % len(circle)
    return out


class RoundRobinAssignor(EagerAssignor):
    name = "roundrobin"
    compute = staticmethod(roundrobin_assign)
