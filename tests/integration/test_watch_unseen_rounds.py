"""Issue 30: the describe watch counts every round the broker completed, on the lab broker.

Two of Kafka's Java consumers on the classic protocol (their subscriptions carry the
generation, so a look shows it) and three `force-rebalance`s back to back, each a round
the broker logs as "Stabilized group G generation N", while `watch` looks every 4 s: the
rounds come closer together than the looks. Its `rebalance` events' generations are the
broker log's, one each: the rounds between two looks are told (`seen` false, their
figures null), and the summary counts them all. The witness is the broker's log, which
groupctl did not write.
"""
from __future__ import annotations

import json

import pytest

from steer_support import cli
from test_records_history_verify import JavaConsumer, wait_stabilized
from watch_support import WatchProcess, stabilized

pytestmark = pytest.mark.broker


def test_rounds_between_two_looks_are_told_so_counts_equal_the_brokers(
        kafka, topic_factory, unique_group, tmp_path):
    g, topic = unique_group, topic_factory(4)
    j1 = JavaConsumer(kafka, tmp_path, g, topic, f"{g}-j1", protocol="classic")
    j2 = watch = None
    try:
        first = wait_stabilized(kafka, g, 0, 1, timeout=90)
        j2 = JavaConsumer(kafka, tmp_path, g, topic, f"{g}-j2", protocol="classic")
        both = wait_stabilized(kafka, g, first, 2, timeout=90)
        watch = WatchProcess(kafka, g, "--interval", "4")
        watch.wait_event(lambda e: e["event"] == "snapshot" and e["generation"] == both, 60,
                         f"a first look at generation {both}")
        for _ in range(3):
            code, out, err = cli(kafka, "force-rebalance", g, "--yes", timeout=60)
            assert code == 0, err
        last = max(stabilized(kafka, g))
        watch.wait_event(lambda e: e["event"] == "rebalance" and e["to_generation"] == last,
                         30, f"the rebalance to generation {last}")
        assert watch.stop() == 0
    finally:
        for j in (j1, j2):
            if j is not None:
                j.stop()
        if watch is not None and watch.proc.poll() is None:
            watch.stop()
    broker = [n for n in sorted(stabilized(kafka, g)) if n > both]
    told = [e for e in watch.events if e["event"] == "rebalance"]
    assert [e["to_generation"] for e in told] == broker == [both + 1, both + 2, both + 3]
    # the rounds begun and over between two looks: told, their figures not known
    unseen = [e for e in told if e["seen"] is False]
    assert unseen, "the three rounds were not closer together than the looks"
    for e in unseen:
        assert (e["duration_ms"], e["duration_basis"], e["members_after"]) == (None, "unknown", None)
    summary = next(json.loads(line)["summary"] for line in watch.out.raw
                   if line.startswith('{"summary"'))
    assert summary["rebalances"] == len(broker)
    assert summary["rebalances_untimed"] == len(unseen)
