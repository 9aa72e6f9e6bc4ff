"""ListOffsets (key 2): the offset of a partition at a timestamp, or at one of the special
timestamps (-1 latest / log end, -2 earliest, -3 max timestamp, -4 local log start,
-5 last tiered, -6 earliest pending upload). groupctl uses it for log-end offsets and lag.
It must go to each partition's leader.

Kafka 4.0 dropped v0, so v1 is the baseline: one offset per partition (v1 also returns the
timestamp of that offset); v2 the isolation level (request) and throttle time (response);
v3 same as v2; v4 the current leader epoch for fencing (request) and the leader epoch of
the offset (response); v5 adds OFFSET_NOT_AVAILABLE; v6 flexible; v7 max timestamp
(KIP-734); v8 local log start offset (KIP-405); v9 last tiered offset (KIP-1005); v10
async remote lookups with a timeout (KIP-1075); v11 earliest pending upload offset
(KIP-1023).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..spec import PARTITION_LEADER, Api, Array, Field, Int8, Int16, Int32, Int64, String, Struct

if TYPE_CHECKING:  # pragma: no cover - the bodies are for the type checker only
    from ..bodies import ListOffsetsResponse

LIST_OFFSETS: Api[ListOffsetsResponse] = Api(
    2, "ListOffsets", versions=(1, 11), flexible_from=6, route=PARTITION_LEADER,
    request=Struct(
        Field("replica_id", Int32, about="-1 for a normal consumer"),
        Field("isolation_level", Int8, since=2, about="0 read uncommitted, 1 read committed"),
        Field("topics", Array(
            Field("name", String),
            Field("partitions", Array(
                Field("partition_index", Int32),
                Field("current_leader_epoch", Int32, since=4, default=-1),
                Field("timestamp", Int64),
            )),
        )),
        Field("timeout_ms", Int32, since=10),
    ),
    response=Struct(
        Field("throttle_time_ms", Int32, since=2),
        Field("topics", Array(
            Field("name", String),
            Field("partitions", Array(
                Field("partition_index", Int32),
                Field("error_code", Int16),
                Field("timestamp", Int64, since=1, default=-1),
                Field("offset", Int64, since=1, default=-1),
                Field("leader_epoch", Int32, since=4, default=-1),
            )),
        )),
    ),
)
