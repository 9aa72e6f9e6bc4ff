"""`groupctl watch --source records`: the coordinator's records tailed live, checked against
what groupctl did not write: the broker's "Stabilized group G generation N" / "Group G with
generation N is now empty" / "Bumped group epoch" lines and the consumers' own callbacks.

- one broker: a classic group churned under the watch: every generation the broker
  completed after the first look is told once, in order, with the members the broker
  logged; the last assignments equal the callbacks; a consumer (KIP-848) group: every group
  epoch the broker bumped, once; `--all` tells a group created during the watch from
  nothing; source "records", broker timestamps in order.
- three brokers: the group's coordinator (the leader of its __consumer_offsets partition)
  stopped (SIGTERM) or killed (SIGKILL) while the watch tails, the group churned meanwhile and after: still every
  generation once (nothing lost at the move, nothing told twice on resuming).
- the secure lab's guest (no ACL on __consumer_offsets): exit 4, one line naming the ACL.
"""
from __future__ import annotations

import re
import signal
from pathlib import Path

import pytest

from groupctl.lab.consumer import wait_balanced
from waiting import wait_until
from watch_support import WatchProcess, last_stabilized

pytestmark = [pytest.mark.broker, pytest.mark.slow]

EMPTY = re.compile(r"Group (\S+) with generation (\d+) is now empty")
STABILIZED = re.compile(r"Stabilized group (\S+) generation (\d+) with (\d+) members")


def completed(lab, group: str, nodes=None) -> dict[int, int]:
    """{generation: members} the broker completed for `group` (every node's log, or those
    of `nodes`)."""
    out: dict[int, int] = {}
    for path in [Path(n.log_file) for n in lab.nodes if nodes is None or n.node_id in nodes]:
        text = path.read_text(errors="replace")
        for m in STABILIZED.finditer(text):
            if m.group(1) == group:
                out[int(m.group(2))] = int(m.group(3))
        for m in EMPTY.finditer(text):
            if m.group(1) == group:
                out[int(m.group(2))] = 0
    return out


def bumped_epochs(lab, group: str, nodes=None) -> list[int]:
    """The group epochs the broker bumped `group` to (every node's log, or `nodes`')."""
    text = "".join(Path(n.log_file).read_text(errors="replace") for n in lab.nodes
                   if nodes is None or n.node_id in nodes)
    return sorted({int(n) for n in re.findall(
        rf"\[GroupId {re.escape(group)}\] Bumped group epoch to (\d+)", text)})


def assert_each_epoch_once(events: list[dict], lab, group: str, since: int) -> None:
    """Every group epoch the broker bumped after `since` is told (as an `epoch` event when it
    moved, or as the round's end), no (group, assignment) epoch pair twice, the rounds in
    order."""
    pairs = [(e["group_epoch"], e["assignment_epoch"]) for e in events if e["event"] == "epoch"]
    assert len(pairs) == len(set(pairs)), f"an epoch told twice: {pairs}"
    rounds = [e["to_generation"] for e in events if e["event"] == "rebalance"]
    assert rounds == sorted(set(rounds)), f"a round told twice: {rounds}"
    told = {g for g, _ in pairs} | set(rounds)
    wait_until(lambda: [n for n in bumped_epochs(lab, group) if n > since] == sorted(told), 20,
               f"the broker's bumped epochs after {since} to be {sorted(told)}: "
               f"{bumped_epochs(lab, group)}")
    assert {e["source"] for e in events} == {"records"}


def records_watch(lab, *args: str) -> WatchProcess:
    return WatchProcess(lab, *args, "--source", "records", "--timeout", "5")


def assert_each_generation_once(events: list[dict], lab, group: str, since: int) -> None:
    """The generations told are exactly those the broker completed after `since`, each
    once and in order, with as many members as it logged (waited for: a log line may come
    a moment after the record)."""
    gens = [e for e in events if e["event"] == "generation"]
    told = [g["generation"] for g in gens]
    assert told == sorted(set(told)), f"a generation told twice or out of order: {told}"
    wait_until(lambda: sorted(n for n in completed(lab, group) if n > since) == told, 20,
               f"the broker's completed generations after {since} to be {told}: "
               f"{sorted(completed(lab, group).items())}")
    broker = completed(lab, group)
    assert [len(g["members"]) for g in gens] == [broker[n] for n in told]
    rebalances = [e for e in events if e["event"] == "rebalance"]
    assert [r["to_generation"] for r in rebalances] == told
    for before, after in zip(rebalances, rebalances[1:]):
        assert after["from_generation"] == before["to_generation"]
        assert after["members_before"] == before["members_after"]
    for e in events:
        assert e["source"] == "records"
    assert [e["ts"] for e in events] == sorted(e["ts"] for e in events)


def _asg(items) -> frozenset:
    return frozenset((i["topic"], p) for i in items or () for p in i["partitions"])


def test_classic_generations_each_once_with_the_callbacks(kafka, topic_factory,
                                                          consumer_factory, unique_group):
    topic = topic_factory(4)
    tps = [(topic, p) for p in range(4)]
    g = unique_group
    a = consumer_factory(g, topic, name=f"{g}-a")
    a.wait_assigned(count=4)
    since = last_stabilized(kafka, g)
    watch = records_watch(kafka, g)
    try:
        _, first = watch.wait_event(lambda e: e["event"] == "snapshot", 60, "the first look")
        assert (first["state"], first["generation"]) == ("Stable", since)
        b = consumer_factory(g, topic, name=f"{g}-b")
        wait_balanced([a, b], tps)
        c = consumer_factory(g, topic, name=f"{g}-c")
        wait_balanced([a, b, c], tps)
        b.close()
        wait_balanced([a, c], tps)
        _, last = watch.wait_event(
            lambda e: e["event"] == "rebalance" and e["members_after"] == sorted(
                [a.member_id, c.member_id]), 60, "the rebalance to a and c")
        wait_until(lambda: {x.member_id: x.assignment for x in (a, c)} == {
            m: _asg(v) for m, v in last["assignments"].items()}, 20,
            "the callbacks equal to the last rebalance's assignments")
        assert last["started"] is None and last["duration_ms"] is None   # not in the records
        assert watch.stop() == 0
    finally:
        watch.stop()
    events = [e for e in watch.events if e["group"] == g]
    assert_each_generation_once(events, kafka, g, since)
    assert "Traceback" not in watch.stderr()


def test_consumer_group_epochs_each_once(kafka, topic_factory, consumer_factory, unique_group):
    topic = topic_factory(4)
    tps = [(topic, p) for p in range(4)]
    g = unique_group
    watch = records_watch(kafka, g)
    try:
        watch.wait_event(lambda e: e["event"] == "state" and e["state"] == "Dead", 60,
                         "the missing group's Dead state")
        a = consumer_factory(g, topic, protocol="consumer", name=f"{g}-a")
        a.wait_assigned(count=4, timeout=60)
        b = consumer_factory(g, topic, protocol="consumer", name=f"{g}-b")
        wait_balanced([a, b], tps, timeout=90)
        b.close()
        wait_balanced([a], tps, timeout=90)
        want = bumped_epochs(kafka, g)
        watch.wait_event(lambda e: e["event"] == "rebalance" and e["to_generation"] == want[-1]
                         and e["members_after"] == [a.member_id], 60, "the last epoch's rebalance")
        assert watch.stop() == 0
    finally:
        watch.stop()
    events = watch.events
    bumped = bumped_epochs(kafka, g)
    # every epoch the broker bumped is one round here (one change at a time), told once:
    # the first from nothing, each next one when its epoch moved and when it settled
    rebalances = [e["to_generation"] for e in events if e["event"] == "rebalance"]
    assert rebalances == bumped, (rebalances, bumped)
    moved = [e["group_epoch"] for e in events if e["event"] == "epoch"]
    assert sorted(set(moved)) == bumped[1:], (moved, bumped)
    pairs = [(e["group_epoch"], e["assignment_epoch"]) for e in events if e["event"] == "epoch"]
    assert len(pairs) == len(set(pairs)), f"an epoch told twice: {pairs}"
    assert {e["source"] for e in events} == {"records"}


def test_all_tells_a_group_created_meanwhile_from_nothing(kafka, topic_factory,
                                                          consumer_factory, unique_group):
    topic = topic_factory(2)
    g = unique_group
    marker = consumer_factory(f"{g}-marker", topic, name=f"{g}-m")   # there before the watch
    marker.wait_assigned(count=2)
    watch = records_watch(kafka, "--all", "--regex", f"^{re.escape(g)}")
    try:
        watch.wait_event(lambda e: e["event"] == "snapshot" and e["group"] == f"{g}-marker",
                         60, "the first look (the marker group)")
        a = consumer_factory(g, topic, name=f"{g}-a")
        a.wait_assigned(count=2)
        _, r = watch.wait_event(lambda e: e["event"] == "rebalance" and e["group"] == g, 60,
                                "the new group's first rebalance")
        assert r["members_before"] == [] and r["members_after"] == [a.member_id]
        assert r["from_generation"] is None and r["to_generation"] == 1
        assert _asg(r["assignments"][a.member_id]) == a.assignment
        assert watch.stop() == 0
    finally:
        watch.stop()
    told = [e for e in watch.events if e["group"] == g]
    assert [e["event"] for e in told if e["event"] in ("snapshot", "rebalance")] == [
        "snapshot", "rebalance"]
    assert {e["group"] for e in watch.events} == {g, f"{g}-marker"}


def test_broker_restart_resumes_at_the_last_offset(tmp_path_factory, consumer_factory,
                                                   unique_group):
    """One broker (a lab of this test's own) stopped and started under the tail, the group
    churned before and after: said once, every generation once, the chain unbroken."""
    import os

    from groupctl.lab.cluster import Lab
    from groupctl.lab.workload import create_topic

    lab = Lab.up(name=f"pytest-{os.getpid()}-records-restart", brokers=1,
                 root=tmp_path_factory.mktemp("lab-records"), tie_to_parent=True)
    try:
        g, topic = unique_group, f"t-{unique_group}"
        create_topic(lab.bootstrap, topic, 4, 1, None)
        tps = [(topic, p) for p in range(4)]
        a = consumer_factory(g, topic, cluster=lab, name=f"{g}-a")
        a.wait_assigned(count=4)
        since = last_stabilized(lab, g)
        watch = records_watch(lab, g)
        try:
            watch.wait_event(lambda e: e["event"] == "snapshot", 60, "the first look")
            b = consumer_factory(g, topic, cluster=lab, name=f"{g}-b")
            wait_balanced([a, b], tps, timeout=90)
            lab.stop_node(1)
            watch.err.wait(lambda line: "lost contact" in line, 60, "the lost-contact notice")
            lab.start_node(1)
            watch.err.wait(lambda line: "reconnected" in line, 120, "the reconnected notice")
            c = consumer_factory(g, topic, cluster=lab, name=f"{g}-c")
            wait_balanced([a, b, c], tps, timeout=120)
            watch.wait_event(lambda e: e["event"] == "rebalance" and c.member_id in (
                e["members_after"] or ()) and len(e["members_after"]) == 3, 60,
                "the rebalance to a, b, c")
            assert watch.stop() == 0
        finally:
            watch.stop()
        err = watch.stderr()
        assert err.count("lost contact") == 1 and err.count("reconnected") == 1, err
        assert_each_generation_once([e for e in watch.events if e["group"] == g], lab, g, since)
    finally:
        lab.down()


def _take_down(lab, node_id: int, how: str) -> None:
    """`stop`: the lab's SIGTERM (a controlled shutdown moves its leaders first); `kill`:
    SIGKILL (its leaders move only once the controller misses its heartbeats)."""
    if how == "stop":
        lab.stop_node(node_id)
        return
    import os

    node = lab.node(node_id)
    os.kill(node.pid, signal.SIGKILL)
    wait_until(lambda: not node.alive(), 30, f"node {node_id} gone")


@pytest.mark.cluster3
@pytest.mark.parametrize("how, protocol", [("stop", "classic"), ("kill", "classic"),
                                           ("kill", "consumer")])
def test_coordinator_down_while_tailing_nothing_lost_nothing_repeated(
        kafka3, topic_factory, consumer_factory, unique_group, how, protocol):
    """The coordinator goes down after a and b are balanced; c joins and b leaves under the
    new coordinator; the old one comes back and d joins. Every generation (classic) or
    group epoch (consumer) the brokers logged after the first look is told once, those of
    the new coordinator included."""
    from steer_support import describe as describe_json

    topic = topic_factory(4, cluster=kafka3, replication=3)
    tps = [(topic, p) for p in range(4)]
    g = unique_group
    epochs = protocol == "consumer"

    def member(name):
        return consumer_factory(g, topic, cluster=kafka3, name=f"{g}-{name}", protocol=protocol)
    a = member("a")
    a.wait_assigned(count=4, timeout=90)
    since = (max(wait_until(lambda: bumped_epochs(kafka3, g), 20, "a bumped epoch")) if epochs
             else last_stabilized(kafka3, g))
    old = describe_json(kafka3, g)["coordinator"]["id"]
    watch = records_watch(kafka3, g)
    try:
        watch.wait_event(lambda e: e["event"] == "snapshot", 60, "the first look")
        b = member("b")
        wait_balanced([a, b], tps, timeout=90)
        _take_down(kafka3, old, how)
        try:
            c = member("c")
            wait_balanced([a, b, c], tps, timeout=120)
            b.close()
            wait_balanced([a, c], tps, timeout=120)
            new = describe_json(kafka3, g)["coordinator"]["id"]
            assert new != old
            watch.wait_event(lambda e: e["event"] == "rebalance" and e["members_after"] == sorted(
                [a.member_id, c.member_id]), 60, "the rebalance to a and c")
        finally:
            kafka3.start_node(old)
        d = member("d")
        wait_balanced([a, c, d], tps, timeout=120)
        watch.wait_event(lambda e: e["event"] == "rebalance" and len(e["members_after"]) == 3
                         and d.member_id in e["members_after"], 60, "the rebalance to a, c, d")
        watch.proc.send_signal(signal.SIGTERM)
        assert watch.wait(60) == 0
    finally:
        watch.stop()
    err = watch.stderr()
    assert "Traceback" not in err
    assert err.count("lost contact") == err.count("reconnected") <= 1, err
    events = [e for e in watch.events if e["group"] == g]
    others = {n.node_id for n in kafka3.nodes} - {old}
    # and the tail did follow the move: what the new coordinator completed was told
    if epochs:
        assert_each_epoch_once(events, kafka3, g, since)
        moved = [n for n in bumped_epochs(kafka3, g, others) if n > since]
        told = {e["group_epoch"] for e in events if e["event"] == "epoch"} | {
            e["to_generation"] for e in events if e["event"] == "rebalance"}
    else:
        assert_each_generation_once(events, kafka3, g, since)
        moved = [n for n in completed(kafka3, g, others) if n > since]
        told = {e["generation"] for e in events if e["event"] == "generation"}
    assert moved and set(moved) <= told, (moved, told)
    print(f"\n{how} {protocol}: coordinator {old} -> {new}; told {sorted(told)} "
          f"(the new coordinator's: {sorted(moved)}); stderr: {err!r}")


def test_without_the_acl_exit_4_naming_it(secure_lab):
    from groupctl.exitcodes import ExitCode
    from tls_support import guest

    code, out, err = guest(secure_lab, "watch", "--source", "records", "any-group",
                           "--duration", "30")
    assert (code, out) == (ExitCode.AUTH, ""), err
    assert err.startswith("groupctl: error: ") and err.count("\n") == 1, err
    assert "__consumer_offsets" in err and "--operation Read" in err, err


def test_describe_without_read_is_exit_4_at_the_fetch(secure_lab):
    """DESCRIBE on __consumer_offsets but not READ: Metadata and ListOffsets answer, the
    first Fetch is refused (TOPIC_AUTHORIZATION_FAILED): exit 4 naming the ACL to add."""
    from confluent_kafka.admin import (
        AclBindingFilter, AclOperation, AclPermissionType, AdminClient, ResourcePatternType,
        ResourceType,
    )
    from groupctl.exitcodes import ExitCode
    from test_lab_tls import _props
    from test_probe_acl import allow
    from tls_support import LIBRDKAFKA_UNKNOWN, guest

    import io

    from groupctl.cli.app import invoke
    from groupctl.cli.env import Env

    # the topic exists once a group was coordinated (as the admin, on the PLAINTEXT listener)
    invoke(["-b", secure_lab.bootstrap, "describe", "any-group"],
           Env(stdout=io.StringIO(), stderr=io.StringIO()))
    allow(secure_lab, ResourceType.TOPIC, "__consumer_offsets", AclOperation.DESCRIBE)
    # the group itself may be described (else that is refused first: test_security_promises)
    allow(secure_lab, ResourceType.GROUP, "any-group", AclOperation.DESCRIBE)
    try:
        runs: list = []

        def refused_at_read():
            runs.append(guest(secure_lab, "watch", "--source", "records", "any-group",
                              "--duration", "20"))
            return runs[-1] if "not authorized to read" in runs[-1][2] else None

        try:
            code, out, err = wait_until(refused_at_read, 60, "the DESCRIBE ACL to apply")
        except AssertionError as exc:
            raise AssertionError(f"{exc}; the last run: {runs[-1:]}") from None
        assert (code, out) == (ExitCode.AUTH, ""), err
        assert err.startswith("groupctl: error: ") and err.count("\n") == 1, err
        assert "__consumer_offsets" in err and "--operation Read" in err, err
    finally:   # the session lab's guest has no ACL on the topic again
        conf = {k: v for k, v in _props(secure_lab.sasl["command_configs"]["PLAIN"]).items()
                if k not in LIBRDKAFKA_UNKNOWN}
        admin = AdminClient({**conf, "bootstrap.servers": secure_lab.sasl_bootstrap})
        gone = AclBindingFilter(ResourceType.TOPIC, "__consumer_offsets",
                                ResourcePatternType.LITERAL, "User:guest", "*",
                                AclOperation.DESCRIBE, AclPermissionType.ALLOW)
        admin.delete_acls([gone])[gone].result(timeout=30)


class _Told:
    def __init__(self, watch, n: int):
        self.watch, self.n = watch, n

    def __repr__(self) -> str:
        told = {e["group"] for e in self.watch.events if e["event"] == "snapshot"}
        return f"{len(told)} of {self.n} groups told; stderr: {self.watch.stderr()[-1500:]}"


def test_all_asks_about_a_fleets_groups_a_fetch_answer_at_a_time(kafka, topic_factory,
                                                                  unique_group):
    """400 commit-only groups (as most of a fleet) are each told once as they stand, and
    whether the principal may describe them is asked per Fetch answer (about one per
    partition of __consumer_offsets at the start), in one batched FindCoordinator, not
    per group (100,000 groups were 100,000 requests at the start)."""
    from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition
    from confluent_kafka.admin import AdminClient

    from groupctl.lab.workload import wait_topic

    topic, g, n = topic_factory(1), unique_group, 400
    admin = AdminClient({"bootstrap.servers": kafka.bootstrap})
    wait_topic(kafka.bootstrap, topic, 1, admin=admin)
    pending = [f"{g}-{i:03d}" for i in range(n)]

    def commit() -> bool:   # a coordinator still loading answers NOT_COORDINATOR: again
        futures = {name: f for name in pending for f in admin.alter_consumer_group_offsets(
            [ConsumerGroupTopicPartitions(name, [TopicPartition(topic, 0, 0)])]).values()}
        pending[:] = [name for name, f in futures.items()
                      if any(tp.error is not None for tp in f.result(60).topic_partitions)]
        return not pending
    wait_until(commit, 60, "the groups' commits")
    watch = WatchProcess(kafka, "--all", "--source", "records", "--regex", f"^{re.escape(g)}",
                         debug=True)
    try:
        wait_until(lambda: len({e["group"] for e in watch.events
                                if e["event"] == "snapshot"}) == n, 60,
                   _Told(watch, n))
    finally:
        watch.stop()
    told = [e["group"] for e in watch.events if e["event"] == "snapshot"]
    assert sorted(told) == [f"{g}-{i:03d}" for i in range(n)]   # each once
    assert not [e for e in watch.events if e["event"] == "rebalance"]   # no member ever
    asked = sum(1 for line in watch.err.raw if "trace: FindCoordinator " in line)
    assert 0 < asked <= n // 4, watch.stderr()[-3000:]
