"""force-rebalance of a consumer (KIP-848) group of librdkafka consumers with
group.protocol=consumer: the group epoch rises by two (the transient member's join, with
its no-partitions subscription, and its leave), the assignor runs again (broker log), the
consumers keep their partitions (their callbacks: no revocation, no new assignment), and
the report says so."""
from __future__ import annotations

import pytest
from steer_support import cli_json, describe, groupctl_members, log_lines, wait_until

from groupctl.lab.consumer import wait_balanced

pytestmark = pytest.mark.broker


def test_epoch_bump_and_members_keep_their_partitions(kafka, topic_factory, consumer_factory,
                                                      unique_group):
    topic = topic_factory(6)
    consumers = [consumer_factory(unique_group, topic, protocol="consumer") for _ in range(3)]
    wait_balanced(consumers, [(topic, p) for p in range(6)])
    before = wait_until(lambda: (d := describe(kafka, unique_group)) and d["state"] == "Stable"
                        and d["group_epoch"] == d["assignment_epoch"]
                        and all(m["member_epoch"] == d["group_epoch"] for m in d["members"])
                        and d, 30, "a Stable consumer group")
    callbacks = [len(c.events) for c in consumers]
    owned = [c.assignment for c in consumers]

    code, report, err = cli_json(kafka, "force-rebalance", unique_group, "--yes")
    assert code == 0, err
    assert report["type"] == "consumer" and report["rebalance_protocol"] == "consumer (KIP-848)"
    assert report["group_epoch_before"] == before["group_epoch"]
    assert report["group_epoch_after"] == before["group_epoch"] + 2   # its join and its leave
    assert report["assignment_epoch_after"] == report["group_epoch_after"]
    assert report["generation_before"] is None and report["generation_after"] is None
    assert report["same_members"] and not report["assignment_changed"]
    assert report["moved_partitions"] == []
    assert any("members kept their partitions" in n for n in report["notes"])

    me = report["triggered_by"]
    assert me.startswith("groupctl-force-rebalance-")
    assert log_lines(kafka, unique_group, rf"\[GroupId GROUP\] Member {me} joins the consumer group")
    assert log_lines(kafka, unique_group, rf"\[GroupId GROUP\] Member {me} left the consumer group")
    epoch = report["group_epoch_after"]
    assert log_lines(kafka, unique_group, rf"\[GroupId GROUP\] Bumped group epoch to {epoch} ")
    wait_until(lambda: log_lines(kafka, unique_group, rf"\[GroupId GROUP\] Computed a new "
                                                      rf"target assignment for epoch {epoch} "),
               10, "the assignor's run for the new epoch")

    after = wait_until(lambda: (d := describe(kafka, unique_group))
                       and all(m["member_epoch"] == epoch for m in d["members"]) and d,
                       30, "every member at the new epoch")
    assert {m["member_id"] for m in after["members"]} == {c.member_id for c in consumers}
    for c, n, had in zip(consumers, callbacks, owned):
        assert c.events[n:] == [], c.events[n:]  # no revoke, no assign: nothing moved
        assert c.assignment == had
    assert groupctl_members(kafka, unique_group) == []
