"""Issue 30: a round's figures as looks can know them (observe/story/round.py), and every
published aggregate of them (the reducer's summary, the watch's summary line, -o json,
the metrics): unknown is null, never 0 and never summed as 0; a duration measured by
looks is an interval, never "0 ms"; rounds the broker completed between two looks are
told, so that counts equal the broker's."""
from __future__ import annotations

import pytest
from prometheus_client.parser import text_string_to_metric_families

from groupctl.events import envelope
from groupctl.observe.sinks.metrics import WatchMetrics
from groupctl.observe.reads.model import GroupDescription, Member, TopicPartitions
from groupctl.observe.sources.observations import ContactLost, Seen
from groupctl.observe.state.reducer import Reducer
from groupctl.observe.story.round import (MOVES, Basis, Duration, Move, RoundClock,
                                          RoundState, unseen_generations)
from groupctl.observe.story.story import RebalanceStory
from groupctl.render.watch import timeline_row
from groupctl.render.watch_lines import summary_line, summary_text


def m(mid, *parts):
    return Member(mid, client_id=f"c-{mid}", host="h",
                  assignment=[TopicPartitions("t", list(parts))] if parts else None)


def classic(state, generation, *members, protocol="range"):
    return GroupDescription("g", state=state, type="classic", protocol_type="consumer",
                            protocol=protocol, generation=generation, members=list(members))


class Watch:
    """A story, its reducer and metrics, fed looks as `watch` feeds them."""

    def __init__(self, source="describe"):
        self.story, self.reducer = RebalanceStory("g", clock=lambda: 0.0), Reducer()
        self.metrics = WatchMetrics(self.reducer, followed=lambda: 1)
        self.source, self.told = source, []

    def look(self, at, desc):
        for e in self.story.feed(Seen("g", at, self.source, desc)):
            self.tell(e.to_dict(), at)

    def tell(self, body, at):
        record = envelope(body, group="g", cluster=None, source=self.source, at=at)
        self.reducer.apply(record)
        self.metrics.event(record)
        self.told.append(record)

    def rebalances(self):
        return [e for e in self.told if e["event"] == "rebalance"]

    def samples(self):
        return {(s.name, tuple(sorted(s.labels.items()))): s.value
                for f in text_string_to_metric_families(self.metrics.render())
                for s in f.samples}


def _hist_count(samples):
    return sum(v for (name, _), v in samples.items()
               if name == "groupctl_group_rebalance_duration_seconds_count")


def _rebalances_total(samples):
    return sum(v for (name, _), v in samples.items()
               if name == "groupctl_group_rebalances_total")


# ---- 1. unknown is never 0 ------------------------------------------------------------------

def test_a_round_of_unknown_duration_is_never_summed_as_0():
    """A round from the coordinator's records has no start (history.amend_from_records:
    duration null): the summary said `0 ms rebalancing` / rebalancing_ms_total 0."""
    w = Watch("records")
    w.look(1.0, classic("Stable", 3, m("a", 0, 1)))
    w.tell({"event": "rebalance", "from_generation": 3, "to_generation": 4, "started": None,
            "ended": "1970-01-01T00:00:02.000Z", "duration_ms": None, "duration_basis": "unknown",
            "members_before": ["a"], "members_after": ["a", "b"], "reason": "member b joined"},
           2.0)
    s = w.reducer.groups["g"].summary()
    assert (s["rebalances"], s["rebalancing_ms_total"], s["rebalancing_ms_longest"],
            s["rebalances_timed"], s["rebalances_untimed"]) == (1, None, None, 0, 1)
    line = summary_line(s)
    assert "0 ms" not in line and "time rebalancing - (no duration known)" in line
    assert '"rebalancing_ms_total": null' in summary_text([s], "json")
    # nothing observed in the duration histogram; the round still counted
    samples = w.samples()
    assert _hist_count(samples) == 0 and _rebalances_total(samples) == 1


def test_a_total_over_some_unknown_rounds_says_what_it_covers():
    w = Watch()
    w.look(1.0, classic("Stable", 3, m("a", 0, 1)))
    w.look(2.0, classic("PreparingRebalance", None, m("a"), m("b")))
    w.look(3.0, classic("Stable", 4, m("a", 0), m("b", 1)))   # 0 to 2000 ms
    w.tell({"event": "rebalance", "from_generation": 4, "to_generation": 5, "started": None,
            "ended": "1970-01-01T00:00:09.000Z", "duration_ms": None, "members_before": None,
            "members_after": None, "reason": None}, 9.0)
    s = w.reducer.groups["g"].summary()
    assert (s["rebalances"], s["rebalances_timed"], s["rebalances_untimed"]) == (2, 1, 1)
    assert (s["rebalancing_ms_least"], s["rebalancing_ms_total"], s["rebalancing_ms_most"]) == (
        0, 1000, 2000)
    assert summary_line(s) == (
        "summary g: 2 rebalances, 1000 ms rebalancing (0-2000 ms) (longest 1000 ms) over 1 of "
        "2 rebalances (1 of unknown duration), state Stable, flapping members: none")
    assert timeline_row(w.rebalances()[0])[3] == "0-2000"
    assert timeline_row(w.told[-1])[3] == "-"
    assert _hist_count(w.samples()) == 1


def test_older_summaries_and_records_still_read():
    """A summary or record written before the basis was told (no rebalances_timed, no
    duration_basis): its figure as it was."""
    old = {"group": "g", "state": "Stable", "rebalances": 2, "rebalancing_ms_total": 300,
           "rebalancing_ms_longest": 200, "flapping_members": []}
    assert "300 ms rebalancing (longest 200 ms)," in summary_line(old)
    r = Reducer()
    r.apply(envelope({"event": "rebalance", "ended": "1970-01-01T00:00:02.000Z",
                      "duration_ms": 40, "duration_is_lower_bound": True}, group="g",
                     cluster=None, source="describe"))
    s = r.groups["g"].summary()
    assert (s["rebalancing_ms_total"], s["rebalancing_ms_least"], s["rebalancing_ms_most"]) == (
        40, 40, None)


# ---- 2. a duration measured by looks: an interval, never 0 ------------------------------------

def test_a_round_begun_and_over_between_two_looks_is_an_interval_not_0_ms():
    """The describe watch told rounds of ~560 ms as `in 0 ms` (start and end seen in the
    same look)."""
    w = Watch()
    w.look(10.0, classic("Stable", 3, m("a", 0, 1), m("b")))
    w.look(11.0, classic("Stable", 4, m("a", 0), m("b", 1)))
    (r,) = w.rebalances()
    assert (r["duration_basis"], r["duration_min_ms"], r["duration_max_ms"], r["duration_ms"],
            r["started"]) == ("interval", 0, 1000, 500, None)
    from groupctl.render.watch_lines import plain_line
    assert "in 0-1000 ms (bounded by the looks)" in plain_line(r)


def test_a_round_seen_over_several_looks_lies_between_them():
    w = Watch()
    w.look(10.0, classic("Stable", 3, m("a", 0, 1)))
    w.look(10.5, classic("PreparingRebalance", None, m("a"), m("b")))
    w.look(11.0, classic("CompletingRebalance", 4, m("a"), m("b")))
    w.look(11.5, classic("Stable", 4, m("a", 0), m("b", 1)))
    (r,) = w.rebalances()
    # begun in (10.0, 10.5], still under way at 11.0, over in (11.0, 11.5]
    assert (r["duration_basis"], r["duration_min_ms"], r["duration_max_ms"]) == (
        "interval", 500, 1500)
    assert r["started"] == "1970-01-01T00:00:10.500Z"


def test_the_coordinators_records_give_a_round_exactly():
    """Records come only with a change, at the broker's time: the look that shows the
    change is its moment."""
    w = Watch("records")
    w.look(10.0, classic("Stable", 3, m("a", 0, 1)))
    w.look(10.2, classic("PreparingRebalance", None, m("a"), m("b")))
    w.look(10.9, classic("Stable", 4, m("a", 0), m("b", 1)))
    (r,) = w.rebalances()
    assert (r["duration_basis"], r["duration_ms"], r["duration_max_ms"]) == ("exact", 700, 700)


def test_the_round_clock_moves_only_as_its_table_allows():
    assert all(isinstance(why, str) and why for _, why in MOVES.values())
    c = RoundClock()
    assert c.undone(None, ()) is False and c.state == RoundState.SETTLED
    with pytest.raises(ValueError, match="no move"):
        c._move(Move.SETTLE)
    c.look(1.0)
    c.look(2.0)
    c.start(2.0)
    assert (c.state, c.reason) == (RoundState.SEEN_STARTING, MOVES[(
        RoundState.SETTLED, Move.BEGIN)][1])
    c.look(3.0)
    assert c.settle(3.0) == Duration(Basis.INTERVAL, 1000, 0, 2000)
    assert Duration.between(0, 0) == Duration.exact(0)
    assert Duration.at_least(0).basis == Basis.UNKNOWN


def test_a_held_look_is_a_state_over_the_round_and_each_verdict_a_move():
    """HOLD keeps the round beneath (it goes on under the held look); DROP goes back to
    it; SETTLE_HELD settles the round beneath, at the held look's time."""
    c = RoundClock()
    c.look(1.0)
    c.look(2.0)
    c.start(2.0)   # seen starting
    c.make(Move.HOLD)
    assert (c.state, c.round, c.under_way) == (RoundState.HELD, RoundState.SEEN_STARTING, True)
    assert c.reason == MOVES[(RoundState.SEEN_STARTING, Move.HOLD)][1]
    c.make(Move.HOLD)   # the looks stay alike
    assert (c.state, c.round) == (RoundState.HELD, RoundState.SEEN_STARTING)
    c.make(Move.DROP)   # it was the past
    assert (c.state, c.reason) == (RoundState.SEEN_STARTING, MOVES[(RoundState.HELD,
                                                                     Move.DROP)][1])
    c.make(Move.HOLD)
    c.make(Move.SETTLE_HELD)   # made by settle(), as the held look is told
    assert c.state == RoundState.HELD
    c.look(3.0)
    assert c.settle(2.5) == Duration(Basis.INTERVAL, 750, 0, 1500)   # begun after 1.0
    assert (c.state, c.reason) == (RoundState.SETTLED, MOVES[(RoundState.HELD,
                                                              Move.SETTLE_HELD)][1])
    with pytest.raises(ValueError, match="no move drop"):
        c.make(Move.DROP)   # nothing held


def test_a_gap_in_a_round_widens_its_interval():
    """Seen starting at 2.0 (Stable at 1.0), contact lost, the same round (generation 4)
    under way at 9.0 and over by 9.5: 7 to 8.5 s."""
    story = RebalanceStory("g", clock=lambda: 0.0)
    story.feed(Seen("g", 1.0, "describe", classic("Stable", 3, m("a", 0, 1))))
    story.feed(Seen("g", 2.0, "describe", classic("PreparingRebalance", None, m("a"), m("b"))))
    story.feed(ContactLost(None, 3.0, "describe", RuntimeError("x")))
    story.feed(Seen("g", 9.0, "describe", classic("CompletingRebalance", 4, m("a"), m("b"))))
    r = story.feed(Seen("g", 9.5, "describe", classic("Stable", 4, m("a", 0), m("b", 1))))[-1]
    assert (r.duration_basis, r.duration_min_ms, r.duration_max_ms) == ("interval", 7000, 8500)
    # after a gap, a round begun again may be another: no bound above is claimed
    story.feed(ContactLost(None, 10.0, "describe", RuntimeError("x")))
    story.feed(Seen("g", 20.0, "describe", classic("CompletingRebalance", 5, m("a"), m("b"))))
    story.feed(ContactLost(None, 21.0, "describe", RuntimeError("x")))
    story.feed(Seen("g", 30.0, "describe", classic("PreparingRebalance", 5, m("a"), m("b"))))
    story.feed(Seen("g", 31.0, "describe", classic("PreparingRebalance", 5, m("a"), m("b"))))
    r = story.feed(Seen("g", 32.0, "describe", classic("Stable", 6, m("a", 0), m("b", 1))))[-1]
    assert (r.duration_basis, r.duration_min_ms, r.duration_max_ms) == ("lower_bound", 1000, None)


# ---- 3. rounds the broker completed between two looks -------------------------------------------

def test_a_generation_jump_tells_every_round_so_counts_equal_the_brokers():
    """force-rebalance on an eager librdkafka group: the broker logged Stabilized for
    generations 4, 5 and 6; the looks saw 3 then 6. Three rounds, two of them unseen."""
    w = Watch()
    w.look(1.0, classic("Stable", 3, m("a", 0, 1), m("b")))
    w.look(2.0, classic("Stable", 6, m("a", 0), m("b", 1)))
    rs = w.rebalances()
    assert [(r["from_generation"], r["to_generation"], r["seen"]) for r in rs] == [
        (3, 4, False), (4, 5, False), (5, 6, True)]
    for r in rs[:2]:
        assert (r["duration_ms"], r["duration_basis"], r["members_before"], r["members_after"],
                r["moved_partitions"]) == (None, "unknown", None, None, None)
    assert rs[2]["members_before"] is None and rs[2]["members_after"] == ["a", "b"]
    s = w.reducer.groups["g"].summary()
    assert (s["rebalances"], s["rebalances_timed"], s["rebalances_untimed"]) == (3, 1, 2)
    samples = w.samples()
    assert _rebalances_total(samples) == 3 and _hist_count(samples) == 1
    from groupctl.render.watch_lines import plain_line
    assert "rebalance 3 -> 4: not seen" in plain_line(rs[0])


def test_no_unseen_round_where_none_was_missed():
    assert unseen_generations(3, 4) == [] and unseen_generations(None, 9) == []
    assert unseen_generations(9, 3) == []   # a new coordinator's view of the past
    assert unseen_generations(3, 6) == [4, 5]
    # an epoch group's epoch moves several times in one round: no unseen rounds
    w = Watch()
    w.look(1.0, GroupDescription("g", type="consumer", state="Stable", group_epoch=3,
                                 assignment_epoch=3, members=[m("a", 0)]))
    w.look(2.0, GroupDescription("g", type="consumer", state="Stable", group_epoch=6,
                                 assignment_epoch=6, members=[m("a", 0)]))
    assert [r["seen"] for r in w.rebalances()] == [True]


def test_a_round_of_unknown_members_keeps_the_members_known():
    """An unseen round's members are not known: the live view keeps those it knew (it
    showed none until the next round was told)."""
    w = Watch()
    w.look(1.0, classic("Stable", 3, m("a", 0, 1), m("b")))
    w.tell({"event": "rebalance", "from_generation": 3, "to_generation": 4, "started": None,
            "ended": "1970-01-01T00:00:02.000Z", "members_before": None, "members_after": None,
            "reason": None, "seen": False}, 2.0)
    status = w.reducer.groups["g"]
    assert sorted(status.members) == ["a", "b"] and status.generation == 4


def test_a_count_of_rounds_describe_cannot_all_see_says_at_least():
    """librdkafka's eager members report no generation: a round begun and over between
    two looks leaves no trace in describe (force-rebalance x5 on the lab broker: 5
    Stabilized lines, one round seen). The summary says the count is a lower bound."""
    w = Watch()
    w.look(1.0, classic("Stable", None, m("a", 0, 1), m("b")))
    w.look(2.0, classic("PreparingRebalance", None, m("a"), m("b")))
    w.look(3.0, classic("Stable", None, m("a", 0), m("b", 1)))
    s = w.reducer.groups["g"].summary()
    assert s["rebalances"] == 1 and s["rebalances_lower_bound"] is True
    assert summary_line(s).startswith("summary g: at least 1 rebalance (its members report no "
                                      "generation: a round begun and over between two looks "
                                      "is not seen; --source records counts every one), ")
    w = Watch()
    w.look(1.0, classic("Stable", 3, m("a", 0, 1), m("b")))
    w.look(2.0, classic("Stable", 4, m("a", 0), m("b", 1)))
    assert w.reducer.groups["g"].summary()["rebalances_lower_bound"] is False


def test_the_kip848_probes_own_view_follows_its_member():
    """`join --watch` of a KIP-848 group showed member epoch 32 and state `-` while the
    broker had the probe at 35: a look's `state` event wiped the member's state, and the
    member's own assignment events (at its new epoch) did not move the epoch."""
    r = Reducer()

    def tell(body):
        return r.apply(envelope(body, group="g", cluster=None, source="probe"))

    tell({"event": "probe", "action": "joined", "member_id": "p", "member_epoch": 32})
    tell({"event": "probe", "action": "acknowledged", "member_id": "p", "member_epoch": 32})
    s = tell({"event": "state", "state": "Reconciling", "previous": "Stable"})
    assert (s.member_state, s.member_epoch) == ("STABLE", 32)
    s = tell({"event": "assignment", "member_id": "p", "member_epoch": 35, "assigned": [],
              "added": [], "revoked": []})
    assert (s.member_state, s.member_epoch) == ("STABLE", 35)


def test_one_record_showing_a_round_begun_and_over_is_no_0_ms():
    """history of a KIP-848 group on the lab broker: its first round (join at .186, bump
    at .260, target at .269 in the broker's log) came in one record batch and was told
    `0 ms exact`; so was the last member's leave."""
    w = Watch("records")
    w.look(36.317, GroupDescription("g", type="consumer", state="Empty", group_epoch=0,
                                    assignment_epoch=0, members=[]))
    w.look(36.317, GroupDescription("g", type="consumer", state="Stable", group_epoch=2,
                                    assignment_epoch=2, members=[m("a", 0)]))
    w.look(40.0, GroupDescription("g", type="consumer", state="Stable", group_epoch=3,
                                  assignment_epoch=3, members=[]))
    first, last = w.rebalances()
    assert (first["duration_ms"], first["duration_basis"]) == (None, "unknown")
    assert (last["duration_basis"], last["duration_min_ms"], last["duration_max_ms"]) == (
        "interval", 0, 3683)


def test_a_round_over_after_the_next_bump_leaves_the_next_begun_at_that_bump():
    """The records (a look per write, at the broker's time) of a consumer group: b joins
    at 2.0 (bump to 6); at 3.0 the members reach epoch 6's target in the write that bumps
    to 7 (c joins); at 4.0 epoch 7's. Epoch 6's round is 2.0 -> 3.0; epoch 7's began at
    its bump, 3.0, not at epoch 6's start (it was told "started 2.0, exact 2000 ms")."""
    def mem(mid, parts, epoch):
        return Member(mid, client_id=mid, member_epoch=epoch,
                      assignment=[TopicPartitions("t", parts)],
                      target_assignment=[TopicPartitions("t", parts)])

    def cg(g, a, *members, state="Reconciling"):
        return GroupDescription("g", type="consumer", state=state, group_epoch=g,
                                assignment_epoch=a, members=list(members))

    s = RebalanceStory("g", clock=lambda: 0.0)
    told = []
    for at, d in [(1.0, cg(5, 5, mem("a", [0, 1], 5), state="Stable")),
                  (2.0, cg(6, 5, mem("a", [0, 1], 5), mem("b", [], 0))),
                  (3.0, cg(7, 6, mem("a", [0], 6), mem("b", [1], 6))),
                  (4.0, cg(7, 7, mem("a", [0], 7), mem("b", [1], 7), state="Stable"))]:
        told += [e for e in s.feed(Seen("g", at, "records", d)) if e.KIND == "rebalance"]
    assert [(r.from_generation, r.to_generation, r.started[17:], r.duration_ms,
             r.duration_basis) for r in told] == [
        (5, 6, "02.000Z", 1000, "exact"), (6, 7, "03.000Z", 1000, "exact")]


def test_an_epoch_groups_round_begins_with_its_epoch_not_with_a_state():
    """The truth matrix (static-restart, Kafka's Java consumer, KIP-848): a static member
    going away leaves the group Reconciling at the same epochs; the restarted instance
    takes its place; the bump to epoch 4 comes later. The round is the epoch's: a describe
    watch started it at the Reconciling look, 1 s early, and its lower end (10019 ms)
    passed the records' exact 9926 ms."""
    def mem(mid, parts, epoch):
        return Member(mid, client_id=mid, member_epoch=epoch,
                      assignment=[TopicPartitions("t", parts)],
                      target_assignment=[TopicPartitions("t", parts)])

    def cg(g, a, state, *members):
        return GroupDescription("g", type="consumer", state=state, group_epoch=g,
                                assignment_epoch=a, members=list(members))

    s = RebalanceStory("g", clock=lambda: 0.0)
    told = []
    for at, d in [(14.0, cg(3, 3, "Stable", mem("a", [0, 1], 3), mem("b", [2, 3], 3))),
                  (15.0, cg(3, 3, "Reconciling", mem("a", [0, 1], -2), mem("b", [2, 3], 3))),
                  (16.0, cg(4, 3, "Assigning", mem("a2", [], 0), mem("b", [2, 3], 3))),
                  (26.0, cg(4, 4, "Stable", mem("a2", [0, 1], 4), mem("b", [2, 3], 4)))]:
        told += [e for e in s.feed(Seen("g", at, "describe", d)) if e.KIND == "rebalance"]
    assert [(r.started[17:], r.duration_min_ms, r.duration_max_ms) for r in told] == [
        ("16.000Z", 0, 11000)]
