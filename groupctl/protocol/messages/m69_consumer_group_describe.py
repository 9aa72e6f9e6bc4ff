"""ConsumerGroupDescribe (key 69): KIP-848 consumer groups as the coordinator sees them:
group and assignment epochs, the server assignor, and per member its epoch, subscription,
current assignment and target assignment.

Always flexible. v1 adds each member's type (-1 unknown, 0 classic, 1 consumer; KIP-1099);
the request is the same as v0.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..spec import COORDINATOR, Api, Array, Bool, Field, Int8, Int16, Int32, String, Struct, Uuid

if TYPE_CHECKING:  # pragma: no cover - the bodies are for the type checker only
    from ..bodies import ConsumerGroupDescribeResponse

# commonStructs of the response.
TOPIC_PARTITIONS = Struct(
    Field("topic_id", Uuid),
    Field("topic_name", String),
    Field("partitions", Array(Int32)),
)
ASSIGNMENT = Struct(
    Field("topic_partitions", Array(TOPIC_PARTITIONS)),
)

CONSUMER_GROUP_DESCRIBE: Api[ConsumerGroupDescribeResponse] = Api(
    69, "ConsumerGroupDescribe", versions=(0, 1), flexible_from=0,
    route=COORDINATOR,
    request=Struct(
        Field("group_ids", Array(String)),
        Field("include_authorized_operations", Bool),
    ),
    response=Struct(
        Field("throttle_time_ms", Int32),
        Field("groups", Array(
            Field("error_code", Int16),
            Field("error_message", String, nullable=True, default=None),
            Field("group_id", String),
            Field("group_state", String),
            Field("group_epoch", Int32),
            Field("assignment_epoch", Int32),
            Field("assignor_name", String),
            Field("members", Array(
                Field("member_id", String),
                Field("instance_id", String, nullable=True, default=None),
                Field("rack_id", String, nullable=True, default=None),
                Field("member_epoch", Int32),
                Field("client_id", String),
                Field("client_host", String),
                Field("subscribed_topic_names", Array(String)),
                Field("subscribed_topic_regex", String, nullable=True, default=None),
                Field("assignment", ASSIGNMENT),
                Field("target_assignment", ASSIGNMENT),
                Field("member_type", Int8, since=1, default=-1,
                      about="-1 unknown, 0 classic, 1 consumer"),
            )),
            Field("authorized_operations", Int32, default=-2147483648),
        )),
    ),
)
