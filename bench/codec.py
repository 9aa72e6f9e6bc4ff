"""Decode speed of groupctl's protocol codec against kafka-python's, on the same bytes.

The workload is a DescribeGroups response for one classic consumer group of 1,000 members
with 10,000 partitions assigned in total (10 topics x 1,000 partitions, 10 per member).
Each member's metadata is a consumer-protocol Subscription v3 (all 10 topics, its owned
partitions, generation, rack) and its assignment a consumer-protocol Assignment v3, both
written byte by byte as the Java client writes them (int16 version, then INT16-length
strings and INT32-length arrays/bytes). The response is encoded once (at DESCRIBE_VERSION,
which both libraries speak) and then decoded by each library from the same bytes.

Rows:
  (a) the DescribeGroups response body only;
  (b) (a) + decoding every member's assignment bytes
      (groupctl.protocol.consumer.decode_assignment vs kafka-python's
      ConsumerProtocolAssignment.decode, what its consumer coordinator calls);
  (c) (b) + decoding every member's subscription (what `groupctl describe` does).

Timing: timeit, REPEAT repeats of NUMBER calls, the minimum per call. Prints both times
and the ratio ours / kafka-python (< 1 means groupctl is faster).

    . .venv/bin/activate && pip install -e '.[bench]' && python bench/codec.py
"""
from __future__ import annotations

import argparse
import struct
import sys
import timeit

from groupctl.protocol.messages import DESCRIBE_GROUPS

MEMBERS = 1_000
TOPICS = 10
PARTITIONS_PER_TOPIC = 1_000        # 10 x 1,000 = 10,000 partitions in total
PER_MEMBER = TOPICS * PARTITIONS_PER_TOPIC // MEMBERS
DESCRIBE_VERSION = 6                # newest DescribeGroups in Kafka 4.3 and kafka-python 3.x
REPEAT = 7
NUMBER = 5


# ---- consumer-protocol bytes, as the Java ConsumerProtocol writes them ----------------

def _str16(s: str | None) -> bytes:
    if s is None:
        return struct.pack(">h", -1)
    raw = s.encode()
    return struct.pack(">h", len(raw)) + raw


def _topic_partitions(items: list[tuple[str, list[int]]]) -> bytes:
    out = [struct.pack(">i", len(items))]
    for topic, partitions in items:
        out.append(_str16(topic))
        out.append(struct.pack(f">i{len(partitions)}i", len(partitions), *partitions))
    return b"".join(out)


def subscription_v3(topics: list[str], owned: list[tuple[str, list[int]]], generation: int,
                    rack: str | None) -> bytes:
    return b"".join([
        struct.pack(">h", 3),
        struct.pack(">i", len(topics)), *(_str16(t) for t in topics),
        struct.pack(">i", -1),                 # user_data: null
        _topic_partitions(owned),
        struct.pack(">i", generation),
        _str16(rack),
    ])


def assignment_v3(assigned: list[tuple[str, list[int]]]) -> bytes:
    return struct.pack(">h", 3) + _topic_partitions(assigned) + struct.pack(">i", -1)


def build_response() -> bytes:
    topics = [f"orders-{t}" for t in range(TOPICS)]
    members = []
    for i in range(MEMBERS):
        first = i * PER_MEMBER
        by_topic: dict[str, list[int]] = {}
        for p in range(first, first + PER_MEMBER):
            topic, partition = divmod(p, PARTITIONS_PER_TOPIC)
            by_topic.setdefault(topics[topic], []).append(partition)
        assigned = list(by_topic.items())
        members.append({
            "member_id": f"consumer-orders-{i}-4f9c1a2e-7b3d-4c8e-9a51-{i:012d}",
            "group_instance_id": None,
            "client_id": f"consumer-orders-{i}",
            "client_host": f"/10.0.{i // 250}.{i % 250}",
            "member_metadata": subscription_v3(topics, assigned, 42, f"rack-{i % 3}"),
            "member_assignment": assignment_v3(assigned),
        })
    body = {"throttle_time_ms": 0, "groups": [{
        "error_code": 0, "error_message": None, "group_id": "orders",
        "group_state": "Stable", "protocol_type": "consumer", "protocol_data": "range",
        "members": members, "authorized_operations": -2147483648,
    }]}
    return DESCRIBE_GROUPS.encode_response(DESCRIBE_VERSION, body)


# ---- the decoders under test -------------------------------------------------------------

def ours(data: bytes):
    from groupctl.protocol import consumer

    decode_assignment = getattr(consumer, "decode_assignment", None)
    decode_subscription = getattr(consumer, "decode_subscription", None)

    def response():
        return DESCRIBE_GROUPS.decode_response(DESCRIBE_VERSION, data)

    def with_assignments():
        r = response()
        return r, [decode_assignment(m["member_assignment"]) for m in r["groups"][0]["members"]]

    def with_subscriptions():
        r, asg = with_assignments()
        return r, asg, [decode_subscription(m["member_metadata"])
                        for m in r["groups"][0]["members"]]

    return (response,
            with_assignments if decode_assignment else None,
            with_subscriptions if decode_assignment and decode_subscription else None)


def kafka_python(data: bytes):
    from kafka.protocol.admin.groups import DescribeGroupsResponse
    from kafka.protocol.consumer.metadata import (
        ConsumerProtocolAssignment, ConsumerProtocolSubscription,
    )

    def response():
        return DescribeGroupsResponse.decode(data, version=DESCRIBE_VERSION)

    def with_assignments():
        r = response()
        return r, [ConsumerProtocolAssignment.decode(m.member_assignment)
                   for m in r.groups[0].members]

    def with_subscriptions():
        r, asg = with_assignments()
        return r, asg, [ConsumerProtocolSubscription.decode(m.member_metadata)
                        for m in r.groups[0].members]

    return response, with_assignments, with_subscriptions


def check_same(data: bytes) -> None:
    """Both libraries must read the same thing, or the timing means nothing."""
    (o_resp, o_asg, _), (k_resp, k_asg, _) = ours(data), kafka_python(data)
    mine, theirs = o_resp()["groups"][0], k_resp().groups[0]
    assert mine["group_state"] == theirs.group_state == "Stable"
    assert len(mine["members"]) == len(theirs.members) == MEMBERS
    for a, b in zip(mine["members"], theirs.members):
        assert (a["member_id"], a["client_host"], a["member_metadata"], a["member_assignment"]) == (
            b.member_id, b.client_host, bytes(b.member_metadata), bytes(b.member_assignment))
    if o_asg:
        _, mine_asg = o_asg()
        _, theirs_asg = k_asg()
        total = 0
        for a, b in zip(mine_asg, theirs_asg):
            mine_tp = [(tp.topic, list(tp.partitions)) for tp in a.assigned_partitions]
            theirs_tp = [(tp.topic, list(tp.partitions)) for tp in b.assigned_partitions]
            assert mine_tp == theirs_tp
            total += sum(len(p) for _, p in mine_tp)
        assert total == TOPICS * PARTITIONS_PER_TOPIC


def best(fn, repeat: int, number: int) -> float:
    return min(timeit.repeat(fn, repeat=repeat, number=number)) / number


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=REPEAT)
    ap.add_argument("--number", type=int, default=NUMBER)
    args = ap.parse_args(argv)
    try:
        import kafka
    except ImportError:
        print("kafka-python is not installed: pip install -e '.[bench]'", file=sys.stderr)
        return 2
    if int(kafka.__version__.split(".")[0]) < 3:
        # 2.x has hand-written protocol classes (DescribeGroups v0-v3 only) elsewhere.
        print(f"this bench needs kafka-python 3.x (found {kafka.__version__}): "
              f"pip install 'kafka-python>=3'", file=sys.stderr)
        return 2

    data = build_response()
    check_same(data)
    print(f"DescribeGroups v{DESCRIBE_VERSION} response: {MEMBERS} members, "
          f"{TOPICS * PARTITIONS_PER_TOPIC} partitions, {len(data):,} bytes; "
          f"kafka-python {kafka.__version__}, Python {sys.version.split()[0]}; "
          f"min of {args.repeat} x {args.number} calls")
    rows = [
        ("(a) response body", 0),
        ("(b) + assignments", 1),
        ("(c) + subscriptions", 2),
    ]
    mine, theirs = ours(data), kafka_python(data)
    print(f"{'row':<24}{'groupctl ms':>13}{'kafka-python ms':>17}{'ratio':>8}")
    for label, i in rows:
        if mine[i] is None:
            print(f"{label:<24}  skipped: groupctl.protocol.consumer.decode_assignment / "
                  f"decode_subscription not available yet")
            continue
        t_ours = best(mine[i], args.repeat, args.number)
        t_kp = best(theirs[i], args.repeat, args.number)
        print(f"{label:<24}{t_ours * 1e3:>13.2f}{t_kp * 1e3:>17.2f}{t_ours / t_kp:>8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
