"""Harnesses for the wire decoders: every response of protocol/messages, and the
consumer-protocol payloads (subscription, assignment, sticky and cooperative-sticky user
data). Documented error: DecodeError.

Input layout of `responses`: byte 0 names the API (its key when groupctl speaks it, else
an index into APIS), byte 1 the version (modulo the versions groupctl speaks), the rest is
the response frame as BrokerConnection receives it (size prefix removed, header included).
Seeds captured from a lab broker (capture.py) use the API's key and the real version.
"""
from __future__ import annotations

import json

from groupctl.protocol.types import DecodeError

from .registry import Crash, harness

_APIS: list = []


def _pick_api(data: bytes):
    from groupctl.protocol.messages import APIS

    if not _APIS:
        _APIS.extend(APIS[k] for k in sorted(APIS))
    key = data[0]
    api = APIS.get(key) or _APIS[key % len(_APIS)]
    span = api.max_version - api.min_version + 1
    return api, api.min_version + data[1] % span


def _import_all_decoders() -> None:
    """Import every message module up front, so that atheris instruments them all before
    the first input and the coverage map does not grow mid-run."""
    from groupctl.protocol.messages import APIS

    assert APIS


@harness("responses", documented=(DecodeError,), setup=_import_all_decoders, max_len=8192,
         smoke_runs=1500)
def responses(data: bytes) -> None:
    """Every response decoder of protocol/messages, as the connection runs it (the
    ApiVersions fallback included), then the --debug trace's walk over the result."""
    if len(data) < 2:
        return
    from groupctl.client.connection import BrokerConnection
    from groupctl.client.trace import describe_errors
    from groupctl.protocol.frame import peek_correlation_id

    api, version = _pick_api(data)
    frame = data[2:]
    peek_correlation_id(frame)
    body = BrokerConnection._decode(api, version, frame)
    if not isinstance(body, dict):
        raise Crash(f"{api.name} v{version} decoded to {type(body).__name__}")
    describe_errors(body)


# ---- consumer-protocol payloads --------------------------------------------------------

_ASSIGNORS = (None, "range", "sticky", "cooperative-sticky", "roundrobin")


def _subscription(raw: bytes, assignor) -> None:
    from groupctl.protocol.consumer import decode_subscription, encode_subscription

    sub = decode_subscription(raw)
    json.dumps(sub.to_dict(assignor))
    again = decode_subscription(encode_subscription(sub))
    # what a re-encoding keeps: every field of min(version, LATEST); not the trailing bytes
    sub.trailing = b""
    again.version = sub.version
    if again != sub:
        raise Crash(f"subscription round trip differs: {sub} -> {again}")


def _assignment(raw: bytes, assignor) -> None:
    from groupctl.protocol.consumer import decode_assignment, encode_assignment

    asg = decode_assignment(raw)
    json.dumps(asg.to_dict())
    again = decode_assignment(encode_assignment(asg))
    asg.trailing = b""
    again.version = asg.version
    if again != asg:
        raise Crash(f"assignment round trip differs: {asg} -> {again}")


def _user_data(raw: bytes, assignor) -> None:
    from groupctl.protocol import consumer as c

    name = c.COOPERATIVE_STICKY if assignor == c.COOPERATIVE_STICKY else c.STICKY
    decoded = c.decode_user_data(name, raw)
    if decoded is None:
        return
    json.dumps(decoded.to_dict())
    if name == c.STICKY:
        again = c.decode_sticky_user_data(c.encode_sticky_user_data(decoded))
    else:
        again = c.decode_cooperative_user_data(c.encode_cooperative_user_data(decoded))
    decoded.trailing = b""
    if again != decoded:
        raise Crash(f"{name} user data round trip differs: {decoded} -> {again}")


_PAYLOADS = (_subscription, _assignment, _user_data)


@harness("consumer", documented=(DecodeError,))
def consumer_payloads(data: bytes) -> None:
    """Consumer-protocol payloads (byte 0: 0 subscription, 1 assignment, 2 assignor user
    data; its high bits pick the assignor), decoded, rendered to JSON (docs/reference/json-fields.md), and
    re-encoded: the round trip must give the same value."""
    if not data:
        return
    kind = _PAYLOADS[data[0] % len(_PAYLOADS)]
    assignor = _ASSIGNORS[(data[0] >> 4) % len(_ASSIGNORS)]
    kind(data[1:], assignor)
