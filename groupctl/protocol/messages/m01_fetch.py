"""Fetch (key 1): records of partitions from their leader. groupctl fetches
`__consumer_offsets` for `history` (and, later, `watch --source records`), as a plain
consumer (replica id -1), read uncommitted.

Kafka 4.0 dropped v0-v3, so v4 is the baseline (isolation level, last stable offset and
aborted transactions); v5 log start offset; v7 fetch sessions (KIP-227: session id 0 and
epoch -1 for a full fetch without a session); v9 current leader epoch (KIP-320); v11 rack
id and preferred read replica (KIP-392); v12 flexible, diverging epoch, current leader,
snapshot id; v13 topic ids instead of names (KIP-516); v15 replica state (KIP-903); v16
node endpoints (KIP-951); v17 replica directory id (KIP-853); v18 high watermark for
follower fetches (KIP-1166).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..spec import (
    PARTITION_LEADER, Api, Array, Field, Int8, Int16, Int32, Int64, Records, String, Struct, Uuid,
)

if TYPE_CHECKING:  # pragma: no cover - the bodies are for the type checker only
    from ..bodies import FetchResponse

FETCH: Api[FetchResponse] = Api(1, "Fetch", versions=(4, 18), flexible_from=12, route=PARTITION_LEADER,
    request=Struct(
        Field("cluster_id", String, since=12, nullable=True, default=None, tag=0),
        Field("replica_id", Int32, until=14, default=-1, about="-1 for a consumer"),
        Field("replica_state", Struct(
            Field("replica_id", Int32, since=15, default=-1),
            Field("replica_epoch", Int64, since=15, default=-1),
        ), since=15, tag=1),
        Field("max_wait_ms", Int32),
        Field("min_bytes", Int32),
        Field("max_bytes", Int32, since=3, default=0x7FFFFFFF),
        Field("isolation_level", Int8, since=4, default=0),
        Field("session_id", Int32, since=7, default=0),
        Field("session_epoch", Int32, since=7, default=-1),
        Field("topics", Array(
            Field("topic", String, until=12),
            Field("topic_id", Uuid, since=13),
            Field("partitions", Array(
                Field("partition", Int32),
                Field("current_leader_epoch", Int32, since=9, default=-1),
                Field("fetch_offset", Int64),
                Field("last_fetched_epoch", Int32, since=12, default=-1),
                Field("log_start_offset", Int64, since=5, default=-1),
                Field("partition_max_bytes", Int32),
                Field("replica_directory_id", Uuid, since=17, tag=0),
                Field("high_watermark", Int64, since=18, default=0x7FFFFFFFFFFFFFFF, tag=1),
            )),
        )),
        Field("forgotten_topics_data", Array(
            Field("topic", String, since=7, until=12),
            Field("topic_id", Uuid, since=13),
            Field("partitions", Array(Int32), since=7),
        ), since=7),
        Field("rack_id", String, since=11, default=""),
    ),
    response=Struct(
        Field("throttle_time_ms", Int32, since=1),
        Field("error_code", Int16, since=7),
        Field("session_id", Int32, since=7, default=0),
        Field("responses", Array(
            Field("topic", String, until=12),
            Field("topic_id", Uuid, since=13),
            Field("partitions", Array(
                Field("partition_index", Int32),
                Field("error_code", Int16),
                Field("high_watermark", Int64),
                Field("last_stable_offset", Int64, since=4, default=-1),
                Field("log_start_offset", Int64, since=5, default=-1),
                Field("diverging_epoch", Struct(
                    Field("epoch", Int32, since=12, default=-1),
                    Field("end_offset", Int64, since=12, default=-1),
                ), since=12, tag=0),
                Field("current_leader", Struct(
                    Field("leader_id", Int32, since=12, default=-1),
                    Field("leader_epoch", Int32, since=12, default=-1),
                ), since=12, tag=1),
                Field("snapshot_id", Struct(
                    Field("end_offset", Int64, default=-1),
                    Field("epoch", Int32, default=-1),
                ), since=12, tag=2),
                Field("aborted_transactions", Array(
                    Field("producer_id", Int64, since=4),
                    Field("first_offset", Int64, since=4),
                ), since=4, nullable=True),
                Field("preferred_read_replica", Int32, since=11, default=-1),
                Field("records", Records, nullable=True),
            )),
        )),
        Field("node_endpoints", Array(
            Field("node_id", Int32, since=16),
            Field("host", String, since=16),
            Field("port", Int32, since=16),
            Field("rack", String, since=16, nullable=True, default=None),
        ), since=16, tag=0),
    ),
)
