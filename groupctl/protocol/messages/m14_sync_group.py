"""SyncGroup (key 14): after JoinGroup, the leader sends every member's assignment and
every member (leader or follower) receives its own.

v1 throttle time; v2 responses are sent before throttling; v3 the group instance id
(KIP-345); v4 flexible; v5 protocol type and name in request and response, checked by the
broker against the group's (KIP-559).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..spec import COORDINATOR, Api, Array, Bytes, Field, Int16, Int32, String, Struct

if TYPE_CHECKING:  # pragma: no cover - the bodies are for the type checker only
    from ..bodies import SyncGroupResponse

SYNC_GROUP: Api[SyncGroupResponse] = Api(
    14, "SyncGroup", versions=(0, 5), flexible_from=4, route=COORDINATOR,
    request=Struct(
        Field("group_id", String),
        Field("generation_id", Int32),
        Field("member_id", String),
        Field("group_instance_id", String, since=3, nullable=True, default=None),
        Field("protocol_type", String, since=5, nullable=True, default=None),
        Field("protocol_name", String, since=5, nullable=True, default=None),
        Field("assignments", Array(
            Field("member_id", String),
            Field("assignment", Bytes),
        ), about="empty unless sent by the leader"),
    ),
    response=Struct(
        Field("throttle_time_ms", Int32, since=1),
        Field("error_code", Int16),
        Field("protocol_type", String, since=5, nullable=True, default=None),
        Field("protocol_name", String, since=5, nullable=True, default=None),
        Field("assignment", Bytes),
    ),
)
