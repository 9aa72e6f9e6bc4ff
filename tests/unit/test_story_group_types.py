"""The one rebalance story (observe/story/story.py) on share groups, streams groups and groups
converting between classic and consumer: the events it tells from scripted snapshots, and
how the watch renderer shows them. The broker's side of each is proven in
tests/integration/test_watch_group_types.py."""
from __future__ import annotations

from described_cluster import DescribedCluster
from rich.console import Console
from story_support import classic, consumer, look
from groupctl.events import envelope
from groupctl.observe.state.holdings import moved_partitions
from groupctl.observe.reads.model import GroupDescription, Member, TopicPartitions
from groupctl.observe.story.story import RebalanceStory
from groupctl.render.watch import WatchModel, plain_line, render_model


def kinds(events):
    return [e.KIND for e in events]


# ---- share groups -----------------------------------------------------------------------------

def share_member(mid, epoch, *parts):
    return Member(mid, client_id=f"c-{mid}", host="h", member_epoch=epoch,
                  subscription={"topics": ["t"]}, member_protocol="share",
                  assignment=[TopicPartitions("t", list(parts))] if parts else [])


def share(state, epoch, assignment_epoch, *members):
    return GroupDescription("g", type="share", state=state, protocol="simple",
                            group_epoch=epoch, assignment_epoch=assignment_epoch,
                            members=list(members))


def test_share_join_waits_for_every_member_at_the_group_epoch():
    story = RebalanceStory("g", clock=lambda: 1.0)
    assert kinds(look(story, share("Stable", 2, 2, share_member("a", 2, 0, 1)), at=1.0)) == ["snapshot", "state"]
    # b joined: epoch 3; a still holds both partitions at member epoch 2
    lagging = look(story, share("Stable", 3, 3, share_member("a", 2, 0, 1),
                                  share_member("b", 3, 0)), at=2.0)
    assert kinds(lagging) == ["epoch", "assignment"]
    assert (lagging[0].group_epoch, lagging[0].assignment_epoch) == (3, 3)
    # a holds the group up (issue 19): told, so the live view marks it
    assert (lagging[1].member_id, lagging[1].behind, lagging[1].added, lagging[1].revoked) == (
        "a", True, [], [])
    done = look(story, share("Stable", 3, 3, share_member("a", 3, 1),
                               share_member("b", 3, 0)), at=3.0)
    assert kinds(done) == ["assignment", "member_joined", "assignment", "assignment", "rebalance"]
    caught_up, joined, asg_a, asg_b, rebalance = done
    assert (caught_up.member_id, caught_up.behind) == ("a", False)
    assert caught_up.revoked == [{"topic": "t", "partitions": [0]}]
    assert (rebalance.slowest_member, rebalance.slowest_member_ms) == ("a", 1000)
    assert joined.member_id == "b"
    assert (asg_a.member_id, asg_a.assigned, asg_a.revoked) == (
        "a", [{"topic": "t", "partitions": [1]}], [{"topic": "t", "partitions": [0]}])
    assert (asg_b.member_id, asg_b.added) == ("b", [{"topic": "t", "partitions": [0]}])
    assert (rebalance.from_generation, rebalance.to_generation) == (2, 3)
    assert rebalance.duration_ms == 1000 and rebalance.moved_partitions == 1
    assert rebalance.reason == "member b (client c-b, host h) joined"


def test_share_partition_held_by_several_members():
    story = RebalanceStory("g", clock=lambda: 1.0)
    look(story, share("Stable", 2, 2, share_member("a", 2, 0)))
    events = look(story, share("Stable", 3, 3, share_member("a", 3, 0),
                                 share_member("b", 3, 0)), at=2.0)
    rebalance = events[-1]
    # t:0 was held by {a}, is held by {a, b}: one partition with other holders
    assert rebalance.moved_partitions == 1
    assert rebalance.assignments == {"a": [{"topic": "t", "partitions": [0]}],
                                     "b": [{"topic": "t", "partitions": [0]}]}


def test_moved_partitions_counts_changed_holder_sets():
    assert moved_partitions({"a": {"t": {0}}}, {"a": {"t": {0}}, "b": {"t": {0}}}) == 1
    assert moved_partitions({"a": {"t": {0}}, "b": {"t": {0}}}, {"b": {"t": {0}}}) == 1
    assert moved_partitions({"a": {"t": {0, 1}}}, {"a": {"t": {1}}, "b": {"t": {0}}}) == 1


def test_last_member_leaving_is_told_although_the_empty_group_never_converges():
    """Seen on the broker for consumer, share and streams groups: the last leave bumps the
    group epoch, and the assignment epoch stays behind while the group is Empty."""
    story = RebalanceStory("g", clock=lambda: 1.0)
    look(story, share("Stable", 5, 5, share_member("a", 5, 0)))
    events = look(story, share("Empty", 6, 5), at=2.0)
    assert kinds(events) == ["state", "epoch", "member_left", "rebalance"]
    assert (events[-1].from_generation, events[-1].to_generation) == (5, 6)
    assert events[-1].members_after == []
    assert look(story, share("Empty", 6, 5), at=3.0) == []


# ---- streams groups ---------------------------------------------------------------------------

def tasks(active=(), standby=(), warmup=()):
    def kind(ts):
        return [{"subtopology_id": s, "partitions": list(ps)} for s, ps in ts]
    return {"active": kind(active), "standby": kind(standby), "warmup": kind(warmup)}


def streams_member(mid, current, target=None, parts=()):
    return Member(mid, client_id=f"c-{mid}", host="h", member_protocol="streams",
                  assignment=[TopicPartitions("in", list(parts))] if parts else [],
                  target_assignment=[TopicPartitions("in", list(parts))] if parts else [],
                  extra={"tasks": current, "target_tasks": target or current})


def streams(state, epoch, assignment_epoch, *members):
    return GroupDescription("app", type="streams", state=state, group_epoch=epoch,
                            assignment_epoch=assignment_epoch, members=list(members))


def test_streams_tasks_move_when_an_instance_goes():
    story = RebalanceStory("app", clock=lambda: 1.0)
    look(story, streams("Stable", 3, 3,
                          streams_member("a", tasks([("0", [0, 2]), ("1", [0, 2])]), parts=[0, 2]),
                          streams_member("b", tasks([("0", [1, 3]), ("1", [1, 3])]), parts=[1, 3])))
    all_tasks = tasks([("0", [0, 1, 2, 3]), ("1", [0, 1, 2, 3])])
    # b is gone; a's target has every task, its current ones not yet: not converged
    moving = look(story, streams("Reconciling", 4, 4, streams_member(
        "a", tasks([("0", [0, 2]), ("1", [0, 2])]), all_tasks, parts=[0, 2])), at=2.0)
    assert kinds(moving) == ["state", "epoch"]
    done = look(story, streams("Stable", 4, 4, streams_member("a", all_tasks,
                                                                parts=[0, 1, 2, 3])), at=3.0)
    assert kinds(done) == ["state", "member_left", "assignment", "rebalance"]
    asg, rebalance = done[2], done[3]
    assert asg.tasks == all_tasks
    assert asg.tasks_added == tasks([("0", [1, 3]), ("1", [1, 3])])
    assert asg.tasks_revoked == tasks()
    assert asg.added == [{"topic": "in", "partitions": [1, 3]}]
    assert rebalance.tasks == {"a": all_tasks}
    assert rebalance.moved_partitions == 2
    record = envelope(rebalance, group="app", cluster=None, source="describe")
    assert record["event"] == "rebalance" and record["tasks"] == {"a": all_tasks}


def test_streams_standby_tasks_count_for_convergence_and_assignment_events():
    story = RebalanceStory("app", clock=lambda: 1.0)
    active = tasks([("0", [0])])
    look(story, streams("Stable", 3, 3, streams_member("a", active, parts=[0])))
    with_standby = tasks([("0", [0])], standby=[("0", [1])])
    assert kinds(look(story, streams("Reconciling", 4, 4, streams_member(
        "a", active, with_standby, parts=[0])), at=2.0)) == ["state", "epoch"]
    done = look(story, streams("Stable", 4, 4, streams_member("a", with_standby, parts=[0])),
                         at=3.0)
    assert kinds(done) == ["state", "assignment", "rebalance"]
    assert done[1].tasks_added == tasks(standby=[("0", [1])])
    assert done[1].added == []


# ---- classic <-> consumer conversion ----------------------------------------------------------


def cm(mid, protocol, *parts):
    return Member(mid, client_id=f"c-{mid}", host="h", member_protocol=protocol,
                  subscription={"topics": ["t"]},
                  assignment=[TopicPartitions("t", list(parts))],
                  target_assignment=None if protocol == "classic"
                  else [TopicPartitions("t", list(parts))])


def test_conversion_both_ways_is_told_as_type_changed():
    story = RebalanceStory("g", clock=lambda: 1.0)
    assert kinds(look(story, classic("Stable", 1, cm("old", "classic", 0, 1)))) == ["snapshot", "state"]
    up = look(story, consumer("Stable", 2, 2, cm("old", "classic", 0),
                                cm("new", "consumer", 1)), at=2.0)
    assert kinds(up)[:2] == ["type_changed", "epoch"]
    assert (up[0].type, up[0].previous) == ("consumer", "classic")
    assert (up[1].group_epoch, up[1].assignment_epoch) == (2, 2)
    assert kinds(up)[2:] == ["member_joined", "assignment", "assignment", "rebalance"]
    assert (up[-1].from_generation, up[-1].to_generation) == (1, 2)
    down = look(story, classic("PreparingRebalance", None, cm("old", "classic", 0)), at=3.0)
    assert kinds(down) == ["type_changed", "state"]
    assert (down[0].type, down[0].previous) == ("classic", "consumer")
    back = look(story, classic("Stable", 3, cm("old", "classic", 0, 1)), at=4.0)
    assert kinds(back) == ["state", "generation", "member_left", "assignment", "rebalance"]
    assert envelope(up[0], group="g", cluster="c", source="describe")["previous"] == "classic"


def test_a_group_created_again_with_another_type_is_not_a_conversion(monkeypatch):
    import asyncio

    from groupctl.errors import NotFoundError
    from groupctl.observe.reads.describe import DescribeResult
    from groupctl.observe.watch import Watcher, WatchSettings

    answers = [DescribeResult(groups=[classic("Stable", 1, cm("a", "classic", 0))]),
               DescribeResult(failures={"g": NotFoundError("gone")}),
               DescribeResult(groups=[consumer("Stable", 1, 1, cm("b", "consumer", 0))])]
    cluster = DescribedCluster(answers).install(monkeypatch)
    events = []
    watcher = Watcher(cluster, WatchSettings(groups=["g"]), emit=events.append,
                      clock=lambda: 1.0)
    for _ in range(3):   # the describe poller's rounds, told one by one
        for o in asyncio.run(watcher.source.round()):
            watcher.take(o)
    assert "type_changed" not in [e["event"] for e in events]


# ---- the renderer -----------------------------------------------------------------------------

def test_plain_lines_and_live_model_for_types_and_tasks():
    ts = "2026-11-23T12:00:00.000Z"
    base = {"v": 1, "ts": ts, "source": "describe", "cluster": None, "group": "g"}
    assert plain_line({**base, "event": "type_changed", "type": "consumer",
                       "previous": "classic"}).endswith("g group type classic -> consumer")
    t = tasks([("0", [0, 1])], standby=[("1", [2])])
    line = plain_line({**base, "event": "assignment", "member_id": "a", "generation": 4,
                       "assigned": [], "added": [], "revoked": [], "tasks": t})
    assert line.endswith("tasks ACTIVE: 0:[0,1] STANDBY: 1:[2]")
    model = WatchModel()
    model.apply({**base, "event": "epoch", "group_epoch": 2, "assignment_epoch": 2})
    model.apply({**base, "event": "assignment", "member_id": "a", "generation": 4,
                 "assigned": [], "added": [], "revoked": [], "tasks": t})
    assert model.tasks == {"a": t}
    model.apply({**base, "event": "type_changed", "type": "classic", "previous": "consumer"})
    assert model.type == "classic" and model.epochs is None
    model.apply({**base, "event": "member_left", "member_id": "a"})
    assert model.tasks == {}


# ---- who holds a share or streams group up (issue 19) -----------------------------------------

def _wrap(events, at):
    return [envelope(e, group="g", cluster=None, source="describe", at=at) for e in events]


def test_share_and_streams_members_holding_the_group_up_are_marked_in_the_live_view():
    """A share member is behind until its member epoch reaches the group epoch; a streams
    member until its member epoch reaches the assignment epoch (its tasks pending
    revocation are not listed once it was told). Each is told as it begins and stops
    holding the group up; the live view's reconciliation column marks it meanwhile."""
    story, model = RebalanceStory("g", clock=lambda: 1.0), WatchModel()
    for e in _wrap(look(story, share("Stable", 2, 2, share_member("a", 2, 0, 1)), at=1.0), 1.0):
        model.apply(e)
    for e in _wrap(look(story, share("Stable", 3, 3, share_member("a", 2, 0, 1),
                                     share_member("b", 3, 0)), at=2.0), 2.0):
        model.apply(e)
    assert set(model.status.behind) == {"a"}
    assert model.reconciliation("a") == "reconciling, holding up"
    assert model.reconciliation("b") == "-"
    console = Console(width=200, color_system=None, record=True)
    console.print(render_model(model, 2.0))
    shown = console.export_text()
    assert "reconciled in" in shown and "reconciling, holding up" in shown
    for e in _wrap(look(story, share("Stable", 3, 3, share_member("a", 3, 1),
                                     share_member("b", 3, 0)), at=3.0), 3.0):
        model.apply(e)
    assert model.status.behind == {} and model.reconciliation("a") == "-"

    story, model = RebalanceStory("app", clock=lambda: 1.0), WatchModel()
    one = tasks([("0", [0, 1])])
    a = streams_member("a", one, parts=[0, 1])
    look(story, streams("Stable", 3, 3, a))
    lagging = streams_member("a", one, tasks([("0", [0])]), parts=[0, 1])
    lagging.member_epoch, lagging.target_assignment = 3, [TopicPartitions("in", [0])]
    b = streams_member("b", tasks(), tasks([("0", [1])]))
    b.member_epoch = 4
    events = look(story, streams("Reconciling", 4, 4, lagging, b), at=2.0)
    assert [(e.KIND, getattr(e, "member_id", None), getattr(e, "behind", None))
            for e in events if e.KIND == "assignment"] == [("assignment", "a", True)]
    for e in _wrap(events, 2.0):
        model.apply(e)
    assert set(model.status.behind) == {"a"}
