"""Ports of StickyAssignor and CooperativeStickyAssignor (Kafka 4.3, AbstractStickyAssignor).

Both keep as many previously owned partitions as balance allows.  When every member has
the same subscription the constrained (quota) algorithm runs, otherwise the general one.
They differ in where ownership comes from:

* ``sticky`` (eager) reads the previous assignment and generation from its user data
  (v1, or v0 without generation) and ignores the subscription's owned partitions;
* ``cooperative-sticky`` uses the subscription's owned partitions with its generation
  field (v2+), or with the generation in its user data; afterwards every partition that
  changes owner is withheld from its new owner for this generation (the owner revokes it
  and rejoins, the next rebalance hands it over).

``MemberSubscription.generation`` is the subscription's own generation field (v2+, -1 when
absent); user data is passed raw and decoded here, as Java does.
"""
from __future__ import annotations

from ._base import (
    TP,
    Assignment,
    AssignmentError,
    MemberSubscription,
    PartitionRacks,
    Prepared,
    finish,
    prepare,
)
from ._sticky_constrained import ConstrainedBuilder
from ._sticky_general import GeneralBuilder
from ._sticky_input import MemberData, MemberDataFn, RackInfo, collect_owned
from ._userdata import (
    decode_cooperative,
    decode_sticky,
    encode_cooperative,
    encode_sticky,
)


def sticky_member_data(prepared: Prepared, member: str) -> MemberData:
    partitions, generation = decode_sticky(prepared.subs[member].user_data)
    return MemberData(partitions, generation)


def cooperative_member_data(prepared: Prepared, member: str) -> MemberData:
    generation = prepared.generation(member)
    if generation is None:
        generation = decode_cooperative(prepared.subs[member].user_data)
    return MemberData(prepared.owned(member), generation)


def sticky_assign(prepared: Prepared, member_data: MemberDataFn
                  ) -> tuple[dict[str, list[TP]], dict[TP, str] | None]:
    """The assignment, and the partitions changing owner when the constrained path knew them."""
    if not prepared.order:
        return {}, {}
    rack_info = RackInfo(prepared)
    owned = collect_owned(prepared, member_data)
    try:
        if owned.all_equal:
            builder = ConstrainedBuilder(prepared, rack_info, owned)
            return builder.build(), builder.transferring
        return GeneralBuilder(prepared, rack_info, owned, member_data).build(), None
    except (KeyError, ValueError, StopIteration) as exc:
        raise AssignmentError(f"sticky assignment failed: {exc!r}") from exc


def transferring_ownership(prepared: Prepared, assignment: dict[str, list[TP]]) -> dict[TP, str]:
    """CooperativeStickyAssignor.computePartitionsTransferringOwnership."""
    added: dict[TP, str] = {}
    revoked: set[TP] = set()
    for member, assigned in assignment.items():
        owned = prepared.owned(member)
        owned_set, assigned_set = set(owned), set(assigned)
        added.update((tp, member) for tp in assigned if tp not in owned_set)
        revoked.update(tp for tp in owned if tp not in assigned_set)
    return {tp: member for tp, member in added.items() if tp in revoked}


def _flatten(assignment: dict[str, list[int]]) -> list[TP]:
    return [(t, p) for t, ps in assignment.items() for p in ps]


class StickyAssignor:
    name = "sticky"
    rebalance_protocols: tuple[str, ...] = ("eager",)

    def assign(self, partitions_per_topic: dict[str, int], members: list[MemberSubscription],
               partition_racks: PartitionRacks | None = None) -> Assignment:
        prepared = prepare(partitions_per_topic, members, partition_racks)
        raw, _ = sticky_assign(prepared, sticky_member_data)
        return finish(prepared, raw)

    def user_data(self, assignment: dict[str, list[int]], generation: int) -> bytes | None:
        return encode_sticky(_flatten(assignment), generation)


class CooperativeStickyAssignor:
    name = "cooperative-sticky"
    rebalance_protocols: tuple[str, ...] = ("eager", "cooperative")

    def assign(self, partitions_per_topic: dict[str, int], members: list[MemberSubscription],
               partition_racks: PartitionRacks | None = None) -> Assignment:
        prepared = prepare(partitions_per_topic, members, partition_racks)
        raw, transferring = sticky_assign(prepared, cooperative_member_data)
        if transferring is None:
            transferring = transferring_ownership(prepared, raw)
        for tp, member in transferring.items():
            if tp in raw[member]:
                raw[member].remove(tp)
        return finish(prepared, raw)

    def user_data(self, assignment: dict[str, list[int]], generation: int) -> bytes | None:
        return encode_cooperative(generation)
