"""Issue 23 on the lab broker: a watch no longer starts blind, and a rebalance already under
way when it starts is told as what was seen.

- `watch` (and `watch --all`, and the KIP-848 `join --watch`) of a Stable group: the first
  event of the group is a `snapshot` naming every member with its assignment, equal to the
  consumers' own assign callbacks and to Kafka's ConsumerGroupCommand; the live view's
  model shows them from that one event.
- A group held in CompletingRebalance (a raw member that joined and has not synced) when
  the watch starts: once it syncs, the `rebalance` has `started` null and a duration that
  is a lower bound (`duration_is_lower_bound`), not one counted from the watch's start as
  if the watch had seen the round begin.
"""
from __future__ import annotations

import re
import time

import pytest
from describe_support import RawMember, cgc_assignment, cgc_rows, wait_until
from watch_support import WatchProcess

from groupctl.render.watch import WatchModel

pytestmark = pytest.mark.broker


def _asg(items) -> frozenset:
    return frozenset((i["topic"], p) for i in items or () for p in i["partitions"])


def _stable_three(kafka, topic_factory, consumer_factory, g, **options):
    topic = topic_factory(6)
    consumers = [consumer_factory(g, topic, name=f"{g}-{n}", **options) for n in "abc"]
    wait_until(lambda: all(c.member_id for c in consumers)
               and sum(len(c.assignment) for c in consumers) == 6
               and all(c.assignment for c in consumers), 60, "3 consumers assigned",
               interval=0.1)

    # settled: the broker (ConsumerGroupCommand) and every consumer's callbacks agree
    def agreed():
        rows = cgc_rows(kafka, "--describe", "--group", g, "--members", "--verbose")
        theirs = {r["CONSUMER-ID"]: cgc_assignment(r["ASSIGNMENT"] if "ASSIGNMENT" in r
                                                   else r["CURRENT-ASSIGNMENT"]) for r in rows}
        ours = {c.member_id: set(c.assignment) for c in consumers}
        return theirs if len(rows) == 3 and theirs == ours and \
            sum(len(a) for a in ours.values()) == 6 else None
    return consumers, wait_until(agreed, 60, "3 consumers Stable and agreed", interval=0.5)


def _check_snapshot(snap, consumers, told_by_cgc, protocol="range"):
    assert snap["event"] == "snapshot" and snap["state"] == "Stable"
    assert snap["protocol"] == protocol and snap["gap_ms"] is None
    members = {m["member_id"]: m for m in snap["members"]}
    assert set(members) == {c.member_id for c in consumers}
    for c in consumers:
        m = members[c.member_id]
        assert _asg(m["assignment"]) == c.assignment == told_by_cgc[c.member_id]
        assert m["client_id"] == c.name and m["host"] == "/127.0.0.1"


def test_watch_starts_with_the_group_in_full(kafka, topic_factory, consumer_factory,
                                             unique_group):
    g = unique_group
    consumers, cgc = _stable_three(kafka, topic_factory, consumer_factory, g)
    watch = WatchProcess(kafka, g, "--interval", "0.2")
    try:
        watch.wait_event(lambda e: e["event"] == "state", 30, "the first state")
        first = watch.events[0]
        assert first["source"] == "describe" and first["type"] == "classic"
        _check_snapshot(first, consumers, cgc)
        model = WatchModel()
        model.apply(first)        # the live view shows the members at once
        assert {m: _asg(a) for m, a in model.members.items()} == {
            c.member_id: c.assignment for c in consumers}
        assert (model.state, model.protocol, model.generation) == (
            "Stable", "range", first["generation"])
        assert watch.stop() == 0
    finally:
        watch.stop()
    assert not [e for e in watch.events if e["event"] == "rebalance"]   # none happened


def test_watch_all_starts_with_each_group_in_full(kafka, topic_factory, consumer_factory,
                                                  unique_group):
    g = unique_group
    consumers, cgc = _stable_three(kafka, topic_factory, consumer_factory, g)
    watch = WatchProcess(kafka, "--all", "--regex", f"^{re.escape(g)}$", "--interval", "0.2")
    try:
        watch.wait_event(lambda e: e["group"] == g and e["event"] == "state", 30,
                         "the first state")
        _check_snapshot([e for e in watch.events if e["group"] == g][0], consumers, cgc)
        assert watch.stop() == 0
    finally:
        watch.stop()


def test_kip848_join_watch_starts_with_the_group_in_full(kafka, topic_factory,
                                                         consumer_factory, unique_group):
    from probe_support import ProbeThread

    g = unique_group
    topic = topic_factory(4)
    a = consumer_factory(g, topic, protocol="consumer", name=f"{g}-a")
    a.wait_assigned(count=4)
    probe = ProbeThread(kafka, g).start()
    try:
        snap = probe.wait_event(lambda e: e["event"] == "snapshot", 30, "the snapshot")
    finally:
        probe.stop()
    assert probe.events[0] is snap and snap["source"] == "probe"
    assert snap["type"] == "consumer" and snap["state"] == "Stable"
    assert snap["group_epoch"] is not None and snap["assignment_epoch"] == snap["group_epoch"]
    (m,) = snap["members"]
    assert m["member_id"] == a.member_id and m["client_id"] == f"{g}-a"
    assert _asg(m["assignment"]) == _asg(m["target_assignment"]) == a.assignment


def test_a_rebalance_under_way_at_the_start_is_a_lower_bound(kafka, unique_group):
    """Fails before issue 23's fix: the round was not told at all, and its start stayed
    behind to be counted in the next rebalance's duration."""
    g = unique_group
    raw = RawMember(kafka.bootstrap, g)
    raw.join(session_ms=30000, rebalance_ms=30000)   # leader of generation 1, not synced
    me = raw.member_id
    watch = WatchProcess(kafka, g, "--interval", "0.2")
    try:
        _, first = watch.wait_event(lambda e: e["event"] == "state", 30, "the first look")
        assert first["state"] == "CompletingRebalance"
        snap = watch.events[0]
        assert snap["event"] == "snapshot" and snap["state"] == "CompletingRebalance"
        assert [m["member_id"] for m in snap["members"]] == [raw.member_id]
        first_look = time.time()
        raw.sync({raw.member_id: b""})
        synced = time.time()
        _, r = watch.wait_event(lambda e: e["event"] == "rebalance", 30, "the rebalance")
        assert watch.stop() == 0
    finally:
        watch.stop()
        raw.leave()
    # its start unseen: a lower bound from the first look, or unknown when the round was
    # over by the next look (a bound of nothing is no figure); never an exact or 0 figure
    assert r["started"] is None, r
    assert r["duration_basis"] in ("lower_bound", "unknown"), r
    assert r["duration_is_lower_bound"] is (r["duration_basis"] == "lower_bound"), r
    assert r["members_before"] is None and r["members_after"] == [me]
    if r["duration_basis"] == "unknown":
        assert r["duration_ms"] is None, r
    else:   # counted from the first look, which came before the sync: at most the time
        # from the watch's first event to the sync (plus one poll)
        assert 0 < r["duration_ms"] <= (synced - first_look) * 1000 + 1500, r
    assert wait_until(lambda: f"Stabilized group {g} generation 1" in "".join(
        p.read_text(errors="replace") for p in kafka.log_files), 30, "the broker's log line")
