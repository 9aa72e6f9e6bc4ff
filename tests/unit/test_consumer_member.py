"""The sans-IO KIP-848 member (groupctl.coordinator.members.consumer), driven by scripted
ConsumerGroupHeartbeat responses: every transition of its table, the error table, the
heartbeat bodies (full on join, then only what changed), reconciliation and leaving."""
from __future__ import annotations

import re

import pytest

from groupctl.coordinator.members.consumer import (
    FATAL_HINTS, LEGAL_TRANSITIONS, NO_PARTITIONS_TOPIC, REACTIONS, ConsumerMember,
    ConsumerMemberState as S, ConsumerStateTracker, reconcile,
)
from groupctl.coordinator.members.interface import (
    ROUTE_ANY, ROUTE_CONTROL, IllegalTransitionError, Reaction,
)
from groupctl.errors import AuthError, KafkaError, UsageError
from groupctl.protocol.errors import ErrorCode

G = "orders"
MID = "5b0c2a3e-0000-4000-8000-000000000001"
T1, T2 = "AAAAAAAAAAAAAAAAAAAAAQ", "AAAAAAAAAAAAAAAAAAAAAg"   # topic ids
NAMES = {T1: "orders", T2: "payments"}


def make(**kw) -> ConsumerMember:
    kw.setdefault("member_id", MID)
    return ConsumerMember(G, **kw)


def fc(code=0):
    return {"coordinators": [{"key": G, "node_id": 1, "host": "b1", "port": 9092,
                              "error_code": code, "error_message": None}]}


def hb(code=0, *, epoch=1, interval=2000, assignment=None, member_id=None, message=None):
    return {"throttle_time_ms": 0, "error_code": code, "error_message": message,
            "member_id": member_id, "member_epoch": epoch, "heartbeat_interval_ms": interval,
            "assignment": None if assignment is None else {"topic_partitions": [
                {"topic_id": t, "partitions": p} for t, p in assignment.items()]}}


def answer(m, out, body, now):
    assert m.on_response(out.api, body, now, tag=out.tag)


def only(outs, api="ConsumerGroupHeartbeat"):
    assert [o.api for o in outs] == [api], outs
    return outs[0]


def found(m, now=0):
    answer(m, only(m.next_requests(now), "FindCoordinator"), fc(), now)


def joined(m, *, epoch=5, assignment=None, now=10):
    """Find the coordinator, join, reconcile, acknowledge: STABLE at `epoch`."""
    found(m, now)
    answer(m, only(m.next_requests(now)), hb(epoch=epoch, assignment=assignment or {}), now)
    outs = m.next_requests(now)
    for md in [o for o in outs if o.api == "Metadata"]:
        answer(m, md, {"topics": [{"error_code": 0, "name": NAMES[t["topic_id"]],
                                   "topic_id": t["topic_id"]} for t in md.body["topics"]]}, now)
    ack = only([o for o in outs if o.api != "Metadata"])
    answer(m, ack, hb(epoch=epoch), now + 1)
    assert m.stable
    return ack


def bodies(m, kind=None):
    return [e.to_dict() for e in m.poll_events() if kind is None or e.KIND == kind]


def path(m):
    return [t.to_state.name for t in m.transitions]


# ---- the table ---------------------------------------------------------------------------
def test_every_state_is_documented_and_has_a_row():
    assert set(LEGAL_TRANSITIONS) == set(S)
    for s in S:
        assert s.__doc__ and len(s.__doc__.split()) > 10, s
    assert [s.name for s in S] == ["UNSUBSCRIBED", "JOINING", "RECONCILING", "ACKNOWLEDGING",
                                   "STABLE", "FENCED", "PREPARE_LEAVING", "LEAVING", "FATAL"]
    assert LEGAL_TRANSITIONS[S.FATAL] == frozenset()


def test_an_illegal_transition_raises_and_names_the_allowed_ones():
    t = ConsumerStateTracker()
    with pytest.raises(IllegalTransitionError, match="UNSUBSCRIBED -> STABLE.*JOINING"):
        t.move(S.STABLE, "skipping the join", 0)
    with pytest.raises(ValueError):
        t.move(S.JOINING, "", 0)


# ---- joining -----------------------------------------------------------------------------
def test_join_is_a_full_heartbeat_at_epoch_0_on_the_control_route():
    m = make(topics=["b", "a"], server_assignor="range", rack_id="r1",
             rebalance_timeout_ms=45_000, request_timeout_ms=7_000)
    fc_out = only(m.next_requests(0), "FindCoordinator")
    assert fc_out.route == ROUTE_ANY and m.state is S.JOINING
    answer(m, fc_out, fc(), 1)
    out = only(m.next_requests(1))
    assert out.route == ROUTE_CONTROL and out.timeout_ms == 7_000 and out.min_version == 0
    assert out.body == {"group_id": G, "member_id": MID, "member_epoch": 0, "instance_id": None,
                        "rack_id": "r1", "rebalance_timeout_ms": 45_000,
                        "subscribed_topic_names": ["a", "b"], "subscribed_topic_regex": None,
                        "server_assignor": "range", "topic_partitions": []}


def test_the_member_id_is_a_uuid_kept_for_life():
    import uuid

    m = ConsumerMember(G)
    uuid.UUID(m.member_id)
    assert ConsumerMember(G).member_id != m.member_id


def test_join_reconcile_acknowledge_stable():
    m = make()
    found(m)
    answer(m, only(m.next_requests(10)), hb(epoch=5, interval=1500, assignment={}), 10)
    assert m.state is S.ACKNOWLEDGING and m.heartbeat_interval_ms == 1500
    ack = only(m.next_requests(10))          # at once, not at the interval
    assert ack.body["member_epoch"] == 5 and ack.body["topic_partitions"] == []
    assert m.next_requests(10) == []          # one heartbeat at a time
    assert not m.stable
    answer(m, ack, hb(epoch=5), 20)
    assert m.stable and m.acknowledged_epoch == 5
    assert path(m) == ["JOINING", "RECONCILING", "ACKNOWLEDGING", "STABLE"]
    assert all(t.reason for t in m.transitions)
    events = bodies(m)
    assert [(e["event"], e.get("action")) for e in events] == [
        ("probe", "joined"), ("assignment", None), ("probe", "acknowledged")]
    assert events[0]["member_epoch"] == 5 and events[0]["member_id"] == MID
    assert events[1] == {"event": "assignment", "member_id": MID, "member_epoch": 5,
                         "assigned": [], "added": [], "revoked": []}


def test_joining_without_an_assignment_stays_joining_and_heartbeats_at_the_interval():
    m = make()
    found(m)
    answer(m, only(m.next_requests(0)), hb(epoch=3, interval=1000, assignment=None), 0)
    assert m.state is S.JOINING and m.member_epoch == 3
    assert m.next_requests(500) == [] and m.next_deadline_ms() == 1000
    out = only(m.next_requests(1000))
    assert out.body["member_epoch"] == 3 and out.body["rebalance_timeout_ms"] == 30_000  # full
    answer(m, out, hb(epoch=3, assignment={}), 1001)
    assert m.state is S.ACKNOWLEDGING


def test_v0_broker_member_id_is_taken():
    m = make()
    found(m)
    answer(m, only(m.next_requests(0)), hb(epoch=1, assignment={}, member_id="broker-id"), 0)
    assert m.member_id == "broker-id"


# ---- steady state: only what changed -------------------------------------------------------
def test_stable_heartbeats_send_only_what_changed():
    m = make(topics=["a"], server_assignor="uniform")
    joined(m, epoch=5)
    assert m.next_requests(500) == []
    assert m.next_deadline_ms() == 11 + 2000   # the interval from the last answer
    out = only(m.next_requests(2100))
    assert out.body == {"group_id": G, "member_id": MID, "member_epoch": 5, "instance_id": None,
                        "rack_id": None, "rebalance_timeout_ms": -1,
                        "subscribed_topic_names": None, "subscribed_topic_regex": None,
                        "server_assignor": None, "topic_partitions": None}


def test_a_static_member_sends_its_instance_id_every_time():
    m = make(group_instance_id="i-1")
    joined(m)
    assert only(m.next_requests(5000)).body["instance_id"] == "i-1"


def test_a_member_wanting_no_partitions_never_sends_an_empty_subscription():
    # Kafka 4.3.1 mis-assigns around a join with [] (types.NO_PARTITIONS_TOPIC says why):
    # the probe subscribes to one name no topic can have, in full on every (re)join
    assert not re.fullmatch(r"[a-zA-Z0-9._-]{1,249}", NO_PARTITIONS_TOPIC)
    m = make()
    assert m.topics == [] and m.assigned_partitions() == {}
    found(m)
    join = only(m.next_requests(0))
    assert join.min_version == 0 and join.body["subscribed_topic_regex"] is None
    assert join.body["subscribed_topic_names"] == [NO_PARTITIONS_TOPIC]
    answer(m, join, hb(epoch=5, assignment={}), 0)
    answer(m, only(m.next_requests(0)), hb(epoch=5), 0)          # the acknowledgement
    assert m.state is S.STABLE
    assert only(m.next_requests(5000)).body["subscribed_topic_names"] is None   # unchanged
    m2 = make()
    joined(m2, epoch=5)
    answer(m2, only(m2.next_requests(5000)), hb(ErrorCode.FENCED_MEMBER_EPOCH), 5000)
    rejoin = only(m2.next_requests(5001))
    assert rejoin.body["member_epoch"] == 0
    assert rejoin.body["subscribed_topic_names"] == [NO_PARTITIONS_TOPIC]


def test_a_regex_subscription_needs_v1():
    m = make(topic_regex="orders-.*")
    found(m)
    out = only(m.next_requests(0))
    assert out.min_version == 1
    assert out.body["subscribed_topic_regex"] == "orders-.*"
    assert out.body["subscribed_topic_names"] is None


# ---- reconciliation ----------------------------------------------------------------------
def test_reconcile_step():
    step = reconcile({T1: frozenset({0, 1})}, {T1: frozenset({1, 2}), T2: frozenset({0})})
    assert step.revoked == {T1: frozenset({0})}
    assert step.added == {T1: frozenset({2}), T2: frozenset({0})}
    assert step.target == {T1: frozenset({1, 2}), T2: frozenset({0})} and step.changed
    assert not reconcile({T1: frozenset({0})}, {T1: frozenset({0})}).changed


def test_a_new_assignment_is_reconciled_acknowledged_and_named():
    m = make(topics=["orders"])
    joined(m, epoch=5)
    bodies(m)
    out = only(m.next_requests(5000))
    answer(m, out, hb(epoch=6, assignment={T1: [0, 2]}), 5001)
    assert m.state is S.ACKNOWLEDGING and not m.stable
    outs = m.next_requests(5001)
    md, ack = sorted(outs, key=lambda o: o.api != "Metadata")
    assert md.api == "Metadata" and md.route == ROUTE_ANY and md.min_version == 12
    assert md.body["topics"] == [{"topic_id": T1, "name": None}]
    assert ack.body["topic_partitions"] == [{"topic_id": T1, "partitions": [0, 2]}]
    assert ack.body["member_epoch"] == 6
    answer(m, ack, hb(epoch=6), 5002)
    assert m.state is S.STABLE and not m.stable     # the names are not known yet
    assert bodies(m, "assignment") == []
    answer(m, md, {"topics": [{"error_code": 0, "name": "orders", "topic_id": T1,
                               "partitions": []}]}, 5003)
    assert m.stable and m.assigned_partitions() == {"orders": [0, 2]}
    assert bodies(m, "assignment") == [{
        "event": "assignment", "member_id": MID, "member_epoch": 6,
        "assigned": [{"topic": "orders", "partitions": [0, 2]}],
        "added": [{"topic": "orders", "partitions": [0, 2]}], "revoked": []}]
    # revoke one: the ack carries what is left
    answer(m, only(m.next_requests(9000)), hb(epoch=7, assignment={T1: [2]}), 9000)
    ack = only(m.next_requests(9000))
    assert ack.body["topic_partitions"] == [{"topic_id": T1, "partitions": [2]}]
    assert bodies(m, "assignment")[0]["revoked"] == [{"topic": "orders", "partitions": [0]}]
    assert path(m)[-3:] == ["STABLE", "RECONCILING", "ACKNOWLEDGING"]


def test_a_failed_name_lookup_reports_topic_ids():
    m = make()
    joined(m)
    bodies(m)
    answer(m, only(m.next_requests(5000)), hb(epoch=6, assignment={T1: [1]}), 5000)
    md = next(o for o in m.next_requests(5000) if o.api == "Metadata")
    assert m.on_failure("Metadata", "timeout", 5001, tag=md.tag)
    assert bodies(m, "assignment")[0]["assigned"] == [{"topic": T1, "partitions": [1]}]


def test_the_same_assignment_again_changes_nothing():
    m = make()
    joined(m, epoch=5, assignment={})
    answer(m, only(m.next_requests(5000)), hb(epoch=6, assignment={}), 5000)
    assert m.state is S.STABLE and m.member_epoch == 6


# ---- the error table ------------------------------------------------------------------------
def test_the_error_table_names_the_issues_codes():
    assert REACTIONS[ErrorCode.FENCED_MEMBER_EPOCH] is Reaction.RESET_GENERATION
    assert REACTIONS[ErrorCode.UNKNOWN_MEMBER_ID] is Reaction.RESET_MEMBER
    for code in (ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.NOT_COORDINATOR):
        assert REACTIONS[code] is Reaction.REDISCOVER
    assert REACTIONS[ErrorCode.COORDINATOR_LOAD_IN_PROGRESS] is Reaction.RETRY
    for code in (ErrorCode.UNRELEASED_INSTANCE_ID, ErrorCode.GROUP_MAX_SIZE_REACHED,
                 ErrorCode.UNSUPPORTED_ASSIGNOR, ErrorCode.INVALID_REQUEST):
        assert REACTIONS[code] is Reaction.FATAL and code in FATAL_HINTS


@pytest.mark.parametrize("code", [ErrorCode.FENCED_MEMBER_EPOCH, ErrorCode.UNKNOWN_MEMBER_ID,
                                  ErrorCode.STALE_MEMBER_EPOCH])
def test_fenced_releases_everything_and_rejoins_with_epoch_0(code):
    m = make(topics=["orders"])
    joined(m, epoch=5, assignment={T1: [0]})
    bodies(m)
    answer(m, only(m.next_requests(5000)), hb(code, epoch=-1), 5000)
    assert m.state is S.FENCED and m.owned == {} and m.member_epoch == 0
    events = bodies(m)
    assert events[0]["event"] == "error" and events[0]["name"] == code.name
    assert events[1]["action"] == "fenced" and events[1]["error"] == code.name
    assert events[2]["event"] == "assignment" and events[2]["assigned"] == []
    out = only(m.next_requests(5000))
    assert m.state is S.JOINING
    assert out.body["member_epoch"] == 0 and out.body["member_id"] == MID
    assert out.body["topic_partitions"] == [] and out.body["subscribed_topic_names"] == ["orders"]
    assert bodies(m)[0]["action"] == "rejoining"
    assert path(m)[-2:] == ["FENCED", "JOINING"]


@pytest.mark.parametrize("code", [ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_NOT_AVAILABLE])
def test_coordinator_moved_rediscovers_and_resends_in_full(code):
    m = make()
    joined(m, epoch=5)
    answer(m, only(m.next_requests(5000)), hb(code), 5000)
    assert m.coordinator is None and m.state is S.STABLE
    assert m.next_requests(5000) == []                     # backing off
    answer(m, only(m.next_requests(5100), "FindCoordinator"), fc(), 5100)
    out = only(m.next_requests(5100))
    assert out.body["member_epoch"] == 5 and out.body["rebalance_timeout_ms"] == 30_000


def test_loading_backs_off_exponentially():
    m = make()
    joined(m, epoch=5)
    answer(m, only(m.next_requests(5000)), hb(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS), 5000)
    assert m.coordinator is not None and m.next_requests(5050) == []
    answer(m, only(m.next_requests(5100)), hb(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS), 5100)
    assert m.next_requests(5250) == [] and only(m.next_requests(5300))


@pytest.mark.parametrize("code", sorted(c for c, r in REACTIONS.items() if r is Reaction.FATAL))
def test_fatal_codes_end_membership_with_a_clear_message(code):
    m = make()
    found(m)
    answer(m, only(m.next_requests(0)), hb(code, message="broker says why"), 0)
    assert m.state is S.FATAL and m.done and m.next_requests(1) == []
    err = m.fatal_error
    assert isinstance(err, AuthError if code == ErrorCode.GROUP_AUTHORIZATION_FAILED else KafkaError)
    text = str(err)
    assert code.name in text
    if code in FATAL_HINTS and code != ErrorCode.GROUP_AUTHORIZATION_FAILED:
        assert FATAL_HINTS[code] in text and "broker says why" in text


def test_a_code_not_in_the_table_is_fatal_unless_retriable():
    m = make()
    joined(m)
    answer(m, only(m.next_requests(5000)), hb(ErrorCode.REQUEST_TIMED_OUT), 5000)
    assert m.state is S.STABLE
    answer(m, only(m.next_requests(9000)), hb(ErrorCode.CLUSTER_AUTHORIZATION_FAILED), 9000)
    assert m.state is S.FATAL


def test_a_lost_heartbeat_rediscovers_and_resends_in_full():
    m = make()
    joined(m, epoch=5)
    out = only(m.next_requests(5000))
    assert m.on_failure(out.api, "disconnected", 5000, tag=out.tag)
    assert m.coordinator is None
    assert bodies(m)[-1]["action"] == "heartbeat_error"
    answer(m, only(m.next_requests(5200), "FindCoordinator"), fc(), 5200)
    assert only(m.next_requests(5200)).body["rebalance_timeout_ms"] == 30_000


# ---- leaving ---------------------------------------------------------------------------------
@pytest.mark.parametrize("instance, epoch", [(None, -1), ("i-1", -2)])
def test_leave_with_epoch_minus_1_or_minus_2(instance, epoch):
    m = make(group_instance_id=instance)
    joined(m, epoch=5, assignment={T1: [0]})
    bodies(m)
    assert m.leave("done", 100)
    assert m.state is S.LEAVING and m.owned == {}
    out = only(m.next_requests(100))      # at once, whatever the interval
    assert out.body["member_epoch"] == epoch and out.body["instance_id"] == instance
    answer(m, out, hb(epoch=epoch), 101)
    assert m.done and m.state is S.UNSUBSCRIBED and m.next_requests(200) == []
    assert path(m)[-3:] == ["PREPARE_LEAVING", "LEAVING", "UNSUBSCRIBED"]
    events = bodies(m)
    assert events[0]["event"] == "assignment" and events[0]["revoked"] == [
        {"topic": "orders", "partitions": [0]}]
    assert events[-1]["action"] == "left" and "groupctl probe: leaving: done" in events[-1]["reason"]
    assert not m.leave("again", 300)


def test_leave_before_joining_sends_nothing():
    m = make()
    assert m.leave("bye", 0) and m.done and m.next_requests(0) == []
    assert path(m) == ["UNSUBSCRIBED"]


def test_leave_while_the_join_is_in_flight_still_leaves():
    m = make()
    found(m)
    join = only(m.next_requests(0))
    m.leave("interrupted", 1)
    leave = only(m.next_requests(1))
    assert leave.body["member_epoch"] == -1
    assert not m.on_response(join.api, hb(epoch=4, assignment={}), 2, tag=join.tag)
    answer(m, leave, hb(ErrorCode.UNKNOWN_MEMBER_ID), 3)   # any answer ends the leave
    assert m.done and bodies(m, "probe")[-1]["error"] == "UNKNOWN_MEMBER_ID"


def test_leave_when_fenced_needs_no_request():
    m = make()
    joined(m)
    answer(m, only(m.next_requests(5000)), hb(ErrorCode.FENCED_MEMBER_EPOCH), 5000)
    assert m.leave("bye", 5001) and m.done and m.next_requests(5001) == []


def test_leave_without_a_coordinator_finds_it_first():
    m = make()
    joined(m)
    out = only(m.next_requests(5000))
    m.on_failure(out.api, "disconnected", 5000, tag=out.tag)
    m.leave("bye", 5001)
    answer(m, only(m.next_requests(5001), "FindCoordinator"), fc(), 5001)
    assert only(m.next_requests(5001)).body["member_epoch"] == -1


# ---- the test hook and settings ----------------------------------------------------------------
def test_paused_heartbeats_wait_for_the_pause_to_end():
    m = make()
    joined(m)
    m.pause_heartbeats(20_000)
    assert m.next_requests(5000) == [] and m.next_deadline_ms() == 20_000
    assert only(m.next_requests(20_000))


@pytest.mark.parametrize("kw", [dict(server_assignor="sticky"), dict(topics=["a"], topic_regex="a.*"),
                                dict(topic_regex=""), dict(group_instance_id=""),
                                dict(rebalance_timeout_ms=0)])
def test_bad_settings_are_usage_errors(kw):
    with pytest.raises(UsageError):
        make(**kw)


def test_a_leave_answered_group_id_not_found_is_a_clean_leave():
    # Kafka 4.4 answers a heartbeat of a group that is gone with GROUP_ID_NOT_FOUND; at
    # epoch -1 the member is gone with it (the Java client logs it and carries on)
    m = make()
    joined(m, epoch=5, assignment={T1: [0]})
    bodies(m)
    m.leave("done", 100)
    answer(m, only(m.next_requests(100)), hb(ErrorCode.GROUP_ID_NOT_FOUND), 101)
    assert m.done and m.state is S.UNSUBSCRIBED
    left = bodies(m, "probe")[-1]
    assert left["action"] == "left" and not left.get("error")
    assert m.fatal_error is None


def test_a_heartbeat_answered_group_id_not_found_ends_the_member_with_why():
    m = make()
    joined(m, epoch=5, assignment={T1: [0]})
    answer(m, only(m.next_requests(5000)), hb(ErrorCode.GROUP_ID_NOT_FOUND), 5000)
    assert m.state is S.FATAL and m.owned == {}
    assert "the group no longer exists" in str(m.fatal_error)
