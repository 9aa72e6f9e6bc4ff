"""Reasons a person can act on (observe/story/reasons.py) as the one story tells them, the
watcher's special cases (static restart without a rebalance, classic generations the
subscriptions do not carry, KIP-848 convergence), and observe/watch.py's loop on a fake
cluster (Dead, faults told once, --max-rebalances)."""
from __future__ import annotations

import asyncio

import pytest
from described_cluster import DescribedCluster
import story_support
from story_support import look
from groupctl.errors import NotFoundError, UnreachableError
from groupctl.observe.reads.describe import DescribeResult
from groupctl.observe.reads.model import GroupDescription, Member, TopicPartitions
from groupctl.observe.story.story import RebalanceStory
from groupctl.observe.watch import ConditionViolated, Watcher, WatchSettings


def m(mid, *parts, topics=("t",), instance=None):
    return Member(mid, client_id=f"c-{mid}", host="h", instance_id=instance,
                  subscription={"topics": list(topics)},
                  assignment=[TopicPartitions(t, list(p)) for t, p in parts])


def classic(state, gen, *members):
    return GroupDescription("g", type="classic", state=state, protocol="range",
                            generation=gen, members=list(members))


def reasons(story, *descs):
    out = []
    for d in descs:
        out += [e.reason for e in look(story, d, at=1.0) if e.KIND == "rebalance"]
    return out


def test_static_restart_subscription_and_new_partitions():
    story = RebalanceStory("g", clock=lambda: 1.0)
    look(story, classic("Stable", 3, m("a", ("t", [0]), instance="i1"), m("b", ("t", [1]))))
    assert reasons(story, classic("Stable", 4, m("a2", ("t", [0]), instance="i1"),
                                  m("b", ("t", [1])))) == ["static member i1 restarted (new member id)"]
    assert reasons(story, classic("Stable", 5, m("a2", ("t", [0]), instance="i1"),
                                  m("b", ("t", [1]), ("u", [0]), topics=("t", "u")))) == [
        "subscription of b changed (t -> t,u)"]
    assert reasons(story, classic("Stable", 6, m("a2", ("t", [0, 2]), ("u", []), instance="i1"),
                                  m("b", ("t", [1, 3]), ("u", [0]), topics=("t", "u")))) == [
        "new partitions on t"]
    assert reasons(story, classic("Stable", 7, m("a2", ("t", [0, 2]), instance="i1"),
                                  m("b", ("t", [1, 3]), ("u", [0]), topics=("t", "u")))) == [
        "rebalance with no membership change"]


def test_static_member_replaced_without_a_rebalance():
    story = RebalanceStory("g", clock=lambda: 1.0)
    look(story, classic("Stable", 3, m("a", ("t", [0]), instance="i1"), m("b", ("t", [1]))))
    events = look(story, classic("Stable", 3, m("a2", ("t", [0]), instance="i1"),
                                   m("b", ("t", [1]))), at=2.0)
    assert [(e.KIND, e.member_id) for e in events] == [("member_left", "a"), ("member_joined", "a2")]


def test_classic_without_generations_is_noticed_by_its_members():
    story = RebalanceStory("g", clock=lambda: 1.0)
    look(story, classic("Stable", None, m("a", ("t", [0, 1]))))
    events = look(story, classic("Stable", None, m("a", ("t", [0])), m("b", ("t", [1]))), at=2.0)
    assert [e.KIND for e in events] == ["generation", "member_joined", "assignment",
                                        "assignment", "rebalance"]
    assert events[-1].reason == "member b (client c-b, host h) joined"


def consumer(state, epoch, aepoch, *members):
    return GroupDescription("g", type="consumer", state=state, group_epoch=epoch,
                            assignment_epoch=aepoch, members=list(members))


def cm(mid, current, target, epoch=1):
    return Member(mid, client_id=mid, member_epoch=epoch,
                  assignment=[TopicPartitions("t", current)],
                  target_assignment=[TopicPartitions("t", target)])


def test_kip848_epochs_then_one_rebalance_at_convergence():
    """Each member is told as it converges (current vs target, reconciliation time: from
    the first snapshot that showed it away from its target to the first that showed it
    there, its member epoch caught up); one rebalance once all are there."""
    story = RebalanceStory("g", clock=lambda: 1.0)
    assert [e.KIND for e in look(story, consumer("Stable", 5, 5, cm("a", [0, 1], [0, 1], 5)),
                                          at=1.0)] == ["snapshot", "state"]
    e1 = look(story, consumer("Reconciling", 6, 6, cm("a", [0, 1], [0], 5),
                                cm("b", [], [1], 6)), at=2.0)
    assert [e.KIND for e in e1] == ["state", "epoch", "assignment", "member_joined",
                                    "assignment"]
    t = [{"topic": "t", "partitions": [0]}]
    u = [{"topic": "t", "partitions": [1]}]
    a1, b1 = e1[2].to_dict(), e1[4].to_dict()
    assert a1 == {"event": "assignment", "member_id": "a", "generation": 6,
                  "assigned": [{"topic": "t", "partitions": [0, 1]}], "added": [], "revoked": [],
                  "target": t, "reconciled_ms": None, "behind": True}
    assert (b1["assigned"], b1["added"], b1["target"], b1["reconciled_ms"]) == ([], [], u, None)
    # a gave partition 1 up but its member epoch still lags: not there yet, nothing to tell
    assert look(story, consumer("Reconciling", 6, 6, cm("a", [0], [0], 5),
                                  cm("b", [], [1], 6)), at=2.5)[0].to_dict()["revoked"] == u
    e2 = look(story, consumer("Reconciling", 6, 6, cm("a", [0], [0], 6), cm("b", [], [1], 6)),
                       at=3.0)
    assert [(e.KIND, e.member_id, e.reconciled_ms) for e in e2] == [("assignment", "a", 1000)]
    e3 = look(story, consumer("Stable", 6, 6, cm("a", [0], [0], 6), cm("b", [1], [1], 6)), at=4.0)
    kinds = [e.KIND for e in e3]
    assert kinds == ["state", "assignment", "rebalance"]
    assert (e3[1].member_id, e3[1].added, e3[1].reconciled_ms) == ("b", u, 2000)
    r = e3[-1]
    assert (r.from_generation, r.to_generation, r.duration_ms) == (5, 6, 2000)
    assert r.moved_partitions == 1 and r.reason == "member b (client b) joined"
    # issue 19: t-1 left a at 2.5 and reached b at 4.0; a held the round up from its new
    # target (2.0) until its epoch caught up (3.0); b only waited for t-1
    assert (r.unowned_partition_ms, r.unowned_partitions_max_ms, r.unowned_basis) == (
        1500, 1500, "measured")
    assert r.unowned_longest == [{"topic": "t", "partition": 1, "ms": 1500}]
    assert r.unowned_unsubscribed == []
    assert (r.slowest_member, r.slowest_member_ms) == ("a", 1000)
    # a member seen at its target at once (it reconciled within one poll): no time
    e4 = look(story, consumer("Stable", 7, 7, cm("a", [0, 1], [0, 1], 7)), at=5.0)
    assert [(e.KIND, getattr(e, "member_id", None)) for e in e4] == [
        ("epoch", None), ("member_left", "b"), ("assignment", "a"), ("rebalance", None)]
    asg = [e for e in e4 if e.KIND == "assignment"]
    assert [(e.member_id, e.added, e.reconciled_ms) for e in asg] == [("a", u, None)]
    assert e4[-1].KIND == "rebalance" and e4[-1].reason == "member b (client b) left or expired"
    # t-1 moved b -> a between two looks: never seen unowned, so no measured 0: at most
    # the window between them (4.0 -> 5.0); no one seen behind
    assert (e4[-1].unowned_partition_ms, e4[-1].unowned_basis) == (1000, "upper_bound")
    assert (e4[-1].slowest_member, e4[-1].slowest_member_ms) == (None, None)


def run_watcher(rounds, settings, monkeypatch):
    cluster = DescribedCluster(rounds).install(monkeypatch)
    events, notices = [], []
    watcher = Watcher(cluster, settings, emit=events.append, notice=notices.append,
                      clock=lambda: 1.0)

    async def main():
        return await watcher.run()

    try:
        code = asyncio.run(main())
    except ConditionViolated as exc:
        code = exc
    return code, events, notices, watcher


def ok(*descs):
    return DescribeResult(list(descs), {})


def test_watcher_tells_dead_and_faults_once(monkeypatch):
    """A group missing at the first look is said once (and its state is Dead, as describe
    answers it); once seen, its going is told too."""
    gone = DescribeResult([], {"g": NotFoundError("group 'g' does not exist")})
    down = UnreachableError("no broker reachable")
    rounds = [gone, gone, ok(classic("Stable", 2, m("a", ("t", [0])))), down, down,
              ok(classic("Stable", 3, m("a", ("t", [0])), m("b", ("t", [1])))), gone, gone]
    code, events, notices, watcher = run_watcher(
        rounds, WatchSettings(groups=["g"], interval=0.01, duration=0.3), monkeypatch)
    assert code == 0
    states = [(e["previous"], e["state"]) for e in events if e["event"] == "state"]
    assert states == [(None, "Dead"), ("Dead", "Stable"), ("Stable", "Dead")]
    rebalances = [e for e in events if e["event"] == "rebalance"]
    assert [(r["from_generation"], r["to_generation"]) for r in rebalances] == [(None, 2), (2, 3)]
    assert all(e["source"] == "describe" and e["cluster"] == "fake" for e in events)
    assert [n for n in notices if "does not exist" in n] == [
        "group 'g' does not exist; watching for it to appear"]
    assert len([n for n in notices if "lost contact" in n]) == 1
    assert len([n for n in notices if "reconnected" in n]) == 1
    (summary,) = watcher.summaries()
    assert summary["rebalances"] == 2 and summary["state"] == "Dead"


def test_watcher_max_rebalances_stops_at_once(monkeypatch):
    rounds = [ok(classic("Stable", g, *[m(f"m{i}", ("t", [i])) for i in range(g)]))
              for g in range(1, 6)]
    code, events, _, watcher = run_watcher(
        rounds, WatchSettings(groups=["g"], interval=0.01, duration=5, max_rebalances=2),
        monkeypatch)
    assert isinstance(code, ConditionViolated) and code.exit_code == 8
    assert len([e for e in events if e["event"] == "rebalance"]) == 3
    assert "rebalanced 3 times" in str(code)


def test_the_shared_live_view_shows_a_passive_watch():
    import io

    from rich.console import Console

    from groupctl.events import envelope
    from groupctl.render.watch import WatchModel, plain_line, render_models, summary_line

    story = RebalanceStory("g", clock=lambda: 1.0)
    look(story, classic("Stable", 3, m("a", ("t", [0, 1]))), at=1.0)
    events = [envelope(e, group="g", cluster=None, source="describe", at=2.0) for e in
              look(story, classic("Stable", 4, m("a", ("t", [0])), m("b", ("t", [1]))), at=2.0)]
    model = WatchModel()
    for e in events:
        model.apply(e)
    model.apply(envelope({"event": "probe", "action": "rejoining", "member_id": None,
                          "error": "REBALANCE_IN_PROGRESS"}, group="g", cluster=None))
    assert model.errors == deque_of()          # a routine rebalance is not an error
    assert model.members == {"a": [{"topic": "t", "partitions": [0]}],
                             "b": [{"topic": "t", "partitions": [1]}]}
    assert model.gains["a"] == ([], [{"topic": "t", "partitions": [1]}])
    out = io.StringIO()
    Console(file=out, width=200).print(render_models({"g": model}, now=12.0))
    text = out.getvalue()
    assert "generation 4" in text and "members 2" in text and "10 s ago" in text
    assert "member b (client c-b, host h) joined" in text
    assert plain_line(events[-1]).startswith("1970-01-01T00:00:02.000Z g rebalance 3 -> 4")
    assert summary_line({"group": "g", "state": "Stable", "rebalances": 2,
                         "rebalancing_ms_total": 300, "rebalancing_ms_longest": 200,
                         "flapping_members": ["x"]}) == (
        "summary g: 2 rebalances, 300 ms rebalancing (longest 200 ms), state Stable, "
        "flapping members: x")


def deque_of():
    from collections import deque

    return deque(maxlen=6)



class ListedSource(story_support.ListedSource):
    def amend(self, event, desc):
        return {**event, "amended_by": type(self).__name__}


@pytest.mark.parametrize("resumes_exactly", [False, True])
def test_the_watcher_takes_any_source_through_its_interface(resumes_exactly):
    """No concrete class is checked: a source that resumes exactly after a fault blinds no
    story (the group is not told again in full), one that does not is told again with its
    gap; every event from a look goes through the source's own amend."""
    from groupctl.observe.sources.interface import GroupSource
    from groupctl.observe.sources.observations import ContactLost, ContactRegained, Seen

    desc = classic("Stable", 2, m("a", ("t", [0])))
    fault = UnreachableError("no broker reachable")
    source: GroupSource = ListedSource([
        Seen("g", 1.0, "describe", desc), ContactLost(None, 2.0, "describe", fault),
        ContactRegained(None, 3.0, "describe", 2.0), Seen("g", 4.0, "describe", desc)],
        resumes_exactly)
    events, notices = [], []
    watcher = Watcher(None, WatchSettings(groups=["g"]), emit=events.append,
                      notice=notices.append, clock=lambda: 1.0, source=source)
    assert asyncio.run(watcher.run()) == 0
    snapshots = [e["gap_ms"] for e in events if e["event"] == "snapshot"]
    assert snapshots == ([None] if resumes_exactly else [None, 3000])
    assert events and all(e["amended_by"] == "ListedSource" for e in events)
    assert len([n for n in notices if "lost contact" in n]) == 1
