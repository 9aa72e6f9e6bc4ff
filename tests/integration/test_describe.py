"""`groupctl describe` against live groups of real librdkafka consumers (range, roundrobin,
cooperative-sticky, and a KIP-848 consumer-protocol group): every member and partition
equals what the consumers' rebalance callbacks reported; committed offsets, log-end
offsets and lag equal what was produced and consumed; Kafka's own ConsumerGroupCommand
agrees on members, assignments and offsets; the broker's log agrees on the generation and
the __consumer_offsets partition."""
from __future__ import annotations

import re

import pytest
from describe_support import (
    Pending,
    cgc_assignment,
    cgc_int,
    cgc_rows,
    describe_json,
    member_tps,
    produce,
    tp_dicts,
    wait_until,
)

from groupctl.lab.consumer import wait_balanced

pytestmark = pytest.mark.broker

KINDS = {
    "range": {"assignor": "range"},
    "roundrobin": {"assignor": "roundrobin"},
    "cooperative-sticky": {"assignor": "cooperative-sticky"},
    "consumer-protocol": {"protocol": "consumer"},
}


def _settled(kafka, group, consumers, produced):
    """The describe of `group` once it is Stable, shows the consumers' assignments and
    every produced record committed; None before."""
    (g,) = describe_json(kafka, group)
    by_client = {m["client_id"]: member_tps(m["assignment"]) for m in g["members"]}
    want = {c.name: set(c.assignment) for c in consumers}
    committed = {(r["topic"], r["partition"]): r["committed"] for r in g["offsets"]}
    if g["state"] == "Stable" and by_client == want and committed == produced:
        return g
    return Pending({"state": g["state"], "members": by_client, "consumers": want,
                    "committed": committed})


@pytest.fixture
def live_group(kafka, topic_factory, unique_group, consumer_factory, request):
    """Three consumers of one kind on two topics (6 + 3 partitions) with records in every
    partition, balanced and caught up: (group, consumers, produced, describe)."""
    kind = KINDS[request.param]
    t1, t2 = topic_factory(6), topic_factory(3)
    produced = {(t1, p): 3 + p for p in range(6)} | {(t2, p): 10 + p for p in range(3)}
    for topic in (t1, t2):
        produce(kafka.bootstrap, topic, {p: n for (t, p), n in produced.items() if t == topic})
    consumers = [consumer_factory(unique_group, [t1, t2], name=f"c{i}-{unique_group[-8:]}", **kind)
                 for i in range(3)]
    wait_balanced(consumers, list(produced), timeout=60)
    g = wait_until(lambda: _settled(kafka, unique_group, consumers, produced), 60,
                   "describe matching the consumers' callbacks")
    return unique_group, consumers, produced, g


ALL_KINDS = pytest.mark.parametrize("live_group", list(KINDS), indirect=True)


@ALL_KINDS
def test_members_and_offsets_equal_the_consumers(kafka, live_group, request):
    group, consumers, produced, g = live_group
    consumer_protocol = request.node.callspec.params["live_group"] == "consumer-protocol"
    assert g["group"] == group and g["state"] == "Stable" and g["rebalancing"] is False
    assert g["type"] == ("consumer" if consumer_protocol else "classic")
    assert g["protocol_type"] == "consumer"
    assert g["coordinator"] == {"id": 1, "host": kafka.bootstrap.rsplit(":", 1)[0],
                                "port": int(kafka.bootstrap.rsplit(":", 1)[1])}
    if consumer_protocol:
        assert g["protocol"] == "uniform" and g["generation"] is None
        assert g["group_epoch"] >= 1 and g["assignment_epoch"] == g["group_epoch"]
    else:
        assert g["protocol"] == request.node.callspec.params["live_group"]
        assert g["group_epoch"] is None and g["assignment_epoch"] is None

    topics = sorted({t for t, _ in produced})
    by_client = {m["client_id"]: m for m in g["members"]}
    assert set(by_client) == {c.name for c in consumers}
    for c in consumers:
        m = by_client[c.name]
        assert m["member_id"] == c.member_id
        assert m["host"] == "/127.0.0.1" and m["instance_id"] is None and m["rack"] is None
        assert m["assignment"] == tp_dicts(c.assignment)
        assert m["partitions"] == len(c.assignment)
        assert m["subscription"]["topics"] == topics
        if consumer_protocol:
            assert m["member_epoch"] == g["group_epoch"]
            assert m["target_assignment"] == m["assignment"]
        else:
            assert m["member_epoch"] is None and m["target_assignment"] is None
            assert m["subscription"]["version"] >= 1

    owner = {tp: c.member_id for c in consumers for tp in c.assignment}
    assert [(r["topic"], r["partition"]) for r in g["offsets"]] == sorted(produced)
    for r in g["offsets"]:
        tp = (r["topic"], r["partition"])
        assert (r["committed"], r["log_end"], r["lag"]) == (produced[tp], produced[tp], 0)
        assert r["member_id"] == owner[tp]
    assert g["lag_total"] == 0 and g["lag_by_topic"] == {t: 0 for t in topics}


@ALL_KINDS
def test_consumer_group_command_agrees(kafka, live_group):
    group, _, _, g = live_group
    members = cgc_rows(kafka, "--describe", "--group", group, "--members", "--verbose")
    assert {r["CONSUMER-ID"] for r in members} == {m["member_id"] for m in g["members"]}
    ours = {m["member_id"]: m for m in g["members"]}
    for r in members:
        m = ours[r["CONSUMER-ID"]]
        assert (r["HOST"], r["CLIENT-ID"]) == (m["host"], m["client_id"])
        assert int(r["#PARTITIONS"]) == m["partitions"]
        assert cgc_assignment(r["CURRENT-ASSIGNMENT"]) == member_tps(m["assignment"])
        if g["type"] == "consumer":
            assert cgc_int(r["CURRENT-EPOCH"]) == m["member_epoch"]
            assert cgc_assignment(r["TARGET-ASSIGNMENT"]) == member_tps(m["target_assignment"])

    offsets = cgc_rows(kafka, "--describe", "--group", group, "--offsets")
    theirs = {(r["TOPIC"], int(r["PARTITION"])): (cgc_int(r["CURRENT-OFFSET"]),
                                                  cgc_int(r["LOG-END-OFFSET"]),
                                                  cgc_int(r["LAG"]), r["CONSUMER-ID"])
              for r in offsets}
    assert theirs == {(r["topic"], r["partition"]): (r["committed"], r["log_end"], r["lag"],
                                                     r["member_id"]) for r in g["offsets"]}


def _broker_log_lines(kafka, group: str) -> list[str]:
    return [ln for path in kafka.log_files for ln in path.read_text(errors="replace").splitlines()
            if f"group {group} " in ln]


@pytest.mark.parametrize("live_group", ["cooperative-sticky", "range"], indirect=True)
def test_generation_and_offsets_partition_match_the_broker_log(kafka, live_group):
    """The classic generation comes from the members' subscriptions (v2+), which carry the
    generation each member held when it rejoined; librdkafka writes one only for
    cooperative-sticky (-1 otherwise: generation null). One member leaves, so the others
    rejoin holding a generation."""
    group, consumers, produced, _ = live_group
    consumers[0].close()
    rest = consumers[1:]
    wait_balanced(rest, list(produced), timeout=60)
    g = wait_until(lambda: _settled(kafka, group, rest, produced), 60, "the two consumers left")
    lines = _broker_log_lines(kafka, group)
    partitions = {int(m) for ln in lines for m in re.findall(r"__consumer_offsets partition=(\d+)\]", ln)}
    assert partitions == {g["coordinator_partition"]}
    stabilized = [int(m) for ln in lines for m in re.findall(r"Stabilized group \S+ generation (\d+)", ln)]
    assert stabilized and stabilized[-1] >= 2
    gens = {m["subscription"]["generation"] for m in g["members"]}
    if g["protocol"] == "cooperative-sticky":
        assert g["generation"] == stabilized[-1]
        assert max(gens) == stabilized[-1] - 1
    else:
        assert g["generation"] is None and gens == {None}
