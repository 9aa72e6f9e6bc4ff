"""The describe read model (groupctl.observe.reads.model) and the response parsers of
groupctl.observe.reads.offsets / listing, on small hand-made responses."""
from __future__ import annotations

import re

import pytest

from groupctl.errors import AuthError, KafkaError
from groupctl.observe.reads import model
from groupctl.observe.reads.listing import STATES, TYPES, GroupListing, _matches, canonical
from groupctl.observe.reads.offsets import offset_fetch_body, parse_offset_fetch
from groupctl.protocol.consumer import (
    Assignment,
    CooperativeStickyUserData,
    Subscription,
    TopicPartitions,
    encode_assignment,
    encode_cooperative_user_data,
    encode_subscription,
)

# ---- coordinator partition ---------------------------------------------------------------

@pytest.mark.parametrize("text,expected", [
    ("", 0), ("a", 97), ("abc", 96354), ("hello", 99162322),
    ("polygenelubricants", -(1 << 31)),  # the classic String whose hashCode is MIN_VALUE
    ("é", 233), ("😀", 0xD83D * 31 + 0xDE00),  # UTF-16 code units: a surrogate pair
])
def test_java_string_hash(text, expected):
    assert model.java_string_hash(text) == expected


def test_java_string_hash_equals_javas_loop_on_random_text():
    """The unrolled sum (ASCII fast path, UTF-16 code units otherwise) is Java's loop."""
    import random

    def java_loop(text: str) -> int:
        h = 0
        for unit in memoryview(text.encode("utf-16-le")).cast("H"):
            h = (31 * h + unit) & 0xFFFFFFFF
        return h - (1 << 32) if h & 0x80000000 else h

    rng = random.Random(22)
    for _ in range(2000):
        text = "".join(chr(rng.randrange(128) if rng.random() < 0.8 else
                           rng.choice([rng.randrange(0x80, 0xD800), rng.randrange(0x10000, 0x110000)]))
                       for _ in range(rng.randrange(400)))
        assert model.java_string_hash(text) == java_loop(text), text


def test_coordinator_partition_uses_kafka_abs_and_the_partition_count():
    assert model.coordinator_partition("polygenelubricants") == 0  # MIN_VALUE -> 0
    assert model.coordinator_partition("abc") == 96354 % 50
    assert model.coordinator_partition("abc", 7) == 96354 % 7
    assert model.coordinator_partition("hello", 3) == 99162322 % 3


# ---- classic groups -------------------------------------------------------------------------

def _member(member_id, metadata=b"", assignment=b"", client="c", host="/10.0.0.1", instance=None):
    return {"member_id": member_id, "group_instance_id": instance, "client_id": client,
            "client_host": host, "member_metadata": metadata, "member_assignment": assignment}


def _group(state, members, protocol_type="consumer", protocol="range"):
    return {"error_code": 0, "group_id": "g", "group_state": state,
            "protocol_type": protocol_type, "protocol_data": protocol, "members": members}


def _sub(generation, topics=("orders",), owned=(), rack=None, user_data=None):
    return encode_subscription(Subscription(3, list(topics), user_data,
                                            [TopicPartitions(t, list(p)) for t, p in owned],
                                            generation, rack))


def _asg(*tps):
    return encode_assignment(Assignment(3, [TopicPartitions(t, list(p)) for t, p in tps]))


def test_stable_classic_group_decodes_subscriptions_and_assignments():
    ud = encode_cooperative_user_data(CooperativeStickyUserData(4))
    raw = _group("Stable", [
        _member("m-2", _sub(4, owned=[("orders", [1])], rack="r1", user_data=ud),
                _asg(("orders", [1, 2])), client="b", instance="i-2"),
        _member("m-1", _sub(4, owned=[("orders", [0])]), _asg(("orders", [0]))),
    ], protocol="cooperative-sticky")
    g = model.classic_group(raw)
    assert (g.type, g.state, g.protocol, g.generation) == ("classic", "Stable", "cooperative-sticky", 5)
    m2 = g.to_dict()["members"][0]
    assert m2 == {
        "member_id": "m-2", "instance_id": "i-2", "client_id": "b", "host": "/10.0.0.1",
        "rack": "r1", "member_epoch": None,
        "subscription": {"version": 3, "topics": ["orders"],
                         "owned_partitions": [{"topic": "orders", "partitions": [1]}],
                         "generation": 4, "rack": "r1", "user_data": {"generation": 4}},
        "assignment": [{"topic": "orders", "partitions": [1, 2]}],
        "target_assignment": None, "partitions": 2, "member_protocol": "classic",
    }


def test_a_topic_listed_twice_in_an_assignment_is_merged():
    """librdkafka's cooperative assignor writes one entry per batch of added partitions."""
    raw = _group("Stable", [_member("m", _sub(-1), _asg(("b", [1]), ("a", [3]), ("b", [0]), ("a", [2])))])
    (m,) = model.classic_group(raw).members
    assert [tp.to_dict() for tp in m.assignment] == [{"topic": "a", "partitions": [2, 3]},
                                                    {"topic": "b", "partitions": [0, 1]}]


def test_generation_is_unknown_without_v2_generations_or_when_not_stable():
    no_gen = _group("Stable", [_member("m", _sub(-1), _asg(("orders", [0])))])
    assert model.classic_group(no_gen).generation is None
    v1 = encode_subscription(Subscription(1, ["orders"], None, [], 7, None), version=1)
    assert model.classic_group(_group("Stable", [_member("m", v1, _asg())])).generation is None
    rebalancing = _group("PreparingRebalance", [_member("m")], protocol="")
    g = model.classic_group(rebalancing)
    assert (g.generation, g.protocol, g.rebalancing) == (None, None, True)
    (m,) = g.to_dict()["members"]
    assert (m["subscription"], m["assignment"], m["partitions"]) == (None, None, 0)


def test_stable_member_with_nothing_assigned_has_an_empty_assignment():
    g = model.classic_group(_group("Stable", [_member("m", _sub(-1), _asg())]))
    assert g.to_dict()["members"][0]["assignment"] == []


def test_non_consumer_protocol_keeps_raw_bytes():
    g = model.classic_group(_group("Stable", [_member("m", b"\x00\x01hi", b"\xff")],
                                   protocol_type="connect", protocol="default"))
    m = g.to_dict()["members"][0]
    assert (m["raw_metadata"], m["raw_assignment"], m["subscription"], m["assignment"]) == (
        "00016869", "ff", None, None)
    assert g.protocol_type == "connect"


def test_undecodable_consumer_metadata_is_kept_raw_with_the_reason():
    g = model.classic_group(_group("Stable", [_member("m", b"\x00\x03\x00", _asg())]))
    m = g.to_dict()["members"][0]
    assert m["raw_metadata"] == "000300" and m["decode_error"].startswith("subscription:")


def test_empty_strings_are_null():
    g = model.classic_group({"error_code": 0, "group_id": "g", "group_state": "Empty",
                             "protocol_type": "", "protocol_data": "", "members": []})
    d = g.to_dict()
    assert (d["protocol_type"], d["protocol"], d["lag_total"], d["offsets"]) == (None, None, None, [])
    assert "error" not in d


# ---- consumer groups ------------------------------------------------------------------------

def _tps(*items):
    return {"topic_partitions": [{"topic_id": tid, "topic_name": name, "partitions": list(p)}
                                 for tid, name, p in items]}


def test_consumer_group_from_consumer_group_describe():
    raw = {"error_code": 0, "group_id": "k", "group_state": "Reconciling", "group_epoch": 7,
           "assignment_epoch": 7, "assignor_name": "uniform", "members": [{
               "member_id": "A", "instance_id": None, "rack_id": "r", "member_epoch": 6,
               "client_id": "c", "client_host": "/h", "subscribed_topic_names": ["t2", "t1"],
               "subscribed_topic_regex": "", "member_type": 1,
               "assignment": _tps(("id1", "t1", [0])),
               "target_assignment": _tps(("id1", "t1", [0, 1]), ("id9", "", [4]))}]}
    g = model.consumer_group(raw)
    d = g.to_dict()
    assert (d["type"], d["protocol"], d["group_epoch"], d["assignment_epoch"], d["generation"],
            d["rebalancing"]) == ("consumer", "uniform", 7, 7, None, True)
    (m,) = d["members"]
    assert (m["member_epoch"], m["rack"], m["member_protocol"]) == (6, "r", "consumer")
    assert "subscribed_topic_regex" not in m
    assert m["subscription"]["topics"] == ["t1", "t2"]
    assert m["assignment"] == [{"topic": "t1", "partitions": [0]}]
    # a topic without a name (deleted) keeps its id
    assert m["target_assignment"] == [{"topic": "id9", "partitions": [4]},
                                      {"topic": "t1", "partitions": [0, 1]}]


# ---- offsets --------------------------------------------------------------------------------

def test_offset_rows_lag_and_totals():
    members = [model.Member("m1", assignment=[model.TopicPartitions("a", [0, 1])])]
    rows = model.offset_rows({("a", 0): 5, ("b", 0): 3}, {}, members)
    assert [(r.topic, r.partition, r.committed, r.member_id) for r in rows] == [
        ("a", 0, 5, "m1"), ("a", 1, None, "m1"), ("b", 0, 3, None)]
    rows[0].log_end, rows[1].log_end, rows[2].log_end = 9, 4, 3
    g = model.GroupDescription("g", offsets=rows)
    assert [r.lag for r in rows] == [4, None, 0]
    assert g.lag_total == 4 and g.lag_by_topic() == {"a": 4, "b": 0}
    rows[2].log_end = None
    assert rows[2].to_dict()["lag"] is None


def test_offset_fetch_body_and_parse_batched():
    assert offset_fetch_body(["g1", "g2"], 9) == {"groups": [{"group_id": "g1", "topics": None},
                                                             {"group_id": "g2", "topics": None}]}
    assert offset_fetch_body(["g1"], 7) == {"group_id": "g1", "topics": None}
    resp = {"groups": [
        {"group_id": "g1", "error_code": 0, "topics": [{"name": "t", "partitions": [
            {"partition_index": 0, "committed_offset": 5, "error_code": 0},
            {"partition_index": 1, "committed_offset": -1, "error_code": 0},
            {"partition_index": 2, "committed_offset": 9, "error_code": 88}]}]},
        {"group_id": "g2", "error_code": 30, "topics": []},
        {"group_id": "g3", "error_code": 25, "topics": []}]}
    out = parse_offset_fetch(resp, ["g1", "g2", "g3"])
    assert out["g1"] == {("t", 0): 5, ("t", 1): None}
    assert isinstance(out["g2"], AuthError) and "GROUP_AUTHORIZATION_FAILED" in str(out["g2"])
    assert isinstance(out["g3"], KafkaError) and out["g3"].code == 25


def test_offset_fetch_parse_single_group():
    resp = {"error_code": 0, "groups": [], "topics": [{"name": "t", "partitions": [
        {"partition_index": 3, "committed_offset": 11, "error_code": 0}]}]}
    assert parse_offset_fetch(resp, ["g"]) == {"g": {("t", 3): 11}}


# ---- listing --------------------------------------------------------------------------------

def test_filters_are_canonical_and_case_insensitive():
    assert canonical(["stable", " EMPTY ", "", "preparingrebalance", "odd"], STATES) == [
        "Stable", "Empty", "PreparingRebalance", "odd"]
    assert canonical(["Consumer"], TYPES) == ["consumer"]
    g = GroupListing("orders-app", "Stable", "classic", "consumer")
    assert _matches(g, ["Stable"], [], None) and not _matches(g, ["Empty"], [], None)
    assert _matches(g, [], ["classic", "consumer"], None) and not _matches(g, [], ["share"], None)
    assert _matches(g, [], [], re.compile("app$")) and not _matches(g, [], [], re.compile("^app"))
    unknown_type = GroupListing("x", "Empty", None, "consumer")
    assert not _matches(unknown_type, [], ["classic"], None)
    assert g.to_dict() == {"group": "orders-app", "state": "Stable", "type": "classic",
                           "protocol_type": "consumer"}
