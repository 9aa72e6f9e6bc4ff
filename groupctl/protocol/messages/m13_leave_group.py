"""LeaveGroup (key 13): a classic member leaves its group, or an admin removes members
(static ones by instance id) so the group rebalances without waiting for session timeouts.

v1 throttle time; v2 responses are sent before throttling; v3 batches: a list of member
identities (member id and/or group instance id, KIP-345) with a result per member; v4
flexible; v5 a reason per member (KIP-800), which the broker logs.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..spec import COORDINATOR, Api, Array, Field, Int16, Int32, String, Struct

if TYPE_CHECKING:  # pragma: no cover - the bodies are for the type checker only
    from ..bodies import LeaveGroupResponse

LEAVE_GROUP: Api[LeaveGroupResponse] = Api(
    13, "LeaveGroup", versions=(0, 5), flexible_from=4, route=COORDINATOR,
    request=Struct(
        Field("group_id", String),
        Field("member_id", String, until=2),
        Field("members", Array(
            Field("member_id", String, since=3),
            Field("group_instance_id", String, since=3, nullable=3, default=None),
            Field("reason", String, since=5, nullable=5, default=None),
        ), since=3),
    ),
    response=Struct(
        Field("throttle_time_ms", Int32, since=1),
        Field("error_code", Int16),
        Field("members", Array(
            Field("member_id", String, since=3),
            Field("group_instance_id", String, since=3, nullable=3),
            Field("error_code", Int16, since=3),
        ), since=3),
    ),
)
