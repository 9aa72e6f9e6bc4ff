"""The probe driver (groupctl.coordinator.probe) over a scripted in-memory coordinator: the
request flow, error handling, leaving on every exit path, the events it emits."""
from __future__ import annotations

import asyncio

import pytest

from groupctl.client.metadata import BrokerInfo
from groupctl.coordinator.probe import Probe, ProbeSettings
from groupctl.coordinator.probe.setup import ProbeError
from groupctl.errors import AuthError, KafkaError
from groupctl.exitcodes import ExitCode
from groupctl.protocol import consumer as cp

G = "orders"


class FakeBroker:
    """A one-group coordinator: answers by default like a real one for a lone member;
    `script[api]` holds answers (dicts) to give first, in order."""

    def __init__(self):
        self.log: list[tuple[str, dict]] = []
        self.script: dict[str, list[dict]] = {}
        self.generation = 0
        self.find_calls = 0
        self.node = 1

    async def handle(self, api: str, body: dict) -> dict:
        self.log.append((api, body))
        queued = self.script.get(api)
        if queued:
            return queued.pop(0)
        return getattr(self, "_" + api)(body)

    def _JoinGroup(self, body):
        if not body["member_id"] and not body["group_instance_id"]:
            return {"error_code": 79, "member_id": "m-1", "generation_id": -1, "members": []}
        self.generation += 1
        mid = body["member_id"] or "static-1"
        return {"error_code": 0, "generation_id": self.generation, "protocol_type": "consumer",
                "protocol_name": body["protocols"][0]["name"], "leader": mid,
                "member_id": mid, "skip_assignment": False,
                "members": [{"member_id": mid, "group_instance_id": body["group_instance_id"],
                             "metadata": body["protocols"][0]["metadata"]}]}

    def _SyncGroup(self, body):
        mine = [a["assignment"] for a in body["assignments"] if a["member_id"] == body["member_id"]]
        return {"error_code": 0, "protocol_type": "consumer", "protocol_name": body["protocol_name"],
                "assignment": mine[0] if mine else b""}

    def _Heartbeat(self, body):
        return {"error_code": 0}

    def _LeaveGroup(self, body):
        return {"error_code": 0, "members": [{"member_id": m["member_id"], "error_code": 0}
                                             for m in body["members"]]}

    def apis(self) -> list[str]:
        return [api for api, _ in self.log]


class FakeConn:
    def __init__(self, broker: FakeBroker, node_id: int):
        self.broker, self.node_id, self.usable = broker, node_id, True
        self.broker_versions = {18: (0, 4)}

    def version_for(self, api, min_version=0):
        return max(min_version, api.max_version)

    async def request(self, api, body, version=None, *, min_version=0, timeout=None):
        return await self.broker.handle(api.name, body)

    async def close(self):
        self.usable = False


class FakeCluster:
    """The cluster the driver sees; describes go through observe.reads.describe (the one describe
    path): find_coordinators, broker(node).supports(api), request(...)."""
    cluster_id = "fake-cluster"

    def __init__(self, broker: FakeBroker, described: dict | None = None):
        self.fake_broker = broker
        self.described = described or {"group_id": G, "error_code": 0, "group_state": "Empty",
                                       "protocol_type": "", "protocol_data": "", "members": []}

    async def find_coordinator(self, group, *, refresh=False, deadline=None):
        self.fake_broker.find_calls += 1
        return BrokerInfo(self.fake_broker.node, "127.0.0.1", 9092)

    async def open_connection(self, node_id, *, deadline=None):
        return FakeConn(self.fake_broker, node_id)

    def deadline(self, deadline=None):
        from groupctl.client.retry import Deadline

        return Deadline.of(deadline, 10)

    async def find_coordinators(self, groups, *, deadline=None):
        return {g: BrokerInfo(self.fake_broker.node, "127.0.0.1", 9092) for g in groups}

    async def broker(self, node_id, *, deadline=None):
        return _DescribeOnly()

    async def request(self, api, body, *, node_id=None, version=None, deadline=None):
        self.fake_broker.describes = getattr(self.fake_broker, "describes", 0) + 1
        return {"groups": [self.described]}

    def invalidate_coordinator(self, group):
        pass

    async def metadata(self, topics=None, *, deadline=None):
        raise AssertionError("no metadata expected: nobody subscribes")


class _DescribeOnly:
    """A coordinator connection that knows DescribeGroups only (the classic probe asks
    only the classic describe API)."""

    def supports(self, api):
        return api.name == "DescribeGroups"

    def version_for(self, api, min_version=0):
        return api.max_version


def settings(**kw) -> ProbeSettings:
    kw.setdefault("session_timeout_ms", 2000)
    kw.setdefault("heartbeat_interval_ms", 10)
    return ProbeSettings(group=G, **kw)


async def until(predicate, timeout: float = 5.0) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not predicate():
        assert loop.time() < end, "condition not reached"
        await asyncio.sleep(0.002)


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 20))


def test_join_once_flow_and_leave():
    broker, events = FakeBroker(), []

    async def main():
        probe = Probe(FakeCluster(broker), settings(), emit=events.append)
        return await probe.join_once(deadline_s=5)

    result = run(main())
    assert broker.apis() == ["JoinGroup", "JoinGroup", "SyncGroup", "LeaveGroup"]
    assert result.generation == 1 and result.member_id == "m-1" and result.is_leader
    assert result.protocol == "range" and result.assignment == []
    assert [m["member_id"] for m in result.members] == ["m-1"]
    leave = broker.log[-1][1]
    assert leave["members"] == [{"member_id": "m-1", "group_instance_id": None,
                                 "reason": "groupctl probe: leaving: one-shot join done"}]
    assert broker.log[0][1]["reason"] == "groupctl probe: joining"
    assert {e["v"] for e in events} == {1} and {e["group"] for e in events} == {G}
    assert {e["cluster"] for e in events} == {"fake-cluster"}
    kinds = [e["event"] for e in events]
    # the group as described before the join, told in full first (issue 23's snapshot)
    assert kinds[:4] == ["snapshot", "state", "probe", "generation"]
    assert events[-1]["event"] == "probe" and events[-1]["action"] == "left"


def test_offers_the_groups_protocol_with_an_empty_subscription():
    broker = FakeBroker()
    described = {"group_id": G, "error_code": 0, "group_state": "Stable",
                 "protocol_type": "consumer", "protocol_data": "roundrobin", "members": []}

    async def main():
        await Probe(FakeCluster(broker, described), settings()).join_once(deadline_s=5)

    run(main())
    protocols = broker.log[0][1]["protocols"]
    assert [p["name"] for p in protocols] == ["roundrobin"]
    sub = cp.decode_subscription(protocols[0]["metadata"])
    assert sub.topics == [] and sub.owned_partitions == []


def test_new_group_gets_every_builtin_assignor_offered():
    broker = FakeBroker()
    run(Probe(FakeCluster(broker), settings()).join_once(deadline_s=5))
    names = [p["name"] for p in broker.log[0][1]["protocols"]]
    assert names == ["range", "cooperative-sticky", "roundrobin", "sticky"]


def test_watch_rejoins_rediscovers_and_leaves_when_cancelled():
    broker, events = FakeBroker(), []
    broker.script["Heartbeat"] = [{"error_code": 27}, {"error_code": 16}, {"error_code": 0}]

    async def main():
        probe = Probe(FakeCluster(broker), settings(), emit=events.append)
        task = asyncio.ensure_future(probe.watch())
        await until(lambda: broker.generation == 2 and broker.apis().count("Heartbeat") >= 5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    run(main())
    apis = broker.apis()
    assert apis[-1] == "LeaveGroup"
    assert broker.find_calls == 2  # NOT_COORDINATOR on a heartbeat: rediscovered once
    rejoin = broker.log[apis.index("JoinGroup", 2)][1]
    assert rejoin["member_id"] == "m-1"  # REBALANCE_IN_PROGRESS keeps the member id
    assert rejoin["reason"] == "groupctl probe: rejoining: REBALANCE_IN_PROGRESS on Heartbeat"
    gens = [e["to_generation"] for e in events if e["event"] == "rebalance"]
    assert gens == [1, 2]
    assert broker.log[-1][1]["members"][0]["reason"] == "groupctl probe: leaving: interrupted (signal)"
    actions = [e["action"] for e in events if e["event"] == "probe"]
    assert actions.count("rejoining") == 1 and "heartbeat_error" in actions
    assert actions[-1] == "left"


def test_unknown_member_id_resets_and_rejoins_from_scratch():
    broker = FakeBroker()
    broker.script["Heartbeat"] = [{"error_code": 25}]

    async def main():
        probe = Probe(FakeCluster(broker), settings())
        task = asyncio.ensure_future(probe.watch())
        await until(lambda: broker.generation == 2)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    run(main())
    joins = [b for api, b in broker.log if api == "JoinGroup"]
    assert [j["member_id"] for j in joins] == ["", "m-1", "", "m-1"]


def test_fenced_instance_is_fatal_exit_7_without_leave():
    broker = FakeBroker()
    broker.script["Heartbeat"] = [{"error_code": 82}]

    async def main():
        await Probe(FakeCluster(broker), settings(instance_id="p-1")).watch()

    with pytest.raises(KafkaError) as info:
        run(main())
    assert info.value.exit_code == ExitCode.KAFKA_ERROR
    assert "FENCED_INSTANCE_ID (82)" in str(info.value)
    assert "LeaveGroup" not in broker.apis()  # leaving would remove the member that fenced us
    assert broker.log[0][1]["group_instance_id"] == "p-1"


def test_group_authorization_failed_is_exit_4():
    broker = FakeBroker()
    broker.script["JoinGroup"] = [{"error_code": 30, "member_id": "", "generation_id": -1,
                                   "members": []}]
    with pytest.raises(AuthError) as info:
        run(Probe(FakeCluster(broker), settings()).join_once(deadline_s=5))
    assert info.value.exit_code == ExitCode.AUTH


@pytest.mark.parametrize("code", [23, 26, 81])
def test_other_fatal_join_errors_exit_7(code):
    broker = FakeBroker()
    broker.script["JoinGroup"] = [{"error_code": code, "member_id": "", "generation_id": -1,
                                   "members": []}]
    with pytest.raises(KafkaError) as info:
        run(Probe(FakeCluster(broker), settings()).join_once(deadline_s=5))
    assert info.value.code == code and info.value.exit_code == ExitCode.KAFKA_ERROR
    assert "LeaveGroup" not in broker.apis()  # never a member: nothing to leave


def test_coordinator_loading_backs_off_and_retries():
    broker = FakeBroker()
    broker.script["JoinGroup"] = [{"error_code": 14, "member_id": "", "generation_id": -1,
                                   "members": []}]
    result = run(Probe(FakeCluster(broker), settings()).join_once(deadline_s=5))
    assert result.generation == 1
    assert broker.apis()[:3] == ["JoinGroup", "JoinGroup", "JoinGroup"]


def test_leader_with_unknown_assignor_leaves_at_once():
    broker = FakeBroker()
    with pytest.raises(ProbeError) as info:
        run(Probe(FakeCluster(broker), settings(assignor="custom")).join_once(deadline_s=5))
    assert info.value.exit_code == ExitCode.KAFKA_ERROR
    assert "'custom'" in str(info.value)
    assert broker.apis() == ["JoinGroup", "JoinGroup", "LeaveGroup"]


def test_static_probe_leaves_with_instance_id_and_skips_member_id_required():
    broker = FakeBroker()
    run(Probe(FakeCluster(broker), settings(instance_id="p-9")).join_once(deadline_s=5))
    assert broker.apis() == ["JoinGroup", "SyncGroup", "LeaveGroup"]
    assert broker.log[-1][1]["members"][0]["group_instance_id"] == "p-9"


def test_skip_assignment_leader_sends_empty_sync():
    broker = FakeBroker()
    joined = broker._JoinGroup({"member_id": "m-1", "group_instance_id": "p-1",
                                "protocols": [{"name": "range", "metadata": b""}]})
    broker.generation = 0
    broker.script["JoinGroup"] = [dict(joined, skip_assignment=True, generation_id=7)]
    result = run(Probe(FakeCluster(broker), settings(instance_id="p-1")).join_once(deadline_s=5))
    sync = broker.log[1][1]
    assert sync["assignments"] == [] and result.generation == 7


def test_join_once_deadline_is_exit_6_and_still_leaves():
    broker = FakeBroker()
    never = asyncio.Event()

    async def main():
        cluster = FakeCluster(broker)
        probe = Probe(cluster, settings())
        original = broker.handle

        async def handle(api, body):
            if api == "SyncGroup":
                broker.log.append((api, body))
                await never.wait()
            return await original(api, body)
        broker.handle = handle
        # the deadline must fall in the hung SyncGroup, after the member id came: room
        # for the JoinGroup round trip on a loaded machine (the fake answers at once)
        await probe.join_once(deadline_s=2.0)

    with pytest.raises(Exception) as info:
        run(main())
    assert getattr(info.value, "exit_code", None) == ExitCode.TIMEOUT
    assert "SyncGroup" in broker.apis() and broker.apis()[-1] == "LeaveGroup"
