"""remove-member on the lab broker: static librdkafka members (group.instance.id) removed by
LeaveGroup v3+ naming their instance ids, for classic and consumer (KIP-848) groups; the
others rebalance at once; an unknown instance id is exit 7 naming it while the others are
still removed; the KIP-800 reason reaches the broker log."""
from __future__ import annotations

import pytest
from steer_support import cli, cli_json, describe, log_lines, wait_until

from groupctl.lab.consumer import wait_balanced

pytestmark = pytest.mark.broker


def static_group(kafka, topic_factory, consumer_factory, group, protocol):
    topic = topic_factory(4)
    consumers = [consumer_factory(group, topic, protocol=protocol, instance_id=f"{group}-i{i}")
                 for i in range(3)]
    wait_balanced(consumers, [(topic, p) for p in range(4)])
    return topic, consumers


def instance_ids(kafka, group):
    return sorted(m["instance_id"] for m in (describe(kafka, group) or {}).get("members") or [])


@pytest.mark.parametrize("protocol", ["classic", "consumer"])
def test_a_stopped_static_member_is_removed_at_once(kafka, topic_factory, consumer_factory,
                                                    unique_group, protocol):
    topic, consumers = static_group(kafka, topic_factory, consumer_factory, unique_group, protocol)
    gone = consumers[0]
    gone.close()  # a static member does not leave on close: it stays until its session ends
    assert gone.instance_id in instance_ids(kafka, unique_group)
    code, data, err = cli_json(kafka, "remove-member", unique_group, "--instance-id",
                               gone.instance_id, "--reason", "redeploy", "--yes")
    assert code == 0, err
    assert data["removed"] == [gone.instance_id] and data["failed"] == []
    assert data["members"][0]["error"] is None
    wait_until(lambda: gone.instance_id not in instance_ids(kafka, unique_group), 1.0,
               "the member gone", interval=0.02)
    # the others rebalance at once and share its partitions
    wait_balanced(consumers[1:], [(topic, p) for p in range(4)], timeout=20)
    assert instance_ids(kafka, unique_group) == sorted(c.instance_id for c in consumers[1:])
    reason = "client reason: groupctl remove-member: redeploy"
    assert log_lines(kafka, unique_group, rf"[Ss]tatic member .*{gone.instance_id}.*{reason}"
                     if protocol == "consumer" else rf"\[Group GROUP\] .*{reason}")


def test_unknown_instance_id_is_exit_7_and_the_others_still_go(kafka, topic_factory,
                                                               consumer_factory, unique_group):
    _, consumers = static_group(kafka, topic_factory, consumer_factory, unique_group, "classic")
    gone = consumers[1]
    gone.close()
    code, out, err = cli(kafka, "remove-member", unique_group, "--instance-id",
                         f"nobody,{gone.instance_id}", "--yes")
    assert code == 7
    assert "nobody (UNKNOWN_MEMBER_ID)" in err and gone.instance_id not in err.split(":")[-1]
    assert "removed" in out and "UNKNOWN_MEMBER_ID (25)" in out
    wait_until(lambda: gone.instance_id not in instance_ids(kafka, unique_group), 2.0,
               "the known member gone")


def test_all_static_and_confirmation(kafka, topic_factory, consumer_factory, unique_group):
    _, consumers = static_group(kafka, topic_factory, consumer_factory, unique_group, "classic")
    wait_until(lambda: (d := describe(kafka, unique_group)) and d["state"] == "Stable", 30, "Stable")
    code, out, err = cli(kafka, "remove-member", unique_group, "--all-static",
                         stdin="y\n", terminal=True)
    assert code == 2 and "is Stable" in err and "--yes" in err  # refused without --yes
    code, out, err = cli(kafka, "remove-member", unique_group, "--instance-id",
                         consumers[0].instance_id, stdin="no\n", terminal=True)
    assert code == 130 and "not confirmed" in err
    assert consumers[0].instance_id in instance_ids(kafka, unique_group)
    for c in consumers:
        c.close()
    code, data, err = cli_json(kafka, "remove-member", unique_group, "--all-static", "--yes")
    assert code == 0, err
    assert sorted(data["removed"]) == sorted(c.instance_id for c in consumers)
    wait_until(lambda: instance_ids(kafka, unique_group) == [], 2.0, "no members")
    # none left: said in one line, no empty table
    code, out, err = cli(kafka, "remove-member", unique_group, "--all-static", "--yes")
    assert (code, out, err) == (0, f"group {unique_group} has no static members: nothing "
                                   f"to do\n", "")


def test_missing_group_is_exit_5(kafka, unique_group):
    code, out, err = cli(kafka, "remove-member", unique_group, "--instance-id", "x", "--yes")
    assert code == 5 and "does not exist" in err
