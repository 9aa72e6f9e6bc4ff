"""Types shared by the assignor ports, and the input preparation every Java assignor does.

The Java leader (ConsumerCoordinator.onLeaderElected) puts the JoinGroup members into a
``HashMap<String, Subscription>`` in response order, then AbstractPartitionAssignor keeps
only subscribed topics that have partitions in the metadata.  Several assignors depend on
the HashMap's iteration order, so ``Prepared.order`` reproduces it; callers must pass the
members in JoinGroup response order.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from ...errors import GroupctlError
from ._java import hash_order, jkey

TP = tuple[str, int]
Assignment = dict[str, dict[str, list[int]]]
PartitionRacks = Mapping[TP, "set[str] | frozenset[str]"]


class AssignmentError(GroupctlError):
    """The Java assignor would have thrown (IllegalStateException, NullPointerException...)."""


@dataclass(frozen=True)
class MemberSubscription:
    member_id: str
    topics: list[str]
    owned_partitions: dict[str, list[int]] = field(default_factory=dict)
    generation: int = -1
    user_data: bytes | None = None
    rack: str | None = None
    group_instance_id: str | None = None


class Assignor(Protocol):
    name: str
    rebalance_protocols: tuple[str, ...]

    def assign(self, partitions_per_topic: dict[str, int], members: list[MemberSubscription],
               partition_racks: dict[tuple[str, int], set[str]] | None = None) -> Assignment: ...

    def user_data(self, assignment: dict[str, list[int]], generation: int) -> bytes | None: ...


@dataclass
class Prepared:
    order: list[str]                        # member ids in Java HashMap iteration order
    subs: dict[str, MemberSubscription]
    partitions: dict[str, int]              # subscribed topics with partitions, sorted by name
    racks: dict[TP, frozenset[str]]         # empty when no partition has rack information

    def owned(self, member: str) -> list[TP]:
        return [(t, p) for t, ps in self.subs[member].owned_partitions.items() for p in ps]

    def rack(self, member: str) -> str | None:
        return self.subs[member].rack or None

    def generation(self, member: str) -> int | None:
        gen = self.subs[member].generation
        return gen if gen >= 0 else None


def prepare(partitions_per_topic: Mapping[str, int], members: Sequence[MemberSubscription],
            partition_racks: PartitionRacks | None) -> Prepared:
    subs: dict[str, MemberSubscription] = {}
    for member in members:
        subs[member.member_id] = member
    order = hash_order(m.member_id for m in members)
    subscribed = {t for m in subs.values() for t in m.topics}
    partitions = {t: partitions_per_topic[t] for t in sorted(subscribed, key=jkey)
                  if partitions_per_topic.get(t, 0) > 0}
    racks: dict[TP, frozenset[str]] = {}
    if partition_racks:
        racks = {(t, p): frozenset(r for r in partition_racks.get((t, p), ()) if r is not None)
                 for t, n in partitions.items() for p in range(n)}
    return Prepared(order, subs, partitions, racks)


def finish(prepared: Prepared, raw: Mapping[str, Sequence[TP]]) -> Assignment:
    """member -> topic -> sorted partitions, every member present."""
    out: Assignment = {}
    for member in prepared.subs:
        by_topic: dict[str, list[int]] = {}
        for topic, partition in raw.get(member, ()):
            by_topic.setdefault(topic, []).append(partition)
        out[member] = {t: sorted(by_topic[t]) for t in sorted(by_topic, key=jkey)}
    return out


def topic_partitions(topic: str, count: int) -> list[TP]:
    return [(topic, p) for p in range(count)]


class EagerAssignor:
    """Range and roundrobin: stateless, eager, no user data. A subclass names itself and
    gives `compute(prepared) -> {member: [(topic, partition)]}`."""

    name: str
    rebalance_protocols: tuple[str, ...] = ("eager",)

    @staticmethod
    def compute(prepared: Prepared) -> Mapping[str, Sequence[TP]]:
        raise NotImplementedError

    def assign(self, partitions_per_topic: dict[str, int], members: list[MemberSubscription],
               partition_racks: PartitionRacks | None = None) -> Assignment:
        prepared = prepare(partitions_per_topic, members, partition_racks)
        return finish(prepared, self.compute(prepared))

    def user_data(self, assignment: dict[str, list[int]], generation: int) -> bytes | None:
        return None
