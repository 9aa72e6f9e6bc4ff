"""The probe driver depends on the member interface (coordinator/members/interface.py), not on the
classic member: it drives a scripted member of another protocol (a KIP-848-shaped one that
speaks ConsumerGroupHeartbeat), honours each request's route and timeout, and keeps join
and control traffic on separate connections."""
from __future__ import annotations

import ast
import asyncio
from enum import Enum
from pathlib import Path

from test_probe_driver import FakeBroker, FakeCluster, FakeConn, run, settings

import groupctl
from groupctl.clock import Clock
from groupctl.coordinator.members.interface import ROUTE_ANY, ROUTE_CONTROL, Coordinator, Outgoing
from groupctl.coordinator.probe import Probe
from groupctl.events import ProbeAction
from groupctl.protocol import messages as M

ROOT = Path(groupctl.__file__).parent


class EpochState(Enum):
    JOINING = "joining"
    STABLE = "stable"
    LEAVING = "leaving"
    LEFT = "left"


class EpochMember:
    """A scripted member of a broker-assigned protocol: FindCoordinator, then
    ConsumerGroupHeartbeat (epoch 0 to join, -1 to leave) on the control route."""

    HEARTBEAT_TIMEOUT_MS = 4321

    def __init__(self, group: str):
        self.group_id, self.member_id, self.group_instance_id = group, "", None
        self.leader_id = None
        self.protocol_name = "uniform"
        self.coordinator: Coordinator | None = None
        self.fatal_error = None
        self.pending_assignment = None        # the broker assigns: the driver runs no assignor
        self.state = EpochState.JOINING
        self.epoch = 0
        self.owned: dict[str, list[int]] = {}
        self.after_stable_calls: list[int] = []
        self.left_because: str | None = None
        self._tag = 0
        self._inflight: dict[str, int] = {}
        self._events: list = []

    # read side
    done = property(lambda self: self.state is EpochState.LEFT)
    stable = property(lambda self: self.state is EpochState.STABLE)
    generation = property(lambda self: self.epoch)
    is_leader = property(lambda self: False)

    def assigned_partitions(self):
        return dict(self.owned)

    def implied_group_state(self):
        return {EpochState.JOINING: "Reconciling", EpochState.STABLE: "Stable"}.get(self.state)

    def next_deadline_ms(self):
        return None

    def poll_events(self):
        out, self._events = self._events, []
        return out

    # requests
    def _out(self, spec, body, route, timeout_ms=None):
        self._tag += 1
        self._inflight[spec.name] = self._tag
        return Outgoing(spec, body, self._tag, route, 0, timeout_ms)

    def next_requests(self, now_ms):
        if self.coordinator is None:
            if M.FIND_COORDINATOR.name in self._inflight:
                return []
            return [self._out(M.FIND_COORDINATOR, {"key": self.group_id, "key_type": 0,
                                                   "coordinator_keys": [self.group_id]},
                              ROUTE_ANY)]
        if M.CONSUMER_GROUP_HEARTBEAT.name in self._inflight or self.state is EpochState.STABLE:
            return []
        epoch = -1 if self.state is EpochState.LEAVING else self.epoch
        return [self._out(M.CONSUMER_GROUP_HEARTBEAT, {
            "group_id": self.group_id, "member_id": self.member_id, "member_epoch": epoch},
            ROUTE_CONTROL, self.HEARTBEAT_TIMEOUT_MS)]

    def on_response(self, api, body, now_ms, *, tag=None):
        if self._inflight.pop(api, None) != tag:
            return False
        if api == M.FIND_COORDINATOR.name:
            c = body["coordinators"][0]
            self.coordinator = Coordinator(c["node_id"], c["host"], c["port"])
        elif self.state is EpochState.LEAVING:
            self.state = EpochState.LEFT
            self._events.append(ProbeAction("left", self.member_id, self.epoch,
                                            reason=self.left_because))
        else:
            self.member_id, self.epoch = body["member_id"], body["member_epoch"]
            self.owned = {"t": [0, 1]}
            self.state = EpochState.STABLE
            self._events.append(ProbeAction("joined", self.member_id, self.epoch))
        return True

    def on_failure(self, api, kind, now_ms, *, tag=None):
        raise AssertionError(f"no failure expected: {api} {kind}")

    def leave(self, reason, now_ms):
        self.left_because = reason
        self.state = EpochState.LEAVING
        return True

    def after_stable(self, now_ms):
        self.after_stable_calls.append(self.epoch)

    def provide_assignment(self, *a, **kw):
        raise AssertionError("a broker-assigned member gets no client assignment")

    def assignment_failed(self, *a, **kw):
        raise AssertionError("a broker-assigned member gets no client assignment")


class RecordingConn(FakeConn):
    opened: list["RecordingConn"] = []

    def __init__(self, broker, node_id):
        super().__init__(broker, node_id)
        self.sent: list[tuple[str, float | None]] = []
        RecordingConn.opened.append(self)

    async def request(self, api, body, version=None, *, min_version=0, timeout=None):
        self.sent.append((api.name, timeout))
        if body.get("member_epoch") == -1:  # as a broker answers in order: the describe
            for _ in range(1000):            # sent after the join is answered before the leave
                if getattr(self.broker, "describes", 0) >= 2:
                    break
                await asyncio.sleep(0.001)
        return await super().request(api, body, version, min_version=min_version,
                                     timeout=timeout)


class RecordingCluster(FakeCluster):
    async def open_connection(self, node_id, *, deadline=None):
        return RecordingConn(self.fake_broker, node_id)


def test_the_driver_drives_a_member_of_another_protocol():
    broker, events, members = FakeBroker(), [], []
    broker.script["ConsumerGroupHeartbeat"] = [
        {"error_code": 0, "member_id": "cg-1", "member_epoch": 7},
        {"error_code": 0, "member_id": "cg-1", "member_epoch": -1}]
    RecordingConn.opened = []
    ticks = iter(range(1_000_000))
    clock = Clock(wall=lambda: 1_700_000_000.0, monotonic=lambda: next(ticks) / 1000)

    def new_member(s, described):
        assert described is not None and described.state == "Empty"
        members.append(EpochMember(s.group))
        return members[0]

    async def main():
        probe = Probe(RecordingCluster(broker), settings(), emit=events.append, clock=clock,
                      new_member=new_member)
        return await probe.join_once(deadline_s=60)

    result = run(main())
    (m,) = members
    assert broker.find_calls == 1                                  # route "any": the lookup
    assert [api for api, _ in broker.log] == ["ConsumerGroupHeartbeat"] * 2
    assert [b["member_epoch"] for _, b in broker.log] == [0, -1]  # join, then leave
    (conn,) = RecordingConn.opened                                 # control route only
    assert conn.sent == [("ConsumerGroupHeartbeat", 4.321)] * 2   # the member's timeout
    assert m.state is EpochState.LEFT and m.after_stable_calls == [7]
    assert m.left_because == "one-shot join done"
    assert (result.generation, result.member_id, result.is_leader) == (7, "cg-1", False)
    assert result.protocol == "uniform" and result.assignment == [
        {"topic": "t", "partitions": [0, 1]}]
    assert result.coordinator == {"id": 1, "host": "127.0.0.1", "port": 9092}
    kinds = [(e["event"], e.get("action") or e.get("state")) for e in events]
    assert kinds == [("snapshot", "Empty"),      # the group before the join, in full
                     ("state", "Reconciling"), ("probe", "joined"), ("state", "Stable"),
                     ("rebalance", None), ("probe", "left")]
    assert {e["ts"] for e in events} == {"2023-11-14T22:13:20.000Z"}  # the injected clock
    assert events[4]["to_generation"] == 7
    assert events[4]["members_after"] is None   # the describe showed no Stable group


def test_join_and_control_routes_use_separate_connections():
    broker = FakeBroker()
    RecordingConn.opened = []

    async def main():
        probe = Probe(RecordingCluster(broker), settings(heartbeat_interval_ms=5))
        task = asyncio.ensure_future(probe.watch())
        loop = asyncio.get_running_loop()
        end = loop.time() + 5
        while "Heartbeat" not in broker.apis():
            assert loop.time() < end
            await asyncio.sleep(0.002)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    run(main())
    by_api = {}
    for conn in RecordingConn.opened:
        for api, _timeout in conn.sent:
            by_api.setdefault(api, set()).add(id(conn))
    assert by_api["JoinGroup"] == by_api["SyncGroup"]
    assert by_api["Heartbeat"] == by_api["LeaveGroup"]
    assert by_api["JoinGroup"].isdisjoint(by_api["Heartbeat"])
    timeouts = {api: t for conn in RecordingConn.opened for api, t in conn.sent}
    s = settings()
    assert timeouts["JoinGroup"] == timeouts["SyncGroup"] == s.rebalance_timeout_ms / 1000 + 5
    assert timeouts["Heartbeat"] == s.session_timeout_ms / 1000


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            names.add("." * node.level + (node.module or ""))
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
    return names


def test_the_driver_imports_no_classic_member_names():
    for module in ("probe/probe.py", "probe/view.py", "members/interface.py", "members/base.py"):
        imported = _imports(ROOT / "coordinator" / module)
        assert not [n for n in imported if "classic" in n.lower()], (module, imported)
        assert not [n for n in imported if "consumer" in n.lower()], (module, imported)
    source = (ROOT / "coordinator" / "probe" / "probe.py").read_text()
    for name in ("ClassicMember", "JOIN_GROUP", "SYNC_GROUP", "HEARTBEAT", "LEAVE_GROUP",
                 "FIND_COORDINATOR", "STABLE", "ConsumerMember", "CONSUMER_GROUP_HEARTBEAT",
                 "ACKNOWLEDGING"):
        assert name not in source, name

