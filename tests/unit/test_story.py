"""observe/story/story.py: successive snapshots of a group (observe.reads.model GroupDescriptions, with
times from an injected clock) -> the events of docs/reference/events.md, as a passive watcher feeds it."""
from __future__ import annotations

from story_support import look
from groupctl.events import EventKind, envelope
from groupctl.observe.sources.observations import (BeforeJoin, GenerationDescribed, MemberState,
                                           MemberSynced, RebalanceNoticed)
from groupctl.observe.reads.model import GroupDescription, Member, TopicPartitions
from groupctl.observe.story.story import RebalanceStory


def member(mid, *parts, client="c", host="h", instance=None):
    asg = None if parts == (None,) else [TopicPartitions(t, list(p)) for t, p in parts]
    return Member(mid, client_id=f"{client}-{mid}", host=host, instance_id=instance,
                  assignment=asg)


def group(state, generation=None, *members, epoch=None, assignment_epoch=None):
    return GroupDescription("g", type="consumer" if epoch is not None else "classic",
                            state=state, protocol="range", generation=generation,
                            group_epoch=epoch, assignment_epoch=assignment_epoch,
                            members=list(members))


class Clock:
    def __init__(self, t=1000.0):
        self.t = t

    def __call__(self):
        return self.t


def bodies(events):
    return [e.to_dict() for e in events]


def test_a_classic_rebalance_told_from_polls():
    clock = Clock()
    story = RebalanceStory("g", clock=clock)
    first = look(story, group("Stable", 3, member("a", ("t", [0, 1])), member("b", ("t", [2]))))
    # the first look: told in full (issue 23: a watch no longer starts blind), no rebalance
    assert bodies(first) == [
        {"event": "snapshot", "state": "Stable", "type": "classic", "generation": 3,
         "group_epoch": None, "assignment_epoch": None, "protocol": "range", "gap_ms": None,
         "members": [{"member_id": "a", "instance_id": None, "client_id": "c-a", "host": "h",
                      "assignment": [{"topic": "t", "partitions": [0, 1]}],
                      "target_assignment": None, "subscription": None},
                     {"member_id": "b", "instance_id": None, "client_id": "c-b", "host": "h",
                      "assignment": [{"topic": "t", "partitions": [2]}],
                      "target_assignment": None, "subscription": None}]},
        {"event": "state", "state": "Stable", "previous": None, "member_state": None}]
    clock.t = 1001.0
    assert [e.KIND for e in look(story, group("PreparingRebalance", None))] == ["state"]
    clock.t = 1001.5
    look(story, group("CompletingRebalance", None))
    clock.t = 1002.25
    events = bodies(look(story, group("Stable", 4, member("a", ("t", [0])),
                                        member("c", ("t", [1, 2])))))
    assert [e["event"] for e in events] == [
        "state", "generation", "member_joined", "member_left", "assignment", "assignment",
        "rebalance"]
    assert events[1] == {"event": "generation", "generation": 4, "protocol": "range",
                         "leader": None, "members": ["a", "c"]}
    assert events[2] == {"event": "member_joined", "member_id": "c", "instance_id": None,
                         "client_id": "c-c", "host": "h",
                         "assignment": [{"topic": "t", "partitions": [1, 2]}],
                         "subscription": None, "tasks": None}
    assert events[3]["member_id"] == "b"
    assert events[4] == {"event": "assignment", "member_id": "a", "generation": 4,
                         "assigned": [{"topic": "t", "partitions": [0]}], "added": [],
                         "revoked": [{"topic": "t", "partitions": [1]}]}
    assert events[5]["member_id"] == "c" and events[5]["revoked"] == []
    r = events[6]
    assert (r["from_generation"], r["to_generation"]) == (3, 4)
    # seen starting at 1001.0 (not at 1000.0), still under way at 1001.5, settled by
    # 1002.25: it took 0.5 s to 2.25 s; the figure is the middle, its basis the interval
    assert r["started"] == "1970-01-01T00:16:41.000Z"
    assert (r["duration_basis"], r["duration_min_ms"], r["duration_max_ms"],
            r["duration_ms"]) == ("interval", 500, 2250, 1375)
    assert r["ended"] == "1970-01-01T00:16:42.250Z"
    assert r["members_before"] == ["a", "b"] and r["members_after"] == ["a", "c"]
    assert r["moved_partitions"] == 2      # t-1 a -> c, t-2 b -> c
    assert r["reason"] == ("member c (client c-c, host h) joined; "
                           "member b (client c-b, host h) left or expired")
    assert r["assignments"] == {"a": [{"topic": "t", "partitions": [0]}],
                                "c": [{"topic": "t", "partitions": [1, 2]}]}
    assert envelope(events[6], group="g", cluster=None, source="describe")["event"] == "rebalance"
    assert look(story, group("Stable", 4, member("a", ("t", [0])))) == []  # nothing new


def test_a_kip848_epoch_and_unknown_assignments():
    clock = Clock(50.0)
    story = RebalanceStory("g", clock=clock)
    look(story, group("Stable", None, member("a", ("t", [0])), epoch=7, assignment_epoch=7))
    clock.t = 51.0
    events = bodies(look(story, group("Stable", None, member("a", None), member("b", None),
                                        epoch=8, assignment_epoch=8)))
    assert events[0] == {"event": "epoch", "group_epoch": 8, "assignment_epoch": 8}
    r = events[-1]
    assert (r["from_generation"], r["to_generation"]) == (7, 8)
    assert r["moved_partitions"] is None                   # assignments not known after
    assert r["assignments"] == {"a": None, "b": None}
    # begun and over between two looks 1 s apart: 0 to 1000 ms, never "0 ms"; its start
    # was not seen
    assert (r["duration_basis"], r["duration_min_ms"], r["duration_max_ms"],
            r["duration_ms"], r["started"]) == ("interval", 0, 1000, 500, None)


def test_the_probe_flavour_reports_no_generations_or_assignments():
    story = RebalanceStory("g", clock=Clock(), told_elsewhere={EventKind.GENERATION,
                                                               EventKind.ASSIGNMENT})
    story.feed(BeforeJoin("g", 1.0, "probe", group("Stable", 1, member("a", ("t", [0])))))
    story.feed(RebalanceNoticed("g", 9.0, "probe", "REBALANCE_IN_PROGRESS on Heartbeat"))
    story.feed(MemberState("g", 10.0, "probe", "PreparingRebalance"))
    story.feed(MemberSynced("g", 10.5, "probe", 2, None))
    events = bodies(story.feed(GenerationDescribed(
        "g", 10.5, "probe", 2, group("Stable", 2, member("a", ("t", [0])), member("me")))))
    assert [e["event"] for e in events] == ["member_joined", "rebalance"]
    # why it happened (what changed), not how the probe noticed
    assert events[1]["reason"] == "member me (client c-me, host h) joined"
    assert events[1]["from_generation"] is None and events[1]["moved_partitions"] == 0
