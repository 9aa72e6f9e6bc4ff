"""JoinGroup (key 11): a classic member asks to join, or rejoin, a group.

v1 adds the rebalance timeout; v4 makes a member without an id get MEMBER_ID_REQUIRED
(KIP-394); v5 static membership (KIP-345); v6 flexible; v7 protocol type in the response;
v8 the join reason (KIP-800); v9 SkipAssignment (KIP-814).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..spec import COORDINATOR, Api, Array, Bool, Bytes, Field, Int32, Int16, String, Struct

if TYPE_CHECKING:  # pragma: no cover - the bodies are for the type checker only
    from ..bodies import JoinGroupResponse

JOIN_GROUP: Api[JoinGroupResponse] = Api(
    11, "JoinGroup", versions=(0, 9), flexible_from=6, route=COORDINATOR,
    request=Struct(
        Field("group_id", String),
        Field("session_timeout_ms", Int32),
        Field("rebalance_timeout_ms", Int32, since=1, default=-1),
        Field("member_id", String),
        Field("group_instance_id", String, since=5, nullable=True, default=None),
        Field("protocol_type", String),
        Field("protocols", Array(
            Field("name", String),
            Field("metadata", Bytes),
        )),
        Field("reason", String, since=8, nullable=True, default=None),
    ),
    response=Struct(
        Field("throttle_time_ms", Int32, since=2),
        Field("error_code", Int16),
        Field("generation_id", Int32, default=-1),
        Field("protocol_type", String, since=7, nullable=True, default=None),
        Field("protocol_name", String, nullable=7),
        Field("leader", String),
        Field("skip_assignment", Bool, since=9),
        Field("member_id", String),
        Field("members", Array(
            Field("member_id", String),
            Field("group_instance_id", String, since=5, nullable=True, default=None),
            Field("metadata", Bytes),
        )),
    ),
)
