"""The story's pieces that are pure data: a member as the story remembers it between
snapshots (MemberSnapshot), streams tasks as sets, and the comparisons of two member sets
(convergence, static restarts, moved partitions, per-member assignment changes)."""
from __future__ import annotations

from dataclasses import dataclass

from typing import Any, Mapping

from ...events import (
    AssignmentChanged, Event, MemberJoined, MemberLeft, TaskAssignmentChanged, partition_changes,
    tp_list,
)
from ..state.holdings import holds_target, moved_partitions
from ..reads.model import SHARE, GroupDescription, GroupState, Member, partition_map


@dataclass(frozen=True)
class MemberSnapshot:
    """A member as the story remembers it between snapshots."""

    member_id: str
    instance_id: str | None
    client_id: str | None
    host: str | None
    assignment: dict[str, frozenset[int]] | None   # None: not known
    topics: tuple[str, ...] | None = None            # subscribed topics; None: not known
    tasks: frozenset | None = None   # streams: {(kind, subtopology, partition)}; else None

    @classmethod
    def of(cls, m: Member) -> "MemberSnapshot":
        asg = partition_map(m.assignment)
        topics = _topics(m)
        return cls(m.member_id, m.instance_id, m.client_id or None, m.host or None, asg,
                   None if topics is None else tuple(topics), task_set(m.extra.get("tasks")))

    def identity(self) -> dict:
        return {"member_id": self.member_id, "instance_id": self.instance_id,
                "client_id": self.client_id, "host": self.host}


def _topics(m: Member) -> list[str] | None:
    """A member's subscribed topics, sorted (None: not known)."""
    topics = (m.subscription or {}).get("topics")
    return None if topics is None else sorted(topics)


TASK_KINDS = ("active", "standby", "warmup")


def task_set(tasks: dict | None) -> frozenset | None:
    """A streams member's tasks ({kind: [{subtopology_id, partitions}]}) as a set of
    (kind, subtopology, partition); None for members of other types."""
    if tasks is None:
        return None
    return frozenset((kind, t["subtopology_id"], p) for kind in TASK_KINDS
                     for t in tasks.get(kind) or () for p in t["partitions"])


def task_dict(tasks: frozenset) -> dict:
    """task_set's inverse: {kind: [{subtopology_id, partitions}]} with every kind present."""
    out: dict = {}
    for kind in TASK_KINDS:
        subs: dict[str, list[int]] = {}
        for k, sub, p in tasks:
            if k == kind:
                subs.setdefault(sub, []).append(p)
        out[kind] = [{"subtopology_id": sub, "partitions": sorted(ps)}
                     for sub, ps in sorted(subs.items(), key=lambda kv: _task_order(kv[0]))]
    return out


def _task_order(subtopology_id: str):
    return (0, int(subtopology_id), "") if subtopology_id.isdigit() else (1, 0, subtopology_id)


def members_of(desc: GroupDescription | None) -> dict[str, MemberSnapshot] | None:
    if desc is None:
        return None
    return {m.member_id: MemberSnapshot.of(m) for m in desc.members}


def _converged(desc: GroupDescription) -> bool:
    """Epoch-counting groups (consumer, share, streams): the assignment epoch caught up
    with the group epoch and every member holds its target assignment (streams: its
    target tasks of every kind). An Empty group has nothing left to converge (its target
    assignment epoch stays behind the epoch its last member's leave bumped). A share member
    has no target in ShareGroupDescribe: it has caught up when its member epoch is the
    group epoch (seen on the lab broker: a joining member's partitions are taken from the
    others one heartbeat later, at the same group epoch). Classic groups: always."""
    if desc.group_epoch is None or desc.state == GroupState.EMPTY:
        return True
    if desc.assignment_epoch != desc.group_epoch:
        return False
    return all(at_target(m, desc) for m in desc.members)


def reached_before_next(desc: GroupDescription) -> int | None:
    """An epoch group whose members all reached the target of its assignment epoch after
    the group epoch moved past it (the next bump came first; the broker computes the next
    target later): that assignment epoch, whose round is over. None otherwise."""
    a, g = desc.assignment_epoch, desc.group_epoch
    if a is None or g is None or a >= g or not desc.members or desc.state == GroupState.EMPTY:
        return None
    return a if all(m.member_epoch == a and at_target(m, desc) for m in desc.members) else None


def at_target(m: Member, desc: GroupDescription, *, acknowledged: bool = False) -> bool:
    """The one test of a member at its target over a description (state.holdings.holds_target
    compares): it holds its target (a streams member its target tasks; a share member,
    whose target ShareGroupDescribe does not give, once at the group epoch) and, with
    `acknowledged`, its member epoch caught up with the assignment epoch (it heartbeated
    since the target was set). A target not known counts as reached."""
    if desc.type == SHARE:
        return m.member_epoch == desc.group_epoch
    if "target_tasks" in m.extra:
        return holds_target(task_set(m.extra.get("tasks")), task_set(m.extra["target_tasks"]))
    target = partition_map(m.target_assignment)
    if target is None:
        return True
    epoch = desc.assignment_epoch
    caught_up = not acknowledged or m.member_epoch is None or epoch is None or \
        m.member_epoch >= epoch
    return caught_up and holds_target(partition_map(m.assignment), target)


def identity_of(m: Any) -> dict:
    """member_id, instance_id, client_id, host of a member as the story holds it (a
    description's Member, a MemberSnapshot, convergence's record of what it told)."""
    if isinstance(m, Member):
        return {"member_id": m.member_id, "instance_id": m.instance_id,
                "client_id": m.client_id or None, "host": m.host or None}
    identity = m.identity
    return identity() if callable(identity) else identity


def _seen_of(m: Any) -> dict:
    """What a look showed of a member beyond its identity (member_joined's extra fields)."""
    s = m if isinstance(m, MemberSnapshot) else MemberSnapshot.of(m)
    return {"assignment": tp_list(s.assignment),
            "subscription": None if s.topics is None else list(s.topics),
            "tasks": None if s.tasks is None else task_dict(s.tasks)}


def joins_and_leaves(before: Mapping[str, Any], after: Mapping[str, Any]
                     ) -> tuple[dict[str, Event], list[Event]]:
    """The one place `member_joined` / `member_left` are made: each member id in `after`
    and not in `before` joined, each in `before` and not in `after` left. (joined by
    member id, left), both in member id order."""
    joined: dict[str, Event] = {m: MemberJoined(**identity_of(after[m]), **_seen_of(after[m]))
                                for m in sorted(set(after) - set(before))}
    return joined, [MemberLeft(**identity_of(before[m])) for m in sorted(set(before) - set(after))]


def members_after(after: dict[str, MemberSnapshot] | None) -> dict:
    """A rebalance's per-member fields: every member's assignment, subscription and
    identity after it (None each: not known)."""
    if after is None:
        return {"assignments": None, "subscriptions": None, "identities": None}
    ordered = sorted(after.items())
    return {"assignments": {m: tp_list(s.assignment) for m, s in ordered},
            "subscriptions": {m: None if s.topics is None else list(s.topics) for m, s in ordered},
            "identities": {m: {k: v for k, v in s.identity().items() if k != "member_id"}
                           for m, s in ordered}}


def _has_tasks(members: dict[str, MemberSnapshot] | None) -> bool:
    return members is not None and any(s.tasks is not None for s in members.values())


def _replaced_in_place(before: dict, after: dict) -> bool:
    """Only static members changed member id (same instance ids, no one else moved)."""
    gone = [before[m] for m in set(before) - set(after)]
    new = [after[m] for m in set(after) - set(before)]
    return bool(gone) and all(m.instance_id for m in gone + new) and sorted(
        m.instance_id for m in gone) == sorted(m.instance_id for m in new)


def _known(members: dict[str, MemberSnapshot] | None) -> bool:
    return members is not None and all(s.assignment is not None for s in members.values())


def _moved(before, after) -> int | None:
    if not (_known(before) and _known(after)):
        return None
    return moved_partitions({m: s.assignment for m, s in before.items()},
                            {m: s.assignment for m, s in after.items()})


def _assignment_changes(before: dict[str, MemberSnapshot], after: dict[str, MemberSnapshot],
                        generation: int | None) -> list[Event]:
    out: list[Event] = []
    for mid, now in sorted(after.items()):
        was = before.get(mid)
        old = None if was is None else was.assignment
        if was is not None and old == now.assignment and was.tasks == now.tasks:
            continue
        added, revoked = partition_changes(old, now.assignment, known_before=was is not None)
        if now.tasks is None:
            out.append(AssignmentChanged(mid, generation, tp_list(now.assignment), added, revoked))
            continue
        old_tasks = frozenset() if was is None else was.tasks
        out.append(TaskAssignmentChanged(
            mid, generation, tp_list(now.assignment), added, revoked, task_dict(now.tasks),
            None if old_tasks is None else task_dict(now.tasks - old_tasks),
            None if old_tasks is None else task_dict(old_tasks - now.tasks)))
    return out


def snapshot_members(desc: GroupDescription) -> list[dict]:
    """The members of a `snapshot` event: identity, assignment and target (tp_lists)."""
    out = []
    for m in desc.members:
        told = {"member_id": m.member_id, "instance_id": m.instance_id,
                "client_id": m.client_id or None, "host": m.host or None,
                "assignment": tp_list(partition_map(m.assignment)),
                "target_assignment": tp_list(partition_map(m.target_assignment)),
                "subscription": _topics(m)}
        if "tasks" in m.extra:
            told["tasks"] = m.extra.get("tasks")
        out.append(told)
    return out
