"""observe/story/story_stale.py through the story: a new coordinator's first answers describe the
group's past (its reads are at the new leader's high watermark). The sequences are the
ones `watch` saw in tests/integration/test_watch_faults.py's coordinator failover (issue
21), paired with the three nodes' logs: no generation was logged between the looks."""
from __future__ import annotations

from groupctl.observe.reads.model import GroupDescription, Member, TopicPartitions
from groupctl.observe.sources.observations import Missing, Seen
from groupctl.observe.story.story import RebalanceStory
from groupctl.observe.story.round import MOVES, Move, RoundState
from groupctl.observe.story.story_stale import STALE_S


def m(mid, *parts):
    return Member(mid, client_id=f"c-{mid}", host="h", subscription={"topics": ["t"]},
                  assignment=[TopicPartitions("t", list(parts))])


def classic(state, node, *members):
    return GroupDescription("g", type="classic", state=state, protocol="range",
                            coordinator=None if node is None else {"id": node, "host": "h",
                                                                  "port": 9092},
                            members=list(members))


def feed(story, looks):
    """[(at, desc or None for Missing)] -> every event, as (kind, state or members_after)."""
    out = []
    for at, desc in looks:
        o = Missing("g", at, "describe") if desc is None else Seen("g", at, "describe", desc)
        for e in story.feed(o):
            kind = str(e.KIND)
            out.append((kind, getattr(e, "state", None) if kind == "state"
                        else getattr(e, "members_after", None)))
    return out


def rebalances(events):
    return [after for kind, after in events if kind == "rebalance"]


def rebalance_events(story, looks):
    out = []
    for at, desc in looks:
        o = Missing("g", at, "describe") if desc is None else Seen("g", at, "describe", desc)
        out += [e for e in story.feed(o) if str(e.KIND) == "rebalance"]
    return out


def test_an_empty_look_from_the_new_coordinator_then_the_group_as_before_is_no_rebalance():
    """g-...-97591015: node 1 (coordinator) stopped 0.36 s after generation 1; node 3
    "Loaded classic group G with 1 members" and described it Empty with no members for
    0.9 s, then Stable with a; b joined at node 3 (generation 2, its Stabilized line)."""
    story = RebalanceStory("g", clock=lambda: 0.0)
    a = m("a", 0, 1, 2)
    looks = [(29.8, classic("Stable", 1, a))]
    looks += [(30.1 + 0.2 * i, classic("Empty", 3)) for i in range(5)]
    looks += [(31.0, classic("Stable", 3, a)), (31.8, classic("PreparingRebalance", 3, a)),
              (32.6, classic("Stable", 3, m("a", 0, 1), m("b", 2)))]
    events = feed(story, looks)
    assert [s for k, s in events if k == "state"] == [
        "Stable", "Empty", "Stable", "PreparingRebalance", "Stable"]   # as answered
    assert rebalances(events) == [["a", "b"]]
    assert [k for k, _ in events].count("member_joined") == 1   # b only


def test_a_missing_group_then_the_same_members_again_is_no_rebalance():
    """g-...-468921bf and -d1bfc160: the old coordinator unloaded the group, the new one
    had loaded it, yet answered GROUP_ID_NOT_FOUND (Missing) for 0.9 s, then Stable
    with the very member id of before."""
    story = RebalanceStory("g", clock=lambda: 0.0)
    a = m("a", 0, 1, 2)
    looks = [(56.5, classic("Stable", 3, a))]
    looks += [(56.8 + 0.2 * i, None) for i in range(4)]
    looks += [(57.7, classic("Stable", 1, a)), (58.1, classic("PreparingRebalance", 1, a)),
              (58.3, classic("Stable", 1, m("a", 0, 1), m("b", 2)))]
    events = feed(story, looks)
    assert [s for k, s in events if k == "state"] == [
        "Stable", "Dead", "Stable", "PreparingRebalance", "Stable"]
    assert rebalances(events) == [["a", "b"]]
    assert ("member_joined", None) in events and \
        [k for k, _ in events].count("member_joined") == 1


def test_a_round_begun_while_the_group_looked_missing_is_told_from_the_members_before():
    story = RebalanceStory("g", clock=lambda: 0.0)
    a = m("a", 0, 1, 2)
    [r] = rebalance_events(story, [(1.0, classic("Stable", 3, a)), (1.2, None),
                                   (1.4, classic("PreparingRebalance", 1, a, m("b"))),
                                   (2.0, classic("Stable", 1, m("a", 0, 1), m("b", 2)))])
    assert (r.members_before, r.members_after) == (["a"], ["a", "b"])
    assert r.moved_partitions == 1 and (r.duration_min_ms, r.duration_max_ms) == (0, 800)


def test_a_real_change_across_the_move_is_told_once_the_next_look_proves_it():
    """a left for real while the coordinator moved (no member id of before comes back):
    the held round is told, at its own time, before the next one."""
    story = RebalanceStory("g", clock=lambda: 0.0)
    left, joined = rebalance_events(story, [
        (1.0, classic("Stable", 1, m("a", 0, 1))), (1.2, classic("Empty", 3)),
        (1.4, classic("Empty", 3)), (2.0, classic("Stable", 3, m("c", 0, 1)))])
    assert (left.members_before, left.members_after) == (["a"], [])
    assert left.ended.endswith(":01.200Z")   # the held look's own time
    assert (joined.members_before, joined.members_after) == ([], ["c"])


def test_a_held_look_that_stays_is_told_after_stale_s():
    """b left for real while the coordinator moved; the looks stay alike: the round is
    told once the look has stayed STALE_S (not before), at its own time."""
    story = RebalanceStory("g", clock=lambda: 0.0)
    looks = [(1.0, classic("Stable", 1, m("a", 0), m("b", 1)))]
    alike = [(1.2 + 0.5 * i, classic("Stable", 3, m("a", 0, 1)))
             for i in range(int(STALE_S * 2) + 2)]
    told_at = []
    for at, desc in looks + alike:
        if rebalance_events(story, [(at, desc)]):
            told_at.append(at)
    assert told_at == [1.2 + 0.5 * int(STALE_S * 2)]   # the first look STALE_S after 1.2


def test_a_group_deleted_and_created_anew_is_told_from_nothing():
    story = RebalanceStory("g", clock=lambda: 0.0)
    events = feed(story, [(1.0, classic("Stable", 1, m("a", 0))), (2.0, None),
                          (3.0, classic("Stable", 3, m("x", 0)))])
    assert rebalances(events) == [["x"]]


def test_without_a_coordinator_nothing_is_held():
    """The records source (no coordinator in its descriptions) and a coordinator that
    did not move: an Empty look is a rebalance at once."""
    for nodes in ((None, None), (1, 1)):
        story = RebalanceStory("g", clock=lambda: 0.0)
        events = feed(story, [(1.0, classic("Stable", nodes[0], m("a", 0))),
                              (2.0, classic("Empty", nodes[1]))])
        assert rebalances(events) == [[]]


def test_a_round_begun_while_the_group_looked_empty_is_told_from_the_members_before():
    """b joined at the new coordinator during its stale window: the next look shows a
    again (in the round): the held Empty look was the past; one rebalance, a -> a, b."""
    story = RebalanceStory("g", clock=lambda: 0.0)
    a = m("a", 0, 1, 2)
    [r] = rebalance_events(story, [(1.0, classic("Stable", 1, a)), (1.2, classic("Empty", 3)),
                                   (1.4, classic("PreparingRebalance", 3, a, m("b"))),
                                   (2.0, classic("Stable", 3, m("a", 0, 1), m("b", 2)))])
    assert (r.members_before, r.members_after) == (["a"], ["a", "b"])
    assert (r.duration_min_ms, r.duration_max_ms) == (0, 800) and r.moved_partitions == 1


def test_the_held_look_is_the_rounds_held_state_and_its_verdict_a_move_with_its_reason():
    """The failover's Empty look is the round's HELD state (round.MOVES); the look that
    shows a again drops it (DROP, with its reason); the time up settles it (SETTLE_HELD)."""
    story = RebalanceStory("g", clock=lambda: 0.0)
    a = m("a", 0, 1, 2)
    feed(story, [(1.0, classic("Stable", 1, a)), (1.2, classic("Empty", 3))])
    assert (story._round.state, story._round.reason) == (
        RoundState.HELD, MOVES[(RoundState.SETTLED, Move.HOLD)][1])
    feed(story, [(1.4, classic("Stable", 3, a))])
    assert (story._round.state, story._round.reason) == (
        RoundState.SETTLED, MOVES[(RoundState.HELD, Move.DROP)][1])
    feed(story, [(2.0, classic("Stable", 1, a)), (2.2, classic("Empty", 3)),
                 (2.2 + STALE_S, classic("Empty", 3))])
    assert (story._round.state, story._round.reason) == (
        RoundState.SETTLED, MOVES[(RoundState.HELD, Move.SETTLE_HELD)][1])
