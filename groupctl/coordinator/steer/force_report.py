"""What `force-rebalance` reports: pure functions from the group before and after (objects
shaped like observe.reads.model.GroupDescription) to the report's data, whose to_dict() is the
command's json/yaml (fields in docs/commands/force-rebalance.md).
"""
from __future__ import annotations

from dataclasses import dataclass, field

EAGER, COOPERATIVE, INCREMENTAL = "eager", "cooperative", "consumer (KIP-848)"
COOPERATIVE_PROTOCOLS = frozenset({"cooperative-sticky"})


@dataclass
class Report:
    """One force-rebalance: before, after, what moved, how long it took."""

    group: str
    type: str
    protocol: str | None
    rebalance_protocol: str
    reason: str | None   # None: not sent (a consumer group's heartbeat has no reason)
    triggered_by: str | None = None
    generation_before: int | None = None
    generation_after: int | None = None
    new_generations: int | None = None
    group_epoch_before: int | None = None
    group_epoch_after: int | None = None
    assignment_epoch_before: int | None = None
    assignment_epoch_after: int | None = None
    time_to_stable_ms: float | None = None
    state_after: str | None = None
    states_seen: list[str] = field(default_factory=list)
    members_before: list[str] = field(default_factory=list)
    members_after: list[str] = field(default_factory=list)
    assignments_before: list[dict] = field(default_factory=list)
    assignments_after: list[dict] = field(default_factory=list)
    moved_partitions: list[dict] = field(default_factory=list)
    follow_up: dict | None = None
    lost_race: bool = False
    notes: list[str] = field(default_factory=list)

    @property
    def same_members(self) -> bool:
        return set(self.members_before) == set(self.members_after)

    @property
    def assignment_changed(self) -> bool:
        return _by_member(self.assignments_before) != _by_member(self.assignments_after)

    def to_dict(self) -> dict:
        return {
            "group": self.group, "type": self.type, "protocol": self.protocol,
            "rebalance_protocol": self.rebalance_protocol, "reason": self.reason,
            "triggered_by": self.triggered_by,
            "generation_before": self.generation_before,
            "generation_after": self.generation_after, "new_generations": self.new_generations,
            "group_epoch_before": self.group_epoch_before,
            "group_epoch_after": self.group_epoch_after,
            "assignment_epoch_before": self.assignment_epoch_before,
            "assignment_epoch_after": self.assignment_epoch_after,
            "time_to_stable_ms": _ms(self.time_to_stable_ms), "state_after": self.state_after,
            "states_seen": self.states_seen,
            "same_members": self.same_members,
            "members_before": self.members_before, "members_after": self.members_after,
            "assignments_before": self.assignments_before,
            "assignments_after": self.assignments_after,
            "assignment_changed": self.assignment_changed,
            "moved_partitions": self.moved_partitions, "follow_up": self.follow_up,
            "lost_race": self.lost_race, "notes": self.notes,
        }


MEMBERS_CHANGED = "the members changed"   # a note the table shows in red


def rebalance_protocol(desc) -> str:
    if desc.type == "consumer":
        return INCREMENTAL
    return COOPERATIVE if desc.protocol in COOPERATIVE_PROTOCOLS else EAGER


def assignments(desc) -> list[dict]:
    """Every member's assignment, sorted by member id."""
    return [{"member_id": m.member_id, "client_id": m.client_id, "instance_id": m.instance_id,
             "member_epoch": m.member_epoch,
             "assignment": [tp.to_dict() for tp in m.assignment or []]}
            for m in sorted(desc.members, key=lambda m: m.member_id)]


def moved_partitions(before, after) -> list[dict]:
    """[{topic, partition, from, to}] for every partition whose owner changed (None: no
    owner on that side)."""
    old = {tp: m.member_id for m in before.members for tp in m.owned()}
    new = {tp: m.member_id for m in after.members for tp in m.owned()}
    return [{"topic": t, "partition": p, "from": old.get((t, p)), "to": new.get((t, p))}
            for t, p in sorted(set(old) | set(new)) if old.get((t, p)) != new.get((t, p))]


def base_report(before, after, reason: str | None, started: float, stable_at: float | None) -> Report:
    report = Report(group=before.group, type=before.type, protocol=before.protocol,
                    rebalance_protocol=rebalance_protocol(before), reason=reason)
    report.members_before = sorted(m.member_id for m in before.members)
    report.assignments_before = assignments(before)
    if after is not None:
        report.state_after = after.state
        report.members_after = sorted(m.member_id for m in after.members)
        report.assignments_after = assignments(after)
        report.moved_partitions = moved_partitions(before, after)
    if stable_at is not None:
        report.time_to_stable_ms = (stable_at - started) * 1000
    if not report.same_members:
        gone = sorted(set(report.members_before) - set(report.members_after))
        new = sorted(set(report.members_after) - set(report.members_before))
        report.notes.append(MEMBERS_CHANGED + ": " + "; ".join(
            part for part in (f"gone: {', '.join(gone)}" if gone else "",
                              f"new: {', '.join(new)}" if new else "") if part))
    return report


def classic_report(before, after, *, started: float, stable_at: float, follow_up,
                   trigger, states: list[str | None]) -> Report:
    report = base_report(before, after, trigger.reason, started, stable_at)
    report.triggered_by = trigger.member_id
    report.lost_race = trigger.lost_race
    report.states_seen = _dedup(states)
    report.new_generations = 2 if trigger.lost_race else 1
    report.generation_before = before.generation
    report.generation_after = after.generation
    if report.generation_before is None and report.generation_after is not None:
        report.generation_before = report.generation_after - report.new_generations
    if report.generation_after is None and report.generation_before is not None:
        report.generation_after = report.generation_before + report.new_generations
    if report.generation_before is None:
        report.notes.append("the generation number is not visible from outside the group: "
                            "the members' subscriptions carry none (librdkafka's eager "
                            "assignors write -1); the broker log's 'Stabilized group' line "
                            "has it")
    if trigger.lost_race:
        report.notes.append("the members rejoined before groupctl's LeaveGroup arrived: its "
                            "member joined the new generation, and leaving cost a second one")
    if report.rebalance_protocol == COOPERATIVE:
        if follow_up is not None:
            report.follow_up = {
                "generation": follow_up.generation, "state": follow_up.state,
                "moved_partitions": moved_partitions(after, follow_up),
                "assignments": assignments(follow_up)}
            report.new_generations += 1
            report.notes.append("cooperative protocol: the members revoked partitions and "
                                "rebalanced once more by themselves (follow_up)")
        else:
            report.notes.append("cooperative protocol: a member that must give up partitions "
                                "starts a second, follow-up rebalance itself; none was needed"
                                if not report.moved_partitions else
                                "cooperative protocol: partitions were revoked; the follow-up "
                                "rebalance did not complete within --timeout")
    return report


def consumer_report(before, after, *, started: float, stable_at: float | None,
                    member_id: str, member_epoch: int | None, states: list[str | None]) -> Report:
    # ConsumerGroupHeartbeat has no reason field: no reason reached the broker
    report = base_report(before, after, None, started, stable_at)
    report.triggered_by = member_id
    report.states_seen = _dedup(states)
    report.group_epoch_before = before.group_epoch
    report.assignment_epoch_before = before.assignment_epoch
    if after is not None:
        report.group_epoch_after = after.group_epoch
        report.assignment_epoch_after = after.assignment_epoch
    report.notes.append(
        "consumer (KIP-848) groups have no stop-the-world rebalance: a transient member "
        f"(epoch 0 -> {member_epoch}, subscribed to no topic) joined and left, each bumping "
        "the group epoch so the broker's assignor ran again; the members kept their "
        "partitions"
        + ("" if not report.moved_partitions else
           ", except those listed in moved_partitions (the assignor moved them)")
        + "; its heartbeat has no reason field: the broker logs the member id "
          f"({member_id}) instead of a reason")
    return report


def _by_member(items: list[dict]) -> dict:
    return {a["member_id"]: a["assignment"] for a in items}


def _dedup(states: list) -> list[str]:
    out: list[str] = []
    for s in states:
        if s and (not out or out[-1] != s):
            out.append(str(s))
    return out


def _ms(value: float | None) -> float | None:
    return None if value is None else round(value, 1)
