"""One rebalance story: successive snapshots of a group -> the events of DESIGN §4.

The probe (coordinator/probe.py, through its ProbeView) and the passive watcher both feed a
RebalanceStory, so they tell the same story the same way. Inputs are observe.model
GroupDescriptions and the times they were taken (from an injected clock):

- `baseline(desc)`: the group before the story starts (no events).
- `state(state, ...)`: a group state seen (by a describe, or implied by the probe's own
  member state) -> `state` when it changed; a rebalancing state marks the start of a round.
- `settled(desc, generation=..., group_epoch=..., ...)`: a settled generation (classic) or
  epoch (KIP-848) with its members and their assignments (desc None: not known) ->
  `generation` / `epoch` (when reported here), `member_joined` / `member_left`, per-member
  `assignment` diffs (when reported here), and one `rebalance` summary with
  `moved_partitions` when both sides' assignments are known (else null).
- `observe(desc)`: a watcher's poll; `type_changed` when the group changed type (a classic
  group converted to a consumer group and back), `state`, each new epoch, then `settled`
  once a Stable / Empty group shows a generation or epoch not seen yet.

Every group type goes through the same code. What differs is data, not story: a consumer,
share or streams group counts group / assignment epochs where a classic group counts
generations; a share group's partition may be held by several members (moved partitions
count partitions whose set of holders changed); a streams member holds tasks (active,
standby, warm-up), carried beside its active tasks' input partitions in the `assignment`
and `rebalance` events (TaskAssignmentChanged, TaskRebalanced) and compared with its target
tasks to tell when the group has converged.

The probe's own member reports its generation and its own assignment (richer: leader,
added/revoked as it saw them), so the probe's story is built with report_generations and
report_assignments off.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable

from ..events import (
    AssignmentChanged, EpochChanged, Event, GenerationStarted, MemberJoined, MemberLeft,
    Rebalanced, StateChanged, TaskAssignmentChanged, TaskRebalanced, TypeChanged, iso_ts,
    moved_partitions, partition_changes, tp_list,
)
from .convergence import Convergence
from .model import CONSUMER, REBALANCING_STATES, SHARE, GroupDescription, Member, partition_map
from .reasons import explain

SETTLED_STATES = ("Stable", "Empty")


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
        topics = (m.subscription or {}).get("topics")
        return cls(m.member_id, m.instance_id, m.client_id or None, m.host or None, asg,
                   None if topics is None else tuple(sorted(topics)),
                   task_set(m.extra.get("tasks")))

    def identity(self) -> dict:
        return {"member_id": self.member_id, "instance_id": self.instance_id,
                "client_id": self.client_id, "host": self.host}


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


class RebalanceStory:
    """Follows one group from snapshot to snapshot; each input returns the new events."""

    def __init__(self, group: str, *, clock: Callable[[], float] = time.time,
                 report_generations: bool = True, report_assignments: bool = True):
        self.group = group
        self.clock = clock
        self.report_generations = report_generations
        self.report_assignments = report_assignments
        self.members: dict[str, MemberSnapshot] | None = None   # as of the last settled one
        self.generation: int | None = None          # the last settled generation / epoch
        self.group_state: str | None = None
        self.round_started: float | None = None
        self.reason: str | None = None
        self.epochs: tuple | None = None            # consumer groups: (group, assignment)
        self.convergence = Convergence()            # consumer groups: member by member
        self.group_type: str | None = None          # the type last seen

    # ---- inputs --------------------------------------------------------------------------
    def baseline(self, desc: GroupDescription | None) -> None:
        """The group before the story starts (taken while it was settled), or None."""
        if desc is not None and desc.state in SETTLED_STATES:
            self.members = members_of(desc)

    def note_reason(self, reason: str | None) -> None:
        """Why the current (or next) rebalance happened, when the observer knows."""
        if reason:
            self.reason = reason

    def state(self, state: str | None, *, at: float | None = None,
              member_state: str | None = None) -> list[Event]:
        if state is None or state == self.group_state:
            return []
        at = self.clock() if at is None else at
        # a round starts on entering PreparingRebalance (again: a failed SyncGroup sends the
        # probe back to joining), or on any rebalancing state first seen
        if state == "PreparingRebalance" or (
                state in REBALANCING_STATES and self.group_state not in REBALANCING_STATES):
            self.round_started = at
        event = StateChanged(state, self.group_state, member_state)
        self.group_state = state
        return [event]

    def settled(self, desc: GroupDescription | None, *, generation: int | None,
                started: float | None = None, ended: float | None = None,
                reason: str | None = None, group_epoch: int | None = None,
                assignment_epoch: int | None = None, announce: bool = True,
                members_told: bool = False) -> list[Event]:
        """A settled generation (or epoch): members and assignments from `desc` (None: not
        known). `started`/`ended` default to the round's start and now. The reason is what
        changed between the members before and after (reasons.explain); `reason` (or one
        noted) is how the observer noticed, used when the members are not known.
        `announce=False`: the `epoch` event was already told (the watcher tells each
        epoch as it moves). `members_told`: members joined / left and their assignments
        were already told as the snapshots showed them (KIP-848: observe.convergence)."""
        ended = self.clock() if ended is None else ended
        explicit_round = started
        started = started if started is not None else (
            self.round_started if self.round_started is not None else ended)
        before, after = self.members, members_of(desc)
        events: list[Event] = []
        if self.report_generations and announce:
            if group_epoch is not None:
                events.append(EpochChanged(group_epoch, assignment_epoch))
            else:
                events.append(GenerationStarted(generation, desc.protocol if desc else None,
                                                members=None if after is None else sorted(after)))
        if after is not None and before is not None and not members_told:
            events += [MemberJoined(**after[m].identity()) for m in sorted(set(after) - set(before))]
            events += [MemberLeft(**before[m].identity()) for m in sorted(set(before) - set(after))]
        if self.report_assignments and after is not None and not members_told:
            events += _assignment_changes(before or {}, after, generation)
        summary: dict[str, Any] = dict(
            from_generation=self.generation, to_generation=generation,
            started=iso_ts(started), ended=iso_ts(ended),
            duration_ms=int(round((ended - started) * 1000)),
            members_before=None if before is None else sorted(before),
            members_after=None if after is None else sorted(after),
            moved_partitions=_moved(before, after),
            reason=explain(before, after, reason if reason is not None else self.reason),
            assignments=None if after is None else {
                m: tp_list(s.assignment) for m, s in sorted(after.items())})
        if after is not None and _has_tasks(after):
            events.append(TaskRebalanced(**summary, tasks={
                m: task_dict(s.tasks or frozenset()) for m, s in sorted(after.items())}))
        else:
            events.append(Rebalanced(**summary))
        self.generation, self.members = generation, after
        if explicit_round is None:  # the round this snapshot ended (a caller that names
            self.round_started = None  # the round itself may already follow the next one)
        if reason is None:
            self.reason = None
        return events

    def observe(self, desc: GroupDescription, *, at: float | None = None) -> list[Event]:
        """A watcher's snapshot: its state; for consumer groups each new (group, assignment)
        epoch; and a settled generation / epoch when new (classic: Stable or Empty with a
        generation not seen yet, or other members after a rebalancing state when the
        subscriptions carry no generation; consumer: every member's assignment equal to
        its target). Members replaced without a rebalance (a static member restarted with
        a new member id) are told as member_left / member_joined."""
        at = self.clock() if at is None else at
        events = self._type(desc)
        events += self.state(desc.state, at=at)
        told = self.report_assignments and desc.type == CONSUMER   # KIP-848 reconciliation
        if desc.type == CONSUMER or desc.group_epoch is not None:
            events += self._epoch(desc, at)
        if told:   # each member as it converges, with its reconciliation time
            self.convergence.seed(self.members)
            events += self.convergence.observe(desc, at)
        if desc.state not in SETTLED_STATES or not _converged(desc):
            return events
        now = members_of(desc) or {}  # a description: never None
        mark = desc.group_epoch if desc.group_epoch is not None else desc.generation
        if self.generation is None and self.members is None:
            self.generation, self.members = mark, now   # the first look
            return events
        if mark is not None and mark != self.generation or mark is None and (
                self.round_started is not None or set(now) != set(self.members or {})
                and not _replaced_in_place(self.members or {}, now)):
            return events + self.settled(desc, generation=mark, ended=at,
                                         group_epoch=desc.group_epoch,
                                         assignment_epoch=desc.assignment_epoch,
                                         announce=desc.group_epoch is None, members_told=told)
        if told:
            self.members = now   # joins and leaves without a new epoch were told already
        elif self.members is not None and _replaced_in_place(self.members, now):
            before, self.members = self.members, now
            events += [MemberLeft(**before[m].identity()) for m in sorted(set(before) - set(now))]
            events += [MemberJoined(**now[m].identity()) for m in sorted(set(now) - set(before))]
        return events

    def _type(self, desc: GroupDescription) -> list[Event]:
        """type_changed when the group is seen with another type than before (not on the
        first look, nor after it was gone: a group created again is a new group). The
        epochs start over: the first ones of the new type are told."""
        previous, self.group_type = self.group_type, desc.type or self.group_type
        if previous is None or desc.type is None or desc.type == previous:
            return []
        self.epochs = ()
        return [TypeChanged(desc.type, previous)]

    def _epoch(self, desc: GroupDescription, at: float) -> list[Event]:
        epochs = (desc.group_epoch, desc.assignment_epoch)
        if epochs == self.epochs:
            return []
        first, self.epochs = self.epochs is None, epochs
        if first:
            return []
        if self.round_started is None:
            self.round_started = at   # the epoch moved between two polls
        return [EpochChanged(*epochs)]


def _converged(desc: GroupDescription) -> bool:
    """Epoch-counting groups (consumer, share, streams): the assignment epoch caught up
    with the group epoch and every member holds its target assignment (streams: its
    target tasks of every kind). An Empty group has nothing left to converge (its target
    assignment epoch stays behind the epoch its last member's leave bumped). A share member
    has no target in ShareGroupDescribe: it has caught up when its member epoch is the
    group epoch (seen on the lab broker: a joining member's partitions are taken from the
    others one heartbeat later, at the same group epoch). Classic groups: always."""
    if desc.group_epoch is None or desc.state == "Empty":
        return True
    if desc.assignment_epoch != desc.group_epoch:
        return False
    return all(_at_target(m, desc) for m in desc.members)


def _at_target(m: Member, desc: GroupDescription) -> bool:
    if desc.type == SHARE:   # ShareGroupDescribe has no target assignment: a member holds
        return m.member_epoch == desc.group_epoch   # the group's once at its epoch
    if "target_tasks" in m.extra:
        return task_set(m.extra.get("tasks")) == task_set(m.extra["target_tasks"])
    return m.target_assignment is None or (
        (partition_map(m.assignment) or {}) == partition_map(m.target_assignment))


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
