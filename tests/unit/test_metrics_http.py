"""The metrics server's HTTP side (observe/sinks/http_server.py, web_config.py) under careless and
hostile clients: idle and slow connections, other methods, q-values, a rebound Host, basic
authentication and TLS from a Prometheus web configuration file."""
from __future__ import annotations

import gzip
import http.client
import socket
import ssl
import threading
import time

import bcrypt
import pytest

from groupctl.errors import UsageError
from groupctl.observe.sinks import http_server
from groupctl.observe.sinks.metrics import WatchMetrics
from groupctl.observe.sinks.metrics_server import MetricsServer
from groupctl.observe.state.reducer import Reducer
from groupctl.observe.sinks.web_config import load

from waiting import wait_until


def _server(web=None) -> MetricsServer:
    metrics = WatchMetrics(Reducer(), followed=lambda: 0)
    metrics.round_done(0.01, failed=False)
    server = MetricsServer(metrics, "127.0.0.1", 0, web)
    server.start()
    return server


@pytest.fixture
def server():
    s = _server()
    yield s
    s.close()


def _request(server, method: str = "GET", path: str = "/metrics", headers=None,
             context: ssl.SSLContext | None = None):
    host, port = server.address
    conn = (http.client.HTTPSConnection(host, port, timeout=10, context=context) if context
            else http.client.HTTPConnection(host, port, timeout=10))
    try:
        conn.request(method, path, headers=headers or {})
        r = conn.getresponse()
        return r.status, dict(r.getheaders()), r.read()
    finally:
        conn.close()


def test_idle_connections_cost_no_thread_and_metrics_still_answers(server):
    before = threading.active_count()
    idle = [socket.create_connection(server.address, timeout=10) for _ in range(200)]
    try:
        started = time.monotonic()
        status, _, body = _request(server)
        assert status == 200 and b"groupctl_up 1.0" in body
        assert time.monotonic() - started < 5
        assert threading.active_count() - before <= http_server.WORKERS
    finally:
        for s in idle:
            s.close()


def test_a_slow_head_is_dropped_after_its_timeout(server, monkeypatch):
    monkeypatch.setattr(http_server, "HEAD_TIMEOUT", 0.5)
    with socket.create_connection(server.address, timeout=10) as s:
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n")   # never ends its head
        assert s.recv(100) == b""   # closed by the server, well within the 10 s timeout


def test_too_many_connections_close_the_longest_idle(server, monkeypatch):
    monkeypatch.setattr(http_server, "MAX_CONNECTIONS", 20)
    idle = [socket.create_connection(server.address, timeout=10) for _ in range(40)]
    try:
        assert _request(server)[0] == 200
        assert wait_until(lambda: len(server.httpd.conns) <= 20, 5, "at most 20 open")
    finally:
        for s in idle:
            s.close()


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "TRACE", "OPTIONS", "PATCH"])
def test_methods_other_than_get_and_head_are_405(server, method):
    status, headers, _ = _request(server, method, headers={"Content-Length": "0"})
    assert status == 405 and headers["Allow"] == "GET, HEAD"


def test_head_has_the_headers_and_no_body(server):
    status, headers, body = _request(server, "HEAD")
    assert status == 200 and body == b"" and int(headers["Content-Length"]) > 0


@pytest.mark.parametrize("accept,gzipped", [
    ("gzip", True), ("gzip;q=0.5, identity", True), ("gzip;q=0", False),
    ("gzip; q=0.000, deflate", False), ("*;q=0", False), ("*", True), ("identity", False),
    ("GZIP;Q=1", True)])
def test_gzip_follows_the_q_value(server, accept, gzipped):
    status, headers, body = _request(server, headers={"Accept-Encoding": accept})
    assert status == 200
    assert (headers.get("Content-Encoding") == "gzip") is gzipped
    assert b"groupctl_up" in (gzip.decompress(body) if gzipped else body)


@pytest.mark.parametrize("host,status", [
    ("evil.example", 421), ("evil.example:9308", 421), ("10.0.0.1", 421),
    ("localhost", 200), ("127.0.0.1:9308", 200), ("[::1]:9308", 200), ("app.localhost", 200)])
def test_on_loopback_the_host_must_be_loopback(server, host, status):
    """DNS rebinding: a page at evil.example whose name now resolves to 127.0.0.1 sends
    its own name as Host."""
    assert _request(server, headers={"Host": host})[0] == status


def _web(tmp_path, text: str):
    path = tmp_path / "web.yml"
    path.write_text(text)
    return load(str(path))


def test_basic_auth_from_the_web_config(tmp_path):
    hashed = bcrypt.hashpw(b"s3cret", bcrypt.gensalt(rounds=4)).decode().replace("$2b$", "$2y$")
    server = _server(_web(tmp_path, f"basic_auth_users:\n  prom: '{hashed}'\n"))
    try:
        import base64

        def auth(user, pw):
            return {"Authorization": "Basic " + base64.b64encode(f"{user}:{pw}".encode()).decode()}

        status, headers, _ = _request(server)
        assert status == 401 and headers["WWW-Authenticate"].startswith("Basic")
        assert _request(server, headers=auth("prom", "wrong"))[0] == 401
        assert _request(server, headers=auth("other", "s3cret"))[0] == 401
        assert _request(server, headers={"Authorization": "Basic !!!"})[0] == 401
        assert _request(server, headers=auth("prom", "s3cret"))[0] == 200
        assert _request(server, "GET", "/healthz", headers=auth("prom", "s3cret"))[0] == 200
    finally:
        server.close()


def test_tls_from_the_web_config(tmp_path):
    from groupctl.lab import tls

    ca_key, ca_cert = tls.make_ca("test CA")
    key, cert = tls.make_server_cert(ca_key, ca_cert, "localhost", ("localhost",),
                                     ("127.0.0.1",))
    (tmp_path / "ca.crt").write_bytes(tls.pem_cert(ca_cert))
    (tmp_path / "server.crt").write_bytes(tls.pem_cert(cert))
    (tmp_path / "server.key").write_bytes(tls.pem_key(key))
    server = _server(_web(tmp_path, "tls_server_config:\n  cert_file: server.crt\n"
                                    "  key_file: server.key\n"))
    try:
        context = ssl.create_default_context(cafile=str(tmp_path / "ca.crt"))
        status, _, body = _request(server, context=context)
        assert status == 200 and b"groupctl_up" in body
        with pytest.raises((ConnectionError, http.client.HTTPException, OSError)):
            _request(server)   # plain HTTP to the TLS port gets no answer
        assert _request(server, context=context)[0] == 200   # and the server lives on
    finally:
        server.close()


@pytest.mark.parametrize("text,message", [
    ("tls_server_config:\n  cert_file: a\n  key_file: b\n  cipher_suites: [x]\n",
     "tls_server_config: cipher_suites: not supported by groupctl"),
    ("http_server_config:\n  http2: true\n", "http_server_config: not supported by groupctl"),
    ("basic_auth_users:\n  a: plain\n", "basic_auth_users a: not a bcrypt hash"),
    ("tls_server_config:\n  cert_file: missing.crt\n  key_file: missing.key\n",
     "tls_server_config: No such file or directory"),
    ("[1, 2]\n", "expected a mapping"),
])
def test_a_web_config_groupctl_cannot_honour_is_refused(tmp_path, text, message):
    with pytest.raises(UsageError, match=message):
        _web(tmp_path, text)


def test_beyond_loopback_the_server_says_what_is_missing(tmp_path):
    metrics = WatchMetrics(Reducer(), followed=lambda: 0)
    server = MetricsServer(metrics, "0.0.0.0", 0)   # noqa: S104 - the case under test
    try:
        said = server.serving()
        assert said[0].startswith("serving metrics on http://0.0.0.0:")
        assert said[1].endswith("are served without TLS and without authentication: see "
                                "--web-config")
    finally:
        server.close()
    hashed = bcrypt.hashpw(b"pw", bcrypt.gensalt(rounds=4)).decode()
    server = MetricsServer(metrics, "0.0.0.0", 0,   # noqa: S104
                           _web(tmp_path, f"basic_auth_users:\n  p: '{hashed}'\n"))
    try:
        assert server.serving()[1].endswith("served without TLS: see --web-config")
    finally:
        server.close()
    server = _server()
    try:
        assert len(server.serving()) == 1   # loopback: nothing to add
    finally:
        server.close()
