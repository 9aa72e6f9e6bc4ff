"""Pure-Python ports of the Java consumer's partition assignors (Kafka 4.3 clients).

When the probe is elected leader of a classic group it must compute the assignment the
Java leader would have, so that real members keep valid assignments.
``get_assignor(name).assign(partitions_per_topic, members, partition_racks)`` returns
member id -> topic -> sorted partitions, every member present (``{}`` when it gets
nothing).  It is the same partition set per member that
``ConsumerPartitionAssignor.assign(Cluster, GroupSubscription)`` returns on the Java leader.

Inputs, as the Java leader sees them:

* ``members`` in JoinGroup response order: Java fills a HashMap in that order and the
  sticky assignors' tie-breaks follow its iteration order, which is reproduced here;
* ``MemberSubscription.generation`` is the subscription's generation_id field (v2+), -1
  when absent; ``user_data`` is the raw assignor user data (decoded here, as Java does);
  ``owned_partitions`` in the order of the subscription bytes; a rack of "" means none;
* ``partitions_per_topic`` from Metadata (topics nobody subscribes to, or with no
  partitions, are ignored); ``partition_racks`` the racks of each partition's replicas
  (all replicas, as Java uses them), or None without rack information.

``AssignmentError`` is raised where the Java assignor throws (it does on some
inconsistent ownership claims).  Java quirk kept on purpose: with ``sticky`` and
``cooperative-sticky``, a member with an empty subscription that comes first in the
HashMap order does not count as a different subscription, so the quota algorithm may give
it partitions of topics it never subscribed to.

Assignors: ``range``, ``roundrobin``, ``sticky``, ``cooperative-sticky``.
"""
from __future__ import annotations

from ._base import Assignment, AssignmentError, Assignor, MemberSubscription
from .range_assignor import RangeAssignor
from .roundrobin import RoundRobinAssignor
from .sticky import CooperativeStickyAssignor, StickyAssignor

ASSIGNORS: dict[str, Assignor] = {
    a.name: a for a in (RangeAssignor(), RoundRobinAssignor(), StickyAssignor(), CooperativeStickyAssignor())
}


def get_assignor(name: str) -> Assignor:
    """The assignor Java registers under ``name``; KeyError for an unknown one."""
    try:
        return ASSIGNORS[name]
    except KeyError:
        raise KeyError(f"unknown assignor {name!r} (known: {', '.join(ASSIGNORS)})") from None


__all__ = ["ASSIGNORS", "Assignment", "AssignmentError", "Assignor", "MemberSubscription", "get_assignor"]
