"""The §4 event envelope (groupctl.events), the probe's group view (rebalance, member
joined/left events) and the watch views built from events."""
from __future__ import annotations

import io
import re

import pytest

from groupctl.coordinator.members.classic import ClassicMemberState as S, JoinedMember, PendingAssignment
from groupctl.coordinator.probe.view import GroupView
from groupctl.events import ProbeAction, envelope, iso_ts, tp_list, tp_map
from groupctl.observe.state.holdings import moved_partitions
from groupctl.observe.reads.model import classic_group
from groupctl.protocol import consumer as cp
from groupctl.render.watch import WatchModel, plain_line, render_model


def test_envelope_has_every_field_of_its_type():
    e = envelope({"event": "probe", "action": "joined", "member_id": "m"}, group="g",
                 cluster="c", at=0.123)
    assert e == {"v": 1, "ts": "1970-01-01T00:00:00.123Z", "source": "probe", "cluster": "c",
                 "group": "g", "event": "probe", "action": "joined", "member_id": "m",
                 "generation": None, "error": None}
    assert list(e)[:6] == ["v", "ts", "source", "cluster", "group", "event"]


def test_envelope_keeps_extra_fields_and_rejects_unknown_types():
    e = envelope({"event": "state", "state": "Stable", "member_state": "STABLE"}, group="g",
                 cluster=None)
    assert e["member_state"] == "STABLE" and e["previous"] is None
    with pytest.raises(ValueError):
        envelope({"event": "nope"}, group="g", cluster=None)
    with pytest.raises(ValueError):
        envelope({"event": "state"}, group="g", cluster=None, source="elsewhere")


def test_iso_ts_format():
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", iso_ts())
    assert iso_ts(1_700_000_000.9999) == "2023-11-14T22:13:20.999Z"


def test_moved_partitions_and_tp_helpers():
    before = {"a": {"t": {0, 1}}, "b": {"t": {2}}}
    after = {"a": {"t": {0}}, "b": {"t": {2, 1}}, "c": {"u": {0}}}
    assert moved_partitions(before, after) == 2  # t-1 moved, u-0 is new
    assert moved_partitions(before, before) == 0
    assert tp_list({"t": [2, 0], "e": []}) == [{"topic": "t", "partitions": [0, 2]}]
    assert tp_map(tp_list({"t": [1]})) == {"t": {1}}


class FakeMember:
    def __init__(self, state, generation, member_id="me", leader="other", members=()):
        self.state, self.generation_id, self.member_id = state, generation, member_id
        self.leader_id, self.members = leader, list(members)

    @property
    def generation(self):
        return self.generation_id

    def implied_group_state(self):
        return self.state.group_state

    @property
    def is_leader(self):
        return self.leader_id == self.member_id


def bodies(events) -> list[dict]:
    return [e.to_dict() for e in events]


def asg(**topics) -> bytes:
    return cp.encode_assignment(cp.Assignment(assigned_partitions=[
        cp.TopicPartitions(t, p) for t, p in topics.items()]))


SUB = cp.encode_subscription(cp.Subscription(topics=["t"]))


def described(*members):
    """A Stable group as DescribeGroups shows it, read by observe.reads.model."""
    return classic_group({
        "group_id": "g", "error_code": 0, "group_state": "Stable", "protocol_type": "consumer",
        "protocol_data": "range", "members": [
            {"member_id": m, "group_instance_id": None, "client_id": f"client-{m}",
             "client_host": "/127.0.0.1", "member_metadata": SUB, "member_assignment": a}
            for m, a in members]})


def test_group_view_derives_rebalances_and_membership_changes():
    view = GroupView("g")
    assert [e["state"] for e in bodies(view.poll_state(FakeMember(S.JOINING, -1)))] == ["PreparingRebalance"]
    view.synced(FakeMember(S.STABLE, 1), {}, 100.0)
    view.described(1, described(("me", b""), ("c1", asg(t=[0, 1]))))
    events = bodies(view.poll_events())
    # every other member's assignment, as the passive watch tells it (the probe's own is
    # its member's event)
    assert [e["event"] for e in events] == ["assignment", "rebalance"]
    assert events[0] == {"event": "assignment", "member_id": "c1", "generation": 1,
                         "assigned": [{"topic": "t", "partitions": [0, 1]}],
                         "added": [{"topic": "t", "partitions": [0, 1]}], "revoked": []}
    events = events[1:]
    assert events[0]["members_after"] == ["c1", "me"] and events[0]["from_generation"] is None
    assert events[0]["moved_partitions"] is None  # nothing known before the probe joined

    view.poll_state(FakeMember(S.STABLE, 1))
    view.note_member_event(ProbeAction("rejoining", reason="REBALANCE_IN_PROGRESS on Heartbeat"))
    view.poll_state(FakeMember(S.JOINING, 1))
    view.synced(FakeMember(S.STABLE, 2), {}, 101.5)
    view.described(2, described(("me", b""), ("c2", asg(t=[0, 1]))))
    events = bodies(view.poll_events())
    assert [e["event"] for e in events] == ["member_joined", "member_left", "assignment",
                                            "rebalance"]
    assert events[0]["member_id"] == "c2" and events[0]["client_id"] == "client-c2"
    assert events[1]["member_id"] == "c1"
    assert (events[2]["member_id"], events[2]["generation"], events[2]["added"]) == (
        "c2", 2, [{"topic": "t", "partitions": [0, 1]}])
    r = events[3]
    assert (r["from_generation"], r["to_generation"]) == (1, 2)
    assert r["members_before"] == ["c1", "me"] and r["members_after"] == ["c2", "me"]
    # why it happened (what changed), not how the probe noticed (REBALANCE_IN_PROGRESS)
    assert r["moved_partitions"] == 2 and r["reason"] == (
        "member c2 (client client-c2, host /127.0.0.1) joined; "
        "member c1 (client client-c1, host /127.0.0.1) left or expired")
    assert r["assignments"]["c2"] == [{"topic": "t", "partitions": [0, 1]}]


def test_group_view_leader_falls_back_to_its_own_knowledge():
    view = GroupView("g")
    members = [JoinedMember("me", None, b""), JoinedMember("c1", None, b"")]
    pending = PendingAssignment(3, "range", "me", tuple(members))
    view.leader_joined(pending)
    view.leader_assigned(3, {"me": {}, "c1": {"t": [0]}})
    view.synced(FakeMember(S.STABLE, 3, leader="me", members=members), {}, 5.0)
    view.described(3, None)  # the describe raced with the next rebalance
    c1, r = bodies(view.poll_events())
    assert (c1["event"], c1["member_id"], c1["assigned"]) == (
        "assignment", "c1", [{"topic": "t", "partitions": [0]}])
    assert r["members_after"] == ["c1", "me"]
    assert r["assignments"] == {"c1": [{"topic": "t", "partitions": [0]}], "me": []}


def test_the_probes_one_status_is_the_fold_of_everything_it_publishes():
    """Issue 30: one owner of the probe's group state. The view's status folds its story's
    events and its member's own (probe, generation, own assignment) as they go out: a
    replay of what was published gives the same state, and `join --watch`'s live view
    draws that status (the probe, its leader, the members) with no fold of its own."""
    import io

    from groupctl.cli.env import Env
    from groupctl.events import AssignmentChanged, GenerationStarted
    from groupctl.observe.state.reducer import GroupStatus
    from groupctl.render.watch import _LiveSink

    view = GroupView("g", clock=lambda: 100.0)
    published = []
    published += view.member_event(ProbeAction("joined", member_id="me"))
    published += view.poll_state(FakeMember(S.JOINING, -1))
    published += view.member_event(GenerationStarted(1, "range", "other", None))   # held
    published += view.member_event(AssignmentChanged("me", 1, [], [], []))
    view.synced(FakeMember(S.STABLE, 1), {}, 100.0)
    view.described(1, described(("me", b""), ("c1", asg(t=[0, 1]))))
    published += view.poll_events()
    published += view.poll_state(FakeMember(S.STABLE, 1))
    told = [envelope(e, group="g", cluster=None, source="probe", at=100.0) for e in published]
    assert [e["event"] for e in told].count("generation") == 1

    replay = GroupStatus("g")
    for e in told:
        replay.apply(e)
    s = view.status
    assert (s.probe_member, s.generation, s.protocol, s.leader, s.state, s.rebalances) == (
        "me", 1, "range", "other", "Stable", 1)
    assert (s.probe_member, s.member_state, s.generation, s.protocol, s.leader, s.state,
            s.rebalances, {m: x.assignment for m, x in s.members.items()}) == (
        replay.probe_member, replay.member_state, replay.generation, replay.protocol,
        replay.leader, replay.state, replay.rebalances,
        {m: x.assignment for m, x in replay.members.items()})

    out = io.StringIO()
    with _LiveSink(Env(stdout=out, stderr=io.StringIO(), stdout_is_terminal=True)) as live:
        live.read_from({"g": view.status})
        for e in told:
            live(e)
        assert live.models["g"].status is view.status
    text = re.sub("\x1b\\[[0-9;?]*[A-Za-z]", "", out.getvalue())
    assert "probe me  leader other" in text and "c1" in text and "t:0-1" in text


def test_stale_describe_is_ignored():
    view = GroupView("g")
    view.synced(FakeMember(S.STABLE, 4), {}, 1.0)
    view.described(3, described(("me", b"")))
    assert view.poll_events() == []


def test_watch_model_and_views():
    events = [
        envelope({"event": "state", "state": "Stable", "previous": "CompletingRebalance",
                  "member_state": "STABLE"}, group="g", cluster=None),
        envelope({"event": "generation", "generation": 5, "protocol": "range", "leader": "c1",
                  "members": None}, group="g", cluster=None),
        envelope({"event": "probe", "action": "heartbeat_error", "member_id": "me",
                  "generation": 5, "error": "NOT_COORDINATOR"}, group="g", cluster=None),
        envelope({"event": "rebalance", "from_generation": 4, "to_generation": 5,
                  "started": iso_ts(0), "ended": iso_ts(0.25), "duration_ms": 250,
                  "members_before": ["c1"], "members_after": ["c1", "me"],
                  "moved_partitions": 0, "reason": "probe joined",
                  "assignments": {"c1": [{"topic": "t", "partitions": [0]}], "me": []}},
                 group="g", cluster=None),
    ]
    model = WatchModel()
    for e in events:
        model.apply(e)
    assert model.generation == 5 and model.state == "Stable" and model.member_id == "me"
    assert set(model.members) == {"c1", "me"} and len(model.timeline) == 1
    assert "NOT_COORDINATOR" in model.errors[0]
    from rich.console import Console
    out = io.StringIO()
    Console(file=out, width=160).print(render_model(model))
    text = out.getvalue()
    assert "generation 5" in text and "t:0" in text and "NOT_COORDINATOR" in text
    assert plain_line(events[3]).endswith("rebalance 4 -> 5 in 250 ms, members 2, moved 0, reason: probe joined")


def test_a_followers_generation_event_carries_the_members_of_its_describe():
    from groupctl.events import GenerationStarted

    view = GroupView("g")
    assert view.member_event(GenerationStarted(2, "range", "c1", None)) == []   # held
    view.synced(FakeMember(S.STABLE, 2), {}, 100.0)
    view.described(2, described(("me", b""), ("c1", asg(t=[0, 1]))))
    events = bodies(view.poll_events())
    assert events[0] == {"event": "generation", "generation": 2, "protocol": "range",
                         "leader": "c1", "members": ["c1", "me"]}
    assert events[-1]["event"] == "rebalance"
    # a generation never described (the next rebalance came first) is told without them
    assert view.member_event(GenerationStarted(3, "range", "c1", None)) == []
    (late,) = bodies(view.member_event(GenerationStarted(4, "range", "c1", None)))
    assert late["generation"] == 3 and late["members"] is None
    leader = GenerationStarted(5, "range", "me", ["c1", "me"])
    assert view.member_event(leader)[-1] == leader               # the leader knows them
