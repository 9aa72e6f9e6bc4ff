"""Request and response framing: size prefix and headers.

Request header v1: api_key, api_version, correlation_id, client_id (INT16-length nullable
string). v2 (flexible request versions) adds an empty tagged-field section; client_id keeps
its INT16 length there too. Response header v0: correlation_id; v1 adds tagged fields.
"""
from __future__ import annotations

import struct

from .spec import Api
from .types import DecodeError, Reader, Writer

_SIZE = struct.Struct(">i")
MAX_FRAME = 100 * 1024 * 1024  # like socket.request.max.bytes; larger means a foreign server


def encode_request(api: Api, version: int, correlation_id: int, client_id: str | None,
                   body: dict) -> bytes:
    """The full frame (size prefix included) for one request."""
    w = Writer()
    w.int16(api.key)
    w.int16(version)
    w.int32(correlation_id)
    w.string(client_id)
    if api.request_header_version(version) >= 2:
        w.uvarint(0)
    w.raw(api.encode_request(version, body))
    return _SIZE.pack(len(w.buf)) + w.getvalue()


def decode_request_header(data: bytes) -> tuple[int, int, int, str | None, int]:
    """(api_key, api_version, correlation_id, client_id, offset of the body's start),
    for a request without its size prefix. Flexible headers need the Api to know; the
    caller skips tagged fields with skip_header_tags()."""
    r = Reader(data)
    return r.int16(), r.int16(), r.int32(), r.string(), r.pos


def skip_header_tags(data: bytes, offset: int) -> int:
    r = Reader(data, offset)
    for _ in range(r.uvarint()):
        r.uvarint()
        r.raw(r.uvarint())
    return r.pos


def encode_response(api: Api, version: int, correlation_id: int, body: dict) -> bytes:
    w = Writer()
    w.int32(correlation_id)
    if api.response_header_version(version) >= 1:
        w.uvarint(0)
    w.raw(api.encode_response(version, body))
    return _SIZE.pack(len(w.buf)) + w.getvalue()


def peek_correlation_id(data: bytes) -> int:
    """The correlation id of a response frame (size prefix already removed)."""
    if len(data) < 4:
        raise DecodeError("response shorter than its header")
    return _SIZE.unpack_from(data, 0)[0]


def decode_response(api: Api, version: int, data: bytes) -> dict:
    """Decode a response frame (size prefix removed), header included."""
    offset = 4
    if api.response_header_version(version) >= 1:
        offset = skip_header_tags(data, offset)
    return api.decode_response(version, data, offset)


def frame_size(prefix: bytes) -> int:
    size = _SIZE.unpack(prefix)[0]
    if size < 4 or size > MAX_FRAME:
        raise DecodeError(f"implausible frame size {size}: not a Kafka broker?")
    return size
