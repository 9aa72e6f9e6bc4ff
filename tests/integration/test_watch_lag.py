"""`groupctl watch --lag` on the lab broker, against what groupctl did not write.

Records from a real producer (librdkafka) on four partitions; offsets committed for three
of them; librdkafka consumers (eager range, no auto-commit) join. The first consumer, when
the second joins, holds its revoke callback 4 s and then commits a new offset for one
partition: the round starts at one lag and ends at another, both known exactly from the
records produced and the offsets committed, and checked against Kafka's own
ConsumerGroupCommand (its LAG column summed) once the group is Stable again:

- the second rebalance's `lag_before` is the lag before the commit, its `lag_after` the
  lag after it, read after the round ended (`lag_after_ts` >= `ended`);
- /metrics: groupctl_group_lag / _topic_sum_lag / _max_lag equal the
  committed offsets' truth and ConsumerGroupCommand's; `promtool check metrics` is clean.
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import urllib.request

import pytest
from prometheus_client.parser import text_string_to_metric_families

from describe_support import Pending, cgc_int, cgc_rows, commit, produce
from waiting import wait_until
from watch_support import WatchProcess, _json, _Lines

pytestmark = pytest.mark.broker

HOLD_S = 4.0

CONSUMER = r"""
import json, sys, time
from confluent_kafka import Consumer, TopicPartition
bootstrap, group, topic, name, hold_s, spec, protocol = sys.argv[1:8]
to_commit = json.loads(spec)   # [[partition, offset]]: committed in the first real revoke
classic = {"session.timeout.ms": 10000, "heartbeat.interval.ms": 500,
           "partition.assignment.strategy": "range"}
c = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "client.id": name,
              "group.protocol": protocol, "enable.auto.commit": False,
              "auto.offset.reset": "latest", **(classic if protocol == "classic" else {})})
done = []
def say(kind, parts, **more):
    print(json.dumps({"kind": kind, "at": time.time(), "member_id": c.memberid(),
                      "partitions": sorted([p.topic, p.partition] for p in parts), **more}),
          flush=True)
def revoke(c_, parts):
    say("revoke", parts)
    if parts and to_commit and not done:
        done.append(1)
        time.sleep(float(hold_s))   # the scenario: a member slow to give its partitions up
        c_.commit(offsets=[TopicPartition(topic, p, o) for p, o in to_commit],
                  asynchronous=False)
        say("committed", [])
c.subscribe([topic], on_assign=lambda c_, p: say("assign", p), on_revoke=revoke)
try:
    while True:
        c.poll(0.1)
finally:
    c.close()
"""


class Consumer:
    def __init__(self, bootstrap, group, topic, name, commit_in_revoke=(), protocol="classic"):
        self.proc = subprocess.Popen(
            [sys.executable, "-c", CONSUMER, bootstrap, group, topic, name, str(HOLD_S),
             json.dumps([list(x) for x in commit_in_revoke]), protocol],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1)
        self.lines = _Lines(self.proc.stdout, _json)

    def wait(self, kind: str, timeout: float = 60) -> dict:
        return self.lines.wait(lambda e: e["kind"] == kind, timeout, kind)[1]

    def stop(self) -> None:
        self.proc.terminate()   # SIGTERM: Python's default ends it; the session expires
        self.proc.wait(20)


def _cgc_lag(kafka, group: str) -> dict:
    """ConsumerGroupCommand --describe: {partition: LAG or None}, the group settled."""
    rows = cgc_rows(kafka, "--describe", "--group", group)
    return {int(r["PARTITION"]): cgc_int(r["LAG"]) for r in rows}


def _scrape(base: str, group: str) -> tuple[dict, str]:
    with urllib.request.urlopen(base + "/metrics", timeout=10) as r:
        text = r.read().decode()
    out: dict = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.labels.get("group") == group:
                key = (s.name, s.labels["topic"]) if "topic" in s.labels else s.name
                out[key] = s.value
            elif not s.labels:
                out[s.name] = s.value
    return out, text


def test_lag_on_rebalances_and_metrics_equal_consumer_group_command(
        kafka, topic_factory, unique_group):
    topic, g = topic_factory(4), unique_group
    produce(kafka.bootstrap, topic, {0: 100, 1: 50, 2: 30, 3: 40})
    commit(kafka.bootstrap, g, {(topic, 0): 10, (topic, 1): 20, (topic, 2): 30})
    before = (100 - 10) + (50 - 20) + (30 - 30)     # partition 3: no commit, no lag
    after = (100 - 60) + (50 - 20) + (30 - 30)      # the revoke callback commits 0 at 60
    assert _cgc_lag(kafka, g) == {0: 90, 1: 30, 2: 0}

    watch = WatchProcess(kafka, g, "--interval", "0.3", "--lag", "--lag-interval", "1",
                         "--metrics-port", "0")
    consumers = []
    try:
        _, line = watch.err.wait(lambda ln: "serving metrics on" in ln, 30, "the metrics address")
        base = re.search(r"(http://\S+)/metrics", line).group(1)
        wait_until(lambda: _scrape(base, g)[0].get("groupctl_group_lag") == before,
                   30, f"lag {before} in the metrics")
        a = Consumer(kafka.bootstrap, g, topic, f"{g}-a", commit_in_revoke=[(0, 60)])
        consumers.append(a)
        a.wait("assign")
        i, first = watch.wait_event(lambda e: e["event"] == "rebalance", 60, what="rebalance 1")
        assert (first["lag_before"], first["lag_after"]) == (before, before), first

        b = Consumer(kafka.bootstrap, g, topic, f"{g}-b")
        consumers.append(b)
        committed = a.wait("committed", 60)
        b.wait("assign")
        _, second = watch.wait_event(lambda e: e["event"] == "rebalance", 60,
                                     what="rebalance 2", start=i + 1)
        assert second["members_after"] and len(second["members_after"]) == 2, second
        # held open by the revoke callback (a round of this group takes tens of ms
        # otherwise); the describe source sees its start within a poll or two under load
        assert second["duration_ms"] >= HOLD_S * 1000 / 2, second
        assert second["lag_before"] == before, second
        assert second["lag_after"] == after, second
        assert second["lag_before_ts"] <= second["ended"] <= second["lag_after_ts"], second
        assert committed["at"] < _epoch(second["lag_after_ts"])

        # settled: Kafka's own tool and the scrape say the same
        assert wait_until(lambda: _cgc_lag(kafka, g) == {0: 40, 1: 30, 2: 0, 3: None}
                          or Pending(_cgc_lag(kafka, g)), 60, "ConsumerGroupCommand's lag")
        assert sum(v for v in _cgc_lag(kafka, g).values() if v is not None) == after

        def settled_scrape():
            s, text = _scrape(base, g)
            return (s.get("groupctl_group_lag") == after and (s, text)) or Pending(s)
        scrape, text = wait_until(settled_scrape, 30, "the lag after in the metrics")
        assert scrape[("groupctl_group_topic_lag", topic)] == after
        assert scrape["groupctl_group_lag_max"] == 40
        assert scrape["groupctl_group_lag_timestamp_seconds"] > committed["at"]
        assert scrape["groupctl_lag_rounds_total"] >= 3
        assert scrape["groupctl_lag_rounds_failed_total"] == 0
        promtool = shutil.which("promtool")
        assert promtool, "promtool is missing: ./dev setup installs Debian's prometheus package"
        checked = subprocess.run([promtool, "check", "metrics"], input=text, text=True,
                                 capture_output=True, timeout=30)
        assert checked.returncode == 0, checked.stdout + checked.stderr
    finally:
        for c in consumers:
            c.stop()
        code = watch.stop()
    assert code == 0, watch.stderr()


def _epoch(ts: str) -> float:
    from datetime import datetime, timezone

    return datetime.strptime(ts, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc).timestamp()


def test_one_lag_round_over_many_groups_equals_consumer_group_command(
        kafka, topic_factory, unique_group):
    """40 groups, each with its own committed offsets (librdkafka commits) on two topics:
    one lag round asks one OffsetFetch for all of them (one coordinator here) and one
    ListOffsets (one leader), and every group's lag, per topic too, equals
    ConsumerGroupCommand's LAG column summed."""
    import asyncio

    from groupctl.client import Cluster
    from groupctl.observe.sources.lag import fetch_lag

    t1, t2 = topic_factory(3), topic_factory(2)
    produce(kafka.bootstrap, t1, {0: 60, 1: 40, 2: 20})
    produce(kafka.bootstrap, t2, {0: 25, 1: 35})
    groups = [f"{unique_group}-{i:02d}" for i in range(40)]
    for i, g in enumerate(groups):
        offsets = {(t1, 0): i, (t1, 1): 40 - i % 41}
        if i % 2:
            offsets[(t2, 1)] = i % 35
        commit(kafka.bootstrap, g, offsets)
    asked: list[str] = []

    async def main():
        async with Cluster(kafka.bootstrap.split(","), timeout=20) as cluster:
            real = cluster.request

            async def counted(api, body, **kw):
                asked.append(api.name)
                return await real(api, body, **kw)
            cluster.request = counted
            return await fetch_lag(cluster, groups, deadline=cluster.deadline(20))
    lags = asyncio.run(main())
    assert asked.count("OffsetFetch") == 1 and asked.count("ListOffsets") == 1, asked

    rows = cgc_rows(kafka, "--describe", *[a for g in groups for a in ("--group", g)])
    truth: dict = {g: {} for g in groups}
    for r in rows:
        lag = cgc_int(r["LAG"])
        if lag is not None:
            by_topic = truth[r["GROUP"]]
            by_topic[r["TOPIC"]] = by_topic.get(r["TOPIC"], 0) + lag
    for g in groups:
        assert lags[g].error is None, lags[g]
        assert lags[g].by_topic == truth[g], (g, lags[g], truth[g])
        assert lags[g].total == sum(truth[g].values())
    assert {lags[g].total for g in groups} != {0}   # the figures differ from group to group


def test_a_kip848_groups_rebalances_carry_its_lag(kafka, topic_factory, unique_group):
    """A consumer group (KIP-848, librdkafka group.protocol=consumer): its rounds last
    milliseconds and show no rebalancing state to a describe watch, yet each `rebalance`
    (epochs) carries the lag read nearest its start and the one after its end, here the
    committed offsets' lag, unchanged (no member commits), equal to ConsumerGroupCommand's."""
    topic, g = topic_factory(4), unique_group
    produce(kafka.bootstrap, topic, {0: 70, 1: 30, 2: 10, 3: 5})
    commit(kafka.bootstrap, g, {(topic, 0): 20, (topic, 1): 30, (topic, 3): 1})
    lag = 50 + 0 + 4
    watch = WatchProcess(kafka, g, "--interval", "0.3", "--lag", "--lag-interval", "1")
    consumers = []
    try:
        a = Consumer(kafka.bootstrap, g, topic, f"{g}-a", protocol="consumer")
        consumers.append(a)
        a.wait("assign")
        b = Consumer(kafka.bootstrap, g, topic, f"{g}-b", protocol="consumer")
        consumers.append(b)
        b.wait("assign")

        def two_members(e):
            return e["event"] == "rebalance" and len(e["members_after"] or ()) == 2
        _, e = watch.wait_event(two_members, 60, what="the rebalance to two members")
        assert e["to_generation"] is None or e["to_generation"] >= 2, e
        assert (e["lag_before"], e["lag_after"]) == (lag, lag), e
        assert e["lag_before_ts"] is not None and e["ended"] <= e["lag_after_ts"], e
        got = {p: v for p, v in _cgc_lag(kafka, g).items() if v is not None}
        assert got == {0: 50, 1: 0, 3: 4} and sum(got.values()) == lag
    finally:
        for c in consumers:
            c.stop()
        code = watch.stop()
    assert code == 0, watch.stderr()
