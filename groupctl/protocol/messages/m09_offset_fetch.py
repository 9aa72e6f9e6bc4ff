"""OffsetFetch (key 9): a group's committed offsets, for some partitions or (null topics)
for all. groupctl uses it for committed offsets and lag; it never commits.

Kafka 4.0 dropped v0, so v1 (offsets from __consumer_offsets) is the baseline; v2 null
topics = all topics, and a top-level error code; v3 throttle time; v4 same as v3; v5 the
committed leader epoch; v6 flexible; v7 RequireStable (UNSTABLE_OFFSET_COMMIT, KIP-447);
v8 several groups per request (KIP-709), everything moves under `groups`; v9 member id and
epoch for KIP-848 groups; v10 topic ids instead of topic names (KIP-848).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..spec import COORDINATOR, Api, Array, Bool, Field, Int16, Int32, Int64, String, Struct, Uuid

if TYPE_CHECKING:  # pragma: no cover - the bodies are for the type checker only
    from ..bodies import OffsetFetchResponse

OFFSET_FETCH: Api[OffsetFetchResponse] = Api(
    9, "OffsetFetch", versions=(1, 10), flexible_from=6, route=COORDINATOR,
    request=Struct(
        Field("group_id", String, until=7),
        Field("topics", Array(
            Field("name", String, until=7),
            Field("partition_indexes", Array(Int32), until=7),
        ), until=7, nullable=2, about="null (v2+) for all topics"),
        Field("groups", Array(
            Field("group_id", String, since=8),
            Field("member_id", String, since=9, nullable=9, default=None),
            Field("member_epoch", Int32, since=9, default=-1),
            Field("topics", Array(
                Field("name", String, since=8, until=9),
                Field("topic_id", Uuid, since=10),
                Field("partition_indexes", Array(Int32), since=8),
            ), since=8, nullable=8, about="null for all topics"),
        ), since=8),
        Field("require_stable", Bool, since=7, default=False),
    ),
    response=Struct(
        Field("throttle_time_ms", Int32, since=3),
        Field("topics", Array(
            Field("name", String, until=7),
            Field("partitions", Array(
                Field("partition_index", Int32, until=7),
                Field("committed_offset", Int64, until=7),
                Field("committed_leader_epoch", Int32, since=5, until=7, default=-1),
                Field("metadata", String, until=7, nullable=0),
                Field("error_code", Int16, until=7),
            ), until=7),
        ), until=7),
        Field("error_code", Int16, since=2, until=7, default=0),
        Field("groups", Array(
            Field("group_id", String, since=8),
            Field("topics", Array(
                Field("name", String, since=8, until=9),
                Field("topic_id", Uuid, since=10),
                Field("partitions", Array(
                    Field("partition_index", Int32, since=8),
                    Field("committed_offset", Int64, since=8),
                    Field("committed_leader_epoch", Int32, since=8, default=-1),
                    Field("metadata", String, since=8, nullable=8),
                    Field("error_code", Int16, since=8),
                ), since=8),
            ), since=8),
            Field("error_code", Int16, since=8, default=0),
        ), since=8),
    ),
)
