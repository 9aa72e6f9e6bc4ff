"""ApiVersions (key 18): the API versions (and features) a broker supports; the first
request on every connection. Its response header is always v0, so a client that sent a
version the broker does not know can still read the error and the supported range (and
since KIP-511 the broker then fills ApiKeys with its ApiVersions range).

v1 throttle time; v2 responses are sent before throttling; v3 flexible, with the client
software name and version (KIP-511) and, as tagged fields, supported and finalized
features (KIP-584); v4 allows SupportedFeatures.MinVersion 0 (KAFKA-17011); v5 the
cluster and node id a client expects, checked by the broker (KIP-1242; groupctl sends none
and asks v4 first: client/connection.py).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..spec import ANY_BROKER, Api, Array, Bool, Field, Int16, Int32, Int64, String, Struct

if TYPE_CHECKING:  # pragma: no cover - the bodies are for the type checker only
    from ..bodies import ApiVersionsResponse

API_VERSIONS: Api[ApiVersionsResponse] = Api(
    18, "ApiVersions", versions=(0, 5), flexible_from=3, route=ANY_BROKER,
    request=Struct(
        Field("client_software_name", String, since=3),
        Field("client_software_version", String, since=3),
        Field("cluster_id", String, since=5, nullable=True, default=None),
        Field("node_id", Int32, since=5, default=-1),
    ),
    response=Struct(
        Field("error_code", Int16),
        Field("api_keys", Array(
            Field("api_key", Int16),
            Field("min_version", Int16),
            Field("max_version", Int16),
        )),
        Field("throttle_time_ms", Int32, since=1),
        Field("supported_features", Array(
            Field("name", String, since=3),
            Field("min_version", Int16, since=3),
            Field("max_version", Int16, since=3),
        ), since=3, tag=0),
        Field("finalized_features_epoch", Int64, since=3, tag=1, default=-1),
        Field("finalized_features", Array(
            Field("name", String, since=3),
            Field("max_version_level", Int16, since=3),
            Field("min_version_level", Int16, since=3),
        ), since=3, tag=2),
        Field("zk_migration_ready", Bool, since=3, tag=3, default=False),
    ),
)
