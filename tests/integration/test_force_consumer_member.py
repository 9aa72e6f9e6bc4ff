"""force-rebalance of a consumer (KIP-848) group drives the probe's own KIP-848 member
(ConsumerMember through MemberDriver). On the lab broker, with librdkafka consumers
(group.protocol=consumer) as the group: each forced run moves the group epoch exactly twice,
once at the transient member's join (its subscription, groupctl:no-partitions, is a change)
and once at its leave (the broker log's "Bumped group epoch" lines), and every consumer's
member epoch in the raw ConsumerGroupDescribe ends at E+2; the consumers' callbacks show
nothing and their assignments are unchanged; the transient member is gone from
ConsumerGroupDescribe afterwards; --debug shows the member's transitions with reasons."""
from __future__ import annotations

import pytest
from steer_support import cli, groupctl_members, log_lines
from test_probe_consumer import broker_says, cg_describe, owned, settled

from groupctl.lab.consumer import wait_balanced

pytestmark = pytest.mark.broker

RUNS = 3


def bumps(kafka, group: str) -> list[int]:
    """The group epochs the broker log says it bumped the group to, in order."""
    return [int(m.group(1)) for m in
            log_lines(kafka, group, r"\[GroupId GROUP\] Bumped group epoch to (\d+)")]


def test_each_run_bumps_the_epoch_at_join_and_leave_and_nothing_moves(
        kafka, topic_factory, consumer_factory, unique_group):
    import json

    topic = topic_factory(6)
    consumers = [consumer_factory(unique_group, topic, protocol="consumer") for _ in range(3)]
    wait_balanced(consumers, [(topic, p) for p in range(6)])
    for run in range(RUNS):
        before = settled(kafka, unique_group, 3)
        epoch = before["group_epoch"]
        assigned = {m["member_id"]: owned(m) for m in before["members"]}
        bumped = bumps(kafka, unique_group)
        callbacks = [len(c.events) for c in consumers]
        had = [c.assignment for c in consumers]

        code, out, err = cli(kafka, "--debug", "-o", "json", "force-rebalance", unique_group,
                             "--yes")
        assert code == 0, err[-3000:]
        report = json.loads(out)
        me = report["triggered_by"]
        assert me.startswith("groupctl-force-rebalance-")
        assert (report["group_epoch_before"], report["group_epoch_after"]) == (epoch, epoch + 2)
        assert report["same_members"] and report["moved_partitions"] == []

        # the member's own transitions, each with its reason, under --debug
        prefix = f"groupctl: force-rebalance: member {me}: "
        moves = [line[len(prefix):].split(": ", 1)[0] for line in err.splitlines()
                 if line.startswith(prefix)]
        assert moves[0] == "UNSUBSCRIBED -> JOINING" and moves[-1] == "LEAVING -> UNSUBSCRIBED"
        assert "PREPARE_LEAVING -> LEAVING" in moves, moves

        after = settled(kafka, unique_group, 3)
        why = f"run {run}: {broker_says(kafka, unique_group)[-12:]}"
        assert after["group_epoch"] == epoch + 2, why
        assert bumps(kafka, unique_group)[len(bumped):] == [epoch + 1, epoch + 2], why  # join, leave
        assert {m["member_epoch"] for m in after["members"]} == {epoch + 2}, why
        assert me not in {m["member_id"] for m in after["members"]}
        assert {m["member_id"]: owned(m) for m in after["members"]} == assigned, why
        for c, n, mine in zip(consumers, callbacks, had):
            assert c.events[n:] == [], (run, c.name, c.events[n:], why)   # no revoke, no assign
            assert c.assignment == mine
    assert me not in {m["member_id"] for m in cg_describe(kafka, unique_group)["members"]}
    assert groupctl_members(kafka, unique_group) == []
