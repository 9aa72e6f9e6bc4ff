"""The force-rebalance trigger (groupctl.coordinator.steer.force_classic) with scripted answers:
the order that costs one generation, the lost race, and leaving on every exit path."""
from __future__ import annotations

import pytest

from groupctl.coordinator.steer.force_classic import CONTROL, JOIN, ClassicTrigger, Protocol, TriggerState as S
from groupctl.protocol.errors import ErrorCode

REASON = "groupctl force-rebalance: test"


def trigger():
    return ClassicTrigger("g", Protocol("consumer", "range", b"\x00\x03"), REASON)


def to_parked(t):
    first = t.start()
    assert [(s.route, s.api, s.body["member_id"]) for s in first] == [(JOIN, "JoinGroup", "")]
    assert first[0].body["reason"] == REASON
    assert first[0].body["protocols"] == [{"name": "range", "metadata": b"\x00\x03"}]
    second = t.on_join({"error_code": ErrorCode.MEMBER_ID_REQUIRED, "member_id": "M"})
    assert [(s.route, s.api, s.body["member_id"]) for s in second] == [(JOIN, "JoinGroup", "M")]
    assert t.state == S.JOINING
    return t


def test_leaves_once_describe_shows_it_parked():
    t = to_parked(trigger())
    assert t.on_describe("Stable", {"a", "b"}) == []  # our JoinGroup not processed yet
    assert t.on_describe("PreparingRebalance", {"a", "b"}) == []
    leave = t.on_describe("PreparingRebalance", {"a", "b", "M"})
    assert [(s.route, s.api) for s in leave] == [(CONTROL, "LeaveGroup")]
    assert leave[0].body["members"] == [{"member_id": "M", "group_instance_id": None,
                                         "reason": REASON}]
    assert t.state == S.LEAVING
    # the parked JoinGroup is answered UNKNOWN_MEMBER_ID: expected, nothing more to send
    assert t.on_join({"error_code": ErrorCode.UNKNOWN_MEMBER_ID, "member_id": ""}) == []
    t.on_leave({"error_code": 0, "members": [{"member_id": "M", "error_code": 0}]})
    assert t.state == S.LEFT and t.done and not t.lost_race and t.error is None
    assert t.abort("interrupted") == []  # nothing left to undo


def test_lost_race_still_leaves_and_says_so():
    t = to_parked(trigger())
    leave = t.on_join({"error_code": 0, "member_id": "M", "generation_id": 7})
    assert [s.api for s in leave] == ["LeaveGroup"]
    assert t.lost_race and t.joined_generation == 7
    assert [x.to_state.value for x in t.transitions][-2:] == ["joined", "leaving"]


def test_seen_in_a_later_state_counts_as_lost_race():
    t = to_parked(trigger())
    assert [s.api for s in t.on_describe("CompletingRebalance", {"M", "a"})] == ["LeaveGroup"]
    assert t.lost_race


@pytest.mark.parametrize("step", ["idle", "asking_id", "joining", "leaving"])
def test_abort_leaves_whenever_the_broker_may_hold_our_member(step):
    t = trigger()
    if step != "idle":
        t.start()
    if step in ("joining", "leaving"):
        t.on_join({"error_code": ErrorCode.MEMBER_ID_REQUIRED, "member_id": "M"})
    if step == "leaving":
        t.on_describe("PreparingRebalance", {"M"})
    sends = t.abort("interrupted")
    if step in ("idle", "asking_id"):
        assert sends == [] and t.state == S.LEFT  # no member id known: nothing to leave
    else:
        assert [(s.api, s.body["members"][0]["member_id"]) for s in sends] == [("LeaveGroup", "M")]


def test_a_refused_join_fails_without_a_member():
    t = trigger()
    t.start()
    assert t.on_join({"error_code": ErrorCode.GROUP_MAX_SIZE_REACHED, "member_id": ""}) == []
    assert t.state == S.FAILED and "GROUP_MAX_SIZE_REACHED" in t.error


def test_a_failed_second_join_leaves_then_fails():
    t = to_parked(trigger())
    sends = t.on_join({"error_code": ErrorCode.INCONSISTENT_GROUP_PROTOCOL, "member_id": ""})
    assert [s.api for s in sends] == ["LeaveGroup"]
    t.on_leave(None, why="connection lost")
    assert t.state == S.FAILED and "INCONSISTENT_GROUP_PROTOCOL" in t.error


def test_reason_is_cut_at_255():
    t = ClassicTrigger("g", Protocol("consumer", "range", b""), "x" * 300)
    assert len(t.start()[0].body["reason"]) == 255


def test_a_join_answer_with_a_generation_after_the_leave_is_a_lost_race():
    t = to_parked(trigger())
    t.on_describe("PreparingRebalance", {"M"})
    t.on_leave({"error_code": 0, "members": [{"member_id": "M", "error_code": 0}]})
    assert not t.lost_race
    assert t.on_join({"error_code": 0, "member_id": "M", "generation_id": 9}) == []
    assert t.lost_race and t.joined_generation == 9 and t.state == S.LEFT
