"""One owner of each group's state (observe/story/story.py, observe/state/reducer.py): the
story changes its group's GroupStatus only by folding the events it tells, a replay of them
gives the same state, and a Watcher's reducer holds the stories' very statuses."""
from __future__ import annotations

import asyncio

from story_support import ListedSource, classic, consumer
from groupctl.errors import UnreachableError
from groupctl.observe.reads.model import Member, TopicPartitions
from groupctl.observe.sources.observations import ContactLost, Missing, Seen
from groupctl.observe.state.reducer import Reducer
from groupctl.observe.story.story import RebalanceStory
from groupctl.observe.watch import Watcher, WatchSettings


def m(mid, *parts, target=None, epoch=None):
    return Member(mid, client_id=f"c-{mid}", host="h", subscription={"topics": ["t"]},
                  assignment=[TopicPartitions(t, list(p)) for t, p in parts],
                  target_assignment=None if target is None else [
                      TopicPartitions(t, list(p)) for t, p in target],
                  member_epoch=epoch)



def fingerprint(status) -> tuple:
    """What a group's state says of it, members with all a look showed of them."""
    return (status.state, status.type, status.generation, status.epochs, status.protocol,
            status.rebalances, status.rebalancing_ms_total, status.changes,
            {mid: (s.assignment, s.target, s.tasks, s.subscription, s.instance_id, s.client_id,
                   s.host) for mid, s in status.members.items()})


FAULT = UnreachableError("no broker reachable")

# a classic group through a round, a round while contact was lost, its going, and the
# group created again as a consumer group whose epochs move and converge
OBSERVATIONS = [
    Seen("g", 1.0, "describe", classic("Stable", 3, m("a", ("t", [0, 1])))),
    Seen("g", 2.0, "describe", classic("PreparingRebalance", 3, m("a", ("t", [0, 1])))),
    Seen("g", 3.0, "describe", classic("Stable", 4, m("a", ("t", [0])), m("b", ("t", [1])))),
    ContactLost(None, 4.0, "describe", FAULT),
    Seen("g", 6.0, "describe", classic("Stable", 6, m("b", ("t", [0, 1])))),
    Missing("g", 7.0, "describe"),
    Seen("g", 8.0, "describe", consumer("Stable", 1, 1, m("c", ("t", [0, 1]),
                                                            target=[("t", [0, 1])], epoch=1))),
    Seen("g", 9.0, "describe", consumer("Reconciling", 2, 2,
                                        m("c", ("t", [0, 1]), target=[("t", [0])], epoch=2),
                                        m("d", target=[("t", [1])], epoch=2))),
    Seen("g", 10.0, "describe", consumer("Stable", 2, 2,
                                         m("c", ("t", [0]), target=[("t", [0])], epoch=2),
                                         m("d", ("t", [1]), target=[("t", [1])], epoch=2))),
]


def test_a_replay_of_the_told_events_gives_the_storys_state_after_every_observation():
    story = RebalanceStory("g", clock=lambda: 0.0)
    replayed = Reducer()
    for o in OBSERVATIONS:
        events = story.feed(o)
        told = story.take_told()
        assert [e["event"] for e in told] == [e.KIND for e in events]
        assert story.take_told() == []
        for e in told:
            replayed.apply(e)
        assert fingerprint(replayed.groups["g"]) == fingerprint(story.status), o
        # the story holds no members nor generation of its own but a round's start, and
        # that only while the round is under way, or until a round settles where the fold
        # cannot be told from (a group created again is told from nothing: story.py)
        held = story._start.held
        assert (held is not None) == story._round.under_way or held.until_settled, o
    # gen 4; 5 (unseen) and 6 across the lost contact; the group created again: epoch 1
    # (every member joined), epoch 2
    assert story.status.rebalances == 5
    # epoch 2 told from its start (c holding t-0, t-1), not from the fold mid-round, which
    # had d joined and c's assignment as they converged
    last = story.status.last_rebalance
    assert (last["members_before"], last["moved_partitions"]) == (["c"], 1)
    gen6 = [r for r in story.status.timeline if r["to_generation"] == 6][0]
    # the round across the gap told from before it (a and b), not from the look's snapshot
    # (b alone), which the fold holds by then
    assert (gen6["from_generation"], gen6["reason"]) == (
        5, "member a (client c-a, host h) left or expired")


def test_a_group_created_again_is_told_in_full():
    """Gone (Missing), then there again as another type: its first look is told as a
    snapshot, so the fold of the told events alone knows its type, epochs and members."""
    story = RebalanceStory("g", clock=lambda: 0.0)
    for o in OBSERVATIONS[:6]:
        story.feed(o)
    assert story.status.state == "Dead" and story.status.type is None
    kinds = [e.KIND for e in story.feed(OBSERVATIONS[6])]
    assert kinds[0] == "snapshot"
    status = story.status
    assert (status.state, status.type, status.epochs) == ("Stable", "consumer", (1, 1))
    assert list(status.members) == ["c"]
    assert status.members["c"].assignment == [{"topic": "t", "partitions": [0, 1]}]


def test_the_watchers_reducer_holds_each_storys_state():
    """One state per group: the Watcher's reducer holds the story's own GroupStatus, which
    is the fold of what the Watcher emitted."""
    events: list[dict] = []
    watcher = Watcher(None, WatchSettings(groups=["g"]), emit=events.append,
                      clock=lambda: 0.0, source=ListedSource(OBSERVATIONS))
    assert asyncio.run(watcher.run()) == 0
    status = watcher.reducer.groups["g"]
    # the group created again as a consumer group: told in full, so the fold knows its type
    assert (status.type, status.epochs, sorted(status.members)) == ("consumer", (2, 2), ["c", "d"])
    assert status is watcher.stories["g"].status
    replayed = Reducer()
    for e in events:
        replayed.apply(e)
    assert fingerprint(replayed.groups["g"]) == fingerprint(status)
    assert watcher.summaries()[0]["rebalances"] == 5


def test_the_fold_holds_each_members_subscription_from_every_event_that_tells_it():
    """What reasons.explain compares (a subscription changed) is in the events: the
    snapshot's members, member_joined and the rebalance's per-member fields."""
    story = RebalanceStory("g", clock=lambda: 0.0)
    a = Member("a", client_id="c-a", host="h", subscription={"topics": ["t"]},
               assignment=[TopicPartitions("t", [0, 1])])
    story.feed(Seen("g", 1.0, "describe", classic("Stable", 1, a)))
    assert story.status.members["a"].subscription == ["t"]
    story.feed(Seen("g", 2.0, "describe", classic("PreparingRebalance", 1, a)))
    b = Member("b", instance_id="i-b", client_id="c-b", host="h2",
               subscription={"topics": ["u", "t"]}, assignment=[TopicPartitions("t", [1])])
    a2 = Member("a", client_id="c-a", host="h", subscription={"topics": ["t", "u"]},
                assignment=[TopicPartitions("t", [0])])
    events = story.feed(Seen("g", 3.0, "describe", classic("Stable", 2, a2, b)))
    joined = next(e for e in events if e.KIND == "member_joined")
    assert (joined.assignment, joined.subscription) == (
        [{"topic": "t", "partitions": [1]}], ["t", "u"])
    r = events[-1]
    assert r.subscriptions == {"a": ["t", "u"], "b": ["t", "u"]}
    assert r.identities["b"] == {"instance_id": "i-b", "client_id": "c-b", "host": "h2"}
    assert "subscription of a changed (t -> t,u)" in r.reason
    members = story.status.members
    assert (members["a"].subscription, members["b"].subscription) == (["t", "u"], ["t", "u"])
    assert (members["b"].instance_id, members["b"].host) == ("i-b", "h2")


def test_a_round_after_a_gap_is_told_against_the_group_the_gaps_snapshot_told():
    """Members that report no generation (librdkafka's eager assignors): a round begun and
    over during lost contact is not seen, and the look after the gap retells the group
    (snapshot) with its new assignments. The next round's changes are from what was told
    last, the snapshot: the story kept the assignments from before the gap and told
    partitions a member already held, as told, as `added` (issue 30's "told partitions a
    member already held as added")."""
    def g(state, *members):
        return classic(state, None, *members)

    story = RebalanceStory("g", clock=lambda: 0.0)
    story.feed(Seen("g", 1.0, "describe", g("Stable", m("a", ("t", [0, 1, 2])), m("b", ("t", [3])))))
    story.feed(ContactLost(None, 2.0, "describe", FAULT))
    # the group after the gap: the same members, another split (a round not seen)
    story.feed(Seen("g", 4.0, "describe", g("Stable", m("a", ("t", [0])), m("b", ("t", [1, 2, 3])))))
    story.feed(Seen("g", 5.0, "describe", g("CompletingRebalance", m("a", ("t", [0])),
                                            m("b", ("t", [1, 2, 3])))))
    events = story.feed(Seen("g", 6.0, "describe", g("Stable", m("b", ("t", [0, 1, 2, 3])))))
    b = next(e for e in events if e.KIND == "assignment" and e.member_id == "b")
    assert (b.added, b.revoked) == ([{"topic": "t", "partitions": [0]}], [])
    r = events[-1]
    assert (r.members_before, r.moved_partitions) == (["a", "b"], 1)
