"""`groupctl watch --source auto` (the default) on the real broker, held against what
groupctl did not write: the broker's "Preparing to rebalance" / "Stabilized" / "is now
empty" lines and its records' own timestamps.

- a principal that may read __consumer_offsets (the lab's): one story from the records and
  describe: every generation the broker completed told once (the round count equal to the
  broker's log), each round as the records end it (source "records"), the states only
  describe sees (PreparingRebalance, source "describe"), and each classic round's duration
  an interval bounded by the looks that holds the broker's own round (from its Preparing
  line to its generation's record);
- one that may not (the secure lab's guest, no ACL on the topic): describe alone, said
  once on stderr with what it cannot see, exit 0.
"""
from __future__ import annotations

import sys
from datetime import datetime
from pathlib import Path

import pytest

from groupctl.lab.consumer import wait_balanced
from waiting import wait_until
from watch_support import WatchProcess, last_stabilized

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "truth"))

from truth_ground import broker_truth, log_lines  # noqa: E402

pytestmark = [pytest.mark.broker, pytest.mark.slow]


def _ms(ts: str) -> int:
    return int(round(datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp() * 1000))


def test_auto_tells_each_round_once_its_start_bounded_by_describe(
        kafka, topic_factory, consumer_factory, unique_group):
    topic = topic_factory(4)
    tps = [(topic, p) for p in range(4)]
    g = unique_group
    a = consumer_factory(g, topic, name=f"{g}-a", assignor="range")
    a.wait_assigned(count=4)
    since = last_stabilized(kafka, g)
    watch = WatchProcess(kafka, g, "--source", "auto", "--interval", "0.5", "--timeout", "5")
    try:
        watch.wait_event(lambda e: e["event"] == "snapshot", 60, "the first look")
        b = consumer_factory(g, topic, name=f"{g}-b", assignor="range")
        wait_balanced([a, b], tps)
        c = consumer_factory(g, topic, name=f"{g}-c", assignor="range")
        wait_balanced([a, b, c], tps)
        b.close()
        wait_balanced([a, c], tps)
        watch.wait_event(lambda e: e["event"] == "rebalance" and e["members_after"] == sorted(
            [a.member_id, c.member_id]), 60, "the rebalance to a and c")
        assert watch.stop() == 0
    finally:
        watch.stop()
    err = watch.stderr()
    assert err.count("source auto: the coordinator's records") == 1, err
    assert "describe alone" not in err and "Traceback" not in err, err
    events = [e for e in watch.events if e.get("group") == g]
    rebalances = [e for e in events if e["event"] == "rebalance"]
    told = [r["to_generation"] for r in rebalances]
    truth = {}
    wait_until(lambda: truth.update({r.key: r for r in broker_truth(log_lines(kafka), g).rounds
                                     if r.key > since}) or sorted(truth) == told, 20,
               f"the broker's generations after {since} to be those told, {told}")
    assert len(told) >= 3 and {r["source"] for r in rebalances} == {"records"}
    describe_states = [e["state"] for e in events if e["event"] == "state"
                       and e["source"] == "describe"]
    assert "PreparingRebalance" in describe_states, describe_states
    bounded = 0
    for r in rebalances:
        broker = truth[r["to_generation"]]
        end = _ms(r["ts"])   # the generation's record: the broker's own timestamp
        assert 0 <= end - broker.end_ms < 1000, (r, broker)   # after its Stabilized line
        if r.get("duration_source") != "records+describe":
            assert r["duration_basis"] == "unknown", r   # as the records alone tell it
            continue
        assert broker.start_ms is not None, broker
        took = end - broker.start_ms   # from its Preparing line (log4j: whole ms, so +-1)
        low, high = r["duration_min_ms"], r["duration_max_ms"]
        assert low - 1 <= took and (high is None or took <= high + 1), (r, broker, took)
        bounded += r["started"] is not None and high is not None
    # rounds of ~1 s (librdkafka rejoins at its next heartbeat) under 0.5 s looks
    assert bounded >= 1, rebalances


def test_without_read_on_the_records_auto_is_describe_alone_said_once(secure_lab, unique_group,
                                                                      topic_factory,
                                                                      consumer_factory):
    import json

    from confluent_kafka.admin import AclOperation, ResourceType

    from test_probe_acl import allow
    from tls_support import guest

    topic = topic_factory(2, cluster=secure_lab)
    a = consumer_factory(unique_group, topic, cluster=secure_lab, name=f"{unique_group}-a")
    a.wait_assigned(count=2)
    allow(secure_lab, ResourceType.GROUP, unique_group, AclOperation.DESCRIBE)

    def described():
        run = guest(secure_lab, "-o", "ndjson", "watch", unique_group, "--duration", "4")
        return run if '"snapshot"' in run[1] else None   # the group ACL applied

    code, out, err = wait_until(described, 60, "the guest's watch to describe the group")
    assert code == 0, err
    lines = [line for line in err.splitlines() if "source auto" in line]
    assert len(lines) == 1 and "describe alone every 1 s" in lines[0], err
    assert "TOPIC_AUTHORIZATION_FAILED" in lines[0] and "shorter than the interval" in lines[0]
    events = [json.loads(line) for line in out.splitlines() if '"event"' in line]
    snapshot = next(e for e in events if e["event"] == "snapshot")
    assert [m["member_id"] for m in snapshot["members"]] == [a.member_id]
    assert {e["source"] for e in events} == {"describe"}
