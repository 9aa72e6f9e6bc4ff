"""A probe without topics joining and leaving a KIP-848 group again and again moves no real
member's partitions (issue 12's promise), on the lab's Kafka 4.3.1 broker with two
librdkafka consumers (group.protocol=consumer) as peers. Ground truth: the broker's raw
ConsumerGroupDescribe (every member's owned and target partitions) and the consumers' own
rebalance callbacks.

Why this needs its own test: Kafka 4.3.1 mis-assigns when a member joins with an EMPTY
subscription while a target assignment is pending (a leave just bumped the group epoch): the
join changes no subscription, so the coordinator keeps the group's stored HOMOGENEOUS
subscription type, computes the pending target with the new member in, and the uniform
assignor spreads the first member's topics over everyone (the probe got partitions [2,3],
or both consumers lost everything). The probe therefore subscribes to
NO_PARTITIONS_TOPIC, a name no topic can have (coordinator/consumer/types.py).
"""
from __future__ import annotations

import pytest
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource
from confluent_kafka.admin import ResourceType
from probe_support import ProbeThread, wait_until
from test_probe_consumer import acknowledged, broker_says, cg_describe, owned, two_consumers

from groupctl.coordinator.members.consumer import NO_PARTITIONS_TOPIC

pytestmark = pytest.mark.broker


def by_member(d: dict) -> dict[str, tuple[set, set, list]]:
    """member id -> (owned, target, subscribed topic names), from a raw describe entry."""
    return {m["member_id"]: (owned(m), owned(m, "target_assignment"),
                             sorted(m["subscribed_topic_names"])) for m in d["members"]}


def expect(kafka, group: str, d: dict, consumers: dict[str, tuple[set, set, list]],
           probe: str | None, what: str) -> None:
    """Every consumer owns and is targeted exactly what it had; the probe (when in) owns and
    is targeted nothing and is subscribed to NO_PARTITIONS_TOPIC only."""
    want = dict(consumers)
    if probe is not None:
        want[probe] = (set(), set(), [NO_PARTITIONS_TOPIC])
    got = by_member(d)
    assert got == want, (f"{what}: epoch {d['group_epoch']}, assignment epoch "
                         f"{d['assignment_epoch']}\n got {got}\nwant {want}\n"
                         + "\n".join(broker_says(kafka, group)[-12:]))


def without(kafka, group: str, member: str, what: str) -> dict:
    """The group's describe entry once `member` is gone from it."""
    def gone():
        d = cg_describe(kafka, group)
        return d if member not in by_member(d) else None
    return wait_until(gone, 5, what)


def group_config(kafka, group: str, **settings: str) -> None:
    """Per-group dynamic configs (KIP-848 GroupConfig), set with librdkafka's admin client."""
    admin = AdminClient({"bootstrap.servers": kafka.bootstrap})
    entries = [ConfigEntry(k.replace("_", "."), v, incremental_operation=AlterConfigOpType.SET)
               for k, v in settings.items()]
    for future in admin.incremental_alter_configs(
            [ConfigResource(ResourceType.GROUP, group, incremental_configs=entries)]).values():
        future.result(10)


def test_probe_joins_and_leaves_20_times_and_nothing_moves(kafka, topic_factory,
                                                          consumer_factory, unique_group):
    topic, consumers, before = two_consumers(kafka, topic_factory, consumer_factory, unique_group)
    real = by_member(before)
    assert sorted(len(o) for o, _, _ in real.values()) == [2, 2]
    calls = [len(c.events) for c in consumers]
    had = [c.assignment for c in consumers]
    epoch = before["group_epoch"]
    for i in range(20):
        probe = ProbeThread(kafka, unique_group).start()
        try:
            acknowledged(probe)
            me = probe.member_id
            d = cg_describe(kafka, unique_group)
            # the join is a subscription change: the group epoch moves by exactly one
            assert d["group_epoch"] == epoch + 1, (i, d["group_epoch"], epoch)
            expect(kafka, unique_group, d, real, me, f"iteration {i}, probe in")
            assert probe.probe.member.assigned_partitions() == {}
        finally:
            probe.stop()
        # ...and the leave by exactly one more
        d = without(kafka, unique_group, me, f"probe {i} gone")
        assert d["group_epoch"] == epoch + 2, (i, d["group_epoch"], epoch)
        assert d["assignment_epoch"] <= d["group_epoch"]
        expect(kafka, unique_group, d, real, None, f"iteration {i}, probe out")
        epoch = d["group_epoch"]
        left = probe.of("probe")[-1]
        assert left["action"] == "left" and left["error"] is None
    # the consumers' own word: not one callback in 20 joins and leaves, same partitions
    for c, n, a in zip(consumers, calls, had):
        assert c.events[n:] == [] and c.assignment == a


def test_probe_join_computing_a_pending_target_moves_nothing(kafka, topic_factory,
                                                             consumer_factory, unique_group):
    """The exact trigger, made deterministic: the consumers heartbeat every 10 s and the
    broker computes a target at the first heartbeat after an epoch bump
    (consumer.assignment.interval.ms 0), so the second probe's join is the heartbeat that
    computes the target of the epoch the first probe's leave created. With an empty
    subscription that target took partitions from the consumers; with NO_PARTITIONS_TOPIC
    the join bumps the epoch, the broker recounts the subscription type, and the target is
    what the consumers own."""
    group_config(kafka, unique_group, consumer_session_timeout_ms="30000",
                 consumer_heartbeat_interval_ms="10000", consumer_assignment_interval_ms="0")
    topic, consumers, before = two_consumers(kafka, topic_factory, consumer_factory, unique_group)
    real = by_member(before)
    first = ProbeThread(kafka, unique_group).start()
    try:
        acknowledged(first)
        gone = first.member_id
    finally:
        first.stop()
    pending = without(kafka, unique_group, gone, "the first probe gone")
    second = ProbeThread(kafka, unique_group).start()
    try:
        acknowledged(second)
        d = cg_describe(kafka, unique_group)
        # the second join's heartbeat computed the pending target (nobody else heartbeat)
        assert d["group_epoch"] == d["assignment_epoch"] == pending["group_epoch"] + 1, \
            (pending["group_epoch"], pending["assignment_epoch"], d["group_epoch"],
             d["assignment_epoch"])
        expect(kafka, unique_group, d, real, second.member_id, "second probe in")
    finally:
        second.stop()
