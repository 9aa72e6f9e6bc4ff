"""Consumer-protocol payloads (groupctl.protocol.consumer).

Golden bytes are built here by hand with struct.pack, field by field as Kafka's
ConsumerProtocol writes them (int16 version, INT16-length strings, INT32-length arrays and
bytes, -1 = null), independent of the spec DSL under test. The JAVA_* constants are what
kafka-clients 4.3.1 ConsumerProtocol.serializeSubscription/serializeAssignment printed for
the same objects, recorded once; the hand-built bytes must equal them too.
"""
from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings, strategies as st

from groupctl.protocol.consumer import (
    LATEST, Assignment, CooperativeStickyUserData, StickyUserData, Subscription,
    TopicPartitions, decode_assignment, decode_cooperative_user_data,
    decode_sticky_user_data, decode_subscription, decode_user_data,
    encode_assignment, encode_cooperative_user_data, encode_sticky_user_data,
    encode_subscription, user_data_to_plain,
)
from groupctl.protocol.types import DecodeError


# ---- hand-built wire format -------------------------------------------------------------

def i16(v: int) -> bytes:
    return struct.pack(">h", v)


def i32(v: int) -> bytes:
    return struct.pack(">i", v)


def string(s: str | None) -> bytes:
    if s is None:
        return i16(-1)
    raw = s.encode()
    return i16(len(raw)) + raw


def nbytes(b: bytes | None) -> bytes:
    return i32(-1) if b is None else i32(len(b)) + b


def array(items: list, write) -> bytes:
    return i32(len(items)) + b"".join(write(x) for x in items)


def topic_partitions(tps: list[tuple[str, list[int]]]) -> bytes:
    return array(tps, lambda tp: string(tp[0]) + array(tp[1], i32))


def subscription_bytes(version, topics, user_data, owned, generation, rack) -> bytes:
    out = i16(version) + array(topics, string) + nbytes(user_data)
    if version >= 1:
        out += topic_partitions(owned)
    if version >= 2:
        out += i32(generation)
    if version >= 3:
        out += string(rack)
    return out


def assignment_bytes(version, assigned, user_data) -> bytes:
    return i16(version) + topic_partitions(assigned) + nbytes(user_data)


# The object Java serialized: topics [orders, pay], user data 01 02 03, owned orders-0,
# orders-2, pay-1, generation 7, rack "rack-a".
SUB_ARGS = (["orders", "pay"], b"\x01\x02\x03", [("orders", [0, 2]), ("pay", [1])], 7, "rack-a")
SUB = Subscription(3, ["orders", "pay"], b"\x01\x02\x03",
                   [TopicPartitions("orders", [0, 2]), TopicPartitions("pay", [1])], 7, "rack-a")
JAVA_SUBSCRIPTION = {
    0: "00000000000200066f7264657273000370617900000003010203",
    1: "00010000000200066f72646572730003706179000000030102030000000200066f72646572730000000200"
       "0000000000000200037061790000000100000001",
    2: "00020000000200066f72646572730003706179000000030102030000000200066f72646572730000000200"
       "000000000000020003706179000000010000000100000007",
    3: "00030000000200066f72646572730003706179000000030102030000000200066f72646572730000000200"
       "000000000000020003706179000000010000000100000007" "00067261636b2d61",
}
# new Subscription(List.of("t")): null user data, no owned partitions, generation -1, no rack
JAVA_DEFAULT_SUBSCRIPTION = "000300000001000174ffffffff00000000ffffffffffff"
# Assignment of orders-1, orders-3, pay-0 with null user data, versions 0-3
ASG = Assignment(3, [TopicPartitions("orders", [1, 3]), TopicPartitions("pay", [0])], None)
JAVA_ASSIGNMENT_BODY = ("0000000200066f726465727300000002000000010000000300037061790000000100000000"
                        "ffffffff")


def sub_at(version: int) -> Subscription:
    """SUB as it reads back from `version`: fields that version lacks hold defaults."""
    return Subscription(version, SUB.topics, SUB.user_data,
                        SUB.owned_partitions if version >= 1 else [],
                        SUB.generation_id if version >= 2 else -1,
                        SUB.rack_id if version >= 3 else None)


# ---- golden bytes -------------------------------------------------------------------------

@pytest.mark.parametrize("version", range(LATEST + 1))
def test_subscription_golden_bytes_all_versions(version):
    expected = subscription_bytes(version, *SUB_ARGS)
    assert expected.hex() == JAVA_SUBSCRIPTION[version]
    assert encode_subscription(SUB, version) == expected
    assert decode_subscription(expected) == sub_at(version)


def test_subscription_v3_is_what_the_java_client_writes_by_default():
    expected = (i16(3) + i32(1) + string("t") + i32(-1)  # topics, null user data
                + i32(0) + i32(-1) + i16(-1))              # no owned, generation -1, null rack
    assert expected.hex() == JAVA_DEFAULT_SUBSCRIPTION
    assert encode_subscription(Subscription(topics=["t"])) == expected
    assert decode_subscription(expected) == Subscription(3, ["t"], None, [], -1, None)


@pytest.mark.parametrize("version", range(LATEST + 1))
def test_assignment_golden_bytes_all_versions(version):
    expected = assignment_bytes(version, [("orders", [1, 3]), ("pay", [0])], None)
    assert expected.hex() == f"{version:04x}" + JAVA_ASSIGNMENT_BODY
    assert encode_assignment(ASG, version) == expected
    got = decode_assignment(expected)
    assert got == Assignment(version, ASG.assigned_partitions, None)


def test_assignment_with_user_data_and_empty():
    data = assignment_bytes(3, [], b"\xca\xfe")
    assert decode_assignment(data) == Assignment(3, [], b"\xca\xfe")
    assert encode_assignment(Assignment(3, [], b"\xca\xfe")) == data


def test_sticky_user_data_v1_and_v0():
    v1 = topic_partitions([("orders", [0, 1]), ("pay", [4])]) + i32(12)
    v0 = topic_partitions([("orders", [0, 1]), ("pay", [4])])
    prev = [TopicPartitions("orders", [0, 1]), TopicPartitions("pay", [4])]
    assert decode_sticky_user_data(v1) == StickyUserData(prev, 12)
    assert decode_sticky_user_data(v0) == StickyUserData(prev, None)
    assert encode_sticky_user_data(StickyUserData(prev, 12)) == v1
    assert encode_sticky_user_data(StickyUserData(prev)) == v0
    assert decode_sticky_user_data(v1).version == 1 and decode_sticky_user_data(v0).version == 0
    assert decode_sticky_user_data(v0).to_dict() == {
        "version": 0, "generation": None,
        "previous_assignment": [{"topic": "orders", "partitions": [0, 1]},
                                {"topic": "pay", "partitions": [4]}]}


def test_sticky_user_data_default_generation_is_null_in_json():
    data = topic_partitions([]) + i32(-1)
    assert decode_sticky_user_data(data).to_dict() == {
        "version": 1, "previous_assignment": [], "generation": None}


def test_cooperative_sticky_user_data():
    assert decode_cooperative_user_data(i32(5)) == CooperativeStickyUserData(5)
    assert encode_cooperative_user_data(CooperativeStickyUserData(5)) == i32(5)
    assert decode_cooperative_user_data(i32(5)).to_dict() == {"generation": 5}
    assert decode_cooperative_user_data(i32(-1)).to_dict() == {"generation": None}
    with pytest.raises(DecodeError):
        decode_cooperative_user_data(b"\x00\x01")


def test_decode_user_data_dispatches_by_assignor():
    sticky = topic_partitions([("t", [0])]) + i32(3)
    assert decode_user_data("sticky", sticky) == StickyUserData([TopicPartitions("t", [0])], 3)
    assert decode_user_data("cooperative-sticky", i32(3)) == CooperativeStickyUserData(3)
    assert decode_user_data("range", sticky) is None
    assert decode_user_data(None, sticky) is None
    assert decode_user_data("sticky", b"") is None
    assert decode_user_data("sticky", None) is None
    with pytest.raises(DecodeError):
        decode_user_data("sticky", b"\xff\xff")


# ---- leniency: newer versions, trailing bytes -------------------------------------------

def test_newer_version_is_read_as_newest_and_keeps_its_number():
    body = subscription_bytes(3, *SUB_ARGS)[2:]
    sub = decode_subscription(i16(9) + body)
    assert sub == Subscription(9, SUB.topics, SUB.user_data, SUB.owned_partitions, 7, "rack-a")
    assert sub.to_dict()["version"] == 9
    asg = decode_assignment(i16(9) + bytes.fromhex(JAVA_ASSIGNMENT_BODY))
    assert asg.version == 9 and asg.assigned_partitions == ASG.assigned_partitions


def test_newer_version_fields_we_do_not_know_become_trailing():
    future_field = i32(42) + string("zone-b")
    sub = decode_subscription(i16(9) + subscription_bytes(3, *SUB_ARGS)[2:] + future_field)
    assert sub.trailing == future_field
    assert sub.to_dict()["trailing"] == future_field.hex()
    # and encoding it again writes plain v3 (as Java does)
    assert encode_subscription(sub) == subscription_bytes(3, *SUB_ARGS)


@pytest.mark.parametrize("version", range(LATEST + 1))
def test_trailing_bytes_are_kept(version):
    data = subscription_bytes(version, *SUB_ARGS) + b"\x00\xff"
    sub = decode_subscription(data)
    assert sub.trailing == b"\x00\xff"
    assert sub.topics == SUB.topics
    asg = decode_assignment(assignment_bytes(version, [("t", [1])], None) + b"\x01")
    assert asg.trailing == b"\x01" and asg.assigned_partitions == [TopicPartitions("t", [1])]
    assert "trailing" not in decode_subscription(subscription_bytes(version, *SUB_ARGS)).to_dict()


def test_sticky_user_data_trailing_kept():
    data = topic_partitions([("t", [0])]) + i32(2) + b"\x07"
    assert decode_sticky_user_data(data).trailing == b"\x07"


# ---- garbage ------------------------------------------------------------------------------

@pytest.mark.parametrize("version", range(LATEST + 1))
def test_every_truncation_is_a_decode_error(version):
    full = subscription_bytes(version, *SUB_ARGS)
    for n in range(len(full)):
        with pytest.raises(DecodeError):
            decode_subscription(full[:n])
    full = assignment_bytes(version, [("orders", [1, 3]), ("pay", [0])], b"ud")
    for n in range(len(full)):
        with pytest.raises(DecodeError):
            decode_assignment(full[:n])


def test_sticky_truncation_is_a_decode_error():
    full = topic_partitions([("orders", [0, 1])]) + i32(3)
    v0_end = len(full) - 4  # a v0 payload is a valid prefix
    for n in range(len(full)):
        if n >= v0_end:  # a whole v0 payload, then 0-3 bytes too few for a generation
            got = decode_sticky_user_data(full[:n])
            assert (got.generation, got.trailing) == (None, full[v0_end:n])
            continue
        with pytest.raises(DecodeError):
            decode_sticky_user_data(full[:n])


@pytest.mark.parametrize("data, why", [
    (b"", "empty"),
    (i16(-1) + i32(0) + i32(-1), "negative version"),
    (i16(0) + i32(-1) + i32(-1), "null topics array"),
    (i16(0) + i32(-7) + i32(-1), "negative topics length"),
    (i16(0) + i32(1) + i16(-1) + i32(-1), "null topic name"),
    (i16(0) + i32(0x7FFFFFFF) + i32(-1), "absurd array length"),
    (i16(0) + i32(1) + i16(2) + b"\xff\xfe" + i32(-1), "bad UTF-8"),
    (i16(0) + i32(0) + i32(10) + b"abc", "user data longer than the rest"),
    (i16(1) + i32(0) + i32(-1) + i32(1) + string("t") + i32(-1), "null partitions"),
    (i16(1) + i32(0) + i32(-1) + i32(1) + i16(-1) + i32(0), "null owned topic"),
    (i16(1) + i32(0) + i32(-1) + i32(-1), "null owned partitions array"),
])
def test_garbage_subscription_raises_decode_error(data, why):
    with pytest.raises(DecodeError):
        decode_subscription(data)


@pytest.mark.parametrize("data", [
    b"", b"\x00", i16(-3) + i32(0) + i32(-1), i16(0) + i32(-1) + i32(-1),
    i16(0) + i32(1) + string("t") + i32(5) + i32(1), i16(0) + i32(1) + i16(-1) + i32(0) + i32(-1),
])
def test_garbage_assignment_raises_decode_error(data):
    with pytest.raises(DecodeError):
        decode_assignment(data)


def test_none_input_is_a_decode_error():
    with pytest.raises(DecodeError):
        decode_subscription(None)


def test_bytearray_and_memoryview_are_accepted():
    data = subscription_bytes(3, *SUB_ARGS)
    assert decode_subscription(bytearray(data)) == SUB
    assert decode_assignment(memoryview(assignment_bytes(1, [("t", [0])], None))).version == 1


def test_encode_version_above_latest_writes_latest_and_negative_is_refused():
    assert encode_subscription(SUB, 7) == subscription_bytes(3, *SUB_ARGS)
    assert encode_assignment(ASG, 9)[:2] == i16(3)
    with pytest.raises(ValueError):
        encode_subscription(SUB, -1)


# ---- JSON shape (json-fields.md subscription object) --------------------------------------

def test_subscription_to_dict_shape():
    sticky = encode_sticky_user_data(StickyUserData([TopicPartitions("orders", [0, 2])], 6))
    sub = Subscription(3, ["orders", "pay"], sticky,
                       [TopicPartitions("orders", [0, 2])], 6, "rack-a")
    assert sub.to_dict(assignor="sticky") == {
        "version": 3, "topics": ["orders", "pay"],
        "owned_partitions": [{"topic": "orders", "partitions": [0, 2]}],
        "generation": 6, "rack": "rack-a",
        "user_data": {"version": 1, "previous_assignment": [{"topic": "orders", "partitions": [0, 2]}],
                      "generation": 6},
    }
    assert sub.to_dict()["user_data"] == sticky.hex()              # no assignor: hex
    assert sub.to_dict(assignor="range")["user_data"] == sticky.hex()


def test_subscription_to_dict_unknowns_are_null():
    d = decode_subscription(subscription_bytes(0, ["t"], None, [], -1, None)).to_dict()
    assert d == {"version": 0, "topics": ["t"], "owned_partitions": None, "generation": None,
                 "rack": None, "user_data": None}
    d = decode_subscription(subscription_bytes(3, ["t"], b"", [], -1, None)).to_dict()
    assert (d["owned_partitions"], d["generation"], d["rack"], d["user_data"]) == ([], None, None, None)
    assert Subscription(rack_id="").to_dict()["rack"] is None


def test_undecodable_known_user_data_falls_back_to_hex():
    sub = Subscription(3, ["t"], b"\xff\xff\xff")
    assert sub.to_dict(assignor="sticky")["user_data"] == "ffffff"
    assert user_data_to_plain("cooperative-sticky", i32(4)) == {"generation": 4}
    assert user_data_to_plain("cooperative-sticky", b"") is None


def test_assignment_to_dict_shape():
    assert ASG.to_dict() == {"version": 3, "user_data": None, "assigned_partitions": [
        {"topic": "orders", "partitions": [1, 3]}, {"topic": "pay", "partitions": [0]}]}
    assert Assignment(1, [], b"\x01").to_dict() == {"version": 1, "assigned_partitions": [],
                                                    "user_data": "01"}


def test_observe_model_uses_the_payloads():
    from groupctl.observe.reads.model import classic_member

    raw = {"member_id": "m-1", "client_id": "c", "client_host": "/10.0.0.1",
           "group_instance_id": None,
           "member_metadata": encode_subscription(SUB),
           "member_assignment": encode_assignment(ASG)}
    member = classic_member(raw, "consumer", "range")
    assert member.subscription == SUB.to_dict(assignor="range")
    assert member.rack == "rack-a"
    assert [(tp.topic, tp.partitions) for tp in member.assignment] == [("orders", [1, 3]), ("pay", [0])]


# ---- properties ---------------------------------------------------------------------------

names = st.text(max_size=12)
partition_lists = st.lists(st.integers(-2**31, 2**31 - 1), max_size=8)
tp_lists = st.lists(st.builds(TopicPartitions, names, partition_lists), max_size=5)
maybe_bytes = st.none() | st.binary(max_size=24)
int32s = st.integers(-2**31, 2**31 - 1)


@settings(max_examples=300, deadline=None)
@given(version=st.integers(0, LATEST), topics=st.lists(names, max_size=6), user_data=maybe_bytes,
       owned=tp_lists, generation=int32s, rack=st.none() | names)
def test_subscription_round_trip(version, topics, user_data, owned, generation, rack):
    sub = Subscription(version, topics, user_data, owned, generation, rack)
    data = encode_subscription(sub)
    assert data == subscription_bytes(version, topics, user_data,
                                      [(tp.topic, tp.partitions) for tp in owned], generation, rack)
    assert decode_subscription(data) == Subscription(
        version, topics, user_data, owned if version >= 1 else [],
        generation if version >= 2 else -1, rack if version >= 3 else None)


@settings(max_examples=300, deadline=None)
@given(version=st.integers(0, LATEST), assigned=tp_lists, user_data=maybe_bytes)
def test_assignment_round_trip(version, assigned, user_data):
    asg = Assignment(version, assigned, user_data)
    data = encode_assignment(asg)
    assert data == assignment_bytes(version, [(tp.topic, tp.partitions) for tp in assigned], user_data)
    assert decode_assignment(data) == asg


@settings(max_examples=200, deadline=None)
@given(prev=tp_lists, generation=st.none() | int32s)
def test_sticky_round_trip(prev, generation):
    data = StickyUserData(prev, generation)
    assert decode_sticky_user_data(encode_sticky_user_data(data)) == data


@settings(max_examples=500, deadline=None)
@given(st.binary(max_size=64))
def test_arbitrary_bytes_decode_or_raise_decode_error(data):
    for decode in (decode_subscription, decode_assignment, decode_sticky_user_data,
                   decode_cooperative_user_data):
        try:
            decode(data)
        except DecodeError:
            pass
