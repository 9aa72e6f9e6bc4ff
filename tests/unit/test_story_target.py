"""One test of "member at its target" (events.holds_target, story_data.at_target over
descriptions) read the same by the story and by the reducer, metrics and live view over the
events; member_joined / member_left made in one place (story_data.joins_and_leaves)."""
from __future__ import annotations

import ast
from pathlib import Path

import groupctl
from groupctl.events import holds_target
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
