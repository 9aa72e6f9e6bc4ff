"""Reading one partition from its leader: ListOffsets (earliest, latest, by timestamp) and
Fetch from an offset up to the high watermark, as a plain consumer (replica id -1, read
uncommitted, no fetch session). groupctl reads `__consumer_offsets` with it.

    reader = PartitionReader(cluster, "__consumer_offsets", 7)
    await reader.locate()                       # leader, topic id, partition count
    start = await reader.offset_at(EARLIEST)    # or a timestamp in ms
    async for chunk in reader.read(start, end): # raw record-batch bytes, in order
        ...

Authorization: Metadata and ListOffsets need DESCRIBE on the topic, Fetch needs READ;
without them the broker answers TOPIC_AUTHORIZATION_FAILED (29) and the reader raises
TopicAuthorizationError (exit 4) naming the ACL to add. A leader that moved
(NOT_LEADER_OR_FOLLOWER and friends) is looked up again, within the deadline.
"""
from __future__ import annotations

from collections.abc import AsyncIterator

from ..errors import AuthError, GroupctlError, KafkaError, NotFoundError
from ..protocol.errors import ErrorCode
from ..protocol.messages import FETCH, LIST_OFFSETS
from ..protocol.records.batch import BatchError, read_batches

EARLIEST = -2
LATEST = -1
TOPIC_IDS_FROM = 13              # Fetch v13+ names topics by id
FETCH_MAX_BYTES = 16 << 20       # per request; the broker returns at least one batch
LEADER_MOVED = frozenset({ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.LEADER_NOT_AVAILABLE,
                          ErrorCode.FENCED_LEADER_EPOCH, ErrorCode.UNKNOWN_LEADER_EPOCH,
                          ErrorCode.UNKNOWN_TOPIC_ID})


class TopicAuthorizationError(AuthError):
    def __init__(self, topic: str, operation: str):
        super().__init__(
            f"not authorized to {operation} topic {topic} (TOPIC_AUTHORIZATION_FAILED): an "
            f"admin must add the ACL: kafka-acls.sh --add --allow-principal User:<you> "
            f"--operation Read --operation Describe --topic {topic}")


async def topic_info(cluster, topic: str, deadline):
    """The topic's Metadata (its id, partition count, leaders); no such topic is
    NotFoundError, no DESCRIBE on it TopicAuthorizationError."""
    md = await cluster.metadata([topic], deadline=deadline)
    info = md.topics.get(topic)
    code = info.error_code if info else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    if code == ErrorCode.TOPIC_AUTHORIZATION_FAILED:
        raise TopicAuthorizationError(topic, "describe")
    if code or info is None:
        raise NotFoundError(f"topic {topic} not found (error {code}); does the "
                            f"cluster have groups yet?")
    return info


def check(api: str, code: int, topic: str, operation: str, where: str) -> None:
    """A partition's error code: none passes; no permission is TopicAuthorizationError
    (exit 4, naming the ACL); any other a KafkaError naming `where`."""
    if code == ErrorCode.TOPIC_AUTHORIZATION_FAILED:
        raise TopicAuthorizationError(topic, operation)
    if code:
        raise KafkaError(api, code, where)


def list_offsets_body(topic: str, partitions: list[int], timestamp: int) -> dict:
    """ListOffsets as a plain consumer (replica -1, read uncommitted)."""
    return {"replica_id": -1, "isolation_level": 0, "timeout_ms": 0, "topics": [
        {"name": topic, "partitions": [
            {"partition_index": p, "timestamp": timestamp} for p in partitions]}]}


def fetch_body(conn, topic: str, topic_id: str | None, offsets: dict[int, int],
               max_wait_ms: int) -> dict:
    """Fetch as a plain consumer (no fetch session), the topic by id where the version
    negotiated on `conn` names topics by id."""
    by_id = conn.version_for(FETCH) >= TOPIC_IDS_FROM
    return {"replica_id": -1, "max_wait_ms": max_wait_ms, "min_bytes": 1,
            "max_bytes": FETCH_MAX_BYTES, "isolation_level": 0, "session_id": 0,
            "session_epoch": -1, "forgotten_topics_data": [], "rack_id": "",
            "topics": [{"topic": topic, "topic_id": topic_id if by_id else None,
                        "partitions": [{"partition": p, "fetch_offset": o,
                                        "partition_max_bytes": FETCH_MAX_BYTES}
                                       for p, o in sorted(offsets.items())]}]}


class PartitionReader:
    def __init__(self, cluster, topic: str, partition: int, *, deadline=None):
        self.cluster = cluster
        self.topic = topic
        self.partition = partition
        self.deadline = cluster.deadline(deadline)
        self.leader: int | None = None
        self.topic_id: str | None = None
        self.partitions: int | None = None
        self.high_watermark: int | None = None
        self.log_start_offset: int | None = None
        self.damaged: list[BatchError] = []

    async def locate(self) -> None:
        info = await topic_info(self.cluster, self.topic, self.deadline)
        self.topic_id, self.partitions = info.topic_id, info.partition_count
        part = info.partitions.get(self.partition)
        if part is None:
            raise NotFoundError(f"{self.topic} has no partition {self.partition}")
        self.leader = part.leader

    def _check(self, api: str, code: int, operation: str) -> None:
        check(api, code, self.topic, operation, f"{self.topic}-{self.partition}")

    async def _leader(self) -> int:
        if self.leader is None:
            await self.locate()
        if self.leader is None:
            raise KafkaError("Metadata", ErrorCode.LEADER_NOT_AVAILABLE,
                             f"{self.topic}-{self.partition} has no leader")
        return self.leader

    async def offset_at(self, timestamp: int) -> int | None:
        """ListOffsets: EARLIEST, LATEST, or the first offset whose timestamp is at or
        after `timestamp` ms (None: no such record)."""
        for _ in range(3):
            body = list_offsets_body(self.topic, [self.partition], timestamp)
            resp = await self.cluster.request(LIST_OFFSETS, body, node_id=await self._leader(),
                                              deadline=self.deadline)
            p = resp["topics"][0]["partitions"][0]
            if p["error_code"] in LEADER_MOVED:
                self.leader = None
                continue
            self._check("ListOffsets", p["error_code"], "describe")
            return p["offset"] if p["offset"] >= 0 else None
        raise KafkaError("ListOffsets", ErrorCode.NOT_LEADER_OR_FOLLOWER,
                         f"{self.topic}-{self.partition}: the leader kept moving")

    async def fetch(self, offset: int, max_wait_ms: int = 0) -> dict:
        """One Fetch at `offset`: the partition's response (records, high watermark...)."""
        for _ in range(3):
            leader = await self._leader()
            resp = await self.cluster.request(
                FETCH, lambda conn: fetch_body(conn, self.topic, self.topic_id,
                                               {self.partition: offset}, max_wait_ms),
                node_id=leader, deadline=self.deadline)
            if resp.get("error_code"):
                self._check("Fetch", resp["error_code"], "read")
            p = resp["responses"][0]["partitions"][0]
            if p["error_code"] in LEADER_MOVED:
                self.leader = None
                continue
            self._check("Fetch", p["error_code"], "read")
            self.high_watermark = p["high_watermark"]
            self.log_start_offset = p["log_start_offset"]
            return p
        raise KafkaError("Fetch", ErrorCode.NOT_LEADER_OR_FOLLOWER,
                         f"{self.topic}-{self.partition}: the leader kept moving")

    async def read(self, start: int, end: int | None = None, *,
                   skip_keys: frozenset | None = None, keep=None) -> AsyncIterator:
        """The batches from `start` up to the high watermark seen at the first fetch (or
        `end`, exclusive), in order; records before `start` in the first batch are the
        caller's to drop (a batch is returned whole). Damaged batches are kept in
        `damaged` and skipped. `skip_keys`, `keep`: as read_batches'."""
        offset, stop = start, end
        while True:
            p = await self.fetch(offset)
            if stop is None:
                stop = p["high_watermark"]
            data = p["records"] or b""
            progressed = False
            for batch in read_batches(data, partial_tail=True, skip_keys=skip_keys,
                                      keep=keep):
                if isinstance(batch, BatchError):
                    self.damaged.append(batch)
                    if batch.offset is None or batch.offset < offset:
                        continue
                    offset, progressed = batch.offset + 1, True  # cannot frame past it
                    break
                if stop is not None and batch.base_offset >= stop:
                    return
                if batch.last_offset >= offset:
                    yield batch
                    offset, progressed = batch.last_offset + 1, True
            if offset >= stop:
                return
            if not progressed:
                if not data:
                    return   # nothing more below the high watermark (e.g. a compacted gap)
                raise GroupctlError(f"{self.topic}-{self.partition}: no complete batch at "
                                    f"offset {offset} within {FETCH_MAX_BYTES} bytes")
