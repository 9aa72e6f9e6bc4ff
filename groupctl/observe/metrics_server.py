"""The HTTP side of `watch --metrics-port`: `/metrics` and `/healthz` in a thread of their
own (observe.metrics has what they read).

    server = MetricsServer(metrics, "127.0.0.1", 9308)   # bound now (a bad port: UsageError)
    server.start(); server.address; server.close()

/metrics is the text format 0.0.4 (what Prometheus 2 and 3 read, whatever its Accept
header prefers), gzip-compressed when the scraper accepts it (Prometheus does): at a
quick level, since at 2,000 groups the text is megabytes and a scrape must stay short.
Pieces of the text are compressed apart and kept (metrics.Scrape.pieces: a family's lines
of 64 groups as last built), so a scrape compresses only the pieces of the groups that
changed since the last one, and groupctl's own metrics.
"""
from __future__ import annotations

import struct
import threading
import zlib
from socketserver import ThreadingMixIn
from typing import Any, Iterator, Protocol
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from ..errors import UsageError


class Pieces(Protocol):
    """One scrape's text in keyed pieces (metrics.Scrape)."""

    def pieces(self) -> Iterator: ...
    def text(self) -> bytes: ...


class Scraped(Protocol):
    """What the server serves: a scrape and the health /healthz says (watch's WatchMetrics;
    the canary's CanaryMetrics, whose `unhealthy_text` says why it is not healthy)."""

    @property
    def healthy(self) -> bool: ...
    def scrape(self) -> Pieces: ...


TEXT_FORMAT = "text/plain; version=0.0.4; charset=utf-8"
GZIP_LEVEL = 1   # quick: a piece is compressed at every change of one of its groups


GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"   # deflate, no name, mtime 0


def _deflate(data: bytes, last: bool) -> bytes:
    """Raw deflate blocks of `data` that stand alone (no reference before their start)
    and end on a byte boundary, so pieces compressed apart join into one stream."""
    c = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, -15)
    return c.compress(data) + c.flush(zlib.Z_FINISH if last else zlib.Z_SYNC_FLUSH)


# CRC-32 of joined pieces from the pieces' own (zlib's crc32_combine, which Python's zlib
# does not offer): crc(A + B) = crc(A) * x^(8 len(B)) mod P, xor crc(B), in the reflected
# bit order of gzip's CRC.
_POLY = 0xEDB88320


def _multmodp(a: int, b: int) -> int:
    """a * b mod P."""
    m, p = 1 << 31, 0
    while True:
        if a & m:
            p ^= b
            if a & (m - 1) == 0:
                return p
        m >>= 1
        b = (b >> 1) ^ _POLY if b & 1 else b >> 1


def _powers() -> list[int]:
    out, p = [], 1 << 30   # x^1
    for _ in range(32):
        out.append(p)
        p = _multmodp(p, p)
    return out


_X2N = _powers()   # x^(2^k) mod P


def crc_shift(length: int) -> int:
    """x^(8 length) mod P: what crc(A) is multiplied by when `length` bytes follow A."""
    p, k = 1 << 31, 3
    while length:
        if length & 1:
            p = _multmodp(_X2N[k & 31], p)
        length >>= 1
        k += 1
    return p


def crc_combine(crc_a: int, crc_b: int, shift_b: int) -> int:
    """crc32(A + B) from crc32(A), crc32(B) and crc_shift(len(B))."""
    return _multmodp(shift_b, crc_a) ^ crc_b


class _Packed:
    __slots__ = ("deflated", "crc", "size", "shift")

    def __init__(self, data: bytes, last: bool):
        self.deflated = _deflate(data, last)
        self.crc, self.size, self.shift = zlib.crc32(data), len(data), crc_shift(len(data))


class _Gzip:
    """One gzip stream (RFC 1952) per scrape from the scrape's keyed pieces: a piece seen
    at the last scrape is neither compressed nor checksummed again. At 2,000 groups one
    group's change compresses its 64-group pieces, not megabytes."""

    def __init__(self):
        self.lock = threading.Lock()
        self.kept: dict[object, _Packed] = {}

    def body(self, scrape: Pieces) -> bytes:
        out, crc, size = [GZIP_HEADER], 0, 0
        with self.lock:
            kept: dict[object, _Packed] = {}
            for key, data in scrape.pieces():
                packed = self.kept.get(key) if key is not None else None
                if packed is None:
                    packed = _Packed(data(), last=key is None)
                if key is not None:
                    kept[key] = packed
                out.append(packed.deflated)
                crc = crc_combine(crc, packed.crc, packed.shift)
                size += packed.size
            self.kept = kept
        out.append(struct.pack("<II", crc, size & 0xFFFFFFFF))
        return b"".join(out)


class _Server(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _Quiet(WSGIRequestHandler):
    def log_message(self, format, *args):   # no access log on stderr (the live view is there)
        pass


class MetricsServer:
    """`/metrics` (Prometheus text format) and `/healthz`, in a thread of their own."""

    def __init__(self, metrics: Scraped, host: str, port: int):
        self.metrics: Any = metrics   # watch reads its own metrics back through it
        self.gzip = _Gzip()
        try:
            self.httpd = make_server(host, port, self._app, _Server, handler_class=_Quiet)
        except OSError as exc:
            raise UsageError(f"--metrics-port {port} on {host}: {exc.strerror or exc}") from None
        self.thread = threading.Thread(target=self.httpd.serve_forever, name="metrics",
                                       daemon=True)

    @property
    def address(self) -> tuple[str, int]:
        host, port = self.httpd.server_address[:2]
        return str(host), int(port)

    def _app(self, environ, start_response):
        path = environ.get("PATH_INFO", "")
        if path == "/healthz":
            ok = self.metrics.healthy
            start_response("200 OK" if ok else "503 Service Unavailable",
                           [("Content-Type", "text/plain; charset=utf-8")])
            return [b"ok\n" if ok else getattr(self.metrics, "unhealthy_text",
                                                b"no successful describe round\n")]
        if path == "/metrics":
            return self._metrics(environ, start_response)
        start_response("404 Not Found", [("Content-Type", "text/plain; charset=utf-8")])
        return [b"see /metrics and /healthz\n"]

    def _metrics(self, environ, start_response):
        scrape = self.metrics.scrape()
        headers = [("Content-Type", TEXT_FORMAT)]
        if "gzip" in environ.get("HTTP_ACCEPT_ENCODING", ""):
            body = self.gzip.body(scrape)
            headers.append(("Content-Encoding", "gzip"))
        else:
            body = scrape.text()
        headers.append(("Content-Length", str(len(body))))
        start_response("200 OK", headers)
        if environ.get("REQUEST_METHOD") == "HEAD":
            return [b""]
        return [body]

    def start(self) -> None:
        self.thread.start()

    def close(self) -> None:
        if self.thread.is_alive():
            self.httpd.shutdown()
        self.httpd.server_close()
