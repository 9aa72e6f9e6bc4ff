"""One contact tracker (sources/contact.py): a round that fails is lost contact, said once;
a round answered late (a describe held up for seconds through a broker restart, under
the poll deadline) is a gap the figures span, not a notice; fed through the describe
poller and the Watcher with an injected clock."""
from __future__ import annotations

import asyncio

from described_cluster import DescribedCluster

from groupctl.errors import UnreachableError
from groupctl.observe.reads.describe import DescribeResult
from groupctl.observe.reads.model import GroupDescription, Member, TopicPartitions
from groupctl.observe.sources.contact import Contact, Gap, Looks
from groupctl.observe.sources.observations import ContactLate, ContactLost, ContactRegained
from groupctl.observe.watch import Watcher, WatchSettings


def cm(mid, current, target, epoch):
    return Member(mid, client_id=f"c-{mid}", member_epoch=epoch, subscription={"topics": ["t"]},
                  assignment=[TopicPartitions("t", current)],
                  target_assignment=[TopicPartitions("t", target)])


def consumer(state, epoch, *members):
    return GroupDescription("g", type="consumer", state=state, group_epoch=epoch,
                            assignment_epoch=epoch, members=list(members))


def watch_rounds(rounds, times, monkeypatch, interval=1.0):
    """Each round asked and answered at the given (asked, answered) times."""
    DescribedCluster(rounds).install(monkeypatch)
    clock = iter(t for pair in times for t in pair)
    told, said = [], []
    watcher = Watcher(DescribedCluster(), WatchSettings(groups=["g"], interval=interval),
                      emit=told.append, notice=said.append, clock=lambda: next(clock))

    async def run():
        for _ in rounds:
            for o in await watcher.source.round():
                watcher.take(o)

    asyncio.run(run())
    return told, said


def test_a_late_answer_is_a_gap_the_unowned_figure_spans_and_no_notice(monkeypatch):
    """broker-restart/848 in the truth matrix: a describe round asked at 1.0 answered at
    7.0 (a restarting broker held it) showed t-1 unowned; the next look (8.1) showed it
    held. It may have been let go at any time after the last look that showed it held
    (0.1): its gap is at most 8.0 s, not the 1.1 s from the late look ("epoch 4 unowned
    1008 ms, clients' 3290 ms" before). Nothing is said on stderr."""
    told, said = watch_rounds([
        DescribeResult([consumer("Stable", 3, cm("a", [0, 1], [0, 1], 3))]),
        DescribeResult([consumer("Reconciling", 4, cm("a", [0], [0], 4),
                                 cm("b", [], [1], 4))]),
        DescribeResult([consumer("Stable", 4, cm("a", [0], [0], 4), cm("b", [1], [1], 4))]),
    ], [(0.0, 0.1), (1.0, 7.0), (8.0, 8.1)], monkeypatch)
    r = [e for e in told if e["event"] == "rebalance"]
    assert len(r) == 1 and said == []
    assert r[0]["unowned_basis"] == "upper_bound"
    assert r[0]["unowned_partitions_max_ms"] == 8000 == r[0]["unowned_partition_ms"]


def test_a_partition_that_changed_hands_across_a_late_look_is_bounded_by_the_wait(monkeypatch):
    """broker-restart/848 in the full matrix: t-1 went from a to b while a round hung
    (asked 1.0, answered 6.0), so no look showed it unowned: 0 ms measured against the
    clients' 4939 ms before. It may have been unowned from the last look that showed a
    holding it (0.1) to the late look: at most 5.9 s."""
    told, said = watch_rounds([
        DescribeResult([consumer("Stable", 3, cm("a", [0, 1], [0, 1], 3))]),
        DescribeResult([consumer("Stable", 4, cm("a", [0], [0], 4), cm("b", [1], [1], 4))]),
    ], [(0.0, 0.1), (1.0, 6.0)], monkeypatch)
    r = [e for e in told if e["event"] == "rebalance"]
    assert len(r) == 1 and said == []
    assert (r[0]["unowned_basis"], r[0]["unowned_partitions_max_ms"]) == ("upper_bound", 5900)


def test_a_gap_opened_at_a_look_after_a_fault_is_no_measured_figure_of_the_next_round():
    """broker-restart/coop in the full matrix: b revoked t-1 (a cooperative generation)
    while the broker restarted; the first look after it (contact lost, or a late round)
    showed that generation settled with t-1 unowned, and the next generation gave it out.
    The gap's start was not seen: the next round's figure was "3008 ms measured" against
    the clients' 7865 ms; it is now a lower bound (lost) or an upper bound (late)."""
    from groupctl.observe.sources.observations import Seen
    from groupctl.observe.story.story import RebalanceStory

    def km(mid, *parts):
        return Member(mid, client_id=f"c-{mid}", subscription={"topics": ["t"]},
                      assignment=[TopicPartitions("t", list(parts))])

    def coop(state, gen, *members):
        return GroupDescription("g", type="classic", state=state, protocol="cooperative-sticky",
                                generation=gen, members=list(members))

    down = UnreachableError("x")
    for fault, basis, most in [(ContactLost(None, 1.0, "describe", down), "lower_bound", 3000),
                               (ContactLate(None, 1.0, "describe", 0.5), "upper_bound", 9000)]:
        story = RebalanceStory("g", clock=lambda: 0.0)
        story.feed(Seen("g", 0.0, "describe", coop("Stable", 2, km("a", 0), km("b", 1))))
        story.feed(fault)
        story.feed(Seen("g", 6.0, "describe", coop("Stable", 3, km("a", 0), km("b"), km("c"))))
        story.feed(Seen("g", 8.5, "describe", coop("PreparingRebalance", 3, km("a"), km("b"),
                                                   km("c"))))
        r = [e for e in story.feed(Seen("g", 9.0, "describe", coop(
            "Stable", 4, km("a", 0), km("b"), km("c", 1)))) if e.KIND == "rebalance"]
        assert (r[-1].to_generation, r[-1].unowned_basis,
                r[-1].unowned_partitions_max_ms) == (4, basis, most), fault


def test_a_round_answered_within_its_interval_keeps_the_measured_figure(monkeypatch):
    told, said = watch_rounds([
        DescribeResult([consumer("Stable", 3, cm("a", [0, 1], [0, 1], 3))]),
        DescribeResult([consumer("Reconciling", 4, cm("a", [0], [0], 4),
                                 cm("b", [], [1], 4))]),
        DescribeResult([consumer("Stable", 4, cm("a", [0], [0], 4), cm("b", [1], [1], 4))]),
    ], [(0.0, 0.1), (1.0, 1.3), (2.0, 2.1)], monkeypatch)
    r = [e for e in told if e["event"] == "rebalance"]
    assert r[0]["unowned_basis"] == "measured" and r[0]["unowned_partitions_max_ms"] == 800


def test_the_contact_tracker_says_lost_once_regained_once_and_late_apart():
    times = iter([5.0])
    contact = Contact("describe", lambda: next(times), late_after=1.0)
    down = UnreachableError("down")
    assert contact.answered(0.0, 0.5) == []
    lost = contact.failed(down)
    assert [type(o) for o in lost] == [ContactLost] and lost[0].at == 5.0
    assert contact.failed(down) == []                       # once per streak
    back = contact.answered(6.0, 9.0)                       # late, but regained says it
    assert [type(o) for o in back] == [ContactRegained] and back[0].lost_at == 5.0
    late = contact.answered(10.0, 12.5)
    assert [type(o) for o in late] == [ContactLate] and late[0].asked == 10.0
    assert late[0].text() is None


def test_a_groups_looks_name_the_gap_before_each():
    looks = Looks()
    looks.late()                        # nothing seen yet: the first look is the first
    assert looks.look(1.0) == Gap.FIRST and looks.look(2.0) == Gap.NONE
    looks.late()
    assert looks.look(9.0) == Gap.LATE and looks.look(10.0) == Gap.NONE
    looks.late()
    looks.lost()                        # lost outweighs late
    assert looks.blind and looks.look(20.0) == Gap.LOST and looks.last == 20.0
    looks.lost()
    assert looks.look(None) == Gap.LOST and looks.last == 20.0   # found missing


def _classic(state, *members):
    return GroupDescription("g", type="classic", state=state, protocol_type="consumer",
                            protocol="range", members=list(members))


def _m(mid, *parts):
    return Member(mid, client_id=f"c-{mid}", host="h",
                  assignment=[TopicPartitions("t", list(parts))] if parts else None)


def test_a_round_the_restart_undid_across_a_late_look_is_no_rebalance():
    """broker-restart/eager in the full matrix ("gen 2 told 2x"): a member's join began a
    round (PreparingRebalance seen at 2.0), the broker stopped 60 ms later and came back
    with the group loaded from its last stored generation; the describe asked at 2.5 was
    held through the restart and answered at 4.1 (late, no lost contact), showing the
    very members and assignments of before the round. The broker logged no Stabilized
    line: no generation came of the round, as after a lost contact."""
    from groupctl.observe.sources.observations import Seen
    from groupctl.observe.story.story import RebalanceStory

    story = RebalanceStory("g", clock=lambda: 0.0)
    before = (_m("a", 0, 1), _m("b", 2, 3))
    story.feed(Seen("g", 1.0, "describe", _classic("Stable", *before)))
    story.feed(Seen("g", 2.0, "describe", _classic("PreparingRebalance", *before)))
    story.feed(ContactLate(None, 4.1, "describe", 2.5))
    told = story.feed(Seen("g", 4.1, "describe", _classic("Stable", *before)))
    assert [e.KIND for e in told] == ["state"]   # Stable again, no round
    # the same look with no gap before it is a round that moved nothing, told as one
    story.feed(Seen("g", 5.0, "describe", _classic("PreparingRebalance", *before)))
    told = story.feed(Seen("g", 5.5, "describe", _classic("Stable", *before)))
    assert [e.KIND for e in told].count("rebalance") == 1
