"""Message specs as data, and the Api: one Kafka API with its codecs.

A spec says, per field, in which versions it exists (`since`/`until`), from which version
it may be null (`nullable`), and whether it travels as a tagged field (`tag`). The specs
and the codec of every (api, version, direction) are generated from Kafka's JSON message
specs into the modules of messages/ (tools/gen_codecs.py): plain functions that read or
write a plain dict with snake_case keys. A decoded dict always carries every field of the
spec: those absent in the decoded version hold their default, so callers never branch on
versions to read a response.

Decoders are lenient where Kafka's are strict: unknown tagged fields are kept under
`_unknown_tags` ({tag: raw bytes}) and bytes after the end of a message under `_trailing`;
encoders write `_unknown_tags` back. Bad input (truncated, corrupt, foreign) raises
DecodeError, never IndexError or struct.error.

The spec language (Type, Field, Array, Struct) is in schema.py; what the generated codecs
call is in wire.py.
"""
from __future__ import annotations

from .schema import (  # noqa: F401 - the spec language, re-exported for message modules
    NO_DEFAULT, Array, Bool, Bytes, Field, Float64, Int8, Int16, Int32, Int64, Records, String,
    Struct, Type, Uint16, Uuid, _copy_default, walk_fields,
)
from collections.abc import Mapping
from typing import Any, Generic, TypeVar

from .types import Writer
from .wire import ELEMENT_BUDGET, guarded

# The decoded response of an Api: a TypedDict of protocol/bodies.py where a message module
# says so (Api[bodies.XResponse]), else Any.
R = TypeVar("R", bound=Mapping[str, Any])

# Routing of a request: which broker it must go to.
ANY_BROKER = "any"
COORDINATOR = "coordinator"
PARTITION_LEADER = "leader"


class Api(Generic[R]):
    """One Kafka API: its key, the versions we speak, and the codecs of each:
    {version: (encode request, decode request, encode response, decode response)}."""

    def __init__(self, key: int, name: str, versions: tuple[int, int], flexible_from: int | None,
                 request: Struct, response: Struct, route: str = ANY_BROKER,
                 codecs: dict[int, tuple] | None = None):
        self.key = key
        self.name = name
        self.min_version, self.max_version = versions
        self.flexible_from = flexible_from
        self.route = route
        self.request = request
        self.response = response
        self._codecs = codecs or {}

    def __repr__(self) -> str:
        return f"Api({self.key}, {self.name!r})"

    def flexible(self, version: int) -> bool:
        return self.flexible_from is not None and version >= self.flexible_from

    def request_header_version(self, version: int) -> int:
        return 2 if self.flexible(version) else 1

    def response_header_version(self, version: int) -> int:
        # ApiVersions answers with header v0 always, so a client that sent a version the
        # broker does not know can still read the error and the broker's supported range.
        if self.key == 18:
            return 0
        return 1 if self.flexible(version) else 0

    def _codec(self, version: int):
        try:
            return self._codecs[version]
        except KeyError:
            raise ValueError(f"{self.name} v{version} is outside the versions groupctl speaks "
                             f"({self.min_version}-{self.max_version})") from None

    def encode_request(self, version: int, body: dict) -> bytes:
        w = Writer()
        self._codec(version)[0](w, body)
        return w.getvalue()

    def decode_request(self, version: int, data: bytes) -> dict:
        return _decode_all(self._codec(version)[1], data)

    def encode_response(self, version: int, body: dict) -> bytes:
        w = Writer()
        self._codec(version)[2](w, body)
        return w.getvalue()

    def decode_response(self, version: int, data: bytes, offset: int = 0) -> R:
        return _decode_all(self._codec(version)[3], data, offset,
                           RESPONSE_ELEMENT_BUDGETS.get(self.key, ELEMENT_BUDGET))


# Array elements a response of these APIs may hold (others: wire.ELEMENT_BUDGET): a
# ListGroups answer lists one broker's groups, 200,000 is ten times a large fleet.
RESPONSE_ELEMENT_BUDGETS = {16: 200_000}   # ListGroups


def _decode_all(read, data, offset: int = 0, budget: int = ELEMENT_BUDGET) -> Any:
    out, pos = guarded(read, data, offset, budget)
    if pos < len(data):
        out["_trailing"] = bytes(data[pos:])  # data may be a memoryview or bytearray
    return out
