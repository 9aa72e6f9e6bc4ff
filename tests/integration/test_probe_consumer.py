"""The KIP-848 probe on the lab broker, with librdkafka consumers (group.protocol=consumer)
as peers: their rebalance callbacks and the broker's ConsumerGroupDescribe (read raw here,
not through groupctl's model) are the ground truth.

- a probe without topics joins a group of 2 consumers: the probe gets nothing, the
  consumers keep theirs (no callbacks), and the probe is gone within a second of leaving
  (20 joins and leaves in a row: test_probe_repeated.py);
- `--topics T`: the broker's uniform assignor gives the probe its share, the consumers
  revoke exactly those partitions, the probe acknowledges them; they come back on leave;
- a static probe (--instance-id) leaves with epoch -2 and rejoins with its partitions,
  without a new group epoch for the others;
- fencing: a probe that stops heartbeating past the session timeout is fenced, says so, and
  rejoins with member epoch 0;
- `groupctl join` (one-shot) prints the epochs; SIGTERM / SIGINT leave within a second (20
  runs, timed by the coordinator's own log line).
"""
from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from datetime import datetime

import pytest
from probe_support import ProbeThread, cli, wait_until

from groupctl.client import Cluster
from groupctl.coordinator.members.consumer import NO_PARTITIONS_TOPIC
from groupctl.lab.consumer import wait_balanced
from groupctl.protocol.messages import CONSUMER_GROUP_DESCRIBE

pytestmark = pytest.mark.broker


def cg_describe(kafka, group: str) -> dict | None:
    """The group's raw ConsumerGroupDescribe entry (None: not a consumer group / missing)."""
    async def main():
        async with Cluster(kafka.bootstrap.split(","), timeout=10) as cluster:
            return await cluster.send_to_coordinator(group, CONSUMER_GROUP_DESCRIBE, {
                "group_ids": [group], "include_authorized_operations": False})
    for entry in asyncio.run(main()).get("groups") or ():
        if entry["group_id"] == group and not entry["error_code"]:
            return entry
    return None


def by_id(d: dict) -> dict[str, dict]:
    return {m["member_id"]: m for m in d["members"]}


def members(kafka, group: str) -> dict[str, dict]:
    return {m["member_id"]: m for m in (cg_describe(kafka, group) or {}).get("members") or []}


def owned(member: dict, key: str = "assignment") -> set[tuple[str, int]]:
    return {(tp["topic_name"], p) for tp in member[key]["topic_partitions"]
            for p in tp["partitions"]}


def settled(kafka, group: str, count: int) -> dict:
    """The group once it is Stable with `count` members all at the group epoch."""
    def ok():
        d = cg_describe(kafka, group)
        return d if (d and d["group_state"] == "Stable" and len(d["members"]) == count
                     and d["assignment_epoch"] == d["group_epoch"]
                     and all(m["member_epoch"] == d["group_epoch"] for m in d["members"])
                     and all(owned(m) == owned(m, "target_assignment") for m in d["members"])
                     ) else None
    return wait_until(ok, 60, f"a Stable consumer group of {count}")


def moved(consumers, since: list[int], kind: str) -> set[tuple[str, int]]:
    """The partitions of the consumers' `kind` callbacks since `since` (librdkafka's
    consumer protocol also calls back with empty incremental sets: those move nothing)."""
    return {tp for c, n in zip(consumers, since) for e in c.events[n:] if e.kind == kind
            for tp in e.partitions}


def broker_says(kafka, group: str) -> list[str]:
    """The coordinator's log lines about `group` (for failure messages)."""
    with open(kafka.log_file, encoding="utf-8", errors="replace") as f:
        return [line.strip()[-240:] for line in f if group in line]


def acknowledged(probe: ProbeThread) -> dict:
    return probe.wait_event(lambda e: e["event"] == "probe" and e["action"] == "acknowledged",
                            30, "the probe's acknowledgement")


def two_consumers(kafka, topic_factory, consumer_factory, group, partitions=4):
    topic = topic_factory(partitions)
    consumers = [consumer_factory(group, topic, protocol="consumer") for _ in range(2)]
    wait_balanced(consumers, [(topic, p) for p in range(partitions)])
    before = settled(kafka, group, 2)
    return topic, consumers, before


def test_empty_probe_joins_and_nothing_moves(kafka, topic_factory, consumer_factory,
                                             unique_group):
    topic, consumers, before = two_consumers(kafka, topic_factory, consumer_factory, unique_group)
    calls = [len(c.events) for c in consumers]
    had = [c.assignment for c in consumers]

    probe = ProbeThread(kafka, unique_group).start()
    try:
        acknowledged(probe)
        me = probe.member_id
        joined = probe.of("probe")[0]
        assert joined["action"] == "joined" and joined["member_id"] == me
        during = settled(kafka, unique_group, 3)
        assert owned(during["members"][[m["member_id"] for m in during["members"]].index(me)]) \
            == set()
        # the broker's word on the epoch (Kafka 4.3.1): the probe subscribes to a name no
        # topic can have (never [], see types.NO_PARTITIONS_TOPIC), a subscription change,
        # so the join bumps the group epoch by one, and so does the leave
        assert during["group_epoch"] == before["group_epoch"] + 1
        assert by_id(during)[me]["subscribed_topic_names"] == [NO_PARTITIONS_TOPIC]
        assert all(owned(m) == owned(m, "target_assignment") == owned(by_id(before)[i])
                   for i, m in by_id(during).items() if i != me)
        assert probe.probe.member.generation == during["group_epoch"]
        assert probe.probe.member.assigned_partitions() == {}
        for c, n, a in zip(consumers, calls, had):
            assert c.events[n:] == [] and c.assignment == a   # no revocation, nothing new
        own = [e for e in probe.of("assignment")   # its member's own (the story's have no
               if e["member_id"] == me and "member_epoch" in e]   # member_epoch)
        # its first member epoch is the target's: the new epoch's, or the previous one when
        # the broker computed a target less than group.consumer.assignment.interval.ms ago
        assert own and all(e["assigned"] == [] for e in own)
        assert before["group_epoch"] <= own[0]["member_epoch"] <= during["group_epoch"]
    finally:
        t0 = time.monotonic()
        probe.stop()
    wait_until(lambda: me not in members(kafka, unique_group), 1.0, "the probe gone")
    assert time.monotonic() - t0 < 2.0
    left = probe.of("probe")[-1]
    assert left["action"] == "left" and left["error"] is None
    assert settled(kafka, unique_group, 2)["group_epoch"] == before["group_epoch"] + 2
    for c, n, a in zip(consumers, calls, had):
        assert c.events[n:] == [] and c.assignment == a


def test_subscribed_probe_takes_its_share_and_gives_it_back(kafka, topic_factory,
                                                            consumer_factory, unique_group):
    topic, consumers, before = two_consumers(kafka, topic_factory, consumer_factory,
                                             unique_group, partitions=6)
    calls = [len(c.events) for c in consumers]
    probe = ProbeThread(kafka, unique_group, topics=[topic]).start()
    try:
        after = settled(kafka, unique_group, 3)
        me = probe.member_id
        mine = owned(members(kafka, unique_group)[me])
        assert len(mine) == 2, mine                      # uniform: 6 partitions, 3 members
        assert after["group_epoch"] == before["group_epoch"] + 1
        wait_until(lambda: probe.probe.member.stable, 10, "the probe acknowledged")
        assert {(t, p) for t, ps in probe.probe.member.assigned_partitions().items()
                for p in ps} == mine
        assert moved(consumers, calls, "assign") == set()
        assert moved(consumers, calls, "revoke") == mine  # exactly the probe's share
        own = [e for e in probe.of("assignment") if e["member_id"] == me and "member_epoch" in e]
        assert own[-1]["assigned"] == [{"topic": topic, "partitions": sorted(p for _, p in mine)}]
        assert own[-1]["member_epoch"] == after["group_epoch"]
        calls = [len(c.events) for c in consumers]
    finally:
        probe.stop()
    back = settled(kafka, unique_group, 2)
    assert back["group_epoch"] == after["group_epoch"] + 1
    wait_balanced(consumers, [(topic, p) for p in range(6)])
    assert moved(consumers, calls, "revoke") == set()
    assert moved(consumers, calls, "assign") == mine     # they came back, nothing else moved


def test_static_probe_leaves_for_a_while_and_keeps_its_partitions(
        kafka, topic_factory, consumer_factory, unique_group):
    topic, consumers, before = two_consumers(kafka, topic_factory, consumer_factory,
                                             unique_group, partitions=6)
    probe = ProbeThread(kafka, unique_group, topics=[topic], instance_id="probe-static").start()
    try:
        first = settled(kafka, unique_group, 3)
        me = probe.member_id
        mine = owned(members(kafka, unique_group)[me])
        assert mine and members(kafka, unique_group)[me]["instance_id"] == "probe-static"
    finally:
        probe.stop()
    # -2, "temporarily left": the broker keeps the instance's assignment; no new group epoch
    calls = [len(c.events) for c in consumers]
    mid = cg_describe(kafka, unique_group)
    assert mid["group_epoch"] == first["group_epoch"]
    again = ProbeThread(kafka, unique_group, topics=[topic], instance_id="probe-static").start()
    try:
        wait_until(lambda: again.probe and again.probe.member and again.probe.member.stable, 30, "the static rejoin")
        now = settled(kafka, unique_group, 3)
        assert now["group_epoch"] == first["group_epoch"]          # no new epoch
        rejoined = members(kafka, unique_group)
        assert again.member_id in rejoined and owned(rejoined[again.member_id]) == mine
        assert moved(consumers, calls, "assign") == moved(consumers, calls, "revoke") == set()
    finally:
        again.stop()


@pytest.mark.slow
def test_a_paused_probe_is_fenced_and_rejoins_with_epoch_0(kafka, topic_factory,
                                                           consumer_factory, unique_group):
    topic, consumers, before = two_consumers(kafka, topic_factory, consumer_factory, unique_group)
    probe = ProbeThread(kafka, unique_group).start()
    try:
        acknowledged(probe)
        me = probe.member_id
        member = probe.probe.member
        # the lab's group.consumer.session.timeout.ms is 10 s: stall 13 s
        probe._loop.call_soon_threadsafe(
            lambda: member.pause_heartbeats(probe.probe.clock.monotonic_ms() + 13_000))
        wait_until(lambda: me not in members(kafka, unique_group), 20, "the broker fencing it")
        fenced = probe.wait_event(lambda e: e["event"] == "probe" and e["action"] == "fenced",
                                  20, "the fenced report")
        assert fenced["error"] in ("UNKNOWN_MEMBER_ID", "FENCED_MEMBER_EPOCH")
        probe.wait_event(lambda e: e["event"] == "probe" and e["action"] == "rejoining", 5,
                         "the rejoin")
        rejoined = probe.wait_event(lambda e: e["event"] == "probe" and e["action"] == "joined"
                                    and e is not probe.of("probe")[0], 20, "the second join")
        assert rejoined["member_id"] == me                 # the same UUID, a new epoch
        wait_until(lambda: me in members(kafka, unique_group), 10, "the probe back")
        moves = [t for t in member.transitions if t.to_state.name in ("FENCED", "JOINING")]
        assert [t.to_state.name for t in moves][-2:] == ["FENCED", "JOINING"]
    finally:
        probe.stop()


def test_one_shot_join_prints_the_epochs(kafka, topic_factory, consumer_factory, unique_group):
    topic, consumers, before = two_consumers(kafka, topic_factory, consumer_factory, unique_group)
    code, out, err = cli(kafka, "-o", "json", "join", unique_group)
    assert code == 0, err
    data = json.loads(out)
    assert data["type"] == "consumer" and data["generation"] is None
    assert data["member_epoch"] >= before["group_epoch"] and data["assignment"] == []
    assert data["group_epoch"] >= data["member_epoch"] - 1 and data["assignment_epoch"] is not None
    assert data["member_state"] == "STABLE" and data["member_id"]
    wait_until(lambda: data["member_id"] not in members(kafka, unique_group), 1.0, "gone")
    # the broker's own lines say whose member it was: groupctl's prefix (issue 23)
    me = data["member_id"]
    assert me.startswith("groupctl-")
    log = open(kafka.log_file, encoding="utf-8", errors="replace").read()
    assert f"[GroupId {unique_group}] Member {me} joins the consumer group" in log
    assert f"[GroupId {unique_group}] Member {me} left the consumer group" in log
    code, out, err = cli(kafka, "join", unique_group, "--assignor", "sticky",
                         "--protocol", "consumer")
    assert code == 2 and "server assignor" in err
    # a classic member of the consumer group: epochs, not a generation; no leader
    code, out, err = cli(kafka, "-o", "json", "join", unique_group, "--protocol", "classic")
    assert code == 0, err
    data = json.loads(out)
    assert (data["type"], data["member_protocol"], data["generation"], data["leader"],
            data["is_leader"]) == ("consumer", "classic", None, None, False)
    assert data["member_epoch"] >= before["group_epoch"] and data["group_epoch"] is not None
    code, out, err = cli(kafka, "join", unique_group, "--protocol", "classic")
    assert code == 0, err
    assert "generation" not in out and "leader" not in out.replace("no leader", "")
    assert "member epoch" in out and "member protocol" in out


def _start(kafka, group: str, *extra: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "groupctl", "-b", kafka.bootstrap, "-o", "ndjson", "join", group,
         "--watch", *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        bufsize=1, env={**os.environ, "NO_COLOR": "1"})


@pytest.mark.slow
def left_at(kafka, group: str, member: str) -> float | None:
    """The wall-clock time (epoch seconds) of the coordinator's own line saying `member`
    left the consumer group, or None while there is none. The broker stamps its lines in
    local time with milliseconds, on this same machine's clock."""
    needle = f"[GroupId {group}] Member {member} left the consumer group."
    with open(kafka.log_file, encoding="utf-8", errors="replace") as f:
        for line in f:
            if needle in line:
                stamp = datetime.strptime(line[1:24], "%Y-%m-%d %H:%M:%S,%f")
                return stamp.timestamp()
    return None


def test_signals_leave_the_consumer_group_within_a_second(kafka, topic_factory,
                                                          consumer_factory, unique_group):
    """20 runs, SIGINT and SIGTERM in turn. "Within a second" is judged by the coordinator's
    own log line for the leave (stamped by the broker when it applied it), not by how fast
    this test can poll ConsumerGroupDescribe on a loaded machine; the describe must then
    no longer list the probe."""
    topic, consumers, before = two_consumers(kafka, topic_factory, consumer_factory, unique_group)
    calls = [len(c.events) for c in consumers]
    delays = []
    for i in range(20):
        proc = _start(kafka, unique_group)
        events = []
        for line in proc.stdout:
            events.append(json.loads(line))
            if events[-1]["event"] == "probe" and events[-1]["action"] == "acknowledged":
                break
        else:
            raise AssertionError(f"no acknowledgement: {events} {proc.stderr.read()}")
        me = events[-1]["member_id"]
        assert me in members(kafka, unique_group)
        signalled = time.time()
        proc.send_signal(signal.SIGINT if i % 2 == 0 else signal.SIGTERM)
        assert proc.wait(10) == 0, proc.stderr.read()
        rest = [json.loads(line) for line in proc.stdout]
        assert rest and rest[-1]["event"] == "probe" and rest[-1]["action"] == "left"
        broker_left = wait_until(lambda me=me: left_at(kafka, unique_group, me), 10,
                                 "the coordinator's line for the probe's leave")
        wait_until(lambda me=me: me not in members(kafka, unique_group), 10, "the probe gone")
        # the broker's stamp has millisecond resolution: allow that much before the signal
        delays.append(round(broker_left - signalled, 3))
        assert delays[-1] >= -0.002, delays
    assert max(delays) < 1.0, delays
    callbacks = [(c.member_id, e.kind, sorted(e.partitions)) for c, n in zip(consumers, calls)
                 for e in c.events[n:]]
    assert moved(consumers, calls, "revoke") == set(), (callbacks, broker_says(kafka, unique_group))
    assert moved(consumers, calls, "assign") == set(), (callbacks, broker_says(kafka, unique_group))


def test_watch_tells_epochs_and_converged_rebalances(kafka, topic_factory, consumer_factory,
                                                     unique_group):
    topic, consumers, before = two_consumers(kafka, topic_factory, consumer_factory, unique_group)
    probe = ProbeThread(kafka, unique_group).start()
    try:
        acknowledged(probe)
        me = probe.member_id
        at_join = settled(kafka, unique_group, 3)["group_epoch"]
        # the probe's own join is a rebalance too (it bumps the group epoch): once the
        # probe has told it, the next one starts from the epoch it joined at
        joined_at = probe.wait_rebalance(3, 30)
        assert (joined_at["from_generation"], joined_at["to_generation"]) == (
            before["group_epoch"], at_join)
        assert joined_at["moved_partitions"] == 0
        third = consumer_factory(unique_group, topic, protocol="consumer")
        wait_balanced([*consumers, third], [(topic, p) for p in range(4)])
        now = settled(kafka, unique_group, 4)
        rebalance = probe.wait_rebalance(4, 30)
        assert rebalance["to_generation"] == now["group_epoch"]
        assert rebalance["from_generation"] == at_join
        assert rebalance["moved_partitions"] == 1      # 4 partitions, 2 -> 3 real owners
        assert set(rebalance["members_after"]) == {c.member_id for c in (*consumers, third)} | {me}
        epochs = [e for e in probe.of("epoch") if e["group_epoch"] == now["group_epoch"]]
        assert epochs and epochs[-1]["assignment_epoch"] == now["assignment_epoch"]
        joined = [e for e in probe.of("member_joined") if e["member_id"] == third.member_id]
        assert len(joined) == 1
        got = {e["member_id"]: e for e in probe.of("assignment")
               if e.get("generation") == now["group_epoch"]}
        assert got[third.member_id]["assigned"] == [
            {"topic": topic, "partitions": sorted(p for _, p in third.assignment)}]
        assert me not in got or got[me]["assigned"] == []   # the probe still owns nothing
        assert [e for e in probe.of("probe") if e["action"] == "fenced"] == []
    finally:
        probe.stop()


def test_a_probe_whose_group_is_deleted_under_it_ends_with_why(kafka, unique_group):
    """Kafka 4.4 answers a heartbeat (member epoch > 0) of a group that no longer exists
    with GROUP_ID_NOT_FOUND. A static probe, its heartbeats paused, is removed by its
    instance id and the group, empty, deleted with Kafka's own tool; the probe's next
    heartbeat ends it: FATAL with the reason, in the broker's words too."""
    probe = ProbeThread(kafka, unique_group, protocol="consumer", instance_id="probe-gone")
    probe.start()
    try:
        acknowledged(probe)
        member = probe.probe.member
        epoch = member.member_epoch
        assert epoch > 0
        clock = probe.probe.clock
        probe._loop.call_soon_threadsafe(
            lambda: member.pause_heartbeats(clock.monotonic_ms() + 600_000))
        code, _, err = cli(kafka, "remove-member", unique_group, "--instance-id", "probe-gone",
                           "--yes")
        assert code == 0, err
        wait_until(lambda: not members(kafka, unique_group), 10, "the probe removed")
        deleted = kafka.consumer_group_command("--delete", "--group", unique_group)
        assert f"Deletion of requested consumer groups ('{unique_group}') was successful" \
            in deleted.stdout, deleted.stdout + deleted.stderr
        probe._loop.call_soon_threadsafe(lambda: member.pause_heartbeats(0))
        failed = probe.wait_event(lambda e: e["event"] == "probe" and e["action"] == "failed",
                                  20, "the probe's failure")
        probe._thread.join(10)
    finally:
        error, probe.error = probe.error, None
        probe.stop()
    assert failed["error"] == "GROUP_ID_NOT_FOUND"
    assert "the group no longer exists" in failed["reason"]
    assert f"broker: Consumer group {unique_group} not found." in str(error)
    assert member.state.name == "FATAL" and member.member_epoch == epoch
