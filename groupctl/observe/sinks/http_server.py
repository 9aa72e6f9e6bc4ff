"""The metrics server's HTTP/1.1 side, built so that no client can exhaust it.

One selector thread accepts connections and reads each request's head; only a complete
head goes to a small pool of worker threads (WORKERS), which answer and hand a keep-alive
connection back. So an idle or slow connection costs a file descriptor, never a thread:

- a head must arrive within HEAD_TIMEOUT of its first byte (and be under MAX_HEAD bytes), a
  keep-alive connection is closed after IDLE_TIMEOUT without a request, a response must be
  taken within WRITE_TIMEOUT;
- at most MAX_CONNECTIONS are open: one more closes the connection idle the longest;
- GET and HEAD only (405 with Allow otherwise); a request with a body is answered, then
  its connection closed;
- listening on loopback, the Host header must name a loopback address (421 otherwise):
  a web page's script cannot reach the server through a DNS name rebound to 127.0.0.1;
- with a web configuration (web_config.py): TLS (the handshake is read by the selector
  thread too, without blocking) and basic authentication (401).

    server = HttpServer(host, port, handle, web)   # bound now; handle(method, path, headers)
    server.start(); server.address; server.close()
"""
from __future__ import annotations

import base64
import collections
import ipaddress
import selectors
import socket
import ssl
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Callable

from .web_config import WebConfig

WORKERS = 4
MAX_CONNECTIONS = 512
MAX_HEAD = 16 * 1024
HEAD_TIMEOUT = 10.0
IDLE_TIMEOUT = 120.0   # above Prometheus's longest usual scrape interval
WRITE_TIMEOUT = 30.0

Response = tuple[int, list[tuple[str, str]], bytes]
Handler = Callable[[str, str, dict[str, str]], Response]

_REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found",
            405: "Method Not Allowed", 421: "Misdirected Request", 503: "Service Unavailable"}
_TEXT = [("Content-Type", "text/plain; charset=utf-8")]


class _Conn:
    __slots__ = ("sock", "buf", "since", "handshaking")

    def __init__(self, sock, handshaking: bool):
        self.sock = sock
        self.buf = bytearray()
        self.since = time.monotonic()
        self.handshaking = handshaking


class HttpServer:
    def __init__(self, host: str, port: int, handle: Handler, web: WebConfig | None = None):
        self.handle = handle
        self.web = web or WebConfig()
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        family, _, _, _, addr = infos[0]
        self.listener = socket.socket(family, socket.SOCK_STREAM)
        try:
            self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self.listener.bind(addr)
            self.listener.listen(128)
        except OSError:
            self.listener.close()
            raise
        self.listener.setblocking(False)
        self.loopback = _is_loopback(str(addr[0]))
        self.sel = selectors.DefaultSelector()
        self.sel.register(self.listener, selectors.EVENT_READ, "accept")
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self.sel.register(self._wake_r, selectors.EVENT_READ, "wake")
        self._back: collections.deque[_Conn] = collections.deque()
        self.conns: dict[socket.socket, _Conn] = {}   # every open connection
        self.pool = ThreadPoolExecutor(WORKERS, thread_name_prefix="metrics-http")
        self._stop = False
        self.thread = threading.Thread(target=self._loop, name="metrics", daemon=True)

    @property
    def address(self) -> tuple[str, int]:
        host, port = self.listener.getsockname()[:2]
        return str(host), int(port)

    def start(self) -> None:
        self.thread.start()

    def close(self) -> None:
        self._stop = True
        self._wake()
        if self.thread.is_alive():
            self.thread.join(5)
        self.pool.shutdown(wait=False, cancel_futures=True)
        for conn in list(self.conns.values()):
            self._drop(conn)
        for sock in (self.listener, self._wake_r, self._wake_w):
            sock.close()
        self.sel.close()

    # ---- the selector thread ----------------------------------------------------------
    def _loop(self) -> None:
        swept = time.monotonic()
        while not self._stop:
            for key, _ in self.sel.select(timeout=1.0):
                if key.data == "accept":
                    self._accept()
                elif key.data == "wake":
                    self._woken()
                else:
                    self._read(key.data)
            now = time.monotonic()
            if now - swept >= 1.0:
                swept = now
                self._sweep(now)

    def _accept(self) -> None:
        while True:
            try:
                sock, _ = self.listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError:   # out of descriptors, ...: the next select tries again
                return
            sock.setblocking(False)
            if self.web.tls is not None:
                sock = self.web.tls.wrap_socket(sock, server_side=True,
                                                do_handshake_on_connect=False)
            if len(self.conns) >= MAX_CONNECTIONS:
                idle = [c for c in self.conns.values() if self._registered(c)]
                if idle:
                    self._drop(min(idle, key=lambda c: c.since))
            conn = _Conn(sock, self.web.tls is not None)
            self.conns[sock] = conn
            self.sel.register(sock, selectors.EVENT_READ, conn)

    def _registered(self, conn: _Conn) -> bool:
        try:
            self.sel.get_key(conn.sock)
            return True
        except (KeyError, ValueError):
            return False

    def _read(self, conn: _Conn) -> None:
        try:
            if conn.handshaking:
                conn.sock.do_handshake()
                conn.handshaking = False
            data = conn.sock.recv(65536)
            while data and isinstance(conn.sock, ssl.SSLSocket) and conn.sock.pending():
                data += conn.sock.recv(65536)
        except (ssl.SSLWantReadError, ssl.SSLWantWriteError, BlockingIOError):
            return
        except OSError:   # reset, a failed handshake, ...
            self._drop(conn)
            return
        if not data:
            self._drop(conn)
            return
        if not conn.buf:
            conn.since = time.monotonic()   # the head's first byte: HEAD_TIMEOUT from here
        conn.buf += data
        if b"\r\n\r\n" in conn.buf:
            self.sel.unregister(conn.sock)
            self.pool.submit(self._serve, conn)
        elif len(conn.buf) > MAX_HEAD:
            self._drop(conn)

    def _sweep(self, now: float) -> None:
        for conn in list(self.conns.values()):
            limit = HEAD_TIMEOUT if (conn.buf or conn.handshaking) else IDLE_TIMEOUT
            if now - conn.since > limit and self._registered(conn):
                self._drop(conn)

    def _woken(self) -> None:
        try:
            while self._wake_r.recv(4096):
                pass
        except (BlockingIOError, InterruptedError):
            pass
        while self._back:
            conn = self._back.popleft()
            if conn.sock in self.conns and not self._stop:
                self.sel.register(conn.sock, selectors.EVENT_READ, conn)

    def _wake(self) -> None:
        try:
            self._wake_w.send(b"x")
        except OSError:
            pass

    def _drop(self, conn: _Conn) -> None:
        self.conns.pop(conn.sock, None)
        try:
            self.sel.unregister(conn.sock)
        except (KeyError, ValueError):
            pass
        try:
            conn.sock.close()
        except OSError:
            pass

    # ---- a worker thread --------------------------------------------------------------
    def _serve(self, conn: _Conn) -> None:
        head, _, rest = bytes(conn.buf).partition(b"\r\n\r\n")
        keep = False
        try:
            conn.sock.settimeout(WRITE_TIMEOUT)
            method, status, headers, body, keep = self._answer(head)
            keep = keep and not rest
            lines = [f"HTTP/1.1 {status} {_REASONS.get(status, '')}"]
            lines += [f"{k}: {v}" for k, v in headers]
            lines += [f"Content-Length: {len(body)}",
                      f"Connection: {'keep-alive' if keep else 'close'}", "", ""]
            conn.sock.sendall("\r\n".join(lines).encode("latin-1")
                              + (b"" if method == "HEAD" else body))
        except OSError:
            keep = False
        if keep and not self._stop:
            conn.buf.clear()
            conn.since = time.monotonic()
            conn.sock.setblocking(False)
            self._back.append(conn)
            self._wake()
        else:
            self.conns.pop(conn.sock, None)
            try:
                conn.sock.close()
            except OSError:
                pass

    def _answer(self, head: bytes) -> tuple[str, int, list[tuple[str, str]], bytes, bool]:
        """(method, status, headers, body, keep-alive) for a request's head."""
        try:
            line, *fields = head.decode("latin-1").split("\r\n")
            method, target, version = line.split(" ")
            headers = {}
            for f in fields:
                name, _, value = f.partition(":")
                headers[name.strip().lower()] = value.strip()
        except ValueError:
            return "GET", 400, _TEXT, b"bad request\n", False
        keep = (headers.get("connection", "").lower() != "close" if version == "HTTP/1.1"
                else headers.get("connection", "").lower() == "keep-alive")
        if headers.get("content-length", "0") not in ("", "0") or "transfer-encoding" in headers:
            keep = False   # a body is never read: the connection ends with this answer
        if method not in ("GET", "HEAD"):
            return method, 405, [*_TEXT, ("Allow", "GET, HEAD")], b"GET or HEAD only\n", keep
        if self.loopback and not _loopback_host(headers.get("host")):
            return method, 421, _TEXT, (b"the Host header must name a loopback address "
                                        b"(this server listens on loopback only)\n"), False
        if self.web.users and not self._authorized(headers.get("authorization", "")):
            return method, 401, [*_TEXT, ("WWW-Authenticate", 'Basic realm="groupctl"')], \
                b"unauthorized\n", keep
        path = target.split("?", 1)[0]
        if "://" in path:   # absolute form
            path = "/" + path.split("://", 1)[1].partition("/")[2]
        try:
            status, out_headers, body = self.handle(method, path, headers)
        except Exception:  # noqa: BLE001 - one request's failure never stops the server
            return method, 503, _TEXT, b"internal error\n", False
        return method, status, out_headers, body, keep

    def _authorized(self, header: str) -> bool:
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "basic":
            return False
        try:
            user, _, password = base64.b64decode(token.strip(), validate=True).decode(
                "utf-8").partition(":")
        except ValueError:
            return False
        return self.web.authorized(user, password)


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _loopback_host(value: str | None) -> bool:
    """The Host header names a loopback address or `localhost` (no header: an HTTP/1.0
    client, not a browser)."""
    if value is None:
        return True
    host = value.strip()
    if host.startswith("["):
        host = host[1:].partition("]")[0]
    elif host.count(":") == 1:
        host = host.partition(":")[0]
    host = host.lower().rstrip(".")
    return host == "localhost" or host.endswith(".localhost") or _is_loopback(host)
