"""force-rebalance of classic groups on the lab broker, with real librdkafka consumers as
the members: exactly one new generation (broker log), one rebalance as each consumer saw it
(its callbacks and statistics), the same members, a report that matches describe, the
KIP-800 reason in the broker log, and no groupctl member left behind."""
from __future__ import annotations

import pytest
from steer_support import (
    cli, cli_json, describe, fresh_stats, groupctl_members, log_lines, stabilized, wait_until,
)

from groupctl.lab.consumer import wait_balanced

pytestmark = pytest.mark.broker


def three_consumers(consumer_factory, topic_factory, group, assignor):
    topic = topic_factory(6)
    consumers = [consumer_factory(group, topic, assignor=assignor, stats_interval_ms=100)
                 for _ in range(3)]
    wait_balanced(consumers, [(topic, p) for p in range(6)])
    return consumers


def settle(kafka, group, consumers):
    """The group is Stable with exactly these consumers as its members."""
    ids = {c.member_id for c in consumers}
    wait_until(lambda: (d := describe(kafka, group)) and d["state"] == "Stable"
               and {m["member_id"] for m in d["members"]} == ids, 30, "the consumers only")


@pytest.mark.parametrize("assignor", ["range", "roundrobin", "cooperative-sticky"])
def test_one_new_generation(kafka, topic_factory, consumer_factory, unique_group, assignor):
    consumers = three_consumers(consumer_factory, topic_factory, unique_group, assignor)
    settle(kafka, unique_group, consumers)
    gens = stabilized(kafka, unique_group)
    callbacks = [len(c.events) for c in consumers]
    counts = [fresh_stats(c) for c in consumers]
    owned = [c.assignment for c in consumers]

    code, report, err = cli_json(kafka, "force-rebalance", unique_group, "--yes",
                                 "--reason", f"test {assignor}")
    assert code == 0, err

    # the broker: exactly one new generation, stabilized with the same three members
    after = stabilized(kafka, unique_group)
    assert after == gens + [gens[-1] + 1], (gens, after)
    assert report["new_generations"] == 1 and not report["lost_race"]
    if report["generation_before"] is not None:  # cooperative-sticky: librdkafka shows it
        assert (report["generation_before"], report["generation_after"]) == (gens[-1], gens[-1] + 1)
    # the KIP-800 reason on the JoinGroup and on the LeaveGroup
    me = report["triggered_by"]
    reason = f"client reason: groupctl force-rebalance: test {assignor}"
    assert log_lines(kafka, unique_group, rf"Preparing to rebalance group GROUP .*Adding new "
                                          rf"member {me} .*{reason}")
    assert log_lines(kafka, unique_group, rf"\[Group GROUP\] Member {me} has left group "
                                          rf"through explicit `LeaveGroup` request; {reason}")
    # the members: the same ones, and each saw exactly one rebalance
    ids = sorted(c.member_id for c in consumers)
    assert report["same_members"] and report["members_before"] == report["members_after"] == ids
    eager = assignor != "cooperative-sticky"
    for c, n, cnt, had in zip(consumers, callbacks, counts, owned):
        if eager:  # one revoke (everything) and one assign (the new assignment)
            c.wait_events(n + 2)
            assert [e.kind for e in c.events[n:]] == ["revoke", "assign"], c.events[n:]
        else:  # cooperative: an incremental assign of nothing, no revocation
            c.wait_events(n + 1)
            assert [(e.kind, e.partitions) for e in c.events[n:]] == [("assign", frozenset())]
        # librdkafka's cgrp.rebalance_cnt counts assign and revoke operations
        want = cnt + (2 if eager else 1)
        wait_until(lambda c=c, want=want: fresh_stats(c) >= want, 10, "rebalance_cnt")
        assert fresh_stats(c) == want
        assert c.assignment == had  # range / roundrobin / sticky give the same partitions back
    assert not report["moved_partitions"] and not report["assignment_changed"]
    # the report matches describe
    now = describe(kafka, unique_group)
    assert now["state"] == "Stable" == report["state_after"]
    assert {m["member_id"]: m["assignment"] for m in now["members"]} == \
        {a["member_id"]: a["assignment"] for a in report["assignments_after"]}
    assert report["time_to_stable_ms"] > 0 and report["states_seen"][-1] == "Stable"
    assert "PreparingRebalance" in report["states_seen"]
    assert groupctl_members(kafka, unique_group) == []


@pytest.mark.slow
def test_ten_runs_leave_nothing_behind(kafka, topic_factory, consumer_factory, unique_group):
    consumers = three_consumers(consumer_factory, topic_factory, unique_group, "range")
    settle(kafka, unique_group, consumers)
    gens = stabilized(kafka, unique_group)
    ids = sorted(c.member_id for c in consumers)
    for i in range(10):
        code, report, err = cli_json(kafka, "force-rebalance", unique_group, "--yes")
        assert code == 0, (i, err)
        assert report["members_after"] == ids and report["new_generations"] == 1, i
        assert report["reason"] == "groupctl force-rebalance: no reason given"
        d = describe(kafka, unique_group)
        assert sorted(m["member_id"] for m in d["members"]) == ids, i
    assert stabilized(kafka, unique_group) == gens + [gens[-1] + 1 + i for i in range(10)]


def test_missing_or_empty_group_is_exit_5(kafka, unique_group, topic_factory):
    code, out, err = cli(kafka, "force-rebalance", unique_group, "--yes")
    assert code == 5 and out == "" and "does not exist" in err
    from describe_support import commit

    topic = topic_factory(1)
    commit(kafka.bootstrap, unique_group, {(topic, 0): 0})  # an Empty group with offsets
    code, out, err = cli(kafka, "force-rebalance", unique_group, "--yes")
    assert code == 5 and "is Empty" in err


def test_confirmation_on_a_terminal(kafka, topic_factory, consumer_factory, unique_group):
    topic = topic_factory(2)
    consumer = consumer_factory(unique_group, topic)
    consumer.wait_assigned(count=2)
    gens = wait_until(lambda: stabilized(kafka, unique_group), 10, "a generation")
    code, out, err = cli(kafka, "force-rebalance", unique_group, stdin="n\n", terminal=True)
    assert code == 130 and "not confirmed" in err and out == ""
    assert consumer.member_id in err and f"Rebalance group {unique_group} now?" in err
    assert stabilized(kafka, unique_group) == gens  # nothing happened
    code, out, err = cli(kafka, "force-rebalance", unique_group, stdin="y\n", terminal=True)
    assert code == 0, err
    assert stabilized(kafka, unique_group) == gens + [gens[-1] + 1]


def test_not_stable_in_time_is_exit_6_after_leaving(kafka, unique_group):
    """A member that never rejoins keeps the group in PreparingRebalance: exit 6, and
    groupctl's member is gone."""
    from describe_support import RawMember

    raw = RawMember(kafka.bootstrap, unique_group)
    raw.join(session_ms=30000, rebalance_ms=30000)
    raw.sync({raw.member_id: b""})
    try:
        code, out, err = cli(kafka, "force-rebalance", unique_group, "--yes", timeout=5)
        assert code == 6, err
        assert "not Stable again within the timeout" in err and "PreparingRebalance" in err
        d = describe(kafka, unique_group)
        assert d["state"] == "PreparingRebalance"
        assert [m["member_id"] for m in d["members"]] == [raw.member_id]
    finally:
        raw.leave()


def test_a_lost_race_is_reported_and_still_leaves(kafka, topic_factory, consumer_factory,
                                                  unique_group, monkeypatch):
    """Held (test hook) between its parked JoinGroup and its LeaveGroup for longer than the
    members' heartbeat, groupctl's member joins the new generation: it still leaves, and
    the report says the run cost two generations."""
    from groupctl.cli.steer import PAUSE_ENV

    consumers = three_consumers(consumer_factory, topic_factory, unique_group, "range")
    settle(kafka, unique_group, consumers)
    gens = stabilized(kafka, unique_group)
    monkeypatch.setenv(PAUSE_ENV, "parked:3")  # the members heartbeat every second
    code, report, err = cli_json(kafka, "force-rebalance", unique_group, "--yes")
    assert code == 0, err
    assert report["lost_race"] and report["new_generations"] == 2
    assert any("cost a second one" in n for n in report["notes"])
    assert stabilized(kafka, unique_group) == gens + [gens[-1] + 1, gens[-1] + 2]
    assert report["same_members"] and groupctl_members(kafka, unique_group) == []
