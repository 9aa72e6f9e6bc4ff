"""ConsumerGroupHeartbeat (key 68): the KIP-848 consumer protocol. A member joins (epoch 0),
heartbeats, reports the partitions it owns and receives its assignment; the broker runs the
assignor. Member epoch -1 leaves, -2 leaves for a while as a static member. Most request
fields are null when unchanged since the last heartbeat; the assignment in the response is
null when it did not change.

Always flexible. v1 adds a subscription by regex (KIP-848) and makes the client generate
its own member id (a UUID kept for the process's life, KIP-1082).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..spec import COORDINATOR, Api, Array, Field, Int16, Int32, String, Struct, Uuid

if TYPE_CHECKING:  # pragma: no cover - the bodies are for the type checker only
    from ..bodies import ConsumerGroupHeartbeatResponse

# commonStructs "TopicPartitions" of the response (the request defines the same inline).
TOPIC_PARTITIONS = Struct(
    Field("topic_id", Uuid),
    Field("partitions", Array(Int32)),
)

CONSUMER_GROUP_HEARTBEAT: Api[ConsumerGroupHeartbeatResponse] = Api(
    68, "ConsumerGroupHeartbeat", versions=(0, 1), flexible_from=0,
    route=COORDINATOR,
    request=Struct(
        Field("group_id", String),
        Field("member_id", String),
        Field("member_epoch", Int32,
              about="0 join, -1 leave, -2 static member leaving for a while"),
        Field("instance_id", String, nullable=True, default=None),
        Field("rack_id", String, nullable=True, default=None),
        Field("rebalance_timeout_ms", Int32, default=-1),
        Field("subscribed_topic_names", Array(String), nullable=True, default=None),
        Field("subscribed_topic_regex", String, since=1, nullable=True, default=None),
        Field("server_assignor", String, nullable=True, default=None),
        Field("topic_partitions", Array(
            Field("topic_id", Uuid),
            Field("partitions", Array(Int32)),
        ), nullable=True, default=None, about="owned partitions; null when unchanged"),
    ),
    response=Struct(
        Field("throttle_time_ms", Int32),
        Field("error_code", Int16),
        Field("error_message", String, nullable=True, default=None),
        Field("member_id", String, nullable=True, default=None),
        Field("member_epoch", Int32),
        Field("heartbeat_interval_ms", Int32),
        Field("assignment", Struct(
            Field("topic_partitions", Array(TOPIC_PARTITIONS)),
        ), nullable=True, default=None, about="null when unchanged"),
    ),
)
