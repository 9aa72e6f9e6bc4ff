"""Cluster metadata as plain data: brokers, the controller, topics, partitions, leaders."""
from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..protocol.errors import ErrorCode
from ..protocol.types import ZERO_UUID
from ..records import Frozen

if TYPE_CHECKING:  # pragma: no cover
    from ..protocol.bodies import MetadataResponse


class BrokerInfo(Frozen):
    """One broker of the cluster, as Metadata lists it."""

    node_id: int
    host: str
    port: int
    rack: str | None
    _fields = ("node_id", "host", "port", "rack")

    def __init__(self, node_id: int, host: str, port: int, rack: str | None = None):
        self._init(node_id=node_id, host=host, port=port, rack=rack)

    @property
    def address(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"

    def to_dict(self) -> dict:
        return {"id": self.node_id, "host": self.host, "port": self.port, "rack": self.rack}


class PartitionInfo(Frozen):
    """One partition of a topic: its leader, replicas and in-sync replicas."""

    partition: int
    leader: int | None          # None: no leader right now (-1 on the wire)
    leader_epoch: int | None
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    offline_replicas: tuple[int, ...]
    error_code: int
    _fields = ("partition", "leader", "leader_epoch", "replicas", "isr", "offline_replicas",
               "error_code")

    def __init__(self, partition: int, leader: int | None, leader_epoch: int | None,
                 replicas: tuple[int, ...] = (), isr: tuple[int, ...] = (),
                 offline_replicas: tuple[int, ...] = (), error_code: int = ErrorCode.NONE):
        self._init(partition=partition, leader=leader, leader_epoch=leader_epoch,
                   replicas=replicas, isr=isr, offline_replicas=offline_replicas,
                   error_code=error_code)


class TopicInfo(Frozen):
    """One topic of a Metadata response, with its partitions by index."""

    name: str | None
    topic_id: str | None        # Kafka's base64 form; None when the broker has none (v<10)
    is_internal: bool
    error_code: int
    partitions: dict[int, PartitionInfo]
    _fields = ("name", "topic_id", "is_internal", "error_code", "partitions")

    def __init__(self, name: str | None, topic_id: str | None, is_internal: bool,
                 error_code: int, partitions: dict[int, PartitionInfo] | None = None):
        self._init(name=name, topic_id=topic_id, is_internal=is_internal,
                   error_code=error_code, partitions={} if partitions is None else partitions)

    @property
    def partition_count(self) -> int:
        return len(self.partitions)


class ClusterMetadata(Frozen):
    """A parsed Metadata response: brokers, controller, topics."""

    cluster_id: str | None
    controller_id: int | None
    brokers: dict[int, BrokerInfo]
    topics: dict[str, TopicInfo]
    raw: Mapping[str, Any]
    _fields = ("cluster_id", "controller_id", "brokers", "topics", "raw")
    _hidden = frozenset({"raw"})

    def __init__(self, cluster_id: str | None, controller_id: int | None,
                 brokers: dict[int, BrokerInfo], topics: dict[str, TopicInfo],
                 raw: Mapping[str, Any] | None = None):
        self._init(cluster_id=cluster_id, controller_id=controller_id, brokers=brokers,
                   topics=topics, raw={} if raw is None else raw)

    def leader_of(self, topic: str, partition: int) -> int | None:
        t = self.topics.get(topic)
        p = t.partitions.get(partition) if t else None
        return p.leader if p else None


def _opt(v: int) -> int | None:
    return None if v is None or v < 0 else v


def parse_metadata(resp: MetadataResponse) -> ClusterMetadata:
    brokers = {b["node_id"]: BrokerInfo(b["node_id"], b["host"], b["port"], b.get("rack"))
               for b in resp.get("brokers") or []}
    topics: dict[str, TopicInfo] = {}
    for t in resp.get("topics") or []:
        parts = {}
        for p in t.get("partitions") or []:
            parts[p["partition_index"]] = PartitionInfo(
                p["partition_index"], _opt(p["leader_id"]), _opt(p.get("leader_epoch", -1)),
                tuple(p.get("replica_nodes") or ()), tuple(p.get("isr_nodes") or ()),
                tuple(p.get("offline_replicas") or ()), p.get("error_code", 0))
        tid = t.get("topic_id")
        info = TopicInfo(t.get("name"), None if not tid or tid == ZERO_UUID else tid,
                         bool(t.get("is_internal")), t.get("error_code", 0), parts)
        topics[info.name if info.name is not None else (info.topic_id or str(tid))] = info
    return ClusterMetadata(resp.get("cluster_id"), _opt(resp.get("controller_id", -1)),
                           brokers, topics, resp)
