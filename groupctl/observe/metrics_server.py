"""The HTTP side of `watch --metrics-port`: `/metrics` and `/healthz` in a thread of their
own (observe.metrics has what they read).

    server = MetricsServer(metrics, "127.0.0.1", 9308)   # bound now (a bad port: UsageError)
    server.start(); server.address; server.close()

/metrics is the text format 0.0.4 (what Prometheus 2 and 3 read, whatever its Accept
header prefers), gzip-compressed when the scraper accepts it (Prometheus does): at a
quick level, since at 2,000 groups the text is megabytes and a scrape must stay short.
The group section is compressed once per change (the compressor's state is kept and
copied for each scrape's tail: groupctl's own metrics), so a scrape with no group event
since the last one compresses only the tail.
"""
from __future__ import annotations

import threading
import zlib
from socketserver import ThreadingMixIn
from typing import TYPE_CHECKING
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from ..errors import UsageError

if TYPE_CHECKING:
    from .metrics import WatchMetrics

TEXT_FORMAT = "text/plain; version=0.0.4; charset=utf-8"
GZIP_LEVEL = 1   # 2,000 groups: ~5 MB of text to ~0.3 MB in ~15 ms (level 9: several times that)


class _Gzip:
    """One gzip stream per scrape, its head (the group section) compressed once per
    version."""

    def __init__(self):
        self.lock = threading.Lock()
        self.version: int | None = None
        self.head = b""
        self.state = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, 31)

    def body(self, version: int, head: str, tail: str) -> bytes:
        with self.lock:
            if version != self.version:
                self.state = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, 31)   # 31: gzip
                self.head, self.version = self.state.compress(head.encode()), version
            state, prefix = self.state.copy(), self.head
        return prefix + state.compress(tail.encode()) + state.flush()


class _Server(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _Quiet(WSGIRequestHandler):
    def log_message(self, format, *args):   # no access log on stderr (the live view is there)
        pass


class MetricsServer:
    """`/metrics` (Prometheus text format) and `/healthz`, in a thread of their own."""

    def __init__(self, metrics: "WatchMetrics", host: str, port: int):
        self.metrics = metrics
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
            return [b"ok\n" if ok else b"no successful describe round\n"]
        if path == "/metrics":
            return self._metrics(environ, start_response)
        start_response("404 Not Found", [("Content-Type", "text/plain; charset=utf-8")])
        return [b"see /metrics and /healthz\n"]

    def _metrics(self, environ, start_response):
        version, head, tail = self.metrics.render_parts()
        headers = [("Content-Type", TEXT_FORMAT)]
        if "gzip" in environ.get("HTTP_ACCEPT_ENCODING", ""):
            body = self.gzip.body(version, head, tail)
            headers.append(("Content-Encoding", "gzip"))
        else:
            body = (head + tail).encode()
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
