"""One test of "member at its target" (state.holdings.holds_target, story_data.at_target over
descriptions) read the same by the story and by the reducer, metrics and live view over the
events; member_joined / member_left made in one place (story_data.joins_and_leaves)."""
from __future__ import annotations

import ast
from pathlib import Path

import groupctl
from groupctl.observe.state.holdings import holds_target
from groupctl.observe.reads.model import GroupDescription, Member, TopicPartitions
from groupctl.observe.state.reducer import MemberStatus
from groupctl.observe.story.story_data import at_target, joins_and_leaves, snapshot_members


def cm(mid, current, target, epoch):
    return Member(mid, client_id=f"c-{mid}", member_epoch=epoch,
                  assignment=[TopicPartitions("t", current)],
                  target_assignment=None if target is None else [TopicPartitions("t", target)])


def test_the_story_and_the_reducer_judge_a_member_at_its_target_alike():
    members = [cm("held", [0, 1], [0, 1], 5), cm("short", [0], [0, 1], 5),
               cm("over", [0, 1, 2], [0, 1], 4), cm("unacked", [0, 1], [0, 1], 4),
               cm("no-target", [3], None, 5), cm("nothing", [], [], 5)]
    desc = GroupDescription("g", type="consumer", state="Reconciling", group_epoch=5,
                            assignment_epoch=5, members=members)
    told = {m["member_id"]: m for m in snapshot_members(desc)}   # what the events carry
    for m in members:
        e = told[m.member_id]
        status = MemberStatus(m.member_id, assignment=e["assignment"],
                              target=e["target_assignment"],
                              has_target=e["target_assignment"] is not None)
        assert at_target(m, desc) == (not status.behind_target), m.member_id
    # acknowledged: the member epoch caught up too (convergence's reconciliation time)
    assert at_target(members[3], desc) and not at_target(members[3], desc, acknowledged=True)
    assert holds_target({"t": frozenset({1, 0})}, [{"topic": "t", "partitions": [0, 1]}])
    assert holds_target(frozenset({("active", "0", 1)}), None)


def test_share_and_streams_members_at_their_target():
    share = GroupDescription("g", type="share", state="Stable", group_epoch=3,
                             assignment_epoch=3, members=[cm("a", [0], None, 3),
                                                          cm("b", [1], None, 2)])
    assert [at_target(m, share) for m in share.members] == [True, False]
    tasks = {"active": [{"subtopology_id": "0", "partitions": [0]}]}
    s = Member("s", member_epoch=2, extra={"tasks": tasks, "target_tasks": tasks})
    other = Member("o", member_epoch=2, extra={"tasks": {}, "target_tasks": tasks})
    streams = GroupDescription("g", type="streams", state="Stable", group_epoch=2,
                               assignment_epoch=2, members=[s, other])
    assert [at_target(m, streams) for m in streams.members] == [True, False]


def test_joins_and_leaves_by_member_id():
    before = {"a": cm("a", [0], [0], 1), "b": cm("b", [1], [1], 1)}
    after = {"b": before["b"], "c": cm("c", [0], [0], 2)}
    joined, left = joins_and_leaves(before, after)
    assert [(e.KIND, e.member_id, e.client_id) for e in joined.values()] == [
        ("member_joined", "c", "c-c")]
    assert [(e.KIND, e.member_id) for e in left] == [("member_left", "a")]


def test_member_joined_and_left_are_made_in_one_place():
    """Every MemberJoined( / MemberLeft( call in groupctl is in joins_and_leaves."""
    places = []
    for path in Path(groupctl.__file__).parent.rglob("*.py"):
        tree = ast.parse(path.read_text())
        for fn in ast.walk(tree):
            if not isinstance(fn, ast.FunctionDef):
                continue
            for node in ast.walk(fn):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                        node.func.id in ("MemberJoined", "MemberLeft"):
                    places.append((path.name, fn.name))
    assert sorted(set(places)) == [("story_data.py", "joins_and_leaves")]


# ---- one owner: the story decides, the reducer folds what it told ------------------------

def test_the_reducer_folded_from_the_story_shows_each_settled_look_as_it_was():
    """The story owns each group's observed state (the last look it diffs); the reducer's
    GroupStatus is what the story told, folded. At every settled look they agree on the
    group's state, type, generation or epochs and members, with no other input: a
    fault, a gap or a late round in between included."""
    from groupctl.errors import UnreachableError
    from groupctl.events import envelope
    from groupctl.observe.sources.observations import ContactLate, ContactLost, Seen
    from groupctl.observe.state.reducer import GroupStatus
    from groupctl.observe.story.story import RebalanceStory

    def km(mid, *parts):
        return Member(mid, client_id=f"c-{mid}", subscription={"topics": ["t"]},
                      assignment=[TopicPartitions("t", list(parts))])

    def classic(state, gen, *members):
        return GroupDescription("g", type="classic", state=state, protocol="range",
                                generation=gen, members=list(members))

    def consumer(state, epoch, *members):
        return GroupDescription("g", type="consumer", state=state, group_epoch=epoch,
                                assignment_epoch=epoch, members=list(members))

    lost = ContactLost(None, 0, "describe", UnreachableError("x"))
    late = ContactLate(None, 0, "describe", 0.0)
    scripts = [
        [classic("Stable", 1, km("a", 0, 1)), classic("PreparingRebalance", 1, km("a")),
         classic("Stable", 2, km("a", 0), km("b", 1)), lost,
         classic("Stable", 4, km("b", 0, 1)), late, classic("Stable", 5, km("b", 1), km("c", 0))],
        [consumer("Stable", 3, cm("a", [0, 1], [0, 1], 3)),
         consumer("Reconciling", 4, cm("a", [0, 1], [0], 3), cm("b", [], [1], 4)), late,
         consumer("Stable", 4, cm("a", [0], [0], 4), cm("b", [1], [1], 4)), lost,
         consumer("Stable", 6, cm("b", [0, 1], [0, 1], 6))],
    ]
    for script in scripts:
        story, status = RebalanceStory("g", clock=lambda: 0.0), GroupStatus("g")
        for at, item in enumerate(script):
            o = item if not isinstance(item, GroupDescription) else Seen("g", float(at),
                                                                         "describe", item)
            for e in story.feed(o):
                status.apply(envelope(e, group="g", cluster=None, source="describe", at=at))
            if isinstance(item, GroupDescription) and item.state == "Stable":
                assert (status.state, status.type) == (item.state, item.type), at
                assert (status.generation if item.group_epoch is None else status.epochs) == (
                    item.generation if item.group_epoch is None
                    else (item.group_epoch, item.assignment_epoch)), at
                assert sorted(status.members) == sorted(m.member_id for m in item.members), at
                assert {mid: m.behind_target for mid, m in status.members.items()} == {
                    m.member_id: not at_target(m, item) for m in item.members}, at
