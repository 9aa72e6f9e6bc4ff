"""FindCoordinator (key 10): which broker coordinates a group (key type 0), a transaction
(1) or a share group (2). groupctl asks for group coordinators.

v1 the key type (request), throttle time and an error message (response); v2 same as v1;
v3 flexible; v4 batched lookups: CoordinatorKeys in, Coordinators out, replacing the single
key and the top-level result (KIP-699); v5 TRANSACTION_ABORTABLE (KIP-890); v6 share groups
(KIP-932, key "groupId:topicId:partition").
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..spec import ANY_BROKER, Api, Array, Field, Int8, Int16, Int32, String, Struct

if TYPE_CHECKING:  # pragma: no cover - the bodies are for the type checker only
    from ..bodies import FindCoordinatorResponse

FIND_COORDINATOR: Api[FindCoordinatorResponse] = Api(
    10, "FindCoordinator", versions=(0, 6), flexible_from=3, route=ANY_BROKER,
    request=Struct(
        Field("key", String, until=3),
        Field("key_type", Int8, since=1, default=0, about="0 group, 1 transaction, 2 share"),
        Field("coordinator_keys", Array(String), since=4),
    ),
    response=Struct(
        Field("throttle_time_ms", Int32, since=1),
        Field("error_code", Int16, until=3),
        Field("error_message", String, since=1, until=3, nullable=1),
        Field("node_id", Int32, until=3),
        Field("host", String, until=3),
        Field("port", Int32, until=3),
        Field("coordinators", Array(
            Field("key", String, since=4),
            Field("node_id", Int32, since=4),
            Field("host", String, since=4),
            Field("port", Int32, since=4),
            Field("error_code", Int16, since=4),
            Field("error_message", String, since=4, nullable=4),
        ), since=4),
    ),
)
