"""ShareGroupDescribe (key 77): KIP-932 share groups as the coordinator sees them: group
and assignment epochs, the server assignor, and per member its epoch, subscribed topics
and current assignment (share groups have no target assignment in the response).

Always flexible. v0 was the early-access version of Kafka 4.0 and is gone: the jar's
validVersions is "1" while the fields say "0+" (they have not changed since v0).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..spec import COORDINATOR, Api, Array, Bool, Field, Int16, Int32, String, Struct, Uuid

if TYPE_CHECKING:  # pragma: no cover - the bodies are for the type checker only
    from ..bodies import ShareGroupDescribeResponse

# commonStructs of the response.
TOPIC_PARTITIONS = Struct(
    Field("topic_id", Uuid),
    Field("topic_name", String),
    Field("partitions", Array(Int32)),
)
ASSIGNMENT = Struct(
    Field("topic_partitions", Array(TOPIC_PARTITIONS)),
)

SHARE_GROUP_DESCRIBE: Api[ShareGroupDescribeResponse] = Api(
    77, "ShareGroupDescribe", versions=(1, 1), flexible_from=0,
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
                Field("rack_id", String, nullable=True, default=None),
                Field("member_epoch", Int32),
                Field("client_id", String),
                Field("client_host", String),
                Field("subscribed_topic_names", Array(String)),
                Field("assignment", ASSIGNMENT),
            )),
            Field("authorized_operations", Int32, default=-2147483648),
        )),
    ),
)
