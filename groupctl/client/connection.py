"""One connection to one broker: asyncio streams, pipelined requests, version negotiation.

- Requests are pipelined: each gets a correlation id and a future; one reader task reads
  response frames and hands each to the future of its correlation id (a broker answers in
  order, but nothing here relies on it).
- On connect: ApiVersions at our highest version; a broker that does not know it answers
  UNSUPPORTED_VERSION (35) in the v0 shape with its own ApiVersions range (KIP-511), and we
  retry at the highest version both know. Its ranges are kept in `broker_versions`, and
  `request()` uses the highest version both sides speak unless told otherwise.
- Then SASL when the security config asks for it (security.authenticate).
- A peer that is not Kafka (HTTP, TLS, garbage, closes at once, an implausible frame size)
  fails the connect with NotKafkaError ("... is not a Kafka broker: ..."), quickly.
- A request timeout fails that request with RequestTimeoutError and closes the connection
  (the Java client does the same: a broker answers in order, so nothing queued behind the
  late answer would come either). Closing fails every pending request with
  ConnectionLostError.
"""
from __future__ import annotations

import asyncio
import itertools
import re
import ssl
import struct
from typing import Any

from .. import __version__
from ..config import PLAINTEXT, SecurityConfig
from ..errors import GroupctlError, UnreachableError
from ..protocol.frame import (
    MAX_FRAME,
    decode_response,
    encode_request,
    peek_correlation_id,
)
from ..protocol.errors import ErrorCode
from ..protocol.messages import API_VERSIONS
from ..protocol.spec import R, Api
from ..protocol.types import DecodeError
from .errors import (
    ConnectionLostError,
    NotKafkaError,
    ProtocolError,
    RequestTimeoutError,
    UnsupportedVersionError,
    kafka_error,
)
from .dial import dial, format_address, mark_permanent
from .memo import MEMO_KEYS, ResponseMemo
from .security import authenticate
from .trace import Tracer, current_tracer

HANDSHAKE_MAX_FRAME = 1 << 20  # an ApiVersions response is a few KB; more is not Kafka
# Responses of these APIs larger than this are refused unread (others: MAX_FRAME): a
# ListGroups answer of 32 MB lists ~500,000 groups of one broker; FindCoordinator's
# names a few coordinators.
FRAME_LIMITS = {16: 32 << 20, 10: 1 << 20}   # ListGroups, FindCoordinator
DEFAULT_REQUEST_TIMEOUT = 30.0  # Kafka's request.timeout.ms
_SIZE = struct.Struct(">i")
_SOFTWARE_VERSION = re.sub(r"[^a-zA-Z0-9.-]", "-", __version__).strip("-.") or "0"



# The ApiVersions version asked first: v5 (Kafka 4.4, KIP-1242) only adds the cluster-id
# check a client that names a cluster asks for, which groupctl does not; every broker
# before 4.4 would answer v5 with UNSUPPORTED_VERSION and cost each connection a second
# round trip.
FIRST_API_VERSIONS = 4


class BrokerConnection:
    """A connection to one broker. Create it, `await connect(timeout)`, then
    `await request(api, body)` from any number of tasks at once; `await close()`."""

    def __init__(self, host: str, port: int, *, node_id: int | None = None,
                 client_id: str | None = "groupctl", security: SecurityConfig | None = None,
                 trace: Tracer | None = None,
                 request_timeout: float = DEFAULT_REQUEST_TIMEOUT):
        self.host = host
        self.port = port
        self.node_id = node_id
        self.client_id = client_id
        self.security = security or PLAINTEXT
        self.trace = trace if trace is not None else current_tracer()
        self.request_timeout = request_timeout
        self.address = format_address(host, port)
        self.broker_versions: dict[int, tuple[int, int]] = {}
        self.session_expires_at: float | None = None  # SASL session end (KIP-368), loop time
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._read_task: asyncio.Task | None = None
        self._pending: dict[int, tuple[Api, int, asyncio.Future]] = {}
        self._abandoned: set[int] = set()  # cancelled while in flight: drop their answers
        self._ids = itertools.count()
        self._failure: GroupctlError | None = None
        self._ready = False     # ApiVersions (and SASL) done
        self._answered = 0      # responses received
        self._handshake_answers = 0  # of which during connect()
        self._memo = ResponseMemo()  # the describe APIs: equal bytes decoded once (memo.py)

    def __repr__(self) -> str:
        return f"<BrokerConnection {self.label}{' closed' if self.closed else ''}>"

    @property
    def label(self) -> str:
        return f"node {self.node_id} {self.address}" if self.node_id is not None else self.address

    @property
    def closed(self) -> bool:
        return self._failure is not None

    @property
    def usable(self) -> bool:
        """Open, past the handshake, and not about to reach its SASL session's end."""
        if self.closed or not self._ready:
            return False
        if self.session_expires_at is not None:
            return asyncio.get_running_loop().time() < self.session_expires_at
        return True

    async def __aenter__(self) -> BrokerConnection:
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    # ---- connecting -------------------------------------------------------------------
    async def connect(self, timeout: float) -> BrokerConnection:
        """TCP (or TLS) connect, ApiVersions, SASL, all within `timeout` seconds."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        self._reader, self._writer = await dial(self.host, self.port, self.security, timeout)
        self._read_task = loop.create_task(self._read_loop(), name=f"kafka-reader {self.address}")
        self._note("connected" + (" (TLS)" if self.security.tls else ""))
        try:
            await self._negotiate(deadline)
            if self.security.sasl:
                lifetime = await authenticate(self, self.security, self._left(deadline))
                if lifetime > 0:  # reconnect before the broker ends the session
                    self.session_expires_at = loop.time() + lifetime / 1000 * 0.85
                self._note(f"authenticated ({self.security.sasl_mechanism})")
        except RequestTimeoutError:
            await self.close()
            raise UnreachableError(f"{self.address} did not answer within {timeout:.1f} s "
                                   "(not a Kafka broker, or overloaded?)") from None
        except BaseException:
            await self.close()
            raise
        self._ready = True
        self._handshake_answers = self._answered
        return self

    def _left(self, deadline: float) -> float:
        return max(0.001, deadline - asyncio.get_running_loop().time())

    async def _negotiate(self, deadline: float) -> None:
        version = min(API_VERSIONS.max_version, FIRST_API_VERSIONS)
        body = {"client_software_name": "groupctl", "client_software_version": _SOFTWARE_VERSION}
        for _ in range(API_VERSIONS.max_version + 1):
            resp = await self.request(API_VERSIONS, body, version, timeout=self._left(deadline))
            code = resp["error_code"]
            ranges = {k["api_key"]: (k["min_version"], k["max_version"])
                      for k in resp["api_keys"] or []}
            if code == ErrorCode.UNSUPPORTED_VERSION and version > API_VERSIONS.min_version:
                theirs = ranges.get(API_VERSIONS.key)
                version = min(version - 1, theirs[1]) if theirs else API_VERSIONS.min_version
                version = max(version, API_VERSIONS.min_version)
                self._note(f"ApiVersions: broker wants v{version}")
                continue
            if code:
                raise kafka_error("ApiVersions", code, f"from {self.address}")
            if API_VERSIONS.key not in ranges:  # every broker lists ApiVersions itself
                raise mark_permanent(NotKafkaError(f"{self.address} is not a Kafka broker: its "
                                               "ApiVersions answer lists no ApiVersions"))
            self.broker_versions = ranges
            return
        raise UnsupportedVersionError("ApiVersions", f"{self.address} accepts no ApiVersions "
                                                     "version groupctl speaks")

    # ---- versions -----------------------------------------------------------------------
    def version_for(self, api: Api, min_version: int = 0) -> int:
        """The highest version of `api` both sides speak (at least `min_version`)."""
        theirs = self.broker_versions.get(api.key)
        if theirs is None:
            raise UnsupportedVersionError(api.name, f"{self.label} does not support "
                                                    f"{api.name} (API key {api.key})")
        lo = max(api.min_version, theirs[0], min_version)
        hi = min(api.max_version, theirs[1])
        if lo > hi:
            need = f", and this needs v{min_version}+" if min_version else ""
            raise UnsupportedVersionError(
                api.name, f"{self.label} speaks {api.name} v{theirs[0]}-{theirs[1]}, groupctl "
                          f"v{api.min_version}-{api.max_version}{need}")
        return hi

    def supports(self, api: Api, min_version: int = 0) -> bool:
        try:
            self.version_for(api, min_version)
            return True
        except UnsupportedVersionError:
            return False

    # ---- requests -----------------------------------------------------------------------
    async def request(self, api: Api[R], body: dict, version: int | None = None, *,
                      min_version: int = 0, timeout: float | None = None) -> R:
        """Send one request and return its decoded response body. `version`: force one
        (otherwise the highest in common); `timeout`: seconds (default request_timeout)."""
        if self._writer is None:
            raise ConnectionLostError(f"{self.label}: not connected")
        if self._failure is not None:
            if isinstance(self._failure, ConnectionLostError):
                raise ConnectionLostError(str(self._failure))
            raise ConnectionLostError(f"{self.label}: the connection is closed "
                                      f"({self._failure})")
        if version is None:
            version = self.version_for(api, min_version)
        timeout = self.request_timeout if timeout is None else timeout
        loop = asyncio.get_running_loop()
        corr = next(self._ids) & 0x7FFFFFFF
        frame = encode_request(api, version, corr, self.client_id, body)
        fut = loop.create_future()
        self._pending[corr] = (api, version, fut)
        started = loop.time()
        try:
            self._writer.write(frame)
            data = await asyncio.wait_for(self._send_and_wait(fut), timeout)
        except asyncio.TimeoutError:
            self._pending.pop(corr, None)
            self._trace(api, version, corr, started, failure="timeout")
            self._fail(ConnectionLostError(f"{self.label}: connection closed after {api.name} "
                                           f"got no answer within {timeout:.1f} s"))
            raise RequestTimeoutError(f"{api.name} v{version} to {self.label}: no response "
                                      f"within {timeout:.1f} s") from None
        except asyncio.CancelledError:
            if self._pending.pop(corr, None) is not None:
                self._abandoned.add(corr)
            raise
        except GroupctlError as exc:
            self._pending.pop(corr, None)
            self._trace(api, version, corr, started, failure=str(exc))
            raise
        except (ConnectionError, OSError, RuntimeError) as exc:  # writing to a dead transport
            self._pending.pop(corr, None)
            lost = ConnectionLostError(f"{self.label}: connection lost ({exc})")
            self._fail(lost)
            self._trace(api, version, corr, started, failure=str(lost))
            raise lost from None
        try:
            resp = (self._memo.decode(api, version, data, self._decode)
                    if api.key in MEMO_KEYS else self._decode(api, version, data))
        except DecodeError as exc:
            self._trace(api, version, corr, started, failure=f"undecodable response: {exc}")
            if not self._ready:
                raise mark_permanent(NotKafkaError(f"{self.address} is not a Kafka broker: its "
                                               f"answer to {api.name} does not decode ({exc})")) from None
            raise ProtocolError(f"cannot decode the {api.name} v{version} response from "
                                f"{self.label}: {exc}") from None
        self._trace(api, version, corr, started, body=resp)
        return resp

    async def _send_and_wait(self, fut: asyncio.Future) -> bytes:
        assert self._writer is not None  # connected before any request is sent
        try:
            await self._writer.drain()
        except (ConnectionError, OSError):
            pass  # the reader sees the connection end too, and fails `fut` with its verdict
        return await fut

    @staticmethod
    def _decode(api: Api, version: int, data: bytes) -> Any:
        # A broker that does not know our ApiVersions version answers in the v0 shape
        # (UNSUPPORTED_VERSION first: the error code leads the body in every version).
        if api.key == API_VERSIONS.key and version > 0 and data[4:6] == b"\x00\x23":
            try:
                return decode_response(api, 0, data)
            except DecodeError:
                # librdkafka's mock cluster answers UNSUPPORTED_VERSION in a shape of its
                # own: keep the error code, list no ranges; the caller then retries at v0.
                return {"error_code": ErrorCode.UNSUPPORTED_VERSION, "api_keys": []}
        return decode_response(api, version, data)

    # ---- the reader task ----------------------------------------------------------------
    async def _read_loop(self) -> None:
        reader = self._reader
        assert reader is not None  # started by connect()
        try:
            while True:
                head = await reader.readexactly(4)
                size = _SIZE.unpack(head)[0]
                limit = MAX_FRAME if self._ready else HANDSHAKE_MAX_FRAME
                if size < 4 or size > limit:
                    raise self._foreign(f"its answer starts with {head!r}, which is no frame "
                                        f"size ({size})", head)
                data = await reader.readexactly(4)
                waiting = self._pending.get(peek_correlation_id(data))
                limit = FRAME_LIMITS.get(waiting[0].key, limit) if waiting else limit
                if size > limit:   # never read: a hostile size costs no memory
                    raise mark_permanent(ProtocolError(
                        f"{self.label} sent a {waiting[0].name if waiting else ''} answer "
                        f"of {size:,} bytes, over the {limit:,} groupctl reads"))
                data += await reader.readexactly(size - 4)
                corr = peek_correlation_id(data)
                entry = self._pending.pop(corr, None)
                if entry is None:
                    if corr in self._abandoned:
                        self._abandoned.discard(corr)
                        continue
                    raise self._foreign(f"a response with unknown correlation id {corr}", data)
                self._answered += 1
                if not entry[2].done():
                    entry[2].set_result(data)
        except asyncio.CancelledError:
            return
        except asyncio.IncompleteReadError as exc:
            if self._ready and self._answered == self._handshake_answers and self._pending \
                    and not self.security.sasl and not exc.partial:
                # Kafka's SASL listeners take ApiVersions before authentication and close
                # the connection on any other request: the first one after it died.
                err = mark_permanent(UnreachableError(
                    f"{self.label} closed the connection at the first request after "
                    "ApiVersions: a SASL listener? check security.protocol and sasl.* in "
                    "--command-config"))
            elif self._ready:
                err = ConnectionLostError(f"{self.label}: the broker closed the connection")
            elif exc.partial:
                err = self._foreign("it closed the connection in the middle of its answer",
                                    exc.partial)
            else:
                err = mark_permanent(NotKafkaError(
                    f"{self.address} is not a Kafka broker, or it refused us: it closed the "
                    "connection without answering ApiVersions"))
            self._fail(err)
        except GroupctlError as exc:
            self._fail(exc)
        except (ConnectionError, OSError, ssl.SSLError) as exc:
            self._fail(ConnectionLostError(f"{self.label}: connection lost ({exc})"))
        except Exception as exc:  # never let the reader die silently
            self._fail(ConnectionLostError(f"{self.label}: connection failed: "
                                           f"{type(exc).__name__}: {exc}"))

    def _foreign(self, what: str, data: bytes) -> GroupctlError:
        if self._ready:
            return ConnectionLostError(f"{self.label}: the broker sent {what}; closing")
        hint = ""
        if data[:1] in (b"\x15", b"\x16") and data[1:2] == b"\x03":
            hint = " (it speaks TLS: set security.protocol=SSL or SASL_SSL in --command-config)"
        elif data[:4] == b"HTTP" or data[:1] == b"<":
            hint = " (it answers like an HTTP server)"
        return mark_permanent(NotKafkaError(f"{self.address} is not a Kafka broker: {what}{hint}"))

    def _fail(self, exc: GroupctlError) -> None:
        """Close the connection (once) and fail every pending request with `exc`."""
        if self._failure is None:
            self._failure = exc
            self._note(f"closed: {exc}")
        pending, self._pending = self._pending, {}
        for _, _, fut in pending.values():
            if not fut.done():
                fut.set_exception(exc)
                fut.exception()  # retrieved: a caller that already left is no warning
        if self._writer is not None and not self._writer.is_closing():
            self._writer.close()

    async def close(self) -> None:
        """Close; requests still pending fail with ConnectionLostError."""
        self._fail(ConnectionLostError(f"{self.label}: connection closed by groupctl"))
        task = self._read_task
        if task is not None and task is not asyncio.current_task() and not task.done():
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass
        if self._writer is not None:
            try:  # TLS close waits for the peer's close_notify: never for long
                await asyncio.wait_for(self._writer.wait_closed(), 0.2)
            except (asyncio.TimeoutError, asyncio.CancelledError, OSError, ssl.SSLError):
                pass
            except Exception:  # noqa: BLE001 - closing must not raise
                pass

    # ---- tracing ------------------------------------------------------------------------
    def _trace(self, api: Api, version: int, corr: int, started: float, *,
               body: dict | None = None, failure: str | None = None) -> None:
        if self.trace is None:
            return
        ms = (asyncio.get_running_loop().time() - started) * 1000
        self.trace.exchange(api=api.name, version=version, correlation_id=corr,
                            broker=self.label, latency_ms=ms, body=body, failure=failure)

    def _note(self, text: str) -> None:
        if self.trace is not None:
            self.trace.note(self.label, text)


async def open_connection(host: str, port: int, *, timeout: float, **kwargs) -> BrokerConnection:
    """Create and connect a BrokerConnection (kwargs as for BrokerConnection)."""
    conn = BrokerConnection(host, port, **kwargs)
    return await conn.connect(timeout)
