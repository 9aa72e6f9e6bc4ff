"""`groupctl watch` on the lab broker against real librdkafka consumers: the story it tells
(events, members, assignments, reasons) equals what the consumers' own callbacks say; it
never writes to the cluster (--debug protocol trace); --max-rebalances exits 8; a broker
restart is survived without repeated events."""
from __future__ import annotations

import time

import pytest

from waiting import wait_until
from watch_support import KillableConsumer, WatchProcess

pytestmark = pytest.mark.broker

WRITES = ("JoinGroup", "SyncGroup", "Heartbeat", "LeaveGroup", "OffsetCommit",
          "ConsumerGroupHeartbeat")


def _asg(items) -> frozenset:
    return frozenset((i["topic"], p) for i in items or () for p in i["partitions"])


def _rebalance_to(watch, members, start, timeout=40):
    """The next rebalance event whose members are exactly `members` (ids)."""
    want = sorted(members)
    return watch.wait_event(lambda e: e["event"] == "rebalance" and e["members_after"] == want,
                            timeout, f"a rebalance to {want}", start)


def _matches_callbacks(event, consumers):
    """Every member's assignment in the event equals its consumer's callbacks (waited
    for: the consumer's callback may come a moment after the broker's Stable)."""
    want = {c.member_id: _asg(event["assignments"][c.member_id]) for c in consumers}
    wait_until(lambda: {c.member_id: c.assignment for c in consumers} == want, 20,
          f"callbacks equal to the watch's assignments {want}")


def test_the_classic_story_equals_the_consumers(kafka, topic_factory, consumer_factory,
                                                unique_group):
    topic = topic_factory(6)
    g = unique_group
    watch = WatchProcess(kafka, g, "--interval", "0.2")
    try:
        i, _ = watch.wait_event(lambda e: e["event"] == "state" and e["state"] == "Dead", 30,
                                "the missing group's Dead state")
        a = consumer_factory(g, topic, name=f"{g}-a")
        a.wait_assigned()
        i, r1 = _rebalance_to(watch, [a.member_id], i)
        assert r1["reason"] == f"member {a.member_id} (client {g}-a, host /127.0.0.1) joined"
        _matches_callbacks(r1, [a])

        k = KillableConsumer(kafka.bootstrap, g, topic, f"{g}-k", session_ms=6000)
        k.wait_assigned()
        wait_until(lambda: k.member_id, 10, "the killable consumer's member id")
        i, r2 = _rebalance_to(watch, [a.member_id, k.member_id], i)
        assert r2["reason"] == f"member {k.member_id} (client {g}-k, host /127.0.0.1) joined"
        _matches_callbacks(r2, [a, k])

        c = consumer_factory(g, topic, name=f"{g}-c")
        c.wait_assigned()
        i, r3 = _rebalance_to(watch, [a.member_id, k.member_id, c.member_id], i)
        _matches_callbacks(r3, [a, k, c])
        assert r3["from_generation"] == r2["to_generation"]

        c_id = c.member_id
        c.close()                                     # a clean leave (LeaveGroup)
        i, r4 = _rebalance_to(watch, [a.member_id, k.member_id], i)
        assert r4["reason"] == f"member {c_id} (client {g}-c, host /127.0.0.1) left or expired"
        _matches_callbacks(r4, [a, k])

        k_id = k.member_id
        killed_at = time.monotonic()
        k.kill()                                      # no LeaveGroup: the session expires
        i, r5 = _rebalance_to(watch, [a.member_id], i, timeout=40)
        assert time.monotonic() - killed_at > 3       # not before its session ran out
        assert r5["reason"] == f"member {k_id} (client {g}-k, host /127.0.0.1) left or expired"
        _matches_callbacks(r5, [a])

        s = consumer_factory(g, topic, name=f"{g}-s", instance_id=f"{g}-static")
        s.wait_assigned()
        i, r6 = _rebalance_to(watch, [a.member_id, s.member_id], i)
        _matches_callbacks(r6, [a, s])
        old_s = s.member_id
        s.close()                    # a static member does not leave: no rebalance
        s2 = consumer_factory(g, topic, name=f"{g}-s", instance_id=f"{g}-static")
        s2.wait_assigned()
        assert s2.member_id != old_s
        j, joined = watch.wait_event(lambda e: e["event"] == "member_joined"
                                     and e["member_id"] == s2.member_id, 30,
                                     "the restarted static member", i)
        assert joined["instance_id"] == f"{g}-static"
        left = watch.events[j - 1]
        assert left["event"] == "member_left" and left["member_id"] == old_s
        assert not [e for e in watch.events[i + 1:] if e["event"] == "rebalance"]
        assert watch.stop() == 0

        # the whole sequence, in order (state events aside)
        story = [(e["event"], e.get("member_id") or e.get("reason")) for e in watch.events
                 if e["event"] in ("member_joined", "member_left", "rebalance")]
        assert story == [
            ("member_joined", a.member_id), ("rebalance", r1["reason"]),
            ("member_joined", k_id), ("rebalance", r2["reason"]),
            ("member_joined", c_id), ("rebalance", r3["reason"]),
            ("member_left", c_id), ("rebalance", r4["reason"]),
            ("member_left", k_id), ("rebalance", r5["reason"]),
            ("member_joined", old_s), ("rebalance", r6["reason"]),
            ("member_left", old_s), ("member_joined", s2.member_id)]
        gens = [e for e in watch.events if e["event"] == "generation"]
        assert [gn["members"] for gn in gens] == [r["members_after"] for r in (r1, r2, r3, r4, r5, r6)]
    finally:
        watch.stop()


def test_read_only_and_max_rebalances(kafka, topic_factory, consumer_factory, unique_group):
    """--max-rebalances 2 with --duration: exit 8 at the third rebalance (the summary
    printed first); the --debug trace holds only read APIs."""
    import re

    topic = topic_factory(4)
    g = unique_group
    watch = WatchProcess(kafka, g, "--interval", "0.2", "--duration", "120",
                         "--max-rebalances", "2", debug=True)
    try:
        watch.wait_event(lambda e: e["event"] == "state" and e["state"] == "Dead", 30, "Dead")
        members = []
        for n in range(3):
            members.append(consumer_factory(g, topic, name=f"{g}-{n}"))
            wait_until(lambda: all(m.member_id for m in members), 30, "member ids")
            if n < 2:
                _rebalance_to(watch, [m.member_id for m in members], 0)
        code = watch.wait(60)
    finally:
        watch.stop()
    assert code == 8, watch.stderr()[-2000:]
    rebalances = [e for e in watch.events if e["event"] == "rebalance"]
    assert len(rebalances) == 3
    (summary,) = [e["summary"] for e in watch.out.items if "summary" in e]
    assert summary["group"] == g and summary["rebalances"] == 3
    assert "rebalanced 3 times (--max-rebalances 2)" in watch.stderr()
    sent = set(re.findall(r"groupctl: trace: (\w+) v\d+ ", watch.stderr()))
    assert "DescribeGroups" in sent and "ConsumerGroupDescribe" in sent
    assert not sent & set(WRITES), sorted(sent)


def test_max_rebalances_not_reached_is_exit_0(kafka, topic_factory, consumer_factory,
                                              unique_group):
    topic = topic_factory(2)
    c = consumer_factory(unique_group, topic)
    c.wait_assigned()
    watch = WatchProcess(kafka, unique_group, "--interval", "0.2", "--duration", "3",
                         "--max-rebalances", "0", "--record", "/dev/null")
    assert watch.wait(60) == 0, watch.stderr()
    assert not [e for e in watch.events if e["event"] == "rebalance"]
    (summary,) = [e["summary"] for e in watch.out.items if "summary" in e]
    assert summary == {"group": unique_group, "state": "Stable", "rebalances": 0,
                       "rebalances_lower_bound": False, "rebalancing_ms_total": 0,
                       "rebalancing_ms_least": 0, "rebalancing_ms_most": 0,
                       "rebalancing_ms_longest": 0, "rebalances_timed": 0,
                       "rebalances_untimed": 0, "flapping_members": []}


def test_a_consumer_group_epochs_and_convergence(kafka, topic_factory, consumer_factory,
                                                 unique_group):
    """KIP-848: `epoch` events as the group epoch moves, and one `rebalance` when every
    member's assignment equals its target; assignments equal the consumers' callbacks."""
    topic = topic_factory(4)
    g = unique_group
    a = consumer_factory(g, topic, protocol="consumer", name=f"{g}-a")
    a.wait_assigned(count=4)
    watch = WatchProcess(kafka, g, "--interval", "0.2")
    try:
        i, first = watch.wait_event(lambda e: e["event"] == "state", 30, "the first state")
        assert first["state"] == "Stable"
        b = consumer_factory(g, topic, protocol="consumer", name=f"{g}-b")
        wait_until(lambda: b.member_id, 30, "b's member id")
        j, epoch = watch.wait_event(lambda e: e["event"] == "epoch", 30, "an epoch event", i)
        k, r = _rebalance_to(watch, [a.member_id, b.member_id], j)
        assert r["to_generation"] == epoch["group_epoch"] or r["to_generation"] > epoch["group_epoch"]
        assert r["reason"] == f"member {b.member_id} (client {g}-b, host /127.0.0.1) joined"
        assert sum(len(_asg(v)) for v in r["assignments"].values()) == 4
        _matches_callbacks(r, [a, b])
        assert watch.stop() == 0
    finally:
        watch.stop()


def test_the_probe_tells_the_same_story(kafka, topic_factory, consumer_factory, unique_group):
    """join --watch's probe says why (the same reasons as the passive watch), not how it
    noticed; as a follower its generation events carry the members (from its describe)."""
    from probe_support import ProbeThread

    topic = topic_factory(4)
    g = unique_group
    a = consumer_factory(g, topic, name=f"{g}-a")
    a.wait_assigned()
    probe = ProbeThread(kafka, g).start()
    try:
        probe.wait_event(lambda e: e["event"] == "rebalance", 30, "the probe's first rebalance")
        b = consumer_factory(g, topic, name=f"{g}-b")
        b.wait_assigned()
        r = probe.wait_event(lambda e: e["event"] == "rebalance"
                             and b.member_id in (e.get("members_after") or ()), 30,
                             "the rebalance b joined")
        assert r["reason"] == f"member {b.member_id} (client {g}-b, host /127.0.0.1) joined"
        gen = [e for e in probe.events if e["event"] == "generation"
               and e["generation"] == r["to_generation"]]
        assert gen and gen[0]["members"] == r["members_after"]
    finally:
        probe.stop()


def test_all_follows_a_group_that_appears_and_is_deleted(kafka, topic_factory,
                                                         consumer_factory, unique_group):
    """--all --regex: a group created during the watch is followed (its first generation a
    rebalance); deleted (DeleteGroups by Kafka's AdminClient), it is a `state` Dead."""
    import re

    from confluent_kafka.admin import AdminClient

    topic = topic_factory(2)
    g = unique_group
    watch = WatchProcess(kafka, "--all", "--regex", f"^{re.escape(g)}$", "--interval", "0.2",
                         debug=True)
    try:
        watch.err.wait(lambda line: "trace: ListGroups" in line, 30, "the first ListGroups")
        c = consumer_factory(g, topic, name=f"{g}-a")
        c.wait_assigned()
        i, r = watch.wait_event(lambda e: e["group"] == g and e["event"] == "rebalance", 30,
                                "the new group's first rebalance")
        assert r["members_after"] == [c.member_id] and r["members_before"] == []
        c.close()
        i, _ = watch.wait_event(lambda e: e["group"] == g and e["event"] == "state"
                                and e["state"] == "Empty", 30, "the group Empty", i)
        admin = AdminClient({"bootstrap.servers": kafka.bootstrap})
        for f in admin.delete_consumer_groups([g]).values():
            f.result(30)
        watch.wait_event(lambda e: e["group"] == g and e["event"] == "state"
                         and e["state"] == "Dead", 30, "the deleted group Dead", i)
        assert {e["group"] for e in watch.events} == {g}   # --regex kept the others out
        assert watch.stop() == 0
    finally:
        watch.stop()
