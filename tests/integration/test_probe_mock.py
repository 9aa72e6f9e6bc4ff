"""The same join / leave flow against librdkafka's mock cluster, a second, lighter peer.

The mock cluster is created by a confluent_kafka client configured with
`test.mock.num.brokers`; librdkafka logs its address ("Mock cluster ... bootstrap.servers=
HOST:PORT") through the client's `logger`, which is how we get it. Two mock quirks the
client and probe handle: it answers ApiVersions v3+ with UNSUPPORTED_VERSION in a shape of
its own (the client retries at v0), and it lists JoinGroup v6 (flexible) but closes the
connection on one (the probe sends no flexible versions to a broker whose ApiVersions is
below v3). Its LeaveGroup v3 answer is cut short (no members array): the leave still
counts as done. The mock has no DescribeGroups: the probe joins without describing first.
The mock holds every join round about 3 s (its own rebalance delay), so these tests are
slower than against the lab broker.
"""
from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass

import pytest
from probe_support import ProbeThread, cli

from groupctl.lab.consumer import LabConsumer


@dataclass
class MockCluster:
    bootstrap: str
    owner: object  # the confluent_kafka client that holds the mock cluster


class _AddressHandler(logging.Handler):
    def __init__(self):
        super().__init__()
        self.address = None

    def emit(self, record):
        m = re.search(r"bootstrap\.servers=(\S+)", record.getMessage())
        if m and self.address is None:
            self.address = m.group(1)


@pytest.fixture
def mock_cluster():
    from confluent_kafka import Producer

    handler = _AddressHandler()
    log = logging.getLogger(f"rdkafka-mock-{id(handler)}")
    log.setLevel(logging.DEBUG)
    log.propagate = False
    log.addHandler(handler)
    producer = Producer({"test.mock.num.brokers": 1, "debug": "mock", "logger": log})
    producer.poll(0.1)
    assert handler.address, "librdkafka did not log the mock cluster's address"
    yield MockCluster(handler.address, producer)
    producer.flush(5)


def test_one_shot_join_against_the_mock(mock_cluster):
    code, out, err = cli(mock_cluster, "-o", "json", "join", "mock-g1")
    assert code == 0, err
    data = json.loads(out)
    assert data["generation"] >= 1 and data["is_leader"] is True
    assert data["protocol"] == "range"
    assert [m["member_id"] for m in data["members"]] == [data["member_id"]]


def test_probe_leads_a_librdkafka_consumer_on_the_mock(mock_cluster):
    mock_cluster.owner.produce("mock-t", b"x")  # the mock creates topics for producers only
    assert mock_cluster.owner.flush(10) == 0
    probe = ProbeThread(mock_cluster, "mock-g2", describe_first=False)
    probe.start()
    consumer = LabConsumer(mock_cluster.bootstrap, "mock-g2", ["mock-t"], assignor="range",
                           config={"topic.metadata.refresh.interval.ms": 1000})
    try:
        probe.wait_rebalance(1, timeout=20)
        me = probe.member_id
        consumer.start()
        consumer.wait_assigned(timeout=30)
        event = probe.wait_event(
            lambda e: e["event"] == "rebalance" and e["members_after"] is not None
            and len(e["members_after"]) == 2 and e["assignments"].get(consumer.member_id),
            30, "the generation with the consumer")
        given = frozenset(("mock-t", p) for tp in event["assignments"][consumer.member_id]
                          for p in tp["partitions"])
        assert event["assignments"][me] == []
        consumer.wait_assigned(partitions=given, timeout=20)
        assert probe.probe.leader_rounds[-1][0].protocol_name == "range"
    finally:
        probe.stop()
        consumer.begin_close()
        consumer.close()
    assert probe.error is None
    actions = [e["action"] for e in probe.of("probe")]
    assert actions[-1] == "left", [t.to_dict() for t in probe.probe.member.transitions][-4:]
