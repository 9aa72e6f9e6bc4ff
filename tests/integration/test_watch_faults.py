"""`groupctl watch` through a broker restart (a lab of its own, one node: stop, start): it
says so once on stderr, reconnects with back-off, and carries on from its last snapshot:
no event told twice, the rebalances a chain (each from where the last ended), exit 0.

"Told twice" is watch_support.assert_told_once: a classic group's describe has no
generation number, so two real rebalances (a restart slower than the consumer's session
gives `a` a new member id: one rebalance to a's new id, one to a and b) tell equal `state`
bodies; a repeat is an event that does not move its chain on, or a rebalance without a
generation of its own in the broker's "Stabilized" lines."""
from __future__ import annotations

import os

import pytest

from groupctl.lab.workload import create_topic
from waiting import wait_until
from watch_support import WatchProcess, assert_told_once, last_stabilized

pytestmark = [pytest.mark.broker, pytest.mark.slow]


@pytest.fixture(scope="module")
def own_lab(tmp_path_factory):
    from groupctl.lab.cluster import Lab

    lab = Lab.up(name=f"pytest-{os.getpid()}-watch-restart", brokers=1,
                 root=tmp_path_factory.mktemp("lab-watch"), tie_to_parent=True)
    try:
        yield lab
    finally:
        lab.down()


def test_broker_restart_is_survived_without_repeats(own_lab, consumer_factory, unique_group):
    from test_watch import _asg, _matches_callbacks, _rebalance_to

    topic = f"t-{unique_group}"
    create_topic(own_lab.bootstrap, topic, 4, 1, None)
    g = unique_group
    a = consumer_factory(g, topic, cluster=own_lab, name=f"{g}-a")
    a.wait_assigned()
    watch = WatchProcess(own_lab, g, "--interval", "0.2", "--timeout", "3")
    try:
        watch.wait_event(lambda e: e["event"] == "state" and e["state"] == "Stable", 30,
                         "the first look")
        since = last_stabilized(own_lab, g)   # the generation of the first look
        own_lab.stop_node(1)
        watch.err.wait(lambda line: "lost contact" in line, 60, "the lost-contact notice")
        own_lab.start_node(1)
        watch.err.wait(lambda line: "reconnected" in line, 90, "the reconnected notice")
        a.wait_assigned(timeout=60)
        b = consumer_factory(g, topic, cluster=own_lab, name=f"{g}-b")
        wait_until(lambda: b.member_id and len(b.assignment) == 2 and len(a.assignment) == 2,
                   90, "a and b sharing the partitions")
        i, r = _rebalance_to(watch, [a.member_id, b.member_id], 0, timeout=60)
        _matches_callbacks(r, [a, b])
        assert watch.stop() == 0
    finally:
        watch.stop()
    err = watch.stderr()
    assert err.count("lost contact") == 1 and err.count("reconnected") == 1, err
    assert "Traceback" not in err
    events = watch.events
    assert_told_once(events, own_lab, g, since)
    chain = [e for e in events if e["event"] == "rebalance"]
    for before, after in zip(chain, chain[1:]):
        assert after["from_generation"] == before["to_generation"]
        assert after["members_before"] == before["members_after"]
    assert sum(len(_asg(v)) for v in chain[-1]["assignments"].values()) == 4


@pytest.mark.cluster3
def test_coordinator_failover_is_survived_without_repeats(kafka3, topic_factory,
                                                          consumer_factory, unique_group):
    """Three brokers: the group's coordinator stops; the watch finds the new one, tells
    the group on (a member joining meanwhile), and exits 0 on SIGTERM, no event told
    twice."""
    import signal

    from steer_support import describe as describe_json
    from test_watch import _rebalance_to

    topic = topic_factory(3, cluster=kafka3, replication=3)
    g = unique_group
    a = consumer_factory(g, topic, cluster=kafka3, name=f"{g}-a")
    a.wait_assigned(count=3)
    old = describe_json(kafka3, g)["coordinator"]["id"]
    watch = WatchProcess(kafka3, g, "--interval", "0.2", "--duration", "60", "--timeout", "3")
    try:
        watch.wait_event(lambda e: e["event"] == "state" and e["state"] == "Stable", 30,
                         "the first look")
        since = last_stabilized(kafka3, g)   # the generation of the first look
        kafka3.stop_node(old)
        try:
            b = consumer_factory(g, topic, cluster=kafka3, name=f"{g}-b")
            wait_until(lambda: b.member_id and a.member_id, 60, "member ids")
            _rebalance_to(watch, [a.member_id, b.member_id], 0, timeout=60)
            new = describe_json(kafka3, g)["coordinator"]["id"]
            assert new != old
        finally:
            kafka3.start_node(old)
        watch.proc.send_signal(signal.SIGTERM)
        assert watch.wait(60) == 0
    finally:
        watch.stop()
    events = watch.events
    # Every rebalance told is a generation some node logged as Stabilized. A coordinator
    # stopped within half a second of generation 1 left the new one describing the group's
    # past for about a second (Missing, or Empty with no members, then a again): no
    # rebalance of those looks is told (observe/story/story_stale.py).
    assert_told_once(events, kafka3, g, since)
    chain = [e for e in events if e["event"] == "rebalance"]
    for before, after in zip(chain, chain[1:]):
        assert after["from_generation"] == before["to_generation"]
        assert after["members_before"] == before["members_after"]
    assert watch.stderr().count("lost contact") <= 1
