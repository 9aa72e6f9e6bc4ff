"""Metadata (key 3): brokers, the controller, topics with their partitions, leaders and
replicas. groupctl uses it to find brokers, partition counts and partition leaders.

v0 an empty topic list means all topics; from v1 null means all topics and empty means
none, and the response adds broker racks, the controller id and IsInternal; v2 the cluster
id; v3 throttle time; v4 AllowAutoTopicCreation; v5 offline replicas; v6 same as v5; v7
partition leader epochs; v8 authorized operations (cluster and topic); v9 flexible; v10
topic ids (and nullable topic names in the request, not served until v12); v11 drops the
cluster authorized operations (see DescribeCluster, KIP-700); v12 lookup by topic id
(nullable topic names in the response); v13 a top-level error code.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..spec import ANY_BROKER, Api, Array, Bool, Field, Int16, Int32, String, Struct, Uuid

if TYPE_CHECKING:  # pragma: no cover - the bodies are for the type checker only
    from ..bodies import MetadataResponse

METADATA: Api[MetadataResponse] = Api(
    3, "Metadata", versions=(0, 13), flexible_from=9, route=ANY_BROKER,
    request=Struct(
        Field("topics", Array(
            Field("topic_id", Uuid, since=10),
            Field("name", String, nullable=10),
        ), nullable=1, about="null (v1+) for all topics"),
        Field("allow_auto_topic_creation", Bool, since=4, default=True),
        Field("include_cluster_authorized_operations", Bool, since=8, until=10),
        Field("include_topic_authorized_operations", Bool, since=8),
    ),
    response=Struct(
        Field("throttle_time_ms", Int32, since=3),
        Field("brokers", Array(
            Field("node_id", Int32),
            Field("host", String),
            Field("port", Int32),
            Field("rack", String, since=1, nullable=1, default=None),
        )),
        Field("cluster_id", String, since=2, nullable=2, default=None),
        Field("controller_id", Int32, since=1, default=-1),
        Field("topics", Array(
            Field("error_code", Int16),
            Field("name", String, nullable=12),
            Field("topic_id", Uuid, since=10),
            Field("is_internal", Bool, since=1, default=False),
            Field("partitions", Array(
                Field("error_code", Int16),
                Field("partition_index", Int32),
                Field("leader_id", Int32),
                Field("leader_epoch", Int32, since=7, default=-1),
                Field("replica_nodes", Array(Int32)),
                Field("isr_nodes", Array(Int32)),
                Field("offline_replicas", Array(Int32), since=5),
            )),
            Field("topic_authorized_operations", Int32, since=8, default=-2147483648),
        )),
        Field("cluster_authorized_operations", Int32, since=8, until=10, default=-2147483648),
        Field("error_code", Int16, since=13),
    ),
)
