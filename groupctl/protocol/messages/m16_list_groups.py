"""ListGroups (key 16): the groups a broker coordinates (ask every broker for the whole
cluster), with protocol type and, from v4, state, from v5, type (classic / consumer /
share / streams).

v1 throttle time; v2 responses are sent before throttling; v3 flexible; v4 a states
filter and the group state (KIP-518); v5 a types filter and the group type (KIP-848).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..spec import ANY_BROKER, Api, Array, Field, Int16, Int32, String, Struct

if TYPE_CHECKING:  # pragma: no cover - the bodies are for the type checker only
    from ..bodies import ListGroupsResponse

LIST_GROUPS: Api[ListGroupsResponse] = Api(
    16, "ListGroups", versions=(0, 5), flexible_from=3, route=ANY_BROKER,
    request=Struct(
        Field("states_filter", Array(String), since=4, about="empty: all states"),
        Field("types_filter", Array(String), since=5, about="empty: all types"),
    ),
    response=Struct(
        Field("throttle_time_ms", Int32, since=1),
        Field("error_code", Int16),
        Field("groups", Array(
            Field("group_id", String),
            Field("protocol_type", String),
            Field("group_state", String, since=4),
            Field("group_type", String, since=5),
        )),
    ),
)
