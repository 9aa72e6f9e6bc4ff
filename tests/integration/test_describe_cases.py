"""`groupctl describe` in the awkward cases: unknown groups (exit 5), several groups of which
some fail (exit 7), Empty groups with committed offsets, assigned partitions without a
commit (lag null), a KIP-848 group after its members left (never Dead), groups in the
middle of a rebalance, a non-consumer protocol type, a deleted topic, `--all`, and proof
that describe only reads."""
from __future__ import annotations

import json
import re
import threading

import pytest
from describe_support import (
    RawMember,
    cgc_int,
    cgc_rows,
    cli,
    commit,
    describe_json,
    member_tps,
    produce,
    tp_dicts,
    wait_until,
)

pytestmark = pytest.mark.broker

READ_APIS = {"ApiVersions", "Metadata", "FindCoordinator", "DescribeGroups",
             "ConsumerGroupDescribe", "OffsetFetch", "ListOffsets", "ListGroups",
             "ShareGroupDescribe", "StreamsGroupDescribe", "DescribeShareGroupOffsets"}


def test_unknown_group_is_exit_5(kafka, unique_group):
    for fmt in ("table", "json"):
        code, out, err = cli(kafka, "-o", fmt, "describe", unique_group)
        assert (code, out, err) == (5, "", f"groupctl: error: group '{unique_group}' not found\n")


def test_several_unknown_groups_are_exit_5(kafka, unique_group):
    code, out, err = cli(kafka, "describe", unique_group + "-a", unique_group + "-b")
    assert code == 5 and out == ""
    assert err.splitlines() == [f"groupctl: error: group '{unique_group}-a' not found",
                                f"groupctl: error: group '{unique_group}-b' not found"]


def test_a_missing_group_beside_others_prints_them_then_exit_5(kafka, topic_factory,
                                                               unique_group):
    """Only a missing group went wrong: exit 5, as for one missing group (7 is the broker
    refusing something)."""
    topic = topic_factory(1)
    produce(kafka.bootstrap, topic, {0: 3})
    commit(kafka.bootstrap, unique_group, {(topic, 0): 2})
    missing = unique_group + "-missing"
    code, out, err = cli(kafka, "-o", "json", "describe", unique_group, missing)
    assert code == 5
    assert [g["group"] for g in json.loads(out)] == [unique_group]
    assert err.splitlines() == [f"groupctl: error: group '{missing}' not found",
                                "groupctl: error: 1 of 2 groups not found"]


def test_empty_group_with_committed_offsets(kafka, topic_factory, unique_group):
    topic = topic_factory(3)
    produce(kafka.bootstrap, topic, {0: 10, 1: 20, 2: 5})
    commit(kafka.bootstrap, unique_group, {(topic, 0): 4, (topic, 1): 20})
    (g,) = describe_json(kafka, unique_group)
    assert (g["state"], g["type"], g["protocol_type"], g["protocol"]) == ("Empty", "classic", None, None)
    assert g["members"] == [] and g["generation"] is None and g["rebalancing"] is False
    assert g["offsets"] == [
        {"topic": topic, "partition": 0, "committed": 4, "log_end": 10, "lag": 6, "member_id": None},
        {"topic": topic, "partition": 1, "committed": 20, "log_end": 20, "lag": 0, "member_id": None},
    ]
    assert g["lag_total"] == 6 and g["lag_by_topic"] == {topic: 6}
    rows = cgc_rows(kafka, "--describe", "--group", unique_group, "--offsets")
    assert sorted((r["TOPIC"], int(r["PARTITION"]), cgc_int(r["CURRENT-OFFSET"]),
                   cgc_int(r["LOG-END-OFFSET"]), cgc_int(r["LAG"])) for r in rows) == [
        (topic, 0, 4, 10, 6), (topic, 1, 20, 20, 0)]
    code, out, _ = cli(kafka, "describe", unique_group)
    assert code == 0 and "no active members" in out and "lag: total 6" in out


def test_assigned_partitions_without_a_commit_have_null_lag(kafka, topic_factory, unique_group,
                                                             consumer_factory):
    topic = topic_factory(2)
    produce(kafka.bootstrap, topic, {0: 7, 1: 9})
    c = consumer_factory(unique_group, topic, config={"enable.auto.commit": False})
    c.wait_assigned(count=2)
    g = wait_until(lambda: [g for g in describe_json(kafka, unique_group)
                            if g["state"] == "Stable" and g["members"]], 30, "a Stable group")[0]
    assert g["offsets"] == [
        {"topic": topic, "partition": 0, "committed": None, "log_end": 7, "lag": None,
         "member_id": c.member_id},
        {"topic": topic, "partition": 1, "committed": None, "log_end": 9, "lag": None,
         "member_id": c.member_id},
    ]
    assert g["lag_total"] is None and g["lag_by_topic"] == {topic: None}


def test_consumer_protocol_group_after_its_members_left_is_empty_not_dead(
        kafka, topic_factory, unique_group, consumer_factory):
    topic = topic_factory(2)
    produce(kafka.bootstrap, topic, {0: 4, 1: 6})
    c = consumer_factory(unique_group, topic, protocol="consumer")
    c.wait_assigned(count=2)
    wait_until(lambda: {(r["topic"], r["partition"]): r["committed"]
                        for r in describe_json(kafka, unique_group)[0]["offsets"]}
               == {(topic, 0): 4, (topic, 1): 6}, 30, "offsets committed")
    c.close()
    g = wait_until(lambda: [g for g in describe_json(kafka, unique_group) if not g["members"]],
                   30, "the member gone")[0]
    assert (g["type"], g["state"], g["protocol_type"]) == ("consumer", "Empty", "consumer")
    assert g["group_epoch"] >= 1 and [(r["committed"], r["lag"]) for r in g["offsets"]] == [(4, 0), (6, 0)]
    code, out, _ = cli(kafka, "-o", "json", "list", "--regex", re.escape(unique_group))
    assert code == 0 and json.loads(out) == [{"group": unique_group, "state": "Empty", "type": "consumer",
                                "protocol_type": "consumer"}]


def test_member_that_joined_but_never_synced(kafka, unique_group):
    """A raw JoinGroup that never sends SyncGroup leaves the group CompletingRebalance:
    describe shows the member, without subscription or assignment, and says rebalancing."""
    member = RawMember(kafka.bootstrap, unique_group)
    member.join()
    try:
        (g,) = describe_json(kafka, unique_group)
        assert (g["state"], g["rebalancing"], g["protocol"], g["generation"]) == (
            "CompletingRebalance", True, None, None)
        assert [(m["member_id"], m["subscription"], m["assignment"]) for m in g["members"]] == [
            (member.member_id, None, None)]
        code, out, _ = cli(kafka, "describe", unique_group)
        assert code == 0 and "CompletingRebalance" in out and "rebalancing" in out
    finally:
        member.leave()


def test_group_waiting_for_a_member_to_rejoin(kafka, unique_group):
    """A second member's join puts a Stable group into PreparingRebalance until the first
    rejoins (it never does here): describe shows both members, nothing decoded, exit 0."""
    first = RawMember(kafka.bootstrap, unique_group)
    first.join(session_ms=30000, rebalance_ms=30000)
    first.sync({first.member_id: b""})
    second = RawMember(kafka.bootstrap, unique_group)
    joining = threading.Thread(target=second.join, kwargs={"rebalance_ms": 30000}, daemon=True)
    joining.start()
    try:
        g = wait_until(lambda: [g for g in describe_json(kafka, unique_group)
                                if g["state"] == "PreparingRebalance" and len(g["members"]) == 2],
                       20, "PreparingRebalance with two members")[0]
        assert g["rebalancing"] is True and first.member_id in {m["member_id"] for m in g["members"]}
        assert all(m["subscription"] is None and m["assignment"] is None for m in g["members"])
    finally:
        first.leave()  # the parked join completes without the first member
        joining.join(30)
        second.leave()
    assert not joining.is_alive()


def test_non_consumer_protocol_type_shows_raw_bytes(kafka, unique_group):
    member = RawMember(kafka.bootstrap, unique_group, protocol_type="connect",
                       protocols=[("default", b"\x00\x01hello")])
    member.join()
    member.sync({member.member_id: b"\x00\x01assigned"})
    try:
        (g,) = describe_json(kafka, unique_group)
        assert (g["state"], g["type"], g["protocol_type"], g["protocol"]) == (
            "Stable", "classic", "connect", "default")
        (m,) = g["members"]
        assert m["member_id"] == member.member_id
        assert (m["raw_metadata"], m["raw_assignment"]) == ("000168656c6c6f", "000161737369676e6564")
        assert m["subscription"] is None and m["assignment"] is None
        code, out, _ = cli(kafka, "describe", unique_group)
        assert code == 0 and "000168656c6c6f" in out and "000161737369676e6564" in out
    finally:
        member.leave()


def test_group_whose_topic_was_deleted(kafka, topic_factory, unique_group, consumer_factory):
    from groupctl.lab.workload import _admin

    keep, gone = topic_factory(2), topic_factory(2)
    for t in (keep, gone):
        produce(kafka.bootstrap, t, {0: 5, 1: 5})
    commit(kafka.bootstrap, unique_group, {(keep, 0): 3, (keep, 1): 4, (gone, 0): 2, (gone, 1): 5})
    live = unique_group + "-live"
    c = consumer_factory(live, [keep, gone], config={"enable.auto.commit": False})
    c.wait_assigned(count=4)
    admin = _admin(kafka.bootstrap)
    admin.delete_topics([gone])[gone].result(30)

    g = wait_until(lambda: [g for g in describe_json(kafka, unique_group)
                            if {r["topic"] for r in g["offsets"]} == {keep}],
                   30, "the deleted topic's offsets gone")[0]
    assert [(r["partition"], r["committed"], r["log_end"], r["lag"]) for r in g["offsets"]] == [
        (0, 3, 5, 2), (1, 4, 5, 1)]
    (lg,) = describe_json(kafka, live)
    rows = {(r["topic"], r["partition"]): r for r in lg["offsets"]}
    assert {(keep, 0), (keep, 1)} <= set(rows)
    for (topic, _), r in rows.items():
        if topic == gone:
            assert (r["committed"], r["log_end"], r["lag"]) == (None, None, None)
        else:
            assert (r["committed"], r["log_end"]) == (None, 5)


def test_all_with_regex_and_types_from_the_listing(kafka, topic_factory, unique_group,
                                                   consumer_factory):
    topic = topic_factory(2)
    produce(kafka.bootstrap, topic, {0: 1, 1: 1})
    commit(kafka.bootstrap, unique_group + "-empty", {(topic, 0): 1})
    c = consumer_factory(unique_group + "-live", topic, protocol="consumer")
    c.wait_assigned(count=2)
    code, out, err = cli(kafka, "-o", "json", "describe", "--all", "--regex", "^" + re.escape(unique_group))
    assert code == 0, err
    groups = json.loads(out)
    assert [(g["group"], g["type"], g["state"]) for g in groups] == [
        (unique_group + "-empty", "classic", "Empty"), (unique_group + "-live", "consumer", "Stable")]
    (m,) = groups[1]["members"]
    assert m["member_id"] == c.member_id and member_tps(m["assignment"]) == set(c.assignment)
    assert m["assignment"] == tp_dicts(c.assignment)
    code, out, _ = cli(kafka, "-o", "json", "describe", "--all", "--regex", "^no-such-group-x$")
    assert (code, json.loads(out)) == (0, [])


def test_describe_sends_only_read_requests(kafka, topic_factory, unique_group, consumer_factory):
    topic = topic_factory(1)
    c = consumer_factory(unique_group, topic)
    c.wait_assigned(count=1)
    code, _, err = cli(kafka, "--debug", "-o", "json", "describe", unique_group)
    assert code == 0
    apis = set(re.findall(r"groupctl: trace: (\w+) v\d+ ", err))
    assert {"DescribeGroups", "OffsetFetch", "ListOffsets"} <= apis <= READ_APIS
    code, _, err = cli(kafka, "--debug", "list")
    assert code == 0 and set(re.findall(r"groupctl: trace: (\w+) v\d+ ", err)) <= READ_APIS


def test_usage_errors(kafka):
    assert cli(kafka, "describe")[0] == 2
    assert cli(kafka, "describe", "g", "--all")[0] == 2
    assert cli(kafka, "describe", "g", "--regex", "x")[0] == 2
    code, _, err = cli(kafka, "describe", "--all", "--regex", "(")
    assert code == 2 and "not a regular expression" in err
