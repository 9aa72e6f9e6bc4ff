"""Heartbeat (key 12): a classic member tells the coordinator it is alive. The answer's
error code is how a member learns of a rebalance (REBALANCE_IN_PROGRESS) or that it was
fenced (ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID).

v1 throttle time; v2 responses are sent before throttling; v3 the group instance id for
static members (KIP-345); v4 flexible.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..spec import COORDINATOR, Api, Field, Int16, Int32, String, Struct

if TYPE_CHECKING:  # pragma: no cover - the bodies are for the type checker only
    from ..bodies import HeartbeatResponse

HEARTBEAT: Api[HeartbeatResponse] = Api(
    12, "Heartbeat", versions=(0, 4), flexible_from=4, route=COORDINATOR,
    request=Struct(
        Field("group_id", String),
        Field("generation_id", Int32),
        Field("member_id", String),
        Field("group_instance_id", String, since=3, nullable=True, default=None),
    ),
    response=Struct(
        Field("throttle_time_ms", Int32, since=1),
        Field("error_code", Int16),
    ),
)
