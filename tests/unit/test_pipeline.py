"""observe/'s pipeline with injected clocks: the describe poller (source.py) as typed
observations, the story's snapshot and lower-bound rounds (issue 23), the one reducer, and
the event vocabulary tied to what analytics reads."""
from __future__ import annotations

import asyncio
import dataclasses

import pytest
from described_cluster import DescribedCluster

from groupctl.errors import NotFoundError, UnreachableError
from groupctl.events import EVENT_FIELDS, EventKind, Source, envelope
from groupctl.observe.reads.describe import DescribeResult
from groupctl.observe.reads.model import GroupDescription, GroupState, Member, TopicPartitions
from groupctl.observe.sources.observations import (
    Appeared, ContactLost, ContactRegained, Missing, Seen,
)
from groupctl.observe.state.reducer import Reducer
from groupctl.observe.sources.poller import DescribePoller
from groupctl.observe.story.story import RebalanceStory


def m(mid, *parts):
    return Member(mid, client_id=f"c-{mid}", host="h", subscription={"topics": ["t"]},
                  assignment=[TopicPartitions("t", list(parts))])


def classic(state, gen, *members):
    return GroupDescription("g", type="classic", state=state, protocol="range",
                            generation=gen, members=list(members))


def seen(desc, at):
    return Seen("g", at, "describe", desc)


def kinds(events):
    return [str(e.KIND) for e in events]


# ---- the source ---------------------------------------------------------------------------

def poller_over(rounds, monkeypatch, **kw):
    cluster = DescribedCluster(rounds).install(monkeypatch)
    clock = iter(range(100, 200))
    return DescribePoller(cluster, ["g"], clock=lambda: float(next(clock)), **kw), cluster


def test_the_poller_yields_typed_observations_and_faults_once(monkeypatch):
    down = UnreachableError("no broker reachable")
    poller, asked = poller_over([
        DescribeResult([classic("Stable", 1, m("a", 0))]), down, down,
        DescribeResult([], {"g": NotFoundError("gone")})], monkeypatch,
        types={"g": "classic"})

    async def rounds():
        return [await poller.round() for _ in range(4)]

    first, lost, still, back = asyncio.run(rounds())
    assert [type(o) for o in first] == [Seen] and first[0].at == 101.0   # asked at 100
    assert first[0].source == "describe" and first[0].desc.state == "Stable"
    assert [type(o) for o in lost] == [ContactLost] and lost[0].error is down
    assert lost[0].group is None and "lost contact" in lost[0].text()
    assert still == []                                    # told once per streak
    assert [type(o) for o in back] == [ContactRegained, Missing]
    assert back[0].lost_at == lost[0].at and back[1].group == "g"
    # only the group's own type's describe API is asked (issue 23's papercut)
    assert {listings["g"].type for _, listings in asked.asked} == {"classic"}


def test_the_poller_keeps_each_groups_coordinator_and_the_groups_it_got_nothing_of(monkeypatch):
    """watch --all's COORD: the broker that last described the group, and whether the
    last round got nothing of it (a timed-out coordinator; every group when the round
    failed as a whole); a group gone forgets its coordinator."""
    def on(node):
        desc = classic("Stable", 1, m("a", 0))
        desc.coordinator = {"id": node, "host": "h", "port": 9092}
        return desc
    timed_out = UnreachableError("broker 3 did not answer in time")
    poller, _ = poller_over([
        DescribeResult([on(3)]), DescribeResult([], {"g": timed_out}),
        UnreachableError("no broker reachable"), DescribeResult([on(1)]),
        DescribeResult([], {"g": NotFoundError("gone")})], monkeypatch)

    async def rounds():
        out = []
        for _ in range(5):
            await poller.round()
            out.append(poller.coordinator("g"))
        return out

    assert asyncio.run(rounds()) == [(3, False), (3, True), (3, True), (1, False),
                                     (None, False)]


def test_the_poller_paces_rounds_and_hurries(monkeypatch):
    poller, asked = poller_over([DescribeResult([classic("Stable", 1, m("a", 0))])] * 10,
                                monkeypatch, interval=30.0, label=Source.PROBE)

    async def main():
        loop = asyncio.get_running_loop()
        start, got = loop.time(), []
        async for o in poller.observations(until=loop.time() + 5):
            got.append(o)
            poller.hurry(0.01)      # the next round at once, not in 30 s
            if len(got) == 3:
                break
        return got, loop.time() - start

    got, took = asyncio.run(main())
    assert [o.source for o in got] == ["probe"] * 3 and took < 5


# ---- the story: snapshot, gaps, rounds under way ---------------------------------------------

def test_a_snapshot_again_after_a_gap_and_a_rebalance_in_it_is_bounded_by_the_gap():
    story = RebalanceStory("g", clock=lambda: 0.0)
    assert kinds(story.feed(seen(classic("Stable", 3, m("a", 0)), 10.0))) == [
        "snapshot", "state"]
    assert story.feed(ContactLost(None, 11.0, "describe", UnreachableError("x"))) == []
    after = story.feed(seen(classic("Stable", 4, m("a", 0), m("b", 1)), 20.0))
    assert kinds(after) == ["snapshot", "generation", "member_joined", "assignment",
                            "rebalance"]
    assert after[0].gap_ms == 10000 and [x["member_id"] for x in after[0].members] == ["a", "b"]
    r = after[-1]
    assert (r.from_generation, r.to_generation) == (3, 4)
    # begun after the last look before the gap (Stable, generation 3), over by the look
    # after it: 0 to 10 s, its start not seen
    assert r.started is None and not r.duration_is_lower_bound
    assert (r.duration_basis, r.duration_min_ms, r.duration_max_ms) == ("interval", 0, 10000)
    # and the next one, seen starting: begun after 20.0 (Stable), by 30.0, over by 31.5
    story.feed(seen(classic("PreparingRebalance", None, m("a"), m("b")), 30.0))
    r2 = story.feed(seen(classic("Stable", 5, m("a", 0, 1)), 31.5))[-1]
    assert (r2.duration_basis, r2.duration_min_ms, r2.duration_max_ms) == (
        "interval", 0, 11500) and r2.started


def test_after_a_gap_nothing_is_told_again_and_two_rounds_may_tell_equal_states():
    """tests/integration/test_watch_faults.py's case: DescribeGroups carries no generation;
    a restart longer than the consumer's session gives `a` a new id (a2): two real rounds,
    whose `state` events have equal bodies, each moving the chain on once."""
    story = RebalanceStory("g", clock=lambda: 0.0)
    assert kinds(story.feed(seen(classic("Stable", None, m("a", 0, 1)), 1.0))) == [
        "snapshot", "state"]
    story.feed(ContactLost(None, 2.0, "describe", UnreachableError("x")))
    back = story.feed(seen(classic("Stable", None, m("a", 0, 1)), 9.0))
    assert kinds(back) == ["snapshot"] and back[0].gap_ms == 8000   # the allowed re-statement
    assert story.feed(seen(classic("Stable", None, m("a", 0, 1)), 9.2)) == []
    told = []
    for at, desc in [(10.0, classic("PreparingRebalance", None, m("a"), m("a2"))),
                     (11.0, classic("Stable", None, m("a2", 0, 1))),
                     (12.0, classic("PreparingRebalance", None, m("a2"), m("b"))),
                     (13.0, classic("Stable", None, m("a2", 0), m("b", 1)))]:
        told += story.feed(seen(desc, at))
        assert story.feed(seen(desc, at + 0.2)) == []   # the same look again: nothing
    states = [(e.state, e.previous) for e in told if str(e.KIND) == "state"]
    assert states == [("PreparingRebalance", "Stable"), ("Stable", "PreparingRebalance")] * 2
    rebalances = [e for e in told if str(e.KIND) == "rebalance"]
    assert [(r.members_before, r.members_after) for r in rebalances] == [
        (["a"], ["a2"]), (["a2"], ["a2", "b"])]


def test_a_round_under_way_at_the_first_look_is_told_once_as_a_lower_bound():
    story = RebalanceStory("g", clock=lambda: 0.0)
    first = story.feed(seen(classic("CompletingRebalance", None, m("a"), m("b")), 100.0))
    assert kinds(first) == ["snapshot", "state"]
    done = story.feed(seen(classic("Stable", 7, m("a", 0), m("b", 1)), 100.25))
    r = done[-1]
    assert str(r.KIND) == "rebalance" and r.to_generation == 7 and r.from_generation is None
    # under way at the first look, over by the next: it may have ended just after the
    # first, and begun any time before it: nothing is known of its duration
    assert r.started is None and r.duration_ms is None and r.duration_basis == "unknown"
    record = envelope(r, group="g", cluster=None, source="describe", at=100.25)
    assert record["started"] is None and record["duration_ms"] is None
    # the round's start does not stay behind: a later round between two looks is timed
    # from its own first look, not from the watch's start
    later = story.feed(seen(classic("Stable", 8, m("a", 0, 1)), 112.0))[-1]
    assert (later.duration_basis, later.duration_min_ms, later.duration_max_ms) == (
        "interval", 0, 11750) and not later.duration_is_lower_bound


def test_a_kip848_round_under_way_at_the_first_look():
    def cm(mid, cur, tgt, epoch):
        return Member(mid, client_id=mid, member_epoch=epoch,
                      assignment=[TopicPartitions("t", cur)],
                      target_assignment=[TopicPartitions("t", tgt)])

    def cg(state, *members):
        return GroupDescription("g", type="consumer", state=state, group_epoch=9,
                                assignment_epoch=9, members=list(members))
    story = RebalanceStory("g", clock=lambda: 0.0)
    story.feed(seen(cg("Reconciling", cm("a", [0, 1], [0], 8), cm("b", [], [1], 9)), 50.0))
    story.feed(seen(cg("Reconciling", cm("a", [0], [0], 9), cm("b", [], [1], 9)), 51.0))
    # a stale round start used to make the next, quick rebalance look 12 s long
    r = story.feed(seen(cg("Stable", cm("a", [0], [0], 9), cm("b", [1], [1], 9)), 62.0))[-1]
    # under way at 50.0 (its start not seen) and still at 51.0: at least 1 s
    assert r.started is None and r.duration_is_lower_bound and r.duration_ms == 1000
    assert (r.duration_basis, r.duration_min_ms, r.duration_max_ms) == ("lower_bound", 1000, None)
    assert (r.from_generation, r.to_generation) == (None, 9)


def test_appeared_groups_are_told_from_nothing_and_missing_ones_dead():
    story = RebalanceStory("g", clock=lambda: 0.0)
    story.feed(Appeared("g", 1.0, "describe"))
    events = story.feed(seen(classic("Stable", 1, m("a", 0)), 2.0))
    assert kinds(events) == ["snapshot", "state", "generation", "member_joined",
                             "assignment", "rebalance"]
    assert events[-1].members_before == [] and events[-1].duration_basis == "unknown"
    assert kinds(story.feed(Missing("g", 3.0, "describe"))) == ["state"]


def test_feed_refuses_what_is_not_an_observation():
    with pytest.raises(TypeError):
        RebalanceStory("g").feed(classic("Stable", 1))


# ---- the reducer ------------------------------------------------------------------------------

def test_the_reducer_folds_snapshot_changes_counts_and_flapping():
    story, reducer = RebalanceStory("g", clock=lambda: 0.0), Reducer()

    def tell(desc, at):
        for e in story.feed(seen(desc, at)):
            reducer.apply(envelope(e, group="g", cluster=None, source="describe", at=at))
        return reducer.groups["g"]

    s = tell(classic("Stable", 3, m("a", 0), m("b", 1)), 1.0)
    assert (s.state, s.type, s.generation, s.protocol) == ("Stable", "classic", 3, "range")
    assert {k: v.assignment for k, v in s.members.items()} == {
        "a": [{"topic": "t", "partitions": [0]}], "b": [{"topic": "t", "partitions": [1]}]}
    assert s.changed_at == 1.0 and s.rebalances == 0
    s = tell(classic("Stable", 4, m("a", 0, 1)), 2.0)
    assert set(s.members) == {"a"} and s.generation == 4 and s.rebalances == 1
    tell(classic("Stable", 5, m("a", 0), m("b", 1)), 3.0)
    s = tell(classic("Stable", 6, m("a", 0, 1)), 4.5)
    assert s.rebalances == 3 and s.flapping == ["c-b"] and s.changed_at == 4.5
    # three rounds each begun and over between two looks (1 s, 1 s, 1.5 s apart): never
    # "0 ms rebalancing"; the total is the middle of the least and the most it may be
    assert s.summary() == {"group": "g", "state": "Stable", "rebalances": 3,
                           "rebalances_lower_bound": False, "rebalancing_ms_total": 1750, "rebalancing_ms_least": 0,
                           "rebalancing_ms_most": 3500, "rebalancing_ms_longest": 750,
                           "rebalances_timed": 3, "rebalances_untimed": 0,
                           "flapping_members": ["c-b"]}
    for e in story.feed(Missing("g", 5.0, "describe")):
        reducer.apply(envelope(e, group="g", cluster=None, source="describe", at=5.0))
    s = reducer.groups["g"]
    assert (s.state, s.members, s.generation, s.exists) == ("Dead", {}, None, False)


# ---- one vocabulary ----------------------------------------------------------------------------

def test_event_kinds_and_states_are_enums_with_the_json_spelling():
    import json

    assert set(EVENT_FIELDS) == {k.value for k in EventKind}
    assert json.dumps({"e": EventKind.SNAPSHOT, "s": GroupState.STABLE}) == \
        '{"e": "snapshot", "s": "Stable"}'
    assert envelope({"event": EventKind.STATE, "state": GroupState.STABLE}, group="g",
                    cluster=None, source=Source.RECORDS)["event"] == "state"


def test_analytics_reads_the_event_vocabulary_of_events_py():
    """analytics/extract.py's RECORD_SCHEMA and RECORD_KINDS against events.py: every kind
    the analytics maps is a §4 kind, every field it reads is a field of some kind (or of
    the envelope), and a §4 kind it does not map is one it knowingly passes by."""
    pytest.importorskip("pyspark")
    from groupctl.analytics.extract import RECORD_KINDS, RECORD_SCHEMA
    from groupctl.events import ENVELOPE

    passed_by = {"snapshot", "type_changed"}   # no analytics result reads them (README)
    kinds_ = {k.value for k in EventKind}
    assert set(RECORD_KINDS) <= kinds_, set(RECORD_KINDS) - kinds_
    assert kinds_ - set(RECORD_KINDS) <= passed_by, kinds_ - set(RECORD_KINDS)
    from groupctl.events import Rebalanced
    known = set(ENVELOPE) | {f for fs in EVENT_FIELDS.values() for f in fs} | {
        "member_epoch", "_corrupt_record", "member_state"} | {
        f.name for f in dataclasses.fields(Rebalanced)}   # with its extras (`seen`)
    read = {f.name for f in RECORD_SCHEMA.fields}
    assert read <= known, read - known


def test_a_round_the_coordinator_dropped_mid_way_is_no_rebalance():
    """bench/watch_soak.py's broker restart: `j` leaves (PreparingRebalance seen), the broker
    stops before the round completes, and the restarted coordinator loads the group's last
    stored generation (its log: "Loaded classic group G with 3 members", no Stabilized line):
    the look after the gap shows the members and assignments of before. Only the states are
    told; the next real round is timed from its own start."""
    story = RebalanceStory("g", clock=lambda: 0.0)
    stable = classic("Stable", None, m("a", 0), m("b", 1), m("j", 2))
    story.feed(seen(stable, 1.0))
    assert kinds(story.feed(seen(classic("PreparingRebalance", None, m("a"), m("b")), 2.0))) \
        == ["state"]
    story.feed(ContactLost(None, 3.0, "describe", UnreachableError("x")))
    back = story.feed(seen(stable, 15.0))
    assert kinds(back) == ["snapshot", "state"]   # Stable again; no generation, no rebalance
    story.feed(seen(classic("PreparingRebalance", None, m("a"), m("b"), m("j")), 17.0))
    r = story.feed(seen(classic("Stable", None, m("a", 0, 2), m("b", 1)), 25.0))[-1]
    assert str(r.KIND) == "rebalance" and r.members_before == ["a", "b", "j"]
    assert r.members_after == ["a", "b"] and (r.duration_min_ms, r.duration_max_ms) == (0, 10000)


def test_a_round_completed_in_a_gap_is_still_told():
    """The same gap, but the round did complete (other members after it): told, as before."""
    story = RebalanceStory("g", clock=lambda: 0.0)
    story.feed(seen(classic("Stable", None, m("a", 0), m("b", 1), m("j", 2)), 1.0))
    story.feed(seen(classic("PreparingRebalance", None, m("a"), m("b")), 2.0))
    story.feed(ContactLost(None, 3.0, "describe", UnreachableError("x")))
    r = story.feed(seen(classic("Stable", None, m("a", 0, 2), m("b", 1)), 15.0))[-1]
    assert str(r.KIND) == "rebalance" and r.members_after == ["a", "b"]
    assert (r.duration_min_ms, r.duration_max_ms) == (0, 14000) and r.started
