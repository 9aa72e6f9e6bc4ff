"""groupctl.client against in-process fake brokers on 127.0.0.1: asyncio servers speaking
groupctl's own frame codec, scripted per test (handlers per API key), plus peers that are
not Kafka at all. Timing claims use deadlines and measured elapsed time; no sleep is used
to order events (handlers wait on events or on the requests they have seen)."""
from __future__ import annotations

import asyncio
import inspect
import random
import socket
import struct
from dataclasses import dataclass

import pytest

from groupctl.client import (
    BrokerConnection,
    Cluster,
    ConnectionLostError,
    KafkaAuthError,
    NotKafkaError,
    RequestTimeoutError,
    Tracer,
    UnsupportedVersionError,
)
from groupctl.client.retry import Backoff, Deadline, retry
from groupctl.config import SecurityConfig
from groupctl.errors import (
    AuthError,
    DeadlineError,
    KafkaError,
    UnreachableError,
    UsageError,
)
from groupctl.exitcodes import ExitCode
from groupctl.protocol import frame
from groupctl.protocol.messages import (
    API_VERSIONS,
    APIS,
    DESCRIBE_GROUPS,
    FIND_COORDINATOR,
    LEAVE_GROUP,
    LIST_GROUPS,
    METADATA,
)

HOST = "127.0.0.1"
HANG_UP = object()  # a handler's answer: close the connection


def run(coro, timeout: float = 15.0):
    """Run a test coroutine; a hang fails the test instead of blocking the suite."""
    async def guarded():
        return await asyncio.wait_for(coro, timeout)
    return asyncio.run(guarded())


# ---- the fake broker --------------------------------------------------------------------

@dataclass
class Req:
    api_key: int
    version: int
    corr: int
    client_id: str | None
    body: dict
    broker: FakeBroker


class FakeBroker:
    """A scripted broker. `handlers[api_key](req) -> response dict | None (no answer) |
    awaitable of either`. ApiVersions, Metadata and FindCoordinator have defaults; every
    request is recorded in `requests`."""

    def __init__(self, node_id: int = 1, versions: dict | None = None, cluster=None):
        self.node_id = node_id
        self.versions = versions if versions is not None else {
            k: (a.min_version, a.max_version) for k, a in APIS.items()}
        self.handlers: dict = {}
        self.requests: list[Req] = []
        self.cluster = cluster  # list of FakeBrokers listed in Metadata (default: self)
        self.coordinator = None  # FakeBroker that FindCoordinator names (default: self)
        self.server = None
        self.port = None
        self.arrived = asyncio.Event()

    async def start(self) -> FakeBroker:
        self.server = await asyncio.start_server(self._serve, HOST, 0)
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    @property
    def address(self) -> str:
        return f"{HOST}:{self.port}"

    async def stop(self):
        self.server.close()

    def seen(self, api_key: int) -> list[Req]:
        return [r for r in self.requests if r.api_key == api_key]

    async def wait_for_requests(self, api_key: int, n: int):
        while len(self.seen(api_key)) < n:
            self.arrived.clear()
            await self.arrived.wait()

    async def _serve(self, reader, writer):
        tasks = set()
        try:
            while True:
                size = struct.unpack(">i", await reader.readexactly(4))[0]
                data = await reader.readexactly(size)
                key, version, corr, client_id, off = frame.decode_request_header(data)
                api = APIS[key]
                if api.request_header_version(version) >= 2:
                    off = frame.skip_header_tags(data, off)
                if key == API_VERSIONS.key and version > self.versions[key][1]:
                    body = {}
                else:
                    body = api.decode_request(version, data[off:])
                req = Req(key, version, corr, client_id, body, self)
                self.requests.append(req)
                self.arrived.set()
                t = asyncio.ensure_future(self._answer(api, req, writer))
                tasks.add(t)
                t.add_done_callback(tasks.discard)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            for t in tasks:
                t.cancel()
            writer.close()

    async def _answer(self, api, req: Req, writer):
        handler = self.handlers.get(req.api_key) or getattr(self, f"_default_{req.api_key}", None)
        if handler is None:
            raise AssertionError(f"fake broker: no handler for {api.name}")
        result = handler(req)
        if inspect.isawaitable(result):
            result = await result
        if result is None:
            return
        if result is HANG_UP:
            writer.close()
            return
        if isinstance(result, bytes):  # a raw frame
            writer.write(result)
            return
        version = req.version
        if req.api_key == API_VERSIONS.key and result.get("error_code") == 35:
            version = 0  # KIP-511: the error answer has the v0 shape
        writer.write(frame.encode_response(api, version, req.corr, result))

    def _default_18(self, req: Req) -> dict:  # ApiVersions
        keys = [{"api_key": k, "min_version": lo, "max_version": hi}
                for k, (lo, hi) in sorted(self.versions.items())]
        if req.version > self.versions[18][1]:
            return {"error_code": 35, "api_keys": [k for k in keys if k["api_key"] == 18]}
        return {"error_code": 0, "api_keys": keys}

    def _default_3(self, req: Req) -> dict:  # Metadata
        brokers = self.cluster or [self]
        return {"brokers": [{"node_id": b.node_id, "host": HOST, "port": b.port} for b in brokers],
                "cluster_id": "fake", "controller_id": brokers[0].node_id, "topics": []}

    def _default_10(self, req: Req) -> dict:  # FindCoordinator
        c = self.coordinator or self
        if req.version >= 4:
            return {"coordinators": [{"key": k, "node_id": c.node_id, "host": HOST, "port": c.port,
                                      "error_code": 0} for k in req.body["coordinator_keys"]]}
        return {"error_code": 0, "node_id": c.node_id, "host": HOST, "port": c.port}


async def fake(**kw) -> FakeBroker:
    return await FakeBroker(**kw).start()


async def raw_server(script) -> tuple[asyncio.AbstractServer, int]:
    """A peer that is not Kafka: `script(reader, writer)` runs on each connection."""
    async def serve(reader, writer):
        try:
            await script(reader, writer)
        finally:
            writer.close()
    server = await asyncio.start_server(serve, HOST, 0)
    return server, server.sockets[0].getsockname()[1]


def closed_port() -> int:
    s = socket.socket()
    s.bind((HOST, 0))
    port = s.getsockname()[1]
    s.close()
    return port


async def connect(broker: FakeBroker, **kw) -> BrokerConnection:
    return await BrokerConnection(HOST, broker.port, **kw).connect(5)


def describe_answer(req: Req, code: int = 0) -> dict:
    return {"groups": [{"error_code": code, "group_id": g, "group_state": "Stable"}
                       for g in req.body["groups"]]}


# ---- connection: pipelining, timeouts, close ----------------------------------------------

def test_pipelined_requests_answered_out_of_order_reach_their_callers():
    async def main():
        b = await fake()
        n = 5
        turn = [asyncio.Event() for _ in range(n)]  # turn[i]: the i-th arrival may answer

        async def reverse(req):
            await b.wait_for_requests(DESCRIBE_GROUPS.key, n)  # all n in flight at once
            rank = [r.corr for r in b.seen(DESCRIBE_GROUPS.key)].index(req.corr)
            if rank == n - 1:
                turn[rank].set()
            await turn[rank].wait()
            answered.append(req.corr)
            if rank:
                turn[rank - 1].set()  # wakes after this answer is written
            return describe_answer(req)

        answered: list[int] = []
        b.handlers[DESCRIBE_GROUPS.key] = reverse
        conn = await connect(b)
        results = await asyncio.gather(*(conn.request(DESCRIBE_GROUPS, {"groups": [f"g{i}"]})
                                         for i in range(n)))
        assert [r["groups"][0]["group_id"] for r in results] == [f"g{i}" for i in range(n)]
        sent = [r.corr for r in b.seen(DESCRIBE_GROUPS.key)]
        assert len(set(sent)) == n
        assert answered == list(reversed(sent))
        await conn.close()
        await b.stop()

    run(main())


def test_request_timeout_fails_fast_and_closes_the_connection():
    async def main():
        b = await fake()
        b.handlers[METADATA.key] = lambda req: None  # never answers
        conn = await connect(b)
        other = asyncio.ensure_future(conn.request(METADATA, {"topics": []}, timeout=30))
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        with pytest.raises(RequestTimeoutError) as info:
            await conn.request(METADATA, {"topics": []}, timeout=0.2)
        elapsed = loop.time() - t0
        assert 0.2 <= elapsed < 2.0
        assert info.value.exit_code == ExitCode.TIMEOUT and info.value.kind == "timeout"
        assert "no response within 0.2 s" in str(info.value)
        with pytest.raises(ConnectionLostError):  # the request queued behind it fails too
            await other
        assert conn.closed
        with pytest.raises(ConnectionLostError):
            await conn.request(METADATA, {"topics": []})
        await b.stop()

    run(main())


def test_close_fails_pending_requests_with_a_clear_error():
    async def main():
        b = await fake()
        b.handlers[METADATA.key] = lambda req: None
        conn = await connect(b)
        pending = asyncio.ensure_future(conn.request(METADATA, {"topics": []}))
        await b.wait_for_requests(METADATA.key, 1)
        await conn.close()
        with pytest.raises(ConnectionLostError, match="closed by groupctl"):
            await pending
        await b.stop()

    run(main())


def test_broker_closing_the_connection_fails_pending_requests():
    async def main():
        b = await fake()
        conn = await connect(b)
        await conn.request(METADATA, {"topics": []})
        b.handlers[METADATA.key] = lambda req: HANG_UP
        with pytest.raises(ConnectionLostError, match="the broker closed the connection"):
            await conn.request(METADATA, {"topics": []})
        assert conn.closed
        await b.stop()

    run(main())


def test_cancelled_request_does_not_confuse_later_answers():
    async def main():
        b = await fake()
        gate = asyncio.Event()

        async def slow_first(req):
            if len(b.seen(DESCRIBE_GROUPS.key)) == 1:
                await gate.wait()
            return describe_answer(req)

        b.handlers[DESCRIBE_GROUPS.key] = slow_first
        conn = await connect(b)
        first = asyncio.ensure_future(conn.request(DESCRIBE_GROUPS, {"groups": ["a"]}))
        await b.wait_for_requests(DESCRIBE_GROUPS.key, 1)
        first.cancel()
        gate.set()  # its answer still arrives, and is dropped
        resp = await conn.request(DESCRIBE_GROUPS, {"groups": ["b"]})
        assert resp["groups"][0]["group_id"] == "b"
        assert not conn.closed
        await conn.close()
        await b.stop()

    run(main())


# ---- ApiVersions and version negotiation --------------------------------------------------

def test_apiversions_fallback_on_unsupported_version():
    async def main():
        versions = {k: (a.min_version, a.max_version) for k, a in APIS.items()}
        versions[18] = (0, 2)
        b = await fake(versions=versions)
        conn = await connect(b)
        assert [r.version for r in b.seen(18)] == [4, 2]
        assert conn.broker_versions[18] == (0, 2)
        assert conn.version_for(METADATA) == METADATA.max_version
        await conn.close()
        await b.stop()

    run(main())


def test_apiversions_fallback_without_a_range_goes_to_v0():
    async def main():
        b = await fake()

        def old_broker(req):
            if req.version > 0:  # a pre-KIP-511 broker: the error, no ranges
                return {"error_code": 35, "api_keys": []}
            return {"error_code": 0, "api_keys": [
                {"api_key": 18, "min_version": 0, "max_version": 0},
                {"api_key": 3, "min_version": 0, "max_version": 5}]}

        b.handlers[18] = old_broker
        b.versions[18] = (0, 0)
        conn = await connect(b)
        assert [r.version for r in b.seen(18)] == [4, 0]
        assert conn.version_for(METADATA) == 5
        await conn.close()
        await b.stop()

    run(main())


def test_version_negotiation_picks_the_highest_common_version():
    async def main():
        versions = {k: (a.min_version, a.max_version) for k, a in APIS.items()}
        versions[METADATA.key] = (0, 7)           # older broker
        versions[DESCRIBE_GROUPS.key] = (0, 99)   # newer broker
        versions[FIND_COORDINATOR.key] = (0, 3)
        versions[LIST_GROUPS.key] = (20, 30)      # nothing in common
        del versions[LEAVE_GROUP.key]             # not supported at all
        b = await fake(versions=versions)
        b.handlers[DESCRIBE_GROUPS.key] = describe_answer
        conn = await connect(b)
        assert conn.version_for(METADATA) == 7
        assert conn.version_for(DESCRIBE_GROUPS) == DESCRIBE_GROUPS.max_version
        assert conn.version_for(FIND_COORDINATOR, min_version=2) == 3
        await conn.request(METADATA, {"topics": []})
        await conn.request(DESCRIBE_GROUPS, {"groups": ["g"]})
        await conn.request(DESCRIBE_GROUPS, {"groups": ["g"]}, version=3)  # forced
        assert [r.version for r in b.requests if r.api_key != 18] == [
            7, DESCRIBE_GROUPS.max_version, 3]
        for api, kw, words in ((FIND_COORDINATOR, {"min_version": 4}, "needs v4+"),
                               (LIST_GROUPS, {}, "v20-30"),
                               (LEAVE_GROUP, {}, "does not support LeaveGroup")):
            with pytest.raises(UnsupportedVersionError, match=words) as info:
                await conn.request(api, {}, **kw)
            assert info.value.exit_code == ExitCode.KAFKA_ERROR and info.value.code == 35
        assert not conn.closed  # refused before sending anything
        await conn.close()
        await b.stop()

    run(main())


# ---- peers that are not Kafka ---------------------------------------------------------------

async def _http(reader, writer):
    await reader.read(100)
    writer.write(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
    await writer.drain()


async def _close_at_once(reader, writer):
    return


async def _tls_alert(reader, writer):
    await reader.read(100)
    writer.write(b"\x15\x03\x03\x00\x02\x02\x50")
    await writer.drain()


def _random(seed: int, prefix: bytes = b"", n: int = 64, close: bool = True):
    async def script(reader, writer):
        await reader.read(100)
        writer.write(prefix + random.Random(seed).randbytes(n))
        await writer.drain()
        if not close:
            await reader.read()  # keep the connection open until the client goes
    return script


@pytest.mark.parametrize("script, words", [
    (_http, "HTTP"),
    (_close_at_once, "closed the connection without answering"),
    (_tls_alert, "it speaks TLS"),
    (_random(1), "is not a Kafka broker"),
    (_random(2), "is not a Kafka broker"),
    (_random(3, prefix=b"\x00\x00\x00\x10", n=16), "unknown correlation id"),       # a frame
    (_random(4, prefix=b"\x00\x00\x01\x00", n=20), "in the middle of its answer"),  # truncated
    (_random(5, prefix=b"\x00\x00\x00\x08\x00\x00\x00\x00\x00\x00\xff\xff", n=0),
     "does not decode"),
    (_random(7, prefix=b"\x00\x00\x00\x0c\x00\x00\x00\x00" + bytes(8), n=0),
     "lists no ApiVersions"),
    (_random(6, prefix=b"\x7f\xff\xff\xff", close=False), "no frame size"),
], ids=["http", "immediate-close", "tls", "random1", "random2", "frame-wrong-id",
        "truncated", "undecodable", "decodes-but-empty", "huge-size-open"])
def test_a_peer_that_is_not_kafka_is_reported_fast(script, words):
    async def main():
        server, port = await raw_server(script)
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        with pytest.raises(UnreachableError) as info:
            await BrokerConnection(HOST, port).connect(10)
        assert loop.time() - t0 < 2.0
        assert isinstance(info.value, NotKafkaError)
        assert "is not a Kafka broker" in str(info.value) and words in str(info.value)
        assert info.value.exit_code == ExitCode.UNREACHABLE
        # and bootstrap gives up on it at once, not at the deadline
        t0 = loop.time()
        with pytest.raises(UnreachableError, match="is not a Kafka broker"):
            async with Cluster([f"{HOST}:{port}"], timeout=10):
                pass
        assert loop.time() - t0 < 2.0
        server.close()

    run(main())


def test_a_silent_peer_fails_at_the_connect_timeout():
    async def main():
        server, port = await raw_server(lambda r, w: r.read())
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        with pytest.raises(UnreachableError, match="did not answer within 0.3 s"):
            await BrokerConnection(HOST, port).connect(0.3)
        assert 0.3 <= loop.time() - t0 < 2.0
        server.close()

    run(main())


def test_refused_port_is_unreachable():
    async def main():
        port = closed_port()
        with pytest.raises(UnreachableError, match="connection refused"):
            await BrokerConnection(HOST, port).connect(2)
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        with pytest.raises(UnreachableError) as info:
            async with Cluster([f"{HOST}:{port}", f"{HOST}:{closed_port()}"], timeout=0.5):
                pass
        elapsed = loop.time() - t0
        assert 0.5 <= elapsed < 2.0  # retried until the deadline, not longer
        text = str(info.value)
        assert "no Kafka broker reachable" in text and f"{HOST}:{port}: connection refused" in text
        assert info.value.exit_code == ExitCode.UNREACHABLE

    run(main())


def test_unknown_host_is_unreachable():
    async def main():
        with pytest.raises(UnreachableError, match="cannot resolve"):
            await BrokerConnection("no-such-host.invalid", 9092).connect(5)

    run(main())


def test_bootstrap_first_reachable_wins_and_learns_the_nodes():
    async def main():
        b1, b2 = await fake(node_id=1), await fake(node_id=2)
        b1.cluster = b2.cluster = [b1, b2]
        async with Cluster([f"{HOST}:{closed_port()}", b2.address], timeout=5) as cluster:
            assert sorted(cluster.nodes) == [1, 2]
            assert cluster.controller_id == 1 and cluster.cluster_id == "fake"
            conn = await cluster.any_broker()
            assert conn.port == b2.port and conn.node_id == 2  # the seed became node 2
            assert await cluster.broker(1) is await cluster.broker(1)  # pooled
        assert not b1.seen(3) and b2.seen(3)
        await b1.stop()
        await b2.stop()

    run(main())


# ---- coordinators --------------------------------------------------------------------------

async def two_brokers():
    b1, b2 = await fake(node_id=1), await fake(node_id=2)
    b1.cluster = b2.cluster = [b1, b2]
    return b1, b2


def test_coordinator_rediscovery_on_not_coordinator():
    async def main():
        b1, b2 = await two_brokers()
        b1.coordinator = b2.coordinator = b1
        moved = False

        def on_b1(req):
            nonlocal moved
            b1.coordinator = b2.coordinator = b2  # the group moved to broker 2
            moved = True
            return describe_answer(req, code=16)  # NOT_COORDINATOR

        b1.handlers[DESCRIBE_GROUPS.key] = on_b1
        b2.handlers[DESCRIBE_GROUPS.key] = describe_answer
        async with Cluster([b1.address], timeout=5) as cluster:
            resp = await cluster.send_to_coordinator("g", DESCRIBE_GROUPS, {"groups": ["g"]})
            assert resp["groups"][0]["error_code"] == 0 and moved
            assert (await cluster.find_coordinator("g")).node_id == 2  # cache updated
        assert len(b1.seen(DESCRIBE_GROUPS.key)) == 1 and len(b2.seen(DESCRIBE_GROUPS.key)) == 1
        assert len(b1.seen(FIND_COORDINATOR.key)) + len(b2.seen(FIND_COORDINATOR.key)) == 2
        await b1.stop()
        await b2.stop()

    run(main())


def test_coordinator_load_in_progress_retries_the_same_coordinator():
    async def main():
        b = await fake()
        codes = [14, 14, 0]
        b.handlers[DESCRIBE_GROUPS.key] = lambda req: describe_answer(req, codes.pop(0))
        async with Cluster([b.address], timeout=5) as cluster:
            resp = await cluster.send_to_coordinator("g", DESCRIBE_GROUPS, {"groups": ["g"]})
        assert resp["groups"][0]["error_code"] == 0
        assert len(b.seen(DESCRIBE_GROUPS.key)) == 3 and len(b.seen(FIND_COORDINATOR.key)) == 1
        await b.stop()

    run(main())


def test_other_codes_are_returned_not_retried():
    async def main():
        b = await fake()
        b.handlers[DESCRIBE_GROUPS.key] = lambda req: describe_answer(req, 69)  # GROUP_ID_NOT_FOUND
        # a per-member NOT_COORDINATOR is not about the coordinator of the group
        b.handlers[LEAVE_GROUP.key] = lambda req: {"error_code": 0, "members": [
            {"member_id": "m", "error_code": 16}]}
        async with Cluster([b.address], timeout=5) as cluster:
            resp = await cluster.send_to_coordinator("g", DESCRIBE_GROUPS, {"groups": ["g"]})
            assert resp["groups"][0]["error_code"] == 69
            resp = await cluster.send_to_coordinator("g", LEAVE_GROUP, {
                "group_id": "g", "members": [{"member_id": "m"}]})
            assert resp["members"][0]["error_code"] == 16
        assert len(b.seen(DESCRIBE_GROUPS.key)) == 1 and len(b.seen(LEAVE_GROUP.key)) == 1
        await b.stop()

    run(main())


def test_send_to_coordinator_respects_the_deadline():
    async def main():
        b = await fake()
        b.handlers[DESCRIBE_GROUPS.key] = lambda req: describe_answer(req, 14)
        async with Cluster([b.address], timeout=5) as cluster:
            loop = asyncio.get_running_loop()
            t0 = loop.time()
            with pytest.raises(DeadlineError) as info:
                await cluster.send_to_coordinator("g", DESCRIBE_GROUPS, {"groups": ["g"]},
                                                  deadline=0.5)
            assert 0.5 <= loop.time() - t0 < 1.5
        assert info.value.exit_code == ExitCode.TIMEOUT
        assert "COORDINATOR_LOAD_IN_PROGRESS" in str(info.value)
        assert isinstance(info.value.last_error, KafkaError)
        await b.stop()

    run(main())


def test_unreachable_coordinator_is_exit_3_at_the_deadline():
    async def main():
        b1, b2 = await two_brokers()
        b1.coordinator = b2
        await b2.stop()  # the coordinator is listed, but refuses connections
        async with Cluster([b1.address], timeout=5) as cluster:
            loop = asyncio.get_running_loop()
            t0 = loop.time()
            with pytest.raises(UnreachableError) as info:
                await cluster.send_to_coordinator("g", DESCRIBE_GROUPS, {"groups": ["g"]},
                                                  deadline=0.5)
            assert 0.5 <= loop.time() - t0 < 1.5
        assert info.value.exit_code == ExitCode.UNREACHABLE
        assert "gave up after" in str(info.value) and "connection refused" in str(info.value)
        assert len(b1.seen(FIND_COORDINATOR.key)) >= 2  # rediscovered on every attempt
        await b1.stop()

    run(main())


def test_find_coordinators_batched_and_cached():
    async def main():
        b = await fake()
        async with Cluster([b.address], timeout=5) as cluster:
            found = await cluster.find_coordinators(["a", "b", "c", "a"])
            assert list(found) == ["a", "b", "c"]
            assert {info.node_id for info in found.values()} == {1}
            assert [r.body["coordinator_keys"] for r in b.seen(10)] == [["a", "b", "c"]]
            await cluster.find_coordinators(["a", "b"])  # cached
            assert len(b.seen(10)) == 1
            cluster.invalidate_coordinator("b")
            await cluster.find_coordinators(["a", "b", "d"])
            assert b.seen(10)[-1].body["coordinator_keys"] == ["b", "d"]
            assert await cluster.coordinators_grouped(["a", "d"]) == {1: ["a", "d"]}
        await b.stop()

    run(main())


def test_find_coordinators_one_request_per_group_before_v4():
    async def main():
        versions = {k: (a.min_version, a.max_version) for k, a in APIS.items()}
        versions[FIND_COORDINATOR.key] = (0, 3)
        b = await fake(versions=versions)
        async with Cluster([b.address], timeout=5) as cluster:
            found = await cluster.find_coordinators(["a", "b"])
        assert set(found) == {"a", "b"}
        assert sorted(r.body["key"] for r in b.seen(10)) == ["a", "b"]
        assert {r.version for r in b.seen(10)} == {3}
        await b.stop()

    run(main())


def test_find_coordinators_retries_coordinator_not_available_per_group():
    async def main():
        b = await fake()
        first = True

        def answer(req):
            nonlocal first
            out = b._default_10(req)
            if first:  # a fresh cluster: __consumer_offsets is still being created
                for c in out["coordinators"]:
                    c.update(node_id=-1, host="", port=-1, error_code=15)
                first = False
            return out

        b.handlers[10] = answer
        async with Cluster([b.address], timeout=5) as cluster:
            found = await cluster.find_coordinators(["a", "b"])
        assert {i.node_id for i in found.values()} == {1} and len(b.seen(10)) == 2
        await b.stop()

    run(main())


def test_find_coordinators_fatal_error_is_raised():
    async def main():
        b = await fake()
        b.handlers[10] = lambda req: {"coordinators": [
            {"key": k, "node_id": -1, "host": "", "port": -1, "error_code": 30,
             "error_message": "denied"} for k in req.body["coordinator_keys"]]}
        async with Cluster([b.address], timeout=5) as cluster:
            with pytest.raises(KafkaAuthError, match="GROUP_AUTHORIZATION_FAILED") as info:
                await cluster.find_coordinators(["g"])
        assert info.value.exit_code == ExitCode.AUTH
        await b.stop()

    run(main())


def test_for_each_broker_reports_each_node():
    async def main():
        b1 = await fake(node_id=1)
        dead = await fake(node_id=2)
        b1.cluster = [b1, dead]
        await dead.stop()  # listed in Metadata, but gone
        b1.handlers[LIST_GROUPS.key] = lambda req: {"error_code": 0, "groups": [
            {"group_id": "g", "protocol_type": "consumer"}]}
        async with Cluster([b1.address], timeout=2) as cluster:
            results = await cluster.for_each_broker(LIST_GROUPS, {})
        assert results[1]["groups"][0]["group_id"] == "g"
        assert isinstance(results[2], UnreachableError)
        await b1.stop()

    run(main())


# ---- retry ------------------------------------------------------------------------------------

def test_retry_retries_only_retriable_errors():
    async def main():
        calls = []

        async def flaky():
            calls.append(1)
            if len(calls) < 3:
                raise KafkaError("Heartbeat", 15)  # COORDINATOR_NOT_AVAILABLE: retriable
            return "done"

        assert await retry(flaky, deadline=Deadline(5), what="x",
                           backoff=Backoff(0.001, 0.01)) == "done"
        assert len(calls) == 3

        calls.clear()

        async def fatal():
            calls.append(1)
            raise KafkaError("JoinGroup", 27)  # REBALANCE_IN_PROGRESS: not retriable

        with pytest.raises(KafkaError) as info:
            await retry(fatal, deadline=Deadline(5), what="x")
        assert info.value.code == 27 and len(calls) == 1

        calls.clear()

        async def lost():
            calls.append(1)
            if len(calls) == 1:
                raise ConnectionLostError("gone")
            return 1

        assert await retry(lost, deadline=Deadline(5), what="x", backoff=Backoff(0.001)) == 1

    run(main())


def test_retry_gives_up_at_the_deadline_with_the_last_error():
    async def main():
        async def always():
            raise KafkaError("OffsetFetch", 14)

        loop = asyncio.get_running_loop()
        t0 = loop.time()
        with pytest.raises(DeadlineError) as info:
            await retry(always, deadline=Deadline(0.3), what="fetching offsets")
        assert 0.3 <= loop.time() - t0 < 1.0
        assert "fetching offsets" in str(info.value)
        assert "COORDINATOR_LOAD_IN_PROGRESS (14)" in str(info.value)
        assert info.value.last_error.code == 14

    run(main())


def test_an_attempt_the_deadline_cut_short_does_not_hide_the_brokers_error():
    """Under load the last attempt can start with almost no time left and time out: that
    says nothing of the broker, whose answer before it is the error to name."""
    async def main():
        deadline = Deadline(0.2)
        calls = []

        async def loading_then_cut():
            calls.append(1)
            if len(calls) == 1:
                raise KafkaError("DescribeGroups", 14)
            await asyncio.sleep(deadline.remaining())   # the request capped at what is left
            raise RequestTimeoutError("DescribeGroups v6 to node 1: no response within 0.0 s")

        with pytest.raises(DeadlineError) as info:
            await retry(loading_then_cut, deadline=deadline, what="DescribeGroups",
                        backoff=Backoff(0.001, 0.001))
        assert "COORDINATOR_LOAD_IN_PROGRESS (14)" in str(info.value), str(info.value)
        assert info.value.last_error.code == 14

    run(main())


def test_backoff_grows_with_jitter_and_is_capped():
    b = Backoff(0.1, 1.0, rng=random.Random(7))
    delays = [b.next() for _ in range(8)]
    assert all(0.05 <= d <= 1.0 for d in delays)
    assert max(delays[5:]) > max(delays[:1])


# ---- SASL against the fake broker -----------------------------------------------------------

def sasl_broker(mechanisms=("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"), users=None):
    """Handlers for SaslHandshake/SaslAuthenticate: PLAIN checks the token, SCRAM runs a
    real server side (scramp)."""
    from scramp import ScramMechanism

    users = users or {"alice": "alice-secret"}
    state = {}

    def handshake(req):
        mech = req.body["mechanism"]
        state["mech"] = mech
        if mech not in mechanisms:
            return {"error_code": 33, "mechanisms": list(mechanisms)}
        if mech.startswith("SCRAM"):
            m = ScramMechanism(mech)
            infos = {u: m.make_auth_info(p, iteration_count=4096) for u, p in users.items()}
            state["scram"] = m.make_server(lambda u: infos[u])
        return {"error_code": 0, "mechanisms": list(mechanisms)}

    def authenticate(req):
        token = req.body["auth_bytes"]
        if state["mech"] == "PLAIN":
            _, user, password = token.split(b"\0")
            if users.get(user.decode()) != password.decode():
                return {"error_code": 58, "error_message": "Invalid username or password"}
            return {"error_code": 0, "auth_bytes": b"", "session_lifetime_ms": 0}
        server = state["scram"]
        if "first" not in state:
            state["first"] = True
            server.set_client_first(token.decode())
            return {"error_code": 0, "auth_bytes": server.get_server_first().encode()}
        try:
            server.set_client_final(token.decode())
        except Exception:
            return {"error_code": 58, "error_message": "invalid credentials"}
        return {"error_code": 0, "auth_bytes": server.get_server_final().encode()}

    return {17: handshake, 36: authenticate}


@pytest.mark.parametrize("mech", ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_sasl_success(mech):
    async def main():
        b = await fake()
        b.handlers.update(sasl_broker())
        sec = SecurityConfig("SASL_PLAINTEXT", mech, "alice", "alice-secret")
        async with Cluster([b.address], timeout=5, security=sec) as cluster:
            await cluster.metadata([])
        assert [r.api_key for r in b.requests[:2]] == [18, 17]
        assert b.seen(17)[0].version == 1
        assert len(b.seen(36)) == (1 if mech == "PLAIN" else 2)
        await b.stop()

    run(main())


@pytest.mark.parametrize("mech", ["PLAIN", "SCRAM-SHA-256"])
def test_sasl_bad_password_is_an_auth_error(mech):
    async def main():
        b = await fake()
        b.handlers.update(sasl_broker())
        sec = SecurityConfig("SASL_PLAINTEXT", mech, "alice", "wrong")
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        with pytest.raises(AuthError) as info:
            async with Cluster([b.address], timeout=5, security=sec):
                pass
        assert loop.time() - t0 < 2.0  # not retried until the deadline
        assert info.value.exit_code == ExitCode.AUTH
        assert "SASL_AUTHENTICATION_FAILED" in str(info.value)
        await b.stop()

    run(main())


def test_sasl_mechanism_not_enabled():
    async def main():
        b = await fake()
        b.handlers.update(sasl_broker(mechanisms=("PLAIN",)))
        sec = SecurityConfig("SASL_PLAINTEXT", "SCRAM-SHA-512", "alice", "alice-secret")
        with pytest.raises(AuthError, match=r"does not enable SCRAM-SHA-512 \(it enables: PLAIN\)"):
            await BrokerConnection(HOST, b.port, security=sec).connect(5)
        await b.stop()

    run(main())


# ---- TLS settings ------------------------------------------------------------------------------

def test_bad_tls_files_are_usage_errors_before_any_retry(tmp_path):
    jks = tmp_path / "truststore.jks"
    jks.write_bytes(b"\xfe\xed\xfe\xed\x00\x00\x00\x02")

    async def main():
        loop = asyncio.get_running_loop()
        for sec, words in ((SecurityConfig("SSL", ssl_cafile=str(tmp_path / "absent.pem")),
                            "absent.pem"),
                           (SecurityConfig("SSL", ssl_cafile=str(jks)), "not a PEM file")):
            t0 = loop.time()
            with pytest.raises(UsageError, match=words):
                async with Cluster([f"{HOST}:{closed_port()}"], timeout=5, security=sec):
                    pass
            assert loop.time() - t0 < 1.0

    run(main())


# ---- trace ---------------------------------------------------------------------------------

def test_trace_one_line_per_request_with_error_names():
    import io

    async def main():
        b = await fake()
        b.handlers[DESCRIBE_GROUPS.key] = lambda req: describe_answer(req, 69)
        out = io.StringIO()
        conn = await connect(b, node_id=1, trace=Tracer(out))
        await conn.request(DESCRIBE_GROUPS, {"groups": ["g"]})
        await conn.close()
        await b.stop()
        return out.getvalue().splitlines()

    lines = run(main())
    exchanges = [ln for ln in lines if " ms " in ln]
    assert len(exchanges) == 2  # ApiVersions, DescribeGroups
    assert exchanges[0].startswith("groupctl: trace: ApiVersions v4 #0 node 1 127.0.0.1:")
    last = exchanges[1]
    assert "DescribeGroups v6 #1 node 1" in last
    assert "groups[0].error_code=GROUP_ID_NOT_FOUND(69)" in last
