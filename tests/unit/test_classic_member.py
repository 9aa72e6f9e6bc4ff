"""The sans-IO classic member (groupctl.coordinator.members.classic), driven by scripted responses."""
from __future__ import annotations

import pytest

from groupctl.coordinator import assignors
from groupctl.coordinator.members.classic import (
    ClassicMember, Coordinator, JoinedMember, LEGAL_TRANSITIONS, PendingAssignment,
)
from groupctl.coordinator.members.classic import (
    ClassicMemberState as S, ClassicStateTracker as StateTracker, IllegalTransitionError,
)
from groupctl.errors import AuthError, GroupctlError, KafkaError, UsageError
from groupctl.exitcodes import ExitCode
from groupctl.protocol import consumer

G = "orders"
SUB = b"\x00\x03sub"          # opaque subscription metadata
PROTOCOLS = [("range", SUB)]
SESSION, REBALANCE, HB = 10_000, 30_000, 3_000


def decode(data: bytes) -> dict[str, list[int]]:
    """A stand-in assignment codec: b"t=0,1;u=2"."""
    out = {}
    for part in data.decode().split(";"):
        topic, _, parts = part.partition("=")
        out[topic] = [int(p) for p in parts.split(",") if p]
    return out


def make(**kw) -> ClassicMember:
    args = dict(protocols=PROTOCOLS, session_timeout_ms=SESSION, rebalance_timeout_ms=REBALANCE,
                heartbeat_interval_ms=HB, decode_assignment=decode)
    args.update(kw)
    return ClassicMember(G, **args)


# ---- scripted responses (decoded dicts, every field of the newest version) -----------
def fc(code=0, node=1, host="broker1", port=9092):
    return {"throttle_time_ms": 0, "error_code": code, "error_message": None, "node_id": node,
            "host": host, "port": port, "coordinators": []}


def fc_v4(code=0, node=2, host="broker2", port=9093):
    return {"throttle_time_ms": 0, "error_code": 0, "error_message": None, "node_id": 0,
            "host": "", "port": 0, "coordinators": [
                {"key": G, "node_id": node, "host": host, "port": port, "error_code": code,
                 "error_message": None}]}


def join(code=0, *, member_id="", generation=-1, leader="", protocol="range", members=(),
         skip=False, protocol_type="consumer"):
    return {"throttle_time_ms": 0, "error_code": code, "generation_id": generation,
            "protocol_type": protocol_type, "protocol_name": protocol, "leader": leader,
            "skip_assignment": skip, "member_id": member_id,
            "members": [{"member_id": m, "group_instance_id": i, "metadata": md}
                        for m, i, md in members]}


def sync(code=0, assignment=b"", protocol="range"):
    return {"throttle_time_ms": 0, "error_code": code, "protocol_type": "consumer",
            "protocol_name": protocol, "assignment": assignment}


def hb(code=0):
    return {"throttle_time_ms": 0, "error_code": code}


def leave_resp(code=0, members=()):
    return {"throttle_time_ms": 0, "error_code": code,
            "members": [{"member_id": m, "group_instance_id": i, "error_code": c}
                        for m, i, c in members]}


# ---- expected request bodies ------------------------------------------------------------
def join_body(member_id="", reason="groupctl probe: joining", instance=None, protocols=PROTOCOLS):
    return {"group_id": G, "session_timeout_ms": SESSION, "rebalance_timeout_ms": REBALANCE,
            "member_id": member_id, "group_instance_id": instance, "protocol_type": "consumer",
            "protocols": [{"name": n, "metadata": m} for n, m in protocols], "reason": reason}


def sync_body(generation, member_id, assignments=(), instance=None, protocol="range"):
    return {"group_id": G, "generation_id": generation, "member_id": member_id,
            "group_instance_id": instance, "protocol_type": "consumer", "protocol_name": protocol,
            "assignments": [{"member_id": m, "assignment": a} for m, a in assignments]}


def hb_body(generation, member_id, instance=None):
    return {"group_id": G, "generation_id": generation, "member_id": member_id,
            "group_instance_id": instance}


def leave_body(member_id, reason, instance=None):
    return {"group_id": G, "members": [{"member_id": member_id, "group_instance_id": instance,
                                        "reason": reason}]}


FC_BODY = {"key": G, "key_type": 0, "coordinator_keys": [G]}


def probe(action, member_id, generation, error=None, reason=None):
    return {"event": "probe", "action": action, "member_id": member_id,
            "generation": generation, "error": error, "reason": reason}


def err(api, code, name, retriable):
    return {"event": "error", "api": api, "code": code, "name": name, "retriable": retriable}


# ---- driving helpers --------------------------------------------------------------------
def bodies(m) -> list[dict]:
    """The member's events since the last call, as §4 bodies ({"event": TYPE, ...})."""
    return [e.to_dict() for e in m.poll_events()]


def one(m: ClassicMember, now: int, api: str | None = None):
    reqs = m.next_requests(now)
    assert len(reqs) == 1, reqs
    if api is not None:
        assert reqs[0].api == api, reqs[0]
    return reqs[0]


def answer(m, req, body, now):
    assert m.on_response(req.api, body, now, tag=req.tag) is True


def to_stable(m: ClassicMember, now=0, *, member_id="m-1", generation=5, assignment=b"t=0"):
    """Follower path up to STABLE; returns the time it got there."""
    answer(m, one(m, now, "FindCoordinator"), fc(), now)
    answer(m, one(m, now, "JoinGroup"), join(79, member_id=member_id), now)
    answer(m, one(m, now, "JoinGroup"),
           join(member_id=member_id, generation=generation, leader="other"), now)
    answer(m, one(m, now, "SyncGroup"), sync(assignment=assignment), now)
    assert m.state is S.STABLE
    bodies(m)
    return now


def to_joining_with_join_in_flight(m, now=0, member_id="m-1"):
    answer(m, one(m, now, "FindCoordinator"), fc(), now)
    answer(m, one(m, now, "JoinGroup"), join(79, member_id=member_id), now)
    return one(m, now, "JoinGroup")


# ========================================================================================
# The state table
# ========================================================================================
def test_every_state_is_documented_and_in_the_table():
    for state in S:
        assert state in LEGAL_TRANSITIONS
        assert state.__doc__ and len(state.__doc__.split()) > 10, state
    assert LEGAL_TRANSITIONS[S.LEFT] == LEGAL_TRANSITIONS[S.FATAL] == frozenset()
    # every non-terminal state can be left (leave) or ended
    for state in S:
        if not state.terminal:
            assert LEGAL_TRANSITIONS[state] & {S.LEAVING, S.LEFT}, state


def test_illegal_transition_raises_and_is_not_recorded():
    t = StateTracker()
    with pytest.raises(IllegalTransitionError) as exc:
        t.move(S.STABLE, "skip the join", 5)
    assert "UNJOINED -> STABLE" in str(exc.value)
    assert t.state is S.UNJOINED and not t.transitions
    t.move(S.JOINING, "start", 1)
    t.move(S.LEAVING, "bye", 2)
    t.move(S.LEFT, "done", 3)
    with pytest.raises(IllegalTransitionError):
        t.move(S.JOINING, "come back", 4)
    assert [(x.from_state, x.to_state, x.reason, x.at_ms) for x in t.transitions] == [
        (S.UNJOINED, S.JOINING, "start", 1), (S.JOINING, S.LEAVING, "bye", 2),
        (S.LEAVING, S.LEFT, "done", 3)]


def test_a_transition_needs_a_reason():
    with pytest.raises(ValueError):
        StateTracker().move(S.JOINING, "", 0)


def test_illegal_transition_inside_the_member_raises():
    m = make()
    with pytest.raises(IllegalTransitionError):
        m._move(S.STABLE, "no", 0)


def test_constructor_validates():
    with pytest.raises(UsageError):
        make(heartbeat_interval_ms=SESSION)
    with pytest.raises(UsageError):
        make(protocols=[])
    with pytest.raises(UsageError):
        make(protocols=[("range", b""), ("range", b"")])
    with pytest.raises(UsageError):
        ClassicMember("", protocols=PROTOCOLS, session_timeout_ms=1, rebalance_timeout_ms=1,
                      heartbeat_interval_ms=1)


# ========================================================================================
# Happy paths
# ========================================================================================
def test_follower_happy_path_exact_requests_events_and_transitions():
    m = make()
    assert m.state is S.UNJOINED and m.next_deadline_ms() == 0

    r = one(m, 100)
    assert (r.api, r.body, r.route, r.min_version) == ("FindCoordinator", FC_BODY, "any", 0)
    assert m.state is S.JOINING
    assert m.next_requests(100) == []              # one lookup at a time
    answer(m, r, fc(), 101)
    assert m.coordinator == Coordinator(1, "broker1", 9092)

    r = one(m, 101)
    assert (r.api, r.body, r.route) == ("JoinGroup", join_body(""), "join")  # may park: not behind heartbeats
    assert r.timeout_ms == REBALANCE + 5000
    assert m.next_requests(102) == []              # at most one join in flight
    answer(m, r, join(79, member_id="m-1"), 110)
    assert m.state is S.JOINING and m.member_id == "m-1"
    assert bodies(m) == []                   # 79 is part of the handshake, not an error

    r = one(m, 110)                                # at once, no back-off (KIP-394)
    assert (r.api, r.body) == ("JoinGroup", join_body("m-1"))
    answer(m, r, join(member_id="m-1", generation=5, leader="leader-1"), 200)
    assert m.state is S.AWAITING_SYNC
    assert (m.generation_id, m.leader_id, m.protocol_name, m.is_leader) == (5, "leader-1", "range", False)
    assert m.pending_assignment is None and m.members == []
    assert bodies(m) == [
        probe("joined", "m-1", 5),
        {"event": "generation", "generation": 5, "protocol": "range", "leader": "leader-1",
         "members": None},
    ]

    r = one(m, 200)
    assert (r.api, r.body) == ("SyncGroup", sync_body(5, "m-1"))
    assert (r.route, r.timeout_ms) == ("join", REBALANCE + 5000)
    assert m.next_requests(201) == []
    answer(m, r, sync(assignment=b"t=0,1"), 250)
    assert m.state is S.STABLE and m.assignment == b"t=0,1"
    assert bodies(m) == [
        probe("synced", "m-1", 5),
        {"event": "assignment", "member_id": "m-1", "generation": 5,
         "assigned": [{"topic": "t", "partitions": [0, 1]}],
         "added": [{"topic": "t", "partitions": [0, 1]}], "revoked": []},
    ]

    assert m.next_requests(250 + HB - 1) == []
    r = one(m, 250 + HB)
    assert (r.api, r.body) == ("Heartbeat", hb_body(5, "m-1"))
    assert (r.route, r.timeout_ms) == ("control", SESSION)
    answer(m, r, hb(), 250 + HB + 3)
    assert bodies(m) == []

    assert [(t.from_state, t.to_state, t.reason) for t in m.transitions] == [
        (S.UNJOINED, S.JOINING, "start: joining group orders"),
        (S.JOINING, S.JOINING, "MEMBER_ID_REQUIRED: rejoining at once with member id m-1 (KIP-394)"),
        (S.JOINING, S.AWAITING_SYNC, "joined generation 5 as follower (leader leader-1)"),
        (S.AWAITING_SYNC, S.STABLE, "synced generation 5"),
    ]
    assert [t.at_ms for t in m.transitions] == [100, 110, 200, 250]
    rec = m.history[-1]
    assert rec.to_dict() == {"generation": 5, "protocol": "range", "leader": "leader-1",
                             "is_leader": False, "members": None, "started_ms": 100,
                             "joined_ms": 200, "synced_ms": 250, "duration_ms": 150}


def test_leader_happy_path_with_provided_assignment():
    m = make()
    answer(m, one(m, 0), fc(), 0)
    answer(m, one(m, 0), join(79, member_id="probe-1"), 1)
    one(m, 1, "JoinGroup")
    members = [("c-1", None, b"sub-c1"), ("probe-1", None, SUB), ("c-2", "i-2", b"sub-c2")]
    m.on_response("JoinGroup", join(member_id="probe-1", generation=8, leader="probe-1",
                                    protocol="range", members=members), 10)
    assert m.state is S.ASSIGNING and m.is_leader
    assert m.pending_assignment == PendingAssignment(8, "range", "probe-1", (
        JoinedMember("c-1", None, b"sub-c1"), JoinedMember("probe-1", None, SUB),
        JoinedMember("c-2", "i-2", b"sub-c2")))
    assert bodies(m) == [
        probe("joined", "probe-1", 8),
        {"event": "generation", "generation": 8, "protocol": "range", "leader": "probe-1",
         "members": ["c-1", "probe-1", "c-2"]},
    ]
    assert m.transitions[-1].reason == "joined generation 8 as leader of 3 members: assignment needed"
    assert m.next_requests(11) == []               # waiting for the driver

    assert m.provide_assignment({"c-2": b"t=1", "c-1": b"t=0", "probe-1": b""}, 20) is True
    assert m.state is S.AWAITING_SYNC and m.pending_assignment is None
    r = one(m, 20)
    assert r.body == sync_body(8, "probe-1", [("c-1", b"t=0"), ("probe-1", b""), ("c-2", b"t=1")])
    answer(m, r, sync(assignment=b""), 30)
    assert m.state is S.STABLE and m.assignment == b""
    assert bodies(m) == [
        probe("synced", "probe-1", 8),
        {"event": "assignment", "member_id": "probe-1", "generation": 8, "assigned": [],
         "added": [], "revoked": []},
    ]
    assert m.history[-1].members == ["c-1", "probe-1", "c-2"]
    assert m.history[-1].is_leader


def test_leader_with_assign_callback():
    seen = []

    def assign(pending):
        seen.append(pending)
        return {m.member_id: b"t=%d" % i for i, m in enumerate(pending.members)}

    m = make(assign=assign)
    answer(m, one(m, 0), fc(), 0)
    answer(m, one(m, 0), join(member_id="p", generation=2, leader="p",
                              members=[("p", None, SUB), ("q", None, b"x")]), 5)
    assert m.state is S.AWAITING_SYNC and len(seen) == 1
    assert [(t.from_state, t.to_state) for t in m.transitions[-2:]] == [
        (S.JOINING, S.ASSIGNING), (S.ASSIGNING, S.AWAITING_SYNC)]
    assert one(m, 5).body == sync_body(2, "p", [("p", b"t=0"), ("q", b"t=1")])


class UnsupportedAssignor(GroupctlError):
    pass


@pytest.mark.parametrize("raised, expected_type, text", [
    (UnsupportedAssignor("no assignor named 'my-custom'"), UnsupportedAssignor,
     "no assignor named 'my-custom'"),
    (KeyError("unknown assignor 'my-custom'"), GroupctlError, "unknown assignor 'my-custom'"),
])
def test_leader_that_cannot_assign_leaves_at_once_and_ends_fatal(raised, expected_type, text):
    def assign(pending):
        raise raised

    m = make(assign=assign)
    answer(m, one(m, 0), fc(), 0)
    answer(m, one(m, 0), join(member_id="p", generation=2, leader="p", protocol="my-custom",
                              members=[("p", None, SUB), ("q", None, b"x")]), 5)
    assert m.state is S.LEAVING
    why = f"leader cannot assign: {text}"
    r = one(m, 5, "LeaveGroup")
    assert r.body == leave_body("p", f"groupctl probe: leaving: {why}")
    assert r.min_version == 3
    bodies(m)
    answer(m, r, leave_resp(members=[("p", None, 0)]), 6)
    assert m.state is S.FATAL and m.done
    assert isinstance(m.fatal_error, expected_type)
    if raised.__class__ is UnsupportedAssignor:
        assert m.fatal_error is raised
    else:
        assert "cannot assign" in str(m.fatal_error)
    assert m.transitions[-2].reason == f"leave: {why}"
    assert m.transitions[-1].reason == f"{why} (left the group)"
    assert bodies(m) == [
        probe("left", "p", 2, reason=f"groupctl probe: leaving: {why}"),
        probe("failed", "p", 2, reason=why),
    ]
    assert m.next_requests(100) == []


def test_assignment_failed_called_by_the_driver():
    m = make()
    answer(m, one(m, 0), fc(), 0)
    answer(m, one(m, 0), join(member_id="p", generation=2, leader="p", protocol="custom",
                              members=[("p", None, SUB)]), 5)
    assert m.assignment_failed("unknown assignor 'custom'", 7) is True
    assert m.state is S.LEAVING and m.pending_assignment is None
    r = one(m, 7, "LeaveGroup")
    m.on_failure("LeaveGroup", "timeout", 9, tag=r.tag)      # even a failed leave ends it
    assert m.state is S.FATAL
    assert m.fatal_error.exit_code == ExitCode.INTERNAL
    assert "unknown assignor 'custom'" in str(m.fatal_error)
    assert m.assignment_failed("again", 10) is False


def test_provide_assignment_too_late_or_wrong():
    m = make()
    answer(m, one(m, 0), fc(), 0)
    answer(m, one(m, 0), join(member_id="p", generation=2, leader="p",
                              members=[("p", None, SUB)]), 5)
    with pytest.raises(ValueError):
        m.provide_assignment({"ghost": b""}, 6)
    assert m.provide_assignment({"p": b""}, 6, generation_id=1) is False   # stale generation
    assert m.state is S.ASSIGNING
    # the heartbeat says the group is rebalancing again: the pending assignment is dropped
    answer(m, one(m, 5 + HB, "Heartbeat"), hb(27), 5 + HB)
    assert m.state is S.JOINING and m.pending_assignment is None
    assert m.provide_assignment({"p": b""}, 6) is False


def test_skip_assignment_leader_sends_empty_sync():
    m = make(group_instance_id="probe-a")
    answer(m, one(m, 0), fc(), 0)
    answer(m, one(m, 0), join(member_id="p", generation=4, leader="p", skip=True,
                              members=[("p", "probe-a", SUB), ("q", "inst-q", b"x")]), 5)
    assert m.state is S.AWAITING_SYNC and m.pending_assignment is None and m.is_leader
    assert m.transitions[-1].reason == (
        "joined generation 4 as leader told to skip assignment (KIP-814): empty SyncGroup")
    r = one(m, 5)
    assert r.body == sync_body(4, "p", [], instance="probe-a") and r.min_version == 3
    answer(m, r, sync(assignment=b"t=3"), 6)
    assert m.state is S.STABLE and m.assignment == b"t=3"
    gen_event = [e for e in bodies(m) if e["event"] == "generation"][0]
    assert gen_event["members"] == ["p", "q"]


def test_static_member_joins_without_member_id_round():
    m = make(group_instance_id="probe-a")
    answer(m, one(m, 0), fc(), 0)
    r = one(m, 0, "JoinGroup")
    assert r.body == join_body("", instance="probe-a") and r.min_version == 5
    answer(m, r, join(member_id="probe-a-uuid", generation=3, leader="x"), 3)
    r = one(m, 3, "SyncGroup")
    assert r.body == sync_body(3, "probe-a-uuid", instance="probe-a")
    answer(m, r, sync(), 4)
    r = one(m, 4 + HB, "Heartbeat")
    assert r.body == hb_body(3, "probe-a-uuid", instance="probe-a") and r.min_version == 3
    m.leave("done", 5000)
    r = one(m, 5000, "LeaveGroup")
    assert r.body == leave_body("probe-a-uuid", "groupctl probe: leaving: done", instance="probe-a")


def test_find_coordinator_v4_response_and_driver_provided_coordinator():
    m = make()
    answer(m, one(m, 0), fc_v4(), 0)
    assert m.coordinator == Coordinator(2, "broker2", 9093)
    m2 = make()
    m2.coordinator_found(3, "b3", 9094)
    assert one(m2, 0).api == "JoinGroup"


# ========================================================================================
# JoinGroup errors
# ========================================================================================
def test_join_unknown_member_id_resets_member_id_and_rejoins_at_once():
    m = make()
    r = to_joining_with_join_in_flight(m)
    bodies(m)
    answer(m, r, join(25), 5)
    assert m.state is S.JOINING and m.member_id == "" and m.generation_id == -1
    assert m.transitions[-1].reason == "UNKNOWN_MEMBER_ID: member id reset, rejoining"
    assert bodies(m) == [err("JoinGroup", 25, "UNKNOWN_MEMBER_ID", False)]
    assert one(m, 5).body == join_body("")


def test_join_rebalance_in_progress_rejoins_at_once_keeping_member_id():
    m = make()
    answer(m, to_joining_with_join_in_flight(m), join(27), 5)
    assert m.state is S.JOINING
    assert one(m, 5).body == join_body("m-1")


def test_join_illegal_generation_resets_generation():
    m = make()
    to_stable(m)
    answer(m, one(m, HB, "Heartbeat"), hb(27), HB)
    answer(m, one(m, HB, "JoinGroup"), join(22), HB + 1)
    assert (m.state, m.generation_id, m.member_id) == (S.JOINING, -1, "m-1")
    assert one(m, HB + 1).body["member_id"] == "m-1"


@pytest.mark.parametrize("code, name", [(15, "COORDINATOR_NOT_AVAILABLE"), (16, "NOT_COORDINATOR")])
def test_join_coordinator_moved_rediscovers_after_backoff(code, name):
    m = make()
    answer(m, to_joining_with_join_in_flight(m), join(code), 10)
    assert m.state is S.JOINING and m.coordinator is None
    assert m.transitions[-1].reason == f"{name}: rediscovering the coordinator, retrying in 100 ms"
    assert bodies(m) == [err("JoinGroup", code, name, True)]
    assert m.next_deadline_ms() == 110
    assert m.next_requests(109) == []
    r = one(m, 110, "FindCoordinator")
    answer(m, r, fc(node=7, host="b7"), 111)
    assert m.coordinator == Coordinator(7, "b7", 9092)
    assert one(m, 111).body == join_body("m-1")


def test_join_coordinator_loading_backs_off_exponentially():
    m = make()
    r = to_joining_with_join_in_flight(m)
    now = 0
    for delay in (100, 200, 400, 800, 1000, 1000):
        answer(m, r, join(14), now)
        assert m.state is S.JOINING and m.coordinator is not None
        assert m.transitions[-1].reason == f"COORDINATOR_LOAD_IN_PROGRESS: retrying in {delay} ms"
        assert m.next_requests(now + delay - 1) == []
        now += delay
        r = one(m, now, "JoinGroup")
    # success resets the back-off
    answer(m, r, join(member_id="m-1", generation=1, leader="x"), now)
    answer(m, one(m, now), sync(), now)
    answer(m, one(m, now + HB), hb(14), now + HB)
    assert m.next_requests(now + HB + 99) == []
    assert one(m, now + HB + 100).api == "Heartbeat"


FATAL = [(82, "FENCED_INSTANCE_ID", KafkaError, ExitCode.KAFKA_ERROR, "fenced"),
         (23, "INCONSISTENT_GROUP_PROTOCOL", KafkaError, ExitCode.KAFKA_ERROR, "failed"),
         (26, "INVALID_SESSION_TIMEOUT", KafkaError, ExitCode.KAFKA_ERROR, "failed"),
         (81, "GROUP_MAX_SIZE_REACHED", KafkaError, ExitCode.KAFKA_ERROR, "failed"),
         (24, "INVALID_GROUP_ID", KafkaError, ExitCode.KAFKA_ERROR, "failed"),
         (30, "GROUP_AUTHORIZATION_FAILED", AuthError, ExitCode.AUTH, "failed")]


@pytest.mark.parametrize("code, name, exc_type, exit_code, action", FATAL)
def test_join_fatal_errors(code, name, exc_type, exit_code, action):
    m = make()
    answer(m, to_joining_with_join_in_flight(m), join(code), 10)
    assert m.state is S.FATAL and m.done
    assert isinstance(m.fatal_error, exc_type) and m.fatal_error.exit_code == exit_code
    assert m.fatal_error.code == code and m.fatal_error.api == "JoinGroup"
    assert m.transitions[-1].reason.startswith(f"JoinGroup: {name} ({code}) is fatal")
    events = bodies(m)
    assert events[0] == err("JoinGroup", code, name, False)
    assert events[1]["event"] == "probe" and events[1]["action"] == action
    assert events[1]["error"] == name
    assert m.next_requests(10_000) == [] and m.next_deadline_ms() is None
    assert m.leave("exit", 10_001) is False


def test_join_unexpected_errors_retriable_retry_others_fatal():
    m = make()
    answer(m, to_joining_with_join_in_flight(m), join(-1), 10)  # UNKNOWN_SERVER_ERROR
    assert m.state is S.FATAL and m.fatal_error.code == -1


def test_join_response_with_other_protocol_type_is_fatal():
    m = make()
    answer(m, to_joining_with_join_in_flight(m),
           join(member_id="m-1", generation=1, leader="x", protocol_type="connect"), 10)
    assert m.state is S.FATAL and m.fatal_error.code == 23


def test_join_transport_failure_rediscovers_and_retries():
    m = make()
    r = to_joining_with_join_in_flight(m)
    assert m.on_failure("JoinGroup", "timeout", 50, tag=r.tag) is True
    assert m.state is S.JOINING and m.coordinator is None
    assert m.transitions[-1].reason == (
        "JoinGroup failed (timeout): rediscovering the coordinator, retrying in 100 ms")
    assert one(m, 150).api == "FindCoordinator"


# ========================================================================================
# SyncGroup errors
# ========================================================================================
def to_sync_in_flight(m, now=0):
    r = to_joining_with_join_in_flight(m, now)
    answer(m, r, join(member_id="m-1", generation=5, leader="x"), now)
    bodies(m)
    return one(m, now, "SyncGroup")


def test_sync_rebalance_in_progress_rejoins_keeping_member_id():
    m = make()
    answer(m, to_sync_in_flight(m), sync(27), 20)
    assert (m.state, m.member_id, m.generation_id) == (S.JOINING, "m-1", 5)
    assert m.transitions[-1].reason == "REBALANCE_IN_PROGRESS on SyncGroup: rejoining"
    assert bodies(m) == [
        err("SyncGroup", 27, "REBALANCE_IN_PROGRESS", False),
        probe("rejoining", "m-1", 5, error="REBALANCE_IN_PROGRESS",
              reason="REBALANCE_IN_PROGRESS on SyncGroup"),
    ]
    r = one(m, 20)
    assert r.body == join_body(
        "m-1", reason="groupctl probe: rejoining: REBALANCE_IN_PROGRESS on SyncGroup")
    answer(m, r, join(member_id="m-1", generation=6, leader="x"), 40)
    assert m.history[-1].started_ms == 20 and m.history[-1].generation == 6


def test_sync_illegal_generation_resets_generation():
    m = make()
    answer(m, to_sync_in_flight(m), sync(22), 20)
    assert (m.state, m.member_id, m.generation_id) == (S.JOINING, "m-1", -1)
    assert m.transitions[-1].reason == (
        "ILLEGAL_GENERATION on SyncGroup: generation reset; rejoining")
    assert one(m, 20).body["member_id"] == "m-1"


def test_sync_unknown_member_resets_member_id():
    m = make()
    answer(m, to_sync_in_flight(m), sync(25), 20)
    assert (m.state, m.member_id, m.generation_id) == (S.JOINING, "", -1)
    assert m.transitions[-1].reason == (
        "UNKNOWN_MEMBER_ID on SyncGroup: member id and generation reset; rejoining")
    assert one(m, 20).body["member_id"] == ""


@pytest.mark.parametrize("code", [15, 16])
def test_sync_coordinator_moved_rediscovers_and_rejoins(code):
    m = make()
    answer(m, to_sync_in_flight(m), sync(code), 20)
    assert m.state is S.JOINING and m.coordinator is None
    assert one(m, 120).api == "FindCoordinator"


@pytest.mark.parametrize("code, name, exc_type, exit_code, action", FATAL)
def test_sync_fatal_errors(code, name, exc_type, exit_code, action):
    m = make()
    answer(m, to_sync_in_flight(m), sync(code), 20)
    assert m.state is S.FATAL and m.fatal_error.exit_code == exit_code
    assert bodies(m)[-1]["action"] == action


def test_sync_transport_failure_rejoins():
    m = make()
    r = to_sync_in_flight(m)
    m.on_failure("SyncGroup", "disconnected", 20, tag=r.tag)
    assert m.state is S.JOINING and m.coordinator is None
    assert bodies(m) == [probe("rejoining", "m-1", 5, error="disconnected",
                                     reason="SyncGroup failed (disconnected)")]


def test_sync_answer_with_other_protocol_is_fatal():
    m = make()
    answer(m, to_sync_in_flight(m), sync(protocol="roundrobin"), 20)
    assert m.state is S.FATAL and m.fatal_error.code == 23


# ========================================================================================
# Heartbeats
# ========================================================================================
def test_heartbeat_timing_one_at_a_time_measured_from_send():
    m = make()
    to_stable(m, 1000)
    assert m.next_deadline_ms() == 1000 + HB
    assert m.next_requests(1000 + HB - 1) == []
    r = one(m, 1000 + HB, "Heartbeat")
    assert m.next_deadline_ms() == 1000 + SESSION      # waiting for the answer; session bound
    assert m.next_requests(1000 + 2 * HB + 10) == []   # never two in flight
    answer(m, r, hb(), 1000 + 2 * HB + 20)             # a slow answer
    r = one(m, 1000 + 2 * HB + 20, "Heartbeat")        # the next one was already due
    answer(m, r, hb(), 1000 + 2 * HB + 25)
    assert m.next_deadline_ms() == 1000 + 3 * HB + 20
    assert m.next_requests(1000 + 3 * HB + 19) == []
    assert one(m, 1000 + 3 * HB + 20).api == "Heartbeat"


def test_heartbeats_pause_while_join_and_sync_are_in_flight():
    m = make()
    to_stable(m)
    answer(m, one(m, HB), hb(27), HB)
    r = one(m, HB, "JoinGroup")                       # a join is parked at the broker...
    for t in range(HB, HB + 5 * SESSION, HB):         # ...for long: no heartbeats, no expiry
        assert m.next_requests(t) == []
    assert m.state is S.JOINING
    answer(m, r, join(member_id="m-1", generation=6, leader="x"), 60_000)
    r = one(m, 60_000, "SyncGroup")
    assert m.next_requests(60_000 + HB) == []
    answer(m, r, sync(), 60_000 + HB)
    assert m.next_requests(60_000 + 2 * HB - 1) == []
    assert one(m, 60_000 + 2 * HB).body == hb_body(6, "m-1")


def test_leader_heartbeats_while_assigning():
    m = make()
    answer(m, one(m, 0), fc(), 0)
    answer(m, one(m, 0), join(member_id="p", generation=2, leader="p",
                              members=[("p", None, SUB)]), 0)
    r = one(m, HB, "Heartbeat")
    assert r.body == hb_body(2, "p")
    answer(m, r, hb(), HB)
    assert m.state is S.ASSIGNING
    # a heartbeat still in flight when the assignment arrives is forgotten
    r = one(m, 2 * HB, "Heartbeat")
    m.provide_assignment({"p": b""}, 2 * HB)
    assert m.on_response("Heartbeat", hb(27), 2 * HB + 1, tag=r.tag) is False
    assert m.state is S.AWAITING_SYNC


def test_heartbeat_rebalance_in_progress_rejoins_at_once():
    m = make()
    to_stable(m)
    answer(m, one(m, HB), hb(27), HB + 1)
    assert (m.state, m.member_id, m.generation_id) == (S.JOINING, "m-1", 5)
    assert m.transitions[-1].reason == "REBALANCE_IN_PROGRESS on Heartbeat: rejoining"
    assert bodies(m) == [
        err("Heartbeat", 27, "REBALANCE_IN_PROGRESS", False),
        probe("rejoining", "m-1", 5, error="REBALANCE_IN_PROGRESS",
              reason="REBALANCE_IN_PROGRESS on Heartbeat"),
    ]
    assert one(m, HB + 1).body == join_body(
        "m-1", reason="groupctl probe: rejoining: REBALANCE_IN_PROGRESS on Heartbeat")


def test_heartbeat_illegal_generation_resets_generation_and_rejoins():
    m = make()
    to_stable(m)
    answer(m, one(m, HB), hb(22), HB)
    assert (m.state, m.member_id, m.generation_id) == (S.JOINING, "m-1", -1)
    events = bodies(m)
    assert events[1] == probe("rejoining", "m-1", 5, error="ILLEGAL_GENERATION",
                              reason="ILLEGAL_GENERATION on Heartbeat")
    assert one(m, HB).body["member_id"] == "m-1"


def test_heartbeat_unknown_member_resets_member_id_and_rejoins():
    m = make()
    to_stable(m)
    answer(m, one(m, HB), hb(25), HB)
    assert (m.state, m.member_id, m.generation_id) == (S.JOINING, "", -1)
    r = one(m, HB)
    assert r.body["member_id"] == ""
    answer(m, r, join(79, member_id="m-2"), HB + 1)
    assert one(m, HB + 1).body["member_id"] == "m-2"


@pytest.mark.parametrize("code, name", [(15, "COORDINATOR_NOT_AVAILABLE"), (16, "NOT_COORDINATOR")])
def test_heartbeat_coordinator_moved_rediscovers_and_stays_stable(code, name):
    m = make()
    to_stable(m)
    answer(m, one(m, HB), hb(code), HB)
    assert m.state is S.STABLE and m.coordinator is None
    assert bodies(m) == [
        err("Heartbeat", code, name, True),
        probe("heartbeat_error", "m-1", 5, error=name,
              reason=f"{name} on Heartbeat: rediscovering the coordinator"),
    ]
    assert m.next_requests(HB + 99) == []
    answer(m, one(m, HB + 100, "FindCoordinator"), fc(node=2, host="b2"), HB + 101)
    assert one(m, HB + 101).body == hb_body(5, "m-1")


def test_heartbeat_coordinator_loading_retries_after_backoff():
    m = make()
    to_stable(m)
    answer(m, one(m, HB), hb(14), HB)
    assert m.state is S.STABLE and m.coordinator is not None
    assert bodies(m)[1]["action"] == "heartbeat_error"
    assert m.next_requests(HB + 99) == []
    assert one(m, HB + 100).api == "Heartbeat"


def test_heartbeat_fenced_instance_is_fatal():
    m = make(group_instance_id="probe-a")
    to_stable(m)
    answer(m, one(m, HB), hb(82), HB)
    assert m.state is S.FATAL and isinstance(m.fatal_error, KafkaError)
    assert m.fatal_error.exit_code == ExitCode.KAFKA_ERROR
    assert bodies(m) == [
        err("Heartbeat", 82, "FENCED_INSTANCE_ID", False),
        probe("fenced", "m-1", 5, error="FENCED_INSTANCE_ID",
              reason="another member joined with the same group.instance.id"),
    ]


def test_heartbeat_authorization_failure_is_fatal_with_exit_4():
    m = make()
    to_stable(m)
    answer(m, one(m, HB), hb(30), HB)
    assert m.state is S.FATAL and isinstance(m.fatal_error, AuthError)
    assert m.fatal_error.exit_code == ExitCode.AUTH


def test_heartbeat_transport_failure_keeps_membership():
    m = make()
    to_stable(m)
    r = one(m, HB)
    m.on_failure("Heartbeat", "timeout", HB + 50, tag=r.tag)
    assert m.state is S.STABLE and m.coordinator is None
    assert bodies(m) == [probe("heartbeat_error", "m-1", 5, error="timeout",
                                     reason="Heartbeat failed (timeout): rediscovering the coordinator")]
    assert one(m, HB + 150).api == "FindCoordinator"


def test_session_expiry_resets_generation_and_rejoins():
    m = make()
    to_stable(m, 1000)
    r = one(m, 1000 + HB, "Heartbeat")
    m.on_failure("Heartbeat", "timeout", 1000 + HB + 100, tag=r.tag)
    now = 1000 + HB + 200
    fcr = one(m, now, "FindCoordinator")
    m.on_failure("FindCoordinator", "disconnected", now + 1, tag=fcr.tag)
    bodies(m)
    assert m.next_deadline_ms() == now + 1 + 200          # second back-off step
    # still nothing answers; the session runs out
    lookup = one(m, now + 201, "FindCoordinator")
    assert m.next_deadline_ms() == 1000 + SESSION
    assert m.next_requests(1000 + SESSION - 1) == []
    assert m.state is S.STABLE
    reqs = m.next_requests(1000 + SESSION)
    assert m.state is S.JOINING and (m.member_id, m.generation_id) == ("m-1", -1)
    why = f"session timeout expired: no successful heartbeat for {SESSION} ms"
    assert m.transitions[-1].reason == f"{why}: generation reset; rejoining"
    assert bodies(m) == [probe("rejoining", "m-1", 5, reason=why)]
    assert reqs == []                                      # the lookup is still in flight
    answer(m, lookup, fc(), 1000 + SESSION + 1)
    assert one(m, 1000 + SESSION + 1).body == join_body(
        "m-1", reason=f"groupctl probe: rejoining: {why}")


def test_session_expiry_with_heartbeat_never_answered():
    m = make()
    to_stable(m)
    r = one(m, HB, "Heartbeat")
    assert m.next_requests(SESSION - 1) == []
    reqs = m.next_requests(SESSION)
    assert m.state is S.JOINING and [x.api for x in reqs] == ["FindCoordinator"]
    assert m.on_response("Heartbeat", hb(), SESSION + 1, tag=r.tag) is False  # too late


# ========================================================================================
# Leaving
# ========================================================================================
def test_leave_before_start_sends_nothing():
    m = make()
    assert m.leave("ctrl-c", 5) is True
    assert m.state is S.LEFT and m.next_requests(6) == []
    assert m.transitions[-1].reason == "leave (ctrl-c): not a member yet, nothing to leave"
    assert bodies(m) == [probe("left", None, None, reason="groupctl probe: leaving: ctrl-c")]


def test_leave_while_first_join_in_flight_without_member_id():
    m = make()
    answer(m, one(m, 0), fc(), 0)
    r = one(m, 0, "JoinGroup")
    m.leave("ctrl-c", 1)
    assert m.state is S.LEFT and m.next_requests(2) == []
    assert m.on_response("JoinGroup", join(79, member_id="m-1"), 3, tag=r.tag) is False


def test_leave_while_join_is_parked_force_rebalance():
    m = make()
    parked = to_joining_with_join_in_flight(m)
    assert m.leave("force-rebalance", 50) is True
    assert m.state is S.LEAVING and m.in_flight == {}
    r = one(m, 50)                                 # sent while the JoinGroup is parked
    assert r.body == leave_body("m-1", "groupctl probe: leaving: force-rebalance")
    answer(m, r, leave_resp(members=[("m-1", None, 0)]), 60)
    assert m.state is S.LEFT
    # the broker now answers the parked join; it is ignored
    assert m.on_response("JoinGroup", join(25), 70, tag=parked.tag) is False
    assert m.on_response("JoinGroup", join(25), 70) is False
    assert m.state is S.LEFT and m.next_requests(80) == []
    assert bodies(m) == [probe("left", "m-1", None,
                                     reason="groupctl probe: leaving: force-rebalance")]


def test_leave_while_assigning():
    m = make()
    answer(m, one(m, 0), fc(), 0)
    answer(m, one(m, 0), join(member_id="p", generation=2, leader="p",
                              members=[("p", None, SUB)]), 0)
    m.leave("stop", 10)
    assert m.state is S.LEAVING and m.pending_assignment is None
    assert m.provide_assignment({"p": b""}, 11) is False
    answer(m, one(m, 11, "LeaveGroup"), leave_resp(), 12)
    assert m.state is S.LEFT


def test_leave_while_sync_in_flight():
    m = make()
    s = to_sync_in_flight(m)
    m.leave("stop", 10)
    r = one(m, 10, "LeaveGroup")
    assert m.on_response("SyncGroup", sync(), 11, tag=s.tag) is False
    answer(m, r, leave_resp(), 12)
    assert m.state is S.LEFT


def test_leave_when_stable_then_left():
    m = make()
    to_stable(m)
    hbr = one(m, HB, "Heartbeat")
    m.leave("duration reached", HB + 1)
    r = one(m, HB + 1)
    assert (r.api, r.body) == ("LeaveGroup", leave_body(
        "m-1", "groupctl probe: leaving: duration reached"))
    assert m.on_response("Heartbeat", hb(27), HB + 2, tag=hbr.tag) is False
    assert m.state is S.LEAVING
    answer(m, r, leave_resp(), HB + 3)
    assert m.state is S.LEFT
    assert [(t.from_state, t.to_state, t.reason) for t in m.transitions[-2:]] == [
        (S.STABLE, S.LEAVING, "leave: duration reached"),
        (S.LEAVING, S.LEFT, "left the group")]
    assert bodies(m) == [probe("left", "m-1", 5,
                                     reason="groupctl probe: leaving: duration reached")]


def test_leave_when_rejoining_after_rebalance_signal():
    m = make()
    to_stable(m)
    answer(m, one(m, HB), hb(27), HB)              # JOINING, join not yet sent
    m.leave("stop", HB)
    assert one(m, HB).api == "LeaveGroup"


def test_leave_with_unknown_coordinator_looks_it_up_first_without_backoff():
    m = make()
    to_stable(m)
    answer(m, one(m, HB), hb(16), HB)              # coordinator unknown, back-off set
    m.leave("stop", HB)
    assert m.next_deadline_ms() == 0
    answer(m, one(m, HB, "FindCoordinator"), fc(node=4), HB + 1)
    assert one(m, HB + 1, "LeaveGroup").body["members"][0]["member_id"] == "m-1"


def test_leave_ends_left_when_the_coordinator_cannot_be_found():
    m = make()
    to_stable(m)
    answer(m, one(m, HB), hb(16), HB)
    m.leave("stop", HB)
    bodies(m)
    answer(m, one(m, HB, "FindCoordinator"), fc(15), HB + 1)
    assert m.state is S.LEFT
    assert m.transitions[-1].reason == (
        "could not find the coordinator to leave (COORDINATOR_NOT_AVAILABLE)")


@pytest.mark.parametrize("body, error", [
    (leave_resp(25), "UNKNOWN_MEMBER_ID"),
    (leave_resp(0, members=[("m-1", None, 25)]), "UNKNOWN_MEMBER_ID"),
    (leave_resp(24), "INVALID_GROUP_ID"),
])
def test_any_leave_error_still_ends_left(body, error):
    m = make()
    to_stable(m)
    m.leave("stop", 1)
    answer(m, one(m, 1), body, 2)
    assert m.state is S.LEFT
    assert bodies(m)[-1] == probe("left", "m-1", 5, error=error,
                                        reason="groupctl probe: leaving: stop")
    assert m.transitions[-1].reason == f"LeaveGroup answered {error}; membership ends anyway"


def test_leave_twice_and_after_terminal():
    m = make()
    to_stable(m)
    assert m.leave("a", 1) is True
    assert m.leave("b", 2) is False
    one(m, 2, "LeaveGroup")
    assert m.next_requests(3) == []                # one LeaveGroup only
    m.on_failure("LeaveGroup", "disconnected", 4)
    assert m.state is S.LEFT and m.leave("c", 5) is False


@pytest.mark.parametrize("state", [s for s in S if not s.terminal])
def test_leave_works_in_every_non_terminal_state(state):
    m = make()
    if state is not S.UNJOINED:
        answer(m, one(m, 0), fc(), 0)
        answer(m, one(m, 0), join(79, member_id="p"), 0)
        r = one(m, 0)
        if state is not S.JOINING:
            answer(m, r, join(member_id="p", generation=1, leader="p",
                              members=[("p", None, SUB)]), 0)
            if state is not S.ASSIGNING:
                m.provide_assignment({"p": b""}, 0)
                r = one(m, 0)
                if state is not S.AWAITING_SYNC:
                    answer(m, r, sync(), 0)
                    if state is S.LEAVING:
                        m.leave("first", 0)
    assert m.state is state
    m.leave("exit", 1)
    if state is S.UNJOINED:
        assert m.state is S.LEFT
        return
    r = one(m, 1, "LeaveGroup")
    assert r.body["members"][0]["member_id"] == "p"
    answer(m, r, leave_resp(), 2)
    assert m.state is S.LEFT


def test_leave_reason_truncated_to_255_chars():
    m = make()
    to_stable(m)
    m.leave("x" * 400, 1)
    reason = one(m, 1).body["members"][0]["reason"]
    assert len(reason) == 255 and reason.startswith("groupctl probe: leaving: xxx")


def test_join_reason_prefix_is_configurable_and_truncated():
    m = make(reason_prefix="p" * 300)
    answer(m, one(m, 0), fc(), 0)
    assert one(m, 0).body["reason"] == "p" * 255


# ========================================================================================
# FindCoordinator, stale answers, bookkeeping
# ========================================================================================
def test_find_coordinator_errors():
    m = make()
    r = one(m, 0)
    answer(m, r, fc(15), 1)
    assert m.state is S.JOINING and bodies(m) == [
        err("FindCoordinator", 15, "COORDINATOR_NOT_AVAILABLE", True)]
    assert m.next_requests(100) == []
    r = one(m, 101, "FindCoordinator")
    answer(m, r, fc_v4(30), 102)
    assert m.state is S.FATAL and isinstance(m.fatal_error, AuthError)


def test_stale_and_unknown_answers_are_ignored():
    m = make()
    r = one(m, 0)
    assert m.on_response("FindCoordinator", fc(), 1, tag=r.tag + 1) is False
    assert m.on_response("JoinGroup", join(), 1) is False
    assert m.on_failure("SyncGroup", "timeout", 1) is False
    assert m.in_flight == {"FindCoordinator": r.tag}
    with pytest.raises(ValueError):
        m.on_response("OffsetCommit", {}, 1)
    answer(m, r, fc(), 2)


def test_history_keeps_every_generation_with_durations():
    m = make()
    to_stable(m, 0)                                   # generation 5 at t=0
    answer(m, one(m, HB), hb(27), 4000)
    answer(m, one(m, 4000), join(member_id="m-1", generation=6, leader="x"), 4500)
    answer(m, one(m, 4500), sync(assignment=b"t=0,1;u=2"), 4700)
    assert [(g.generation, g.started_ms, g.joined_ms, g.synced_ms, g.duration_ms)
            for g in m.history] == [(5, 0, 0, 0, 0), (6, 4000, 4500, 4700, 700)]
    events = bodies(m)
    assert events[-1] == {
        "event": "assignment", "member_id": "m-1", "generation": 6,
        "assigned": [{"topic": "t", "partitions": [0, 1]}, {"topic": "u", "partitions": [2]}],
        "added": [{"topic": "t", "partitions": [1]}, {"topic": "u", "partitions": [2]}],
        "revoked": []}
    answer(m, one(m, 4700 + HB), hb(27), 8000)
    answer(m, one(m, 8000), join(member_id="m-1", generation=7, leader="x"), 8001)
    answer(m, one(m, 8001), sync(assignment=b"u=2,3"), 8002)
    assert bodies(m)[-1]["revoked"] == [{"topic": "t", "partitions": [0, 1]}]
    snap = m.as_dict()
    assert snap["state"] == "STABLE" and snap["generation"] == 7
    assert snap["coordinator"] == {"id": 1, "host": "broker1", "port": 9092}


def test_undecodable_assignment_gives_null_diff():
    def bad(data):
        raise ValueError("not consumer protocol")

    m = make(decode_assignment=bad)
    to_stable(m)
    answer(m, one(m, HB), hb(27), HB)
    answer(m, one(m, HB), join(member_id="m-1", generation=6, leader="x"), HB)
    answer(m, one(m, HB), sync(assignment=b"\xff"), HB)
    assert bodies(m)[-1] == {"event": "assignment", "member_id": "m-1", "generation": 6,
                                   "assigned": None, "added": None, "revoked": None}


def test_set_protocols_applies_to_the_next_join():
    m = make()
    to_stable(m)
    m.set_protocols([("range", b"new-sub")])
    answer(m, one(m, HB), hb(27), HB)
    assert one(m, HB).body["protocols"] == [{"name": "range", "metadata": b"new-sub"}]


# ========================================================================================
# Glue with the real consumer-protocol codec and assignors (the driver's job, shown here)
# ========================================================================================
def test_leader_glue_with_real_codec_and_range_assignor():
    sub_a = consumer.encode_subscription(consumer.Subscription(topics=["t"]))
    sub_p = consumer.encode_subscription(consumer.Subscription(topics=[]))

    def assign(pending):
        subs = []
        for jm in pending.members:
            s = consumer.decode_subscription(jm.metadata)
            subs.append(assignors.MemberSubscription(jm.member_id, list(s.topics),
                                                     group_instance_id=jm.group_instance_id))
        plan = assignors.get_assignor(pending.protocol_name).assign({"t": 4}, subs)
        return {mid: consumer.encode_assignment(consumer.Assignment(assigned_partitions=[
            consumer.TopicPartitions(t, ps) for t, ps in sorted(tps.items())]))
            for mid, tps in plan.items()}

    m = ClassicMember(G, protocols=[("range", sub_p)], session_timeout_ms=SESSION,
                      rebalance_timeout_ms=REBALANCE, heartbeat_interval_ms=HB, assign=assign)
    answer(m, one(m, 0), fc(), 0)
    answer(m, one(m, 0), join(member_id="p", generation=3, leader="p",
                              members=[("c", None, sub_a), ("p", None, sub_p)]), 1)
    r = one(m, 1, "SyncGroup")
    sent = {a["member_id"]: consumer.decode_assignment(a["assignment"]) for a in r.body["assignments"]}
    assert [(tp.topic, tp.partitions) for tp in sent["c"].assigned_partitions] == [("t", [0, 1, 2, 3])]
    assert sent["p"].assigned_partitions == []
    bodies(m)
    answer(m, r, sync(assignment=r.body["assignments"][1]["assignment"]), 2)
    # the default assignment decoder is the consumer-protocol codec
    assert bodies(m)[-1] == {"event": "assignment", "member_id": "p", "generation": 3,
                                   "assigned": [], "added": [], "revoked": []}


def test_default_decoder_reads_consumer_protocol_assignments():
    data = consumer.encode_assignment(consumer.Assignment(assigned_partitions=[
        consumer.TopicPartitions("t", [2, 0])]))
    m = make(decode_assignment=None)
    to_stable(m, assignment=data)
    assert m.assignment == data
    m2 = make(decode_assignment=None)
    answer(m2, one(m2, 0), fc(), 0)
    answer(m2, one(m2, 0), join(member_id="m", generation=1, leader="x"), 0)
    answer(m2, one(m2, 0), sync(assignment=data), 0)
    assert bodies(m2)[-1]["assigned"] == [{"topic": "t", "partitions": [0, 2]}]


def test_unknown_assignor_from_get_assignor_leaves_and_fails():

    def assign(pending):
        assignors.get_assignor(pending.protocol_name)
        raise AssertionError("unreachable")

    m = make(assign=assign)
    answer(m, one(m, 0), fc(), 0)
    answer(m, one(m, 0), join(member_id="p", generation=3, leader="p", protocol="my-custom",
                              members=[("p", None, SUB)]), 1)
    r = one(m, 1, "LeaveGroup")
    assert r.body["members"][0]["reason"].startswith(
        "groupctl probe: leaving: leader cannot assign: unknown assignor 'my-custom'")
    answer(m, r, leave_resp(), 2)
    assert m.state is S.FATAL and "unknown assignor 'my-custom'" in str(m.fatal_error)


def test_the_leave_names_the_member_ids_given_up_too():
    """bench/leave_soak.py's probe-frozen: the broker frozen past the session, thawed; the
    heartbeat's UNKNOWN_MEMBER_ID resets the member id (m-1) and the rejoin gets m-2. The
    coordinator then unloaded and loaded the group from its last stored generation, which
    held m-1 again: the leave names m-1 beside m-2, and m-1's UNKNOWN_MEMBER_ID (the usual
    answer) is no error of the leave."""
    m = make()
    to_stable(m)
    answer(m, one(m, HB), hb(25), HB)                     # UNKNOWN_MEMBER_ID: id reset
    assert (m.member_id, m.former_member_ids) == ("", ["m-1"])
    answer(m, one(m, HB, "JoinGroup"), join(79, member_id="m-2"), HB)
    m.leave("stop", HB + 1)
    bodies(m)
    r = one(m, HB + 1, "LeaveGroup")
    assert [(x["member_id"], x["group_instance_id"]) for x in r.body["members"]] == [
        ("m-2", None), ("m-1", None)]
    answer(m, r, leave_resp(0, members=[("m-2", None, 0), ("m-1", None, 25)]), HB + 2)
    assert m.state is S.LEFT and m.transitions[-1].reason == "left the group"


def test_a_member_with_only_a_given_up_id_still_leaves_with_it():
    m = make()
    to_stable(m)
    answer(m, one(m, HB), hb(25), HB)
    m.leave("stop", HB + 1)
    r = one(m, HB + 1, "LeaveGroup")
    assert [x["member_id"] for x in r.body["members"]] == ["m-1"]


def test_a_static_member_keeps_no_former_ids():
    m = make(group_instance_id="i-1")
    to_stable(m)
    answer(m, one(m, HB), hb(25), HB)
    assert m.former_member_ids == []


@pytest.mark.parametrize("code", [14, 15, 16])
def test_a_leave_the_coordinator_bounces_is_sent_again_where_it_is_found(code):
    """COORDINATOR_LOAD_IN_PROGRESS / NOT_AVAILABLE / NOT_COORDINATOR on the leave (a thawed
    broker fenced and reloading the group): the coordinator is looked up again after a
    pause and the leave sent there; a leave given up would let the reload bring the member
    back. After LEAVE_TRIES bounces it ends, LEFT with the error."""
    from groupctl.coordinator.members.base import LEAVE_PAUSE_MS, LEAVE_TRIES

    m = make()
    to_stable(m)
    m.leave("stop", 1)
    answer(m, one(m, 1, "LeaveGroup"), leave_resp(code), 2)
    assert m.state is S.LEAVING and m.coordinator is None
    assert m.next_requests(3) == [] and m.next_deadline_ms() == 2 + LEAVE_PAUSE_MS
    answer(m, one(m, 2 + LEAVE_PAUSE_MS, "FindCoordinator"), fc(node=2), 2 + LEAVE_PAUSE_MS)
    r = one(m, 2 + LEAVE_PAUSE_MS, "LeaveGroup")
    answer(m, r, leave_resp(0, members=[("m-1", None, 0)]), 300)
    assert m.state is S.LEFT and m.transitions[-1].reason == "left the group"
    m = make()
    to_stable(m)
    m.leave("stop", 1)
    now = 1
    for _ in range(LEAVE_TRIES):
        answer(m, one(m, now, "LeaveGroup"), leave_resp(code), now)
        now += LEAVE_PAUSE_MS
        answer(m, one(m, now, "FindCoordinator"), fc(), now)
    answer(m, one(m, now, "LeaveGroup"), leave_resp(code), now)
    assert m.state is S.LEFT and "membership ends anyway" in m.transitions[-1].reason
