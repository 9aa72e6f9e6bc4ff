"""SaslHandshake (key 17): the client names the SASL mechanism it wants; the broker
answers with the mechanisms it enables. Never flexible (its version cannot easily be
bumped, KAFKA-9577).

v0 is followed by raw SASL tokens on the socket; v1 by SaslAuthenticate requests.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..spec import ANY_BROKER, Api, Array, Field, Int16, String, Struct

if TYPE_CHECKING:  # pragma: no cover - the bodies are for the type checker only
    from ..bodies import SaslHandshakeResponse

SASL_HANDSHAKE: Api[SaslHandshakeResponse] = Api(
    17, "SaslHandshake", versions=(0, 1), flexible_from=None, route=ANY_BROKER,
    request=Struct(
        Field("mechanism", String),
    ),
    response=Struct(
        Field("error_code", Int16),
        Field("mechanisms", Array(String)),
    ),
)
