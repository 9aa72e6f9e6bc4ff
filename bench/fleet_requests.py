"""The requests that make bench/fleet.py's fleet, through groupctl's own client: each kind
of group's whole life (join, sync, commit, leave) as one coroutine, many at once on the
coordinator's pooled connection, the groups sharded by coordinator and retried per group
by client/sharded.py (a group whose coordinator is still loading is asked again).

OffsetCommit is not among groupctl's (read-only) messages: its v8 request is spelled here
from Kafka's OffsetCommitRequest.json (v8: flexible; v9 would take a member epoch).
"""
from __future__ import annotations

import asyncio
import struct
import sys
import time
import uuid
from pathlib import Path

from groupctl.client import Cluster
from groupctl.client.coordinators import REDISCOVER, WAIT
from groupctl.client.errors import kafka_error
from groupctl.client.sharded import Retry, coordinator_route, request_sharded
from groupctl.errors import GroupctlError
from groupctl.protocol.consumer import (Assignment, Subscription, TopicPartitions,
                                        encode_assignment, encode_subscription)
from groupctl.protocol.messages import (CONSUMER_GROUP_HEARTBEAT, JOIN_GROUP, LEAVE_GROUP,
                                        SYNC_GROUP)
from groupctl.protocol.spec import COORDINATOR, Api, Array, Field, Int16, Int32, Int64, String, Struct
from groupctl.protocol.wire import uvarint

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))   # tests/: the spec encoder
from tests.spec_encoder import compile_encoder  # noqa: E402

_REQUEST = Struct(
        Field("group_id", String),
        Field("generation_id_or_member_epoch", Int32),
        Field("member_id", String),
        Field("group_instance_id", String, nullable=True, default=None),
        Field("topics", Array(
            Field("name", String),
            Field("partitions", Array(
                Field("partition_index", Int32),
                Field("committed_offset", Int64),
                Field("committed_leader_epoch", Int32),
                Field("committed_metadata", String, nullable=True),
            )),
        )),
)
_RESPONSE = Struct(
        Field("throttle_time_ms", Int32),
        Field("topics", Array(
            Field("name", String),
            Field("partitions", Array(
                Field("partition_index", Int32),
                Field("error_code", Int16),
            )),
        )),
)


def _decode_response(buf, pos: int):
    """OffsetCommitResponse v8 (flexible): throttle, topics[name, partitions[index,
    error]]; tagged fields passed over."""
    def tags(pos: int) -> int:
        count, pos = uvarint(buf, pos)
        for _ in range(count):
            _, pos = uvarint(buf, pos)
            size, pos = uvarint(buf, pos)
            pos += size
        return pos

    throttle, = struct.unpack_from(">i", buf, pos)
    n, pos = uvarint(buf, pos + 4)
    topics = []
    for _ in range(n - 1):
        size, pos = uvarint(buf, pos)
        name, pos = buf[pos:pos + size - 1].decode(), pos + size - 1
        m, pos = uvarint(buf, pos)
        partitions = []
        for _ in range(m - 1):
            index, error = struct.unpack_from(">ih", buf, pos)
            pos = tags(pos + 6)
            partitions.append({"partition_index": index, "error_code": error})
        pos = tags(pos)
        topics.append({"name": name, "partitions": partitions})
    return {"throttle_time_ms": throttle, "topics": topics}, tags(pos)


# groupctl's own codecs are generated for the APIs it speaks (read-only ones): this one
# is encoded by the tests' spec encoder and decoded above
OFFSET_COMMIT: Api = Api(8, "OffsetCommit", versions=(8, 8), flexible_from=8,
                         route=COORDINATOR, request=_REQUEST, response=_RESPONSE,
                         codecs={8: (compile_encoder(_REQUEST, 8, True), None, None,
                                     _decode_response)})
MEMBER_ID_REQUIRED = 79
RETRY = REDISCOVER | WAIT
IN_FLIGHT = 400   # group lives at once


class Again(Exception):
    """A coordinator error mid-life: the group's life starts again at its coordinator."""

    def __init__(self, error: GroupctlError):
        self.error = error


def _check(api: str, code: int, group: str) -> None:
    if code in RETRY:
        raise Again(kafka_error(api, code, f"group {group!r}"))
    if code:
        raise kafka_error(api, code, f"group {group!r}")


class Fleet:
    def __init__(self, bootstrap: str, topic: str, partitions: int):
        self.bootstrap, self.topic, self.partitions = bootstrap, topic, partitions
        self.sub = encode_subscription(Subscription(topics=[topic]))
        self.asg = encode_assignment(Assignment(
            assigned_partitions=[TopicPartitions(topic, list(range(partitions)))]))

    async def make(self, by_kind: dict[str, list[str]]) -> dict:
        """Every group of `by_kind` made; {kind: groups made, seconds}."""
        out: dict = {}
        async with Cluster(self.bootstrap.split(","), timeout=600) as cluster:
            gate = asyncio.Semaphore(IN_FLIGHT)
            lives = {"classic": self.classic, "consumer": self.consumer, "commits": self.commit}
            for kind, groups in by_kind.items():
                start = time.perf_counter()
                d = cluster.deadline(600)

                async def send(node, batch, life=lives[kind]):
                    return dict(zip(batch, await asyncio.gather(
                        *(self._life(cluster, node, g, life, gate) for g in batch))))

                got = await request_sharded(groups, route=coordinator_route(cluster, d),
                                            send=send, deadline=d, what=f"{kind} group",
                                            batch=200, forget=cluster.invalidate_coordinator)
                if got.errors:
                    g, err = next(iter(got.errors.items()))
                    raise SystemExit(f"{len(got.errors)} {kind} groups not made: {g}: {err}")
                took = time.perf_counter() - start
                out[kind] = {"groups": len(got.results), "seconds": round(took, 2),
                             "commits": len(got.results) * self.partitions}
        return out

    async def churn(self, groups: list[str], rate: float, stop) -> int:
        """A classic round a 1/rate seconds on the groups in turn until `stop` is set."""
        rounds = 0
        async with Cluster(self.bootstrap.split(","), timeout=60) as cluster:
            tasks, busy = [], set()
            next_at = time.monotonic()
            i = 0
            while not stop.is_set():
                group = groups[i % len(groups)]
                i += 1
                if group in busy:
                    continue
                busy.add(group)

                async def one(g=group):
                    try:
                        node = (await cluster.find_coordinator(g)).node_id
                        await self.classic(cluster, node, g)
                    finally:
                        busy.discard(g)
                tasks.append(asyncio.ensure_future(one()))
                rounds += 1
                next_at += 1 / rate
                await asyncio.sleep(max(0.0, next_at - time.monotonic()))
            await asyncio.gather(*tasks, return_exceptions=True)
        return rounds

    async def _life(self, cluster, node: int, group: str, life, gate):
        async with gate:
            try:
                await life(cluster, node, group)
            except Again as again:
                return Retry(again.error)
            except GroupctlError as exc:
                return exc
            return True

    def _offsets(self, offset: int) -> list[dict]:
        return [{"name": self.topic, "partitions": [
            {"partition_index": p, "committed_offset": offset + p, "committed_leader_epoch": -1,
             "committed_metadata": None} for p in range(self.partitions)]}]

    async def commit(self, cluster, node: int, group: str, generation: int = -1,
                     member: str = "") -> None:
        resp = await cluster.request(OFFSET_COMMIT, {
            "group_id": group, "generation_id_or_member_epoch": generation, "member_id": member,
            "group_instance_id": None, "topics": self._offsets(10 + hash(group) % 50)},
            node_id=node)
        for t in resp["topics"]:
            for p in t["partitions"]:
                _check("OffsetCommit", p["error_code"], group)

    async def classic(self, cluster, node: int, group: str) -> None:
        """One member joins, syncs, commits with its generation, and leaves."""
        body = {"group_id": group, "session_timeout_ms": 30000, "rebalance_timeout_ms": 30000,
                "member_id": "", "group_instance_id": None, "protocol_type": "consumer",
                "protocols": [{"name": "range", "metadata": self.sub}], "reason": "fleet"}
        resp = await cluster.request(JOIN_GROUP, body, node_id=node)
        if resp["error_code"] == MEMBER_ID_REQUIRED:   # KIP-394: join again with the id
            resp = await cluster.request(JOIN_GROUP, {**body, "member_id": resp["member_id"]},
                                         node_id=node)
        _check("JoinGroup", resp["error_code"], group)
        member, generation = resp["member_id"], resp["generation_id"]
        sync = await cluster.request(SYNC_GROUP, {
            "group_id": group, "generation_id": generation, "member_id": member,
            "group_instance_id": None, "protocol_type": "consumer", "protocol_name": "range",
            "assignments": [{"member_id": member, "assignment": self.asg}]}, node_id=node)
        _check("SyncGroup", sync["error_code"], group)
        await self.commit(cluster, node, group, generation, member)
        leave = await cluster.request(LEAVE_GROUP, {"group_id": group, "members": [
            {"member_id": member, "group_instance_id": None, "reason": "fleet"}]}, node_id=node)
        _check("LeaveGroup", leave["error_code"], group)

    async def consumer(self, cluster, node: int, group: str) -> None:
        """A KIP-848 member heartbeats in until it holds its assignment, leaves, and the
        group's offsets are committed (a commit of the empty group, as an admin's)."""
        member, epoch, owned = uuid.uuid4().hex, 0, []
        for _ in range(100):
            resp = await cluster.request(CONSUMER_GROUP_HEARTBEAT, {
                "group_id": group, "member_id": member, "member_epoch": epoch,
                "instance_id": None, "rack_id": None, "rebalance_timeout_ms": 30000,
                "subscribed_topic_names": [self.topic], "subscribed_topic_regex": None,
                "server_assignor": None, "topic_partitions": owned}, node_id=node)
            _check("ConsumerGroupHeartbeat", resp["error_code"], group)
            epoch = resp["member_epoch"]
            assignment = resp.get("assignment")
            if assignment is not None:
                owned = [{"topic_id": tp["topic_id"], "partitions": tp["partitions"]}
                         for tp in assignment["topic_partitions"]]
                if owned:
                    break
            await asyncio.sleep(0.05)
        resp = await cluster.request(CONSUMER_GROUP_HEARTBEAT, {
            "group_id": group, "member_id": member, "member_epoch": -1, "instance_id": None,
            "rack_id": None, "rebalance_timeout_ms": -1, "subscribed_topic_names": None,
            "subscribed_topic_regex": None, "server_assignor": None, "topic_partitions": None},
            node_id=node)
        _check("ConsumerGroupHeartbeat", resp["error_code"], group)
        await self.commit(cluster, node, group)
