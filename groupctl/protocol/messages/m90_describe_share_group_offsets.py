"""DescribeShareGroupOffsets (key 90): per share-partition of a share group, the start
offset (the first record not yet acknowledged as done) and leader epoch; v1 adds the lag
the broker computes (-1 where it cannot). Null topics ask for every topic-partition.

Always flexible. Errors come per group and per partition, each with a message.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..spec import COORDINATOR, Api, Array, Field, Int16, Int32, Int64, String, Struct, Uuid

if TYPE_CHECKING:  # pragma: no cover - the bodies are for the type checker only
    from ..bodies import DescribeShareGroupOffsetsResponse

DESCRIBE_SHARE_GROUP_OFFSETS: Api[DescribeShareGroupOffsetsResponse] = Api(
    90, "DescribeShareGroupOffsets", versions=(0, 1),
    flexible_from=0, route=COORDINATOR,
    request=Struct(
        Field("groups", Array(
            Field("group_id", String),
            Field("topics", Array(
                Field("topic_name", String),
                Field("partitions", Array(Int32)),
            ), nullable=True, about="null for all topic-partitions"),
        )),
    ),
    response=Struct(
        Field("throttle_time_ms", Int32),
        Field("groups", Array(
            Field("group_id", String),
            Field("topics", Array(
                Field("topic_name", String),
                Field("topic_id", Uuid),
                Field("partitions", Array(
                    Field("partition_index", Int32),
                    Field("start_offset", Int64),
                    Field("leader_epoch", Int32),
                    Field("lag", Int64, since=1, default=-1, about="-1: not known"),
                    Field("error_code", Int16),
                    Field("error_message", String, nullable=True, default=None),
                )),
            )),
            Field("error_code", Int16),
            Field("error_message", String, nullable=True, default=None),
        )),
    ),
)
