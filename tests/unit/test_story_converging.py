"""KIP-848 members as they converge (observe/story/convergence.py): what was told of each
member is the group's fold (state/reducer.py), Convergence keeps only their progress."""
from __future__ import annotations

from groupctl.events import Snapshot, envelope
from groupctl.observe.reads.model import GroupDescription, Member, TopicPartitions
from groupctl.observe.state.reducer import GroupStatus
from groupctl.observe.story.convergence import Convergence
from groupctl.observe.story.story_data import snapshot_members

T1 = [{"topic": "t", "partitions": [1]}]


def cg(epoch, *members, state="Reconciling"):
    return GroupDescription("g", type="consumer", state=state, group_epoch=epoch,
                            assignment_epoch=epoch, members=list(members))


def mem(mid, current, target, epoch):
    return Member(mid, client_id=mid, member_epoch=epoch,
                  assignment=[TopicPartitions("t", current)],
                  target_assignment=[TopicPartitions("t", target)])


class Folded:
    """A Convergence over a group's fold: the first look told as a snapshot, then each
    look's events folded, as the story does."""

    def __init__(self):
        self.status, self.c = GroupStatus("g"), Convergence()

    def observe(self, desc, at):
        if not self.c.started:
            self.status.apply(envelope(Snapshot(desc.state, desc.type, None, desc.group_epoch,
                                                desc.assignment_epoch, None,
                                                snapshot_members(desc)),
                                       group="g", cluster=None, source="describe", at=at))
        events = self.c.observe(desc, at, dict(self.status.members), lambda: None)
        for e in events:
            self.status.apply(envelope(e, group="g", cluster=None, source="describe", at=at))
        return events


def test_convergence_first_look_mid_reconciliation_and_a_moving_target():
    c = Folded()
    assert c.observe(cg(6, mem("a", [0, 1], [0], 5)), 1.0) == []   # already away: start unseen
    (e,) = c.observe(cg(6, mem("a", [0], [0], 6)), 2.0)
    assert (e.revoked, e.reconciled_ms) == (T1, None)
    # the target moves while the member is still short of the first one: timed from the
    # first snapshot that showed it away
    assert c.observe(cg(7, mem("a", [0], [0, 1], 6)), 3.0)[0].reconciled_ms is None
    assert c.observe(cg(8, mem("a", [0], [0, 1, 2], 7)), 4.0)[0].target == [
        {"topic": "t", "partitions": [0, 1, 2]}]
    (e,) = c.observe(cg(8, mem("a", [0, 1, 2], [0, 1, 2], 8)), 5.5)
    assert (e.added, e.reconciled_ms) == ([{"topic": "t", "partitions": [1, 2]}], 2500)
    # an epoch bump that leaves the member's partitions alone is not told
    assert c.observe(cg(9, mem("a", [0, 1, 2], [0, 1, 2], 8)), 6.0) == []
    assert c.observe(cg(9, mem("a", [0, 1, 2], [0, 1, 2], 9)), 6.5) == []


def test_a_consumer_group_created_again_tells_its_members_joined_as_a_classic_one_does():
    """A group gone (Missing: the fold's Dead, no members) and there again is told from
    nothing: its first round's members all joined. Convergence kept the members it told
    before the group went, so the round said "member a joined" with no member_joined."""
    from groupctl.observe.sources.observations import Missing, Seen
    from groupctl.observe.story.story import RebalanceStory

    def member(mid, parts):
        return Member(mid, client_id=f"c-{mid}", host="h", member_epoch=3,
                      assignment=[TopicPartitions("t", parts)],
                      target_assignment=[TopicPartitions("t", parts)])

    story = RebalanceStory("g", clock=lambda: 0.0)
    story.feed(Seen("g", 1.0, "describe", cg(3, member("a", [0, 1]), state="Stable")))
    story.feed(Missing("g", 2.0, "describe"))
    events = story.feed(Seen("g", 3.0, "describe", cg(3, member("a", [0, 1]), state="Stable")))
    kinds = [e.KIND for e in events]
    assert kinds == ["snapshot", "state", "member_joined", "assignment", "rebalance"]
    assert events[-1].reason == "member a (client c-a, host h) joined"
    assert list(story.status.members) == ["a"] and story.status.changes == {"c-a": 1}


def test_a_share_group_created_again_under_way_at_its_first_look_tells_its_first_round():
    """The truth matrix (leave/share, the lab broker's looks): the group missing, then
    Stable at epochs (3, 2) with both members at epoch 2, then every member at epoch 3.
    A group created again is told from nothing: its round is epoch 3's, every member
    joined. Read from the fold (whose snapshot holds epoch 3) the round was no round, and
    a describe watch missed it."""
    from groupctl.observe.sources.observations import Missing, Seen
    from groupctl.observe.story.story import RebalanceStory

    def sg(group_epoch, assignment_epoch, epoch, parts):
        return GroupDescription("g", type="share", state="Stable", protocol="simple",
                                group_epoch=group_epoch, assignment_epoch=assignment_epoch,
                                members=[Member(m, client_id=m, member_epoch=epoch,
                                                assignment=[TopicPartitions("t", parts)])
                                         for m in ("a", "b")])

    s = RebalanceStory("g", clock=lambda: 0.0)
    s.feed(Missing("g", 79.6, "describe"))
    told = s.feed(Seen("g", 80.4, "describe", sg(3, 2, 2, [])))
    assert [e.KIND for e in told] == ["snapshot", "state"]
    told = s.feed(Seen("g", 85.4, "describe", sg(3, 3, 3, [0, 1, 2, 3])))
    assert [e.KIND for e in told if e.KIND != "assignment"] == [
        "epoch", "member_joined", "member_joined", "rebalance"]
    assert (told[-1].from_generation, told[-1].to_generation) == (None, 3)
    # begun after the look that found no group (79.6), under way at 80.4, over by 85.4: at
    # most 5800 ms, not at most the 5000 ms since the look before, as if begun after 80.4
    assert (told[-1].duration_min_ms, told[-1].duration_max_ms) == (0, 5800)
