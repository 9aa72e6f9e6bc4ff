"""AbstractStickyAssignor.ConstrainedAssignmentBuilder: every member has the same topics.

Members keep up to their quota of owned partitions (minQuota, or maxQuota while members
above minQuota are still needed), then the rest is dealt round-robin (first within racks
when rack-aware) to the members still under quota, in member-id order.
"""
from __future__ import annotations

from ._base import TP, AssignmentError, Prepared
from ._java import jkey
from ._sticky_input import Owned, RackInfo


class _JavaListIterator:
    """java.util.Iterator over a list, with remove()."""

    def __init__(self, items: list):
        self.items, self.index, self.removable = items, 0, False

    def has_next(self) -> bool:
        return self.index < len(self.items)

    def next(self):
        item = self.items[self.index]
        self.index += 1
        self.removable = True
        return item

    def remove(self) -> None:
        if not self.removable:
            raise AssignmentError("IllegalStateException: iterator remove() without next()")
        self.removable = False
        self.index -= 1
        del self.items[self.index]


class ConstrainedBuilder:
    def __init__(self, prepared: Prepared, rack_info: RackInfo, owned: Owned):
        self.prepared, self.rack_info, self.owned = prepared, rack_info, owned
        total = sum(prepared.partitions.values())
        members = len(owned.by_member)
        self.min_quota, self.max_quota = total // members, -(-total // members)
        self.expected_over_min = total % members
        self.current_over_min = 0
        self.assignment: dict[str, list[TP]] = {m: [] for m in owned.by_member}
        self.assigned: list[TP] = []
        self.maybe_revoked: dict[TP, str] = {}
        self.under_min: list[str] = []
        self.exactly_min: list[str] = []
        self.transferring: dict[TP, str] = {}

    def build(self) -> dict[str, list[TP]]:
        for member, partitions in self.owned.by_member.items():
            self._keep_owned(member, partitions)
        unassigned = self._unassigned()
        self.under_min.sort(key=jkey)
        self.exactly_min.sort(key=jkey)
        unassigned = self.rack_info.sort_by_rack_consumers(unassigned)
        self._assign_rack_aware_round_robin(unassigned)
        self._assign_round_robin(unassigned)
        self._verify_unfilled()
        return self.assignment

    def _rack_filtered(self, member: str, partitions: list[TP]) -> list[TP]:
        kept = []
        for tp in partitions:
            if self.rack_info.mismatch(member, tp):
                self.maybe_revoked[tp] = member
            else:
                kept.append(tp)
        kept.sort(key=lambda tp: (tp[1], jkey(tp[0])))
        return [tp for tp in kept if tp not in self.owned.multiply_claimed]

    def _keep_owned(self, member: str, partitions: list[TP]) -> None:
        owned = self._rack_filtered(member, partitions)
        if len(owned) < self.min_quota:
            self._keep(member, owned)
            self.under_min.append(member)
        elif len(owned) >= self.max_quota and self.current_over_min < self.expected_over_min:
            self.current_over_min += 1
            if self.current_over_min == self.expected_over_min:
                self.exactly_min.clear()
            self._keep(member, owned[:self.max_quota])
            for tp in owned[self.max_quota:]:
                self.maybe_revoked[tp] = member
        else:
            self._keep(member, owned[:self.min_quota])
            for tp in owned[self.min_quota:]:
                self.maybe_revoked[tp] = member
            if self.current_over_min < self.expected_over_min:
                self.exactly_min.append(member)

    def _keep(self, member: str, partitions: list[TP]) -> None:
        self.assignment[member].extend(partitions)
        self.assigned.extend(partitions)

    def _unassigned(self) -> list[TP]:
        """All partitions minus the kept ones, by (topic, partition); Java's two-pointer walk."""
        everything = [(t, p) for t, n in self.prepared.partitions.items() for p in range(n)]
        if not self.assigned:
            return everything
        kept = iter(sorted(self.assigned, key=lambda tp: (jkey(tp[0]), tp[1])))
        current: TP | None = next(kept)
        exhausted, out = False, []
        for tp in everything:
            if exhausted or tp != current:
                out.append(tp)
            else:
                current = next(kept, None)
                exhausted = current is None
        return out

    def _assign_rack_aware_round_robin(self, unassigned: list[TP]) -> None:
        if not self.rack_info.consumer_racks:
            return
        next_index = 0
        for tp in list(unassigned):
            consumer, next_index = self._rack_consumer(tp, next_index)
            if consumer is not None:
                self._assign_new(tp, consumer)
                unassigned.remove(tp)

    def _rack_consumer(self, tp: TP, next_index: int) -> tuple[str | None, int]:
        index = self.rack_info.next_rack_consumer(tp, self.under_min, next_index)
        if index >= 0:
            consumer = self.under_min[index]
            count = len(self.assignment[consumer]) + 1
            if count >= self.min_quota:
                self.under_min.remove(consumer)
                if count < self.max_quota and self.current_over_min < self.expected_over_min:
                    self.exactly_min.append(consumer)
            else:
                index += 1
            return consumer, (index % len(self.under_min) if self.under_min else 0)
        if self.exactly_min:
            first = self.rack_info.next_rack_consumer(tp, self.exactly_min, 0)
            if first >= 0:
                consumer = self.exactly_min[first]
                if len(self.assignment[consumer]) + 1 == self.max_quota:
                    del self.exactly_min[first]
                    self.current_over_min += 1
                    if self.current_over_min == self.expected_over_min:
                        self.exactly_min.clear()
                return consumer, next_index
        return None, next_index

    def _assign_round_robin(self, unassigned: list[TP]) -> None:
        members = _JavaListIterator(self.under_min)
        for tp in unassigned:
            if members.has_next():
                consumer = members.next()
            elif not self.under_min and not self.exactly_min:
                raise AssignmentError("No more unfilled consumers to be assigned.")
            elif not self.under_min:
                consumer = self.exactly_min.pop(0)
            else:
                members = _JavaListIterator(self.under_min)
                consumer = members.next()
            count = self._assign_new(tp, consumer)
            if count == self.min_quota:
                members.remove()
                self.exactly_min.append(consumer)
            elif count == self.max_quota:
                self.current_over_min += 1

    def _assign_new(self, tp: TP, consumer: str) -> int:
        self.assignment[consumer].append(tp)
        previous = self.maybe_revoked.get(tp)
        if (previous is not None and previous != consumer) or tp in self.owned.multiply_claimed:
            self.transferring[tp] = consumer
        return len(self.assignment[consumer])

    def _verify_unfilled(self) -> None:
        if not self.under_min:
            return
        if self.current_over_min != self.expected_over_min:
            raise AssignmentError("We haven't reached the expected number of members with more than "
                                  "the minQuota partitions, but no more partitions to be assigned")
        for member in self.under_min:
            if len(self.assignment[member]) != self.min_quota:
                raise AssignmentError(f"Consumer: [{member}] doesn't reach minQuota partitions, "
                                      "and no more partitions to be assigned")
