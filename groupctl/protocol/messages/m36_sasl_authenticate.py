"""SaslAuthenticate (key 36): one round of SASL tokens, after SaslHandshake v1.

v1 the session lifetime (KIP-368: the client must re-authenticate before it ends);
v2 flexible.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..spec import ANY_BROKER, Api, Bytes, Field, Int16, Int64, String, Struct

if TYPE_CHECKING:  # pragma: no cover - the bodies are for the type checker only
    from ..bodies import SaslAuthenticateResponse

SASL_AUTHENTICATE: Api[SaslAuthenticateResponse] = Api(
    36, "SaslAuthenticate", versions=(0, 2), flexible_from=2, route=ANY_BROKER,
    request=Struct(
        Field("auth_bytes", Bytes),
    ),
    response=Struct(
        Field("error_code", Int16),
        Field("error_message", String, nullable=True),
        Field("auth_bytes", Bytes),
        Field("session_lifetime_ms", Int64, since=1, default=0),
    ),
)
