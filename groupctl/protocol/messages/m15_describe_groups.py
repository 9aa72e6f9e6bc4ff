"""DescribeGroups (key 15): state, protocol and members of classic groups, with each
member's metadata (the subscription) and assignment, both filled only when the group is
Stable. A KIP-848 consumer group described this way looks Dead: use ConsumerGroupDescribe.

v1 throttle time; v2 responses are sent before throttling; v3 authorized operations;
v4 members' group instance ids (KIP-345); v5 flexible; v6 an unknown group comes back as
GROUP_ID_NOT_FOUND with an error message instead of state Dead and error 0 (KIP-1043).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..spec import COORDINATOR, Api, Array, Bool, Bytes, Field, Int16, Int32, String, Struct

if TYPE_CHECKING:  # pragma: no cover - the bodies are for the type checker only
    from ..bodies import DescribeGroupsResponse

DESCRIBE_GROUPS: Api[DescribeGroupsResponse] = Api(
    15, "DescribeGroups", versions=(0, 6), flexible_from=5, route=COORDINATOR,
    request=Struct(
        Field("groups", Array(String)),
        Field("include_authorized_operations", Bool, since=3),
    ),
    response=Struct(
        Field("throttle_time_ms", Int32, since=1),
        Field("groups", Array(
            Field("error_code", Int16),
            Field("error_message", String, since=6, nullable=6, default=None),
            Field("group_id", String),
            Field("group_state", String),
            Field("protocol_type", String),
            Field("protocol_data", String, about="the protocol (assignor) name, when Stable"),
            Field("members", Array(
                Field("member_id", String),
                Field("group_instance_id", String, since=4, nullable=4, default=None),
                Field("client_id", String),
                Field("client_host", String),
                Field("member_metadata", Bytes),
                Field("member_assignment", Bytes),
            )),
            Field("authorized_operations", Int32, since=3, default=-2147483648),
        )),
    ),
)
