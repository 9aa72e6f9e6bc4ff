"""AbstractStickyAssignor.GeneralAssignmentBuilder: members with different subscriptions.

Keep every still-valid owned partition, give each unassigned partition to the least
loaded eligible member, then move partitions from overloaded members (back to a
previous-generation owner when that helps) until the assignment is balanced; the moves are
dropped again if they did not improve the balance score.
"""
from __future__ import annotations

from ._base import TP, AssignmentError, Prepared
from ._java import jkey
from ._sticky_input import DEFAULT_GENERATION, MemberDataFn, Owned, RackInfo
from ._sticky_movements import PartitionMovements, SortedMembers


class GeneralBuilder:
    def __init__(self, prepared: Prepared, rack_info: RackInfo, owned: Owned, member_data: MemberDataFn):
        self.prepared, self.rack_info, self.owned = prepared, rack_info, owned
        self.member_data = member_data
        self.counts = prepared.partitions
        self.total = sum(self.counts.values())
        self.topic_members: dict[str, list[str]] = {t: [] for t in self.counts}
        self.member_topics: dict[str, list[str]] = {}
        for member in prepared.order:
            topics = [t for t in prepared.subs[member].topics if t in self.counts]
            self.member_topics[member] = topics
            for topic in topics:
                self.topic_members[topic].append(member)
        self.current: dict[str, list[TP]] = owned.by_member
        self.owner: dict[TP, str] = {tp: m for m, tps in self.current.items() for tp in tps}
        topics = sorted(self.counts, key=lambda t: (len(self.topic_members[t]), jkey(t)))
        self.all_partitions = [(t, p) for t in topics for p in range(self.counts[t])]
        self.sorted = SortedMembers(self.current)
        self.movements = PartitionMovements()
        self.revocation_required = False

    def build(self) -> dict[str, list[TP]]:
        previous = self._previous_owners()
        unassigned = self._unassigned(self._keep_owned())
        for member in self.current:
            self.sorted.add(member)
        self._balance(previous, unassigned)
        return self.current

    def _partition_key(self, tp: TP) -> tuple[int, bytes, int]:
        return len(self.topic_members[tp[0]]), jkey(tp[0]), tp[1]

    def _previous_owners(self) -> dict[TP, tuple[str, int]]:
        previous: dict[TP, tuple[str, int]] = {}
        max_generation = self.owned.max_generation
        for member in self.prepared.order:
            data = self.member_data(self.prepared, member)
            if data.generation is not None and data.generation < max_generation:
                generation = data.generation
            elif data.generation is None and max_generation > DEFAULT_GENERATION:
                generation = DEFAULT_GENERATION
            else:
                continue
            for tp in data.partitions:
                if tp not in previous or generation > previous[tp][1]:
                    previous[tp] = (member, generation)
        return previous

    def _keep_owned(self) -> list[TP]:
        kept: list[TP] = []
        for member, partitions in self.current.items():
            topics = self.prepared.subs[member].topics
            remaining = []
            for tp in partitions:
                if tp[0] not in self.topic_members:
                    self.owner.pop(tp, None)
                elif tp[0] not in topics or self.rack_info.mismatch(member, tp):
                    self.revocation_required = True
                else:
                    remaining.append(tp)
                    kept.append(tp)
            partitions[:] = remaining
        return kept

    def _unassigned(self, kept: list[TP]) -> list[TP]:
        if not kept:
            return self.all_partitions
        walk = iter(sorted(kept, key=self._partition_key))
        current: TP | None = next(walk)
        exhausted, out = False, []
        for tp in self.all_partitions:
            if exhausted or tp != current:
                out.append(tp)
            else:
                current = next(walk, None)
                exhausted = current is None
        return out

    def _size(self, member: str | None) -> int:  # None: Java's NullPointerException
        assigned = self.current.get(member) if member is not None else None
        if assigned is None:
            raise AssignmentError(f"NullPointerException: no current assignment for {member}")
        return len(assigned)

    def _max_size(self, member: str) -> int:
        topics = self.member_topics[member]
        if len(topics) == len(self.counts):
            return self.total
        return sum(self.counts[t] for t in topics)

    def _is_balanced(self) -> bool:
        if self._size(self.sorted.first()) >= self._size(self.sorted.last()) - 1:
            return True
        owners = {tp: m for m, tps in self.current.items() for tp in tps}
        for member in self.sorted.ordered():
            count = self._size(member)
            if count == self._max_size(member):
                continue
            mine = set(self.current[member])
            for topic in self.member_topics[member]:
                for p in range(self.counts[topic]):
                    if (topic, p) not in mine and count + 1 < self._size(owners.get((topic, p))):
                        return False
        return True

    def _balance_score(self) -> int:
        sizes = [len(tps) for tps in self.current.values()]
        return sum(abs(a - b) for i, a in enumerate(sizes) for b in sizes[i + 1:])

    def _assign_to_least_loaded(self, tp: TP, rack_info: RackInfo | None) -> bool:
        for member in self.sorted.ordered():
            if tp[0] in self.member_topics[member] and (rack_info is None or not rack_info.mismatch(member, tp)):
                self.sorted.remove(member)
                self.current[member].append(tp)
                self.owner[tp] = member
                self.sorted.add(member)
                return True
        return False

    def _assign_all(self, partitions: list[TP], rack_info: RackInfo | None, remove_assigned: bool) -> None:
        for tp in list(partitions):
            if not self.topic_members[tp[0]]:
                continue
            if self._assign_to_least_loaded(tp, rack_info) and remove_assigned:
                partitions.remove(tp)

    def _can_member_move(self, member: str) -> bool:
        partitions = self.current[member]
        if len(partitions) < self._max_size(member):
            return True
        return any(len(self.topic_members[tp[0]]) >= 2 for tp in partitions)

    def _balance(self, previous: dict[TP, tuple[str, int]], unassigned: list[TP]) -> None:
        initializing = not self.current[self.sorted.last()]
        to_assign = unassigned
        if self.rack_info.consumer_racks:
            to_assign = list(unassigned)
            self._assign_all(to_assign, self.rack_info, True)
        self._assign_all(to_assign, None, False)

        fixed_topics = {t for t, ms in self.topic_members.items() if len(ms) < 2}
        self.all_partitions[:] = [tp for tp in self.all_partitions if tp[0] not in fixed_topics]
        unassigned[:] = [tp for tp in unassigned if tp[0] not in fixed_topics]
        fixed = {}
        for member in self.member_topics:
            if not self._can_member_move(member):
                self.sorted.remove(member)
                fixed[member] = self.current.pop(member)

        before = {m: list(tps) for m, tps in self.current.items()}
        before_owner = dict(self.owner)
        if not self.revocation_required:
            self._reassign(unassigned, previous)
        moved = self._reassign(self.all_partitions, previous)
        if not initializing and moved and self._balance_score() >= _score(before):
            self.current.clear()
            self.current.update(before)
            self.owner = before_owner
        self.current.update(fixed)

    def _reassign(self, partitions: list[TP], previous: dict[TP, tuple[str, int]]) -> bool:
        performed = False
        modified = True
        while modified:
            modified = False
            for tp in partitions:
                if self._is_balanced():
                    break
                if self._reassign_one(tp, previous):
                    performed = modified = True
        return performed

    def _reassign_one(self, tp: TP, previous: dict[TP, tuple[str, int]]) -> bool:
        member = self.owner.get(tp)
        if tp in previous and self._size(member) > self._size(previous[tp][0]) + 1:
            self._move(tp, previous[tp][0])
            return True
        candidates = self.topic_members[tp[0]]
        rack = self.rack_info.consumer_racks.get(member) if member is not None else None
        racks = self.rack_info.partition_racks.get(tp)
        if rack is not None and racks and rack in racks:
            for other in candidates:
                if self.rack_info.consumer_racks.get(other) in racks and self._size(member) > self._size(other) + 1:
                    self._move_to_least_loaded(tp)
                    return True
        for other in candidates:
            if self._size(member) > self._size(other) + 1:
                self._move_to_least_loaded(tp)
                return True
        return False

    def _move_to_least_loaded(self, tp: TP) -> None:
        target = next(m for m in self.sorted.ordered() if tp[0] in self.member_topics[m])
        self._move(tp, target)

    def _move(self, tp: TP, new: str) -> None:
        tp = self.movements.partition_to_move(tp, self.owner.get(tp), new)
        old = self.owner.get(tp)
        if old not in self.current or new not in self.current:
            raise AssignmentError(f"NullPointerException: moving {tp} from {old} to {new}")
        self.sorted.remove(old)
        self.sorted.remove(new)
        self.movements.move(tp, old, new)
        if tp in self.current[old]:
            self.current[old].remove(tp)
        self.current[new].append(tp)
        self.owner[tp] = new
        self.sorted.add(new)
        self.sorted.add(old)


def _score(assignment: dict[str, list[TP]]) -> int:
    sizes = [len(tps) for tps in assignment.values()]
    return sum(abs(a - b) for i, a in enumerate(sizes) for b in sizes[i + 1:])
