"""force-rebalance of a consumer (KIP-848) group, driven with scripted responses: the
transient member is the real ConsumerMember (its join and leave bodies, its error table),
driven by MemberDriver; it joins, leaves at once, and leaves on every exit path (error,
timeout, cancellation as Ctrl-C/SIGTERM deliver it); every transition is logged with its
reason; the report keeps its fields."""
from __future__ import annotations

import asyncio

import pytest

from groupctl.client.retry import Deadline
from groupctl.coordinator.members.consumer import NO_PARTITIONS_TOPIC, ConsumerMember
from groupctl.coordinator.steer.force_consumer import (
    REBALANCE_TIMEOUT_MS, force_consumer, joined, transient_member,
)
from groupctl.coordinator.members.interface import ROUTE_ANY, ROUTE_CONTROL
from groupctl.coordinator.driver.member_driver import MemberDriver
from groupctl.errors import AuthError, DeadlineError, KafkaError, UnreachableError
from groupctl.observe.reads.model import GroupDescription, Member, TopicPartitions
from groupctl.protocol.errors import ErrorCode
from waiting import wait_until_async

G = "orders"
HB = "ConsumerGroupHeartbeat"
FIND = "FindCoordinator"


class FakeLinks:
    """MemberLinks' interface over a script: `script[api]` holds answers to give first, in
    order (a dict, an exception to raise, or an asyncio.Event to wait for before the
    default answer); otherwise a coordinator that lets a member join at `epoch` and leave."""

    def __init__(self, epoch: int = 7):
        self.epoch = epoch
        self.sent: list[tuple[str, dict, str, int]] = []
        self.script: dict[str, list] = {}
        self.closed = False

    async def send(self, spec, body, *, route, node_id, min_version=0, timeout=None):
        self.sent.append((spec.name, body, route, min_version))
        queued = self.script.get(spec.name)
        answer = queued.pop(0) if queued else None
        if isinstance(answer, tuple):   # (event, then): wait for the event, then answer
            await answer[0].wait()
            answer = answer[1]
        if isinstance(answer, asyncio.Event):
            await answer.wait()
            answer = None
        if isinstance(answer, BaseException):
            raise answer
        return answer if answer is not None else self.default(spec.name, body)

    def default(self, api: str, body: dict) -> dict:
        if api == FIND:
            return {"coordinators": [{"key": G, "node_id": 1, "host": "b1", "port": 9092,
                                      "error_code": 0, "error_message": None}]}
        epoch = body["member_epoch"]
        return {"throttle_time_ms": 0, "error_code": 0, "error_message": None,
                "member_id": body["member_id"],
                "member_epoch": self.epoch if epoch == 0 else epoch,
                "heartbeat_interval_ms": 5000 if epoch >= 0 else 0,
                "assignment": {"topic_partitions": []} if epoch == 0 else None}

    def follow(self, node_id):
        return []

    async def close(self):
        self.closed = True

    def heartbeats(self) -> list[int]:
        return [body["member_epoch"] for api, body, _, _ in self.sent if api == HB]


class FakeCluster:
    """The cluster's cached coordinator lookup (what describe used)."""

    async def find_coordinator(self, group, *, refresh=False, deadline=None):
        from groupctl.client.metadata import BrokerInfo

        assert group == G and not refresh
        return BrokerInfo(1, "b1", 9092)

    def deadline(self, deadline=None):
        return Deadline.of(deadline, 10)


def group(epoch: int, *, state: str = "Stable", assignment_epoch: int | None = None,
          members=("c-1", "c-2")) -> GroupDescription:
    return GroupDescription(
        group=G, type="consumer", state=state, protocol_type="consumer", protocol="uniform",
        group_epoch=epoch, assignment_epoch=epoch if assignment_epoch is None else assignment_epoch,
        members=[Member(member_id=m, client_id=m, member_epoch=epoch,
                        assignment=[TopicPartitions("t", [i])]) for i, m in enumerate(members)])


def snapshots(*descs):
    """The group's looks: `descs` in turn, then the last one forever."""
    queue = list(descs)

    async def looks():
        while True:
            yield queue.pop(0) if len(queue) > 1 else queue[0]
            await asyncio.sleep(0.02)
    return looks()


class Run:
    """One force_consumer over FakeLinks, with its phases and log lines recorded."""

    def __init__(self, links: FakeLinks | None = None):
        self.links = links or FakeLinks()
        self.lines: list[str] = []
        self.phases: list[tuple[str, dict]] = []
        self.driver = MemberDriver(None, transient_member(G), links=self.links,
                                   log=self.lines.append)
        self.on_phase = lambda name, info: self.phases.append((name, info))

    async def __call__(self, snapshot, *, deadline=5.0, on_phase=None):
        return await force_consumer(FakeCluster(), group(4), "groupctl force-rebalance: test",
                                    snapshot=snapshot, deadline=deadline,
                                    on_phase=on_phase or self.on_phase, driver=self.driver)

    @property
    def member(self) -> ConsumerMember:
        return self.driver.member


def run(coro):
    return asyncio.run(coro)


# ---- the happy path -------------------------------------------------------------------
def test_joins_leaves_at_once_and_reports_the_epoch_bump():
    r = Run()
    report = run(r(snapshots(group(4), group(5, state="Reconciling", assignment_epoch=4),
                             group(5))))
    apis = [(api, route) for api, _, route, _ in r.links.sent]
    assert apis == [(HB, ROUTE_CONTROL), (HB, ROUTE_CONTROL)]   # the coordinator was cached
    assert r.links.heartbeats() == [0, -1]   # no acknowledgement in between: join, leave
    join, leave = (body for api, body, _, _ in r.links.sent if api == HB)
    me = r.member.member_id
    assert me.startswith("groupctl-force-rebalance-")
    assert join == {"group_id": G, "member_id": me, "member_epoch": 0, "instance_id": None,
                    "rack_id": None, "rebalance_timeout_ms": REBALANCE_TIMEOUT_MS,
                    "subscribed_topic_names": [NO_PARTITIONS_TOPIC], "subscribed_topic_regex": None,
                    "server_assignor": None, "topic_partitions": []}
    assert leave == {"group_id": G, "member_id": me, "member_epoch": -1, "instance_id": None,
                     "rack_id": None, "rebalance_timeout_ms": -1,
                     "subscribed_topic_names": None, "subscribed_topic_regex": None,
                     "server_assignor": None, "topic_partitions": None}
    assert r.phases == [("joining", {"member_id": me}),
                        ("joined", {"member_id": me, "member_epoch": 7}),
                        ("left", {"member_id": me})]
    d = report.to_dict()
    assert (d["group_epoch_before"], d["group_epoch_after"]) == (4, 5)
    assert (d["assignment_epoch_before"], d["assignment_epoch_after"]) == (4, 5)
    assert d["triggered_by"] == me and d["type"] == "consumer"
    assert d["states_seen"] == ["Stable", "Reconciling", "Stable"]   # at 4, bump, settled
    assert d["same_members"] and not d["assignment_changed"] and d["moved_partitions"] == []
    assert any("epoch 0 -> 7" in n and "kept their partitions" in n for n in d["notes"])
    assert r.member.done and r.links.closed


def test_every_transition_is_logged_once_with_its_reason():
    r = Run()
    run(r(snapshots(group(5))))
    me = r.member.member_id
    moves = [line.split(": ", 2)[1] for line in r.lines]
    assert moves == ["UNSUBSCRIBED -> JOINING", "JOINING -> RECONCILING",
                     "RECONCILING -> ACKNOWLEDGING", "ACKNOWLEDGING -> PREPARE_LEAVING",
                     "PREPARE_LEAVING -> LEAVING", "LEAVING -> UNSUBSCRIBED"]
    assert all(line.startswith(f"member {me}: ") and len(line.split(": ", 2)[2]) > 5
               for line in r.lines)
    assert "leaving with member epoch -1" in r.lines[4]
    assert len(r.lines) == len(r.member.transitions)


def test_joined_means_the_broker_gave_a_member_epoch():
    m = transient_member(G)
    assert not joined(m) and m.group_instance_id is None and m.topics == []


# ---- the member's error table on the join ----------------------------------------------
def test_a_moved_coordinator_is_rediscovered_and_the_join_retried():
    links = FakeLinks()
    links.script[HB] = [{"error_code": ErrorCode.NOT_COORDINATOR, "error_message": None,
                         "member_id": None, "member_epoch": 0, "heartbeat_interval_ms": 0,
                         "assignment": None}]
    r = Run(links)
    report = run(r(snapshots(group(5))))
    assert [(api, route) for api, _, route, _ in links.sent] == [
        (HB, ROUTE_CONTROL), (FIND, ROUTE_ANY), (HB, ROUTE_CONTROL), (HB, ROUTE_CONTROL)]
    assert links.heartbeats() == [0, 0, -1]
    assert report.group_epoch_after == 5


@pytest.mark.parametrize("code, exc", [(ErrorCode.GROUP_AUTHORIZATION_FAILED, AuthError),
                                       (ErrorCode.GROUP_MAX_SIZE_REACHED, KafkaError)])
def test_a_fatal_join_answer_ends_the_command_without_a_leave(code, exc):
    links = FakeLinks()
    links.script[HB] = [{"error_code": code, "error_message": "no", "member_id": None,
                         "member_epoch": 0, "heartbeat_interval_ms": 0, "assignment": None}]
    r = Run(links)
    with pytest.raises(exc) as info:
        run(r(snapshots(group(5))))
    assert info.value.code == code
    assert links.heartbeats() == [0]   # the broker refused it: there is nothing to leave
    assert r.member.state.name == "FATAL" and links.closed
    assert [name for name, _ in r.phases] == ["joining"]


# ---- leaving on every exit path --------------------------------------------------------
def test_the_deadline_passing_with_the_join_unanswered_still_leaves():
    links = FakeLinks()
    links.script[HB] = [asyncio.Event()]   # the join is never answered (until the end)
    r = Run(links)
    with pytest.raises(DeadlineError, match="not joined in time"):
        run(r(snapshots(group(5)), deadline=0.2))
    assert links.heartbeats() == [0, -1]
    assert any("leave: error: the member of group orders was not joined" in line
               for line in r.lines), r.lines
    assert r.member.done and links.closed


def test_cancelled_while_the_join_is_in_flight_leaves():
    links = FakeLinks()
    hold = asyncio.Event()
    links.script[HB] = [hold]

    r = Run(links)

    async def main():
        task = asyncio.ensure_future(r(snapshots(group(5))))
        await wait_until_async(lambda: links.heartbeats() == [0], what="the join in flight",
                               interval=0.001)
        task.cancel()   # what Ctrl-C and SIGTERM do to the command's task
        with pytest.raises(asyncio.CancelledError):
            await task
    run(main())
    assert links.heartbeats() == [0, -1] and links.closed
    assert any("JOINING -> PREPARE_LEAVING: leave: interrupted (signal)" in line
               for line in r.lines), r.lines


@pytest.mark.parametrize("at", ["joined", "left"])
def test_cancelled_at_a_phase_leaves_exactly_once(at):
    links = FakeLinks()
    r = Run(links)

    async def main():
        gate = asyncio.Event()

        async def on_phase(name, info):
            r.phases.append((name, info))
            if name == at:
                gate.set()
                await asyncio.sleep(30)   # the test hook's pause: the signal lands here
        task = asyncio.ensure_future(r(snapshots(group(5)), on_phase=on_phase))
        await gate.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    run(main())
    assert links.heartbeats() == [0, -1] and r.member.done and links.closed


def test_not_settled_in_time_is_a_timeout_after_leaving():
    r = Run()
    with pytest.raises(DeadlineError, match="not Stable again") as info:
        run(r(snapshots(group(4)), deadline=0.3))   # the epoch never moves
    assert "state Stable" in str(info.value)
    assert r.links.heartbeats() == [0, -1]
    assert [name for name, _ in r.phases] == ["joining", "joined", "left"]


def test_a_snapshot_error_after_the_leave_does_not_leave_twice():
    r = Run()

    async def broken():
        raise KafkaError("ConsumerGroupDescribe", ErrorCode.COORDINATOR_NOT_AVAILABLE)
        yield
    with pytest.raises(KafkaError):
        run(r(broken()))
    assert r.links.heartbeats() == [0, -1]


def test_a_leave_without_an_answer_is_an_error_naming_the_member():
    links = FakeLinks()
    links.script[HB] = [None, UnreachableError("connection closed")]
    r = Run(links)
    with pytest.raises(UnreachableError, match="got no answer") as info:
        run(r(snapshots(group(5))))
    assert r.member.member_id in str(info.value)
    assert links.heartbeats() == [0, -1] and r.member.done and links.closed
    assert [name for name, _ in r.phases] == ["joining", "joined"]


def test_a_leave_answered_with_an_error_code_still_ends_membership():
    links = FakeLinks()
    links.script[HB] = [None, {"error_code": ErrorCode.UNKNOWN_MEMBER_ID, "error_message": None,
                               "member_id": None, "member_epoch": -1,
                               "heartbeat_interval_ms": 0, "assignment": None}]
    r = Run(links)
    report = run(r(snapshots(group(5))))
    assert report.group_epoch_after == 5 and links.heartbeats() == [0, -1]


# ---- the driver on its own ---------------------------------------------------------------
def test_the_driver_keeps_the_members_events_and_reports_its_deadline():
    links = FakeLinks()
    driver = MemberDriver(None, transient_member(G), links=links)

    async def main():
        await driver.run_until(joined, Deadline(2), "joined")
        with pytest.raises(DeadlineError, match="not stable in time .state ACKNOWLEDGING"):
            links.script[HB] = [asyncio.Event()]   # the acknowledgement is never answered
            await driver.run_until(lambda m: m.stable, Deadline(0.1), "stable")
        assert await driver.leave("done", 1.0)
        await driver.close()
    run(main())
    actions = [e.to_dict().get("action") for e in driver.events]
    assert actions[0] == "joined" and actions[-1] == "left"
    assert links.heartbeats() == [0, 7, -1]   # join, the acknowledgement, leave


def test_the_driver_knows_members_only_through_the_interface():
    import ast
    from pathlib import Path

    import groupctl

    source = (Path(groupctl.__file__).parent / "coordinator" / "driver" / "member_driver.py").read_text()
    imported = {a.name for node in ast.walk(ast.parse(source))
                if isinstance(node, (ast.Import, ast.ImportFrom)) for a in node.names}
    imported |= {node.module or "" for node in ast.walk(ast.parse(source))
                 if isinstance(node, ast.ImportFrom)}
    assert not [n for n in imported if "classic" in n.lower() or "consumer" in n.lower()]
    for name in ("ConsumerMember", "ClassicMember", "CONSUMER_GROUP_HEARTBEAT", "JOIN_GROUP",
                 "member_epoch", "ACKNOWLEDGING"):
        assert name not in source, name


def test_a_dropped_join_failing_while_leaving_does_not_count_against_the_leave():
    links = FakeLinks()
    hold = asyncio.Event()
    links.script[HB] = [(hold, UnreachableError("connection closed"))]
    driver = MemberDriver(None, transient_member(G), links=links)

    async def main():
        with pytest.raises(DeadlineError):
            await driver.run_until(joined, Deadline(0.05), "joined")
        hold.set()   # the join the member dropped fails only now, while it leaves
        left = await driver.leave("stop", 1.0)
        await driver.close()
        return left
    assert run(main()) is True and driver.unanswered == []
    assert links.heartbeats() == [0, -1]
