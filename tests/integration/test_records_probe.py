"""Issue 30 / 32 on the lab broker: the coordinator-records path (`history`, `watch --source
records`) against what groupctl did not write: the broker's "Stabilized group G generation
N" / "Group G with generation N is now empty" / "Preparing to rebalance" lines and the
librdkafka consumers' own revoke and assign callbacks.

- a classic (eager range) group with groupctl's probe in it (empty subscription: the
  leader gives it a zero-byte assignment) and more members than partitions, the records
  watch started before the group existed: history and the watch tell every generation the
  broker stabilized or emptied, each once, from generation 1; the group is never told
  CompletingRebalance (a record is written when a generation completes); each round's
  unowned time is its sync phase (the Stabilized line to the record), a lower bound that
  no client's revoke -> assign undercuts and no round exceeds;
- `watch --all --source records` tells groups that only committed offsets, once each, as
  `describe --all` shows them, and one that first commits during the watch.
"""
from __future__ import annotations

import json
import re
from datetime import datetime, timezone

import pytest

from groupctl.lab.consumer import LabConsumer, wait_balanced
from probe_support import ProbeThread
from test_records_history_verify import cli, log_text
from waiting import wait_until
from watch_support import WatchProcess

pytestmark = [pytest.mark.broker, pytest.mark.slow]

LINE_TIME = r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\]"


def _ms(stamp: str) -> int:
    # the lab's log4j layout prints the broker's local time; the lab runs in UTC
    at = datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S,%f").replace(tzinfo=timezone.utc)
    return round(at.timestamp() * 1000)


def broker_rounds(lab, group: str) -> dict[int, dict]:
    """generation -> {"members", "prepared_ms" (the Preparing line before it),
    "stabilized_ms" (its Stabilized / "is now empty" line)} from the broker's own log."""
    g = re.escape(group)
    out: dict[int, dict] = {}
    prepared = None
    for line in log_text(lab).splitlines():
        t = re.match(LINE_TIME, line)
        if t is None:
            continue
        if re.search(rf"Preparing to rebalance group {g} in state", line):
            prepared = _ms(t.group(1))
        elif m := re.search(rf"Stabilized group {g} generation (\d+) with (\d+) members", line):
            out[int(m.group(1))] = {"members": int(m.group(2)), "prepared_ms": prepared,
                                    "stabilized_ms": _ms(t.group(1))}
        elif m := re.search(rf"Group {g} with generation (\d+) is now empty", line):
            out[int(m.group(1))] = {"members": 0, "prepared_ms": prepared,
                                    "stabilized_ms": _ms(t.group(1))}
    return out


def _last_round(lab, group: str) -> dict:
    """The latest generation the broker logged, from one read of its log (two reads raced
    a generation logged between them)."""
    rounds = broker_rounds(lab, group)
    return rounds[max(rounds)]


def _at_ms(iso: str) -> int:
    at = datetime.strptime(iso, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc)
    return round(at.timestamp() * 1000)


def assert_told_like_the_broker(events: list[dict], lab, group: str, what: str) -> list[dict]:
    """Every generation the broker stabilized or emptied, once each, in order, with its
    member count; the rounds chained; never CompletingRebalance. The rebalances."""
    broker = broker_rounds(lab, group)
    gens = [e for e in events if e["event"] == "generation"]
    assert [g["generation"] for g in gens] == sorted(broker), (what, gens, sorted(broker))
    assert [len(g["members"]) for g in gens] == [broker[n]["members"] for n in sorted(broker)]
    rebalances = [e for e in events if e["event"] == "rebalance"]
    assert [r["to_generation"] for r in rebalances] == sorted(broker), what
    for before, after in zip(rebalances, rebalances[1:]):
        assert after["from_generation"] == before["to_generation"], what
    states = {e["state"] for e in events if e["event"] == "state"}
    assert states <= {"Dead", "Stable", "Empty"}, (what, states)
    return rebalances


def assert_unowned_is_the_sync_phase(rebalances: list[dict], lab, group: str,
                                     consumers: list[LabConsumer]) -> list[tuple]:
    """Each eager round's unowned figure: a lower bound, its longest partition exactly the
    sync phase the broker logged (its Stabilized line to the record), within the round
    (its Preparing line to the record), and under every client's own revoke -> assign."""
    broker = broker_rounds(lab, group)
    calls = sorted((e.ts, e.kind, tp) for c in consumers for e in c.events for tp in e.partitions)
    checked = []
    for r in rebalances:
        if not r["unowned_partition_ms"]:
            assert r["unowned_basis"] in ("measured", None), r   # nothing held before
            continue
        assert r["unowned_basis"] == "lower_bound", r
        gen, ended = broker[r["to_generation"]], _at_ms(r["ended"])
        sync_ms = ended - gen["stabilized_ms"]
        assert abs(r["unowned_partitions_max_ms"] - sync_ms) <= 1, (r, gen)
        assert r["unowned_partitions_max_ms"] <= ended - gen["prepared_ms"], (r, gen)
        for part in r["unowned_longest"]:
            tp = (part["topic"], part["partition"])
            assigned = min(ts for ts, kind, x in calls if kind == "assign" and x == tp
                           and ts * 1000 >= ended - 2)
            revoked = max(ts for ts, kind, x in calls if kind in ("revoke", "lost") and x == tp
                          and ts <= assigned)
            assert part["ms"] <= (assigned - revoked) * 1000 + 2, (part, assigned, revoked)
        checked.append((r["to_generation"], r["unowned_partitions_max_ms"],
                        r["unowned_partition_ms"], ended - gen["prepared_ms"]))
    return checked


def test_probe_and_more_members_than_partitions_every_generation_once(
        kafka, topic_factory, unique_group):
    g, topic = unique_group, topic_factory(2)
    tps = [(topic, p) for p in range(2)]
    watch = WatchProcess(kafka, g, "--source", "records", "--timeout", "5")
    consumers: list[LabConsumer] = []
    probe = None

    def member(name: str) -> LabConsumer:
        consumers.append(LabConsumer(kafka.bootstrap, g, [topic], assignor="range",
                                     name=f"{g}-{name}").start())
        return consumers[-1]
    try:
        watch.wait_event(lambda e: e["event"] == "state" and e["state"] == "Dead", 60,
                         "the group not there yet")
        a = member("a")
        a.wait_assigned(count=2, timeout=60)
        probe = ProbeThread(kafka, g).start()
        wait_until(lambda: len(broker_rounds(kafka, g)) >= 2, 60, "the probe's generation")
        b, c = member("b"), member("c")   # four members, two partitions
        wait_until(lambda: max((r["members"] for r in broker_rounds(kafka, g).values()),
                               default=0) == 4, 60, "a generation of four members")
        wait_balanced([a, b, c], tps, timeout=60)
        b.close()
        wait_balanced([a, c], tps, timeout=60)
        probe.stop()
        probe = None
        wait_until(lambda: _last_round(kafka, g)["members"] == 2, 60,
                   "the generation after the probe left")
        for x in (a, c):
            x.begin_close()
        for x in (a, c):
            x.close()
        watch.wait_event(lambda e: e["event"] == "generation" and not e["members"], 60,
                         "the empty generation")
        assert watch.stop() == 0
    finally:
        if probe is not None:
            probe.stop()
        for x in consumers:
            x.begin_close()
        for x in consumers:
            x.close()
        watch.stop()
    assert "Traceback" not in watch.stderr()
    told = [e for e in watch.events if e["group"] == g]
    assert {e["source"] for e in told} == {"records"}
    rebalances = assert_told_like_the_broker(told, kafka, g, "watch --source records")
    code, out, err = cli(kafka, "history", g, "-o", "ndjson")
    assert code == 0, err
    history = [e for e in map(json.loads, out.splitlines()) if "event" in e]
    assert_told_like_the_broker(history, kafka, g, "history")
    checked = assert_unowned_is_the_sync_phase(rebalances, kafka, g, consumers)
    assert checked, "no round whose partitions were held before and given out again"
    print(f"\nrecords, probe + 4 members on 2 partitions: generations "
          f"{sorted(broker_rounds(kafka, g))} told once each; (generation, unowned max ms, "
          f"total ms, round ms): {checked}")


def test_all_tells_groups_that_only_committed_offsets(kafka, topic_factory, unique_group):
    from confluent_kafka import Consumer, TopicPartition

    topic = topic_factory(2)

    def commit_only(group: str) -> None:
        from confluent_kafka import KafkaError, KafkaException

        NOT_READY = (KafkaError.NOT_COORDINATOR, KafkaError.COORDINATOR_NOT_AVAILABLE,
                     KafkaError.COORDINATOR_LOAD_IN_PROGRESS)

        c = Consumer({"bootstrap.servers": kafka.bootstrap, "group.id": group,
                      "enable.auto.commit": False})
        offsets = [TopicPartition(topic, p, 0) for p in range(2)]

        def committed() -> bool:
            try:   # a new group's coordinator may not be known yet (NOT_COORDINATOR)
                c.commit(offsets=offsets, asynchronous=False)
                return True
            except KafkaException as exc:   # (__consumer_offsets just created: loading)
                if not exc.args[0].retriable() and exc.args[0].code() not in NOT_READY:
                    raise
                return False
        try:
            wait_until(committed, 30, f"a commit of {group}")
        finally:
            c.close()
    before = [f"{unique_group}-{i}" for i in range(5)]
    for group in before:
        commit_only(group)
    watch = WatchProcess(kafka, "--all", "--regex", f"^{re.escape(unique_group)}",
                         "--source", "records", "--timeout", "5")
    try:
        wait_until(lambda: {e["group"] for e in watch.events if e["event"] == "snapshot"}
                   >= set(before), 60, "a first look at every commit-only group")
        late = f"{unique_group}-late"
        commit_only(late)
        watch.wait_event(lambda e: e["group"] == late and e["event"] == "snapshot", 60,
                         "the group that first committed during the watch")
        assert watch.stop() == 0
    finally:
        watch.stop()
    code, out, err = cli(kafka, "describe", "--all", "--regex", f"^{re.escape(unique_group)}",
                         "-o", "json")
    assert code == 0, err
    described = {d["group"]: d for d in json.loads(out)}
    assert set(described) == {*before, late}
    snapshots = [e for e in watch.events if e["event"] == "snapshot"]
    assert sorted(e["group"] for e in snapshots) == sorted(described)   # once each
    for e in snapshots:
        d = described[e["group"]]
        assert (e["state"], e["type"], e["generation"], e["members"]) == (
            d["state"], d["type"], d["generation"], d["members"]) == ("Empty", "classic", None, [])
    assert "Traceback" not in watch.stderr()


def test_a_consumer_groups_assignor_is_told_as_describe_tells_it(kafka, topic_factory,
                                                                  consumer_factory, unique_group):
    """Issue 32 (screen): the records watch's header said `assignor -` where describe says
    `uniform` (the broker's default: no record holds it; the members name none)."""
    topic = topic_factory(2)
    a = consumer_factory(unique_group, topic, protocol="consumer", name=f"{unique_group}-a")
    a.wait_assigned(count=2, timeout=60)
    watch = WatchProcess(kafka, unique_group, "--source", "records", "--timeout", "5")
    try:
        _, first = watch.wait_event(lambda e: e["event"] == "snapshot", 60, "the first look")
        assert watch.stop() == 0
    finally:
        watch.stop()
    code, out, err = cli(kafka, "describe", unique_group, "-o", "json")
    assert code == 0, err
    assert first["protocol"] == json.loads(out)[0]["protocol"] == "uniform"
