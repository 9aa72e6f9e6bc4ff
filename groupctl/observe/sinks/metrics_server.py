"""The HTTP side of `watch --metrics-port`: `/metrics` and `/healthz` in threads of their
own (observe.metrics has what they read; observe.http_server serves them).

    server = MetricsServer(metrics, "127.0.0.1", 9308)   # bound now (a bad port: UsageError)
    server.start(); server.address; server.close()

/metrics is the text format 0.0.4 (what Prometheus 2 and 3 read, whatever its Accept
header prefers), gzip-compressed when the scraper accepts it (Prometheus does; a q-value
of 0 refuses it): at a
quick level, since at 2,000 groups the text is megabytes and a scrape must stay short.
Pieces of the text are compressed apart and kept (metrics_blocks.Scrape.pieces: a family's
lines of a block of groups as last built), so a scrape compresses only the blocks of the
groups that changed since the last one, and groupctl's own metrics; the pieces' CRCs are
combined a run of blocks at a time, and a run whose blocks did not change keeps its CRC.
"""
from __future__ import annotations

import struct
import threading
import zlib
from typing import TYPE_CHECKING, Any, Iterator, Protocol

from ...errors import UsageError

if TYPE_CHECKING:
    from .web_config import WebConfig


class Pieces(Protocol):
    """One scrape's text in keyed pieces, (run, key, its bytes when asked)
    (metrics_blocks.Scrape)."""

    def pieces(self) -> Iterator: ...
    def text(self) -> bytes: ...


class Scraped(Protocol):
    """What the server serves: a scrape and the health /healthz says (watch's WatchMetrics;
    the canary's CanaryMetrics, whose `unhealthy_text` says why it is not healthy)."""

    @property
    def healthy(self) -> bool: ...
    def scrape(self) -> Pieces: ...


TEXT_FORMAT = "text/plain; version=0.0.4; charset=utf-8"
# Built ahead: when this many groups have changed since the last scrape and no more came
# in the last WARM_EVERY seconds (a fleet's first looks all told), the server builds and
# compresses the scrape in its own thread, so that the next one only joins kept bytes
# (100,000 groups' lines take seconds to build; a few hundred changed, milliseconds).
WARM_AT = 5000
WARM_EVERY = 1.0
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


class _Run:
    """Pieces one after the other as one: their compressed bytes joined, their CRC."""
    __slots__ = ("deflated", "crc", "size", "shift")

    def __init__(self, pieces: list[_Packed]):
        self.deflated = b"".join(p.deflated for p in pieces)
        crc = size = 0
        for p in pieces:
            crc = crc_combine(crc, p.crc, p.shift)
            size += p.size
        self.crc, self.size, self.shift = crc, size, crc_shift(size)


class _Gzip:
    """One gzip stream (RFC 1952) per scrape from the scrape's keyed pieces: a piece seen
    at the last scrape is neither compressed nor checksummed again, nor a run of pieces
    (a family's lines of RUN blocks) whose keys are those of the last scrape. At 100,000
    groups a scrape compresses the blocks that changed and combines a few hundred CRCs."""

    def __init__(self):
        self.lock = threading.Lock()
        self.kept: dict[object, _Packed] = {}
        self.runs: dict[tuple, _Run] = {}

    def body(self, scrape: Pieces) -> bytes:
        out, crc, size = [GZIP_HEADER], 0, 0
        with self.lock:
            kept: dict[object, _Packed] = {}
            runs: dict[tuple, _Run] = {}

            def packed(key, data) -> _Packed:
                p = self.kept.get(key) if key is not None else None
                if p is None:
                    p = _Packed(data(), last=key is None)
                if key is not None:
                    kept[key] = p
                return p

            for run, pieces in _runs(scrape.pieces()):
                if run is None:
                    key, data = pieces[0]
                    p = packed(key, data)
                    out.append(p.deflated)
                    crc = crc_combine(crc, p.crc, p.shift)
                    size += p.size
                    continue
                keys = tuple(key for key, _ in pieces)
                whole = self.runs.get(keys)
                if whole is None:
                    whole = _Run([packed(key, data) for key, data in pieces])
                else:
                    kept.update((key, self.kept[key]) for key in keys)
                runs[keys] = whole
                out.append(whole.deflated)
                crc = crc_combine(crc, whole.crc, whole.shift)
                size += whole.size
            self.kept, self.runs = kept, runs
        out.append(struct.pack("<II", crc, size & 0xFFFFFFFF))
        return b"".join(out)


def _runs(pieces: Iterator) -> Iterator[tuple[object, list]]:
    """(run, [(key, data)]) of consecutive pieces of the same run; run None: one piece."""
    current: object = None
    batch: list = []
    for run, key, data in pieces:
        if run is not None and run == current:
            batch.append((key, data))
            continue
        if batch:
            yield current, batch
        current, batch = run, [(key, data)]
        if run is None:
            yield None, batch
            batch = []
    if batch:
        yield current, batch


def accepts_gzip(header: str) -> bool:
    """Whether an Accept-Encoding header accepts gzip: its own q-value (or that of `*`)
    above 0 (RFC 9110: `gzip;q=0` refuses it)."""
    weights: dict[str, float] = {}
    for item in header.split(","):
        name, *params = (part.strip() for part in item.split(";"))
        q = 1.0
        for param in params:
            key, _, value = param.partition("=")
            if key.strip().lower() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        if name:
            weights[name.lower()] = q
    q = weights.get("gzip", weights.get("x-gzip", weights.get("*", 0.0)))
    return q > 0


class MetricsServer:
    """`/metrics` (Prometheus text format) and `/healthz`, served by http_server (a bounded
    pool, timeouts, GET and HEAD only, a Host check on loopback; TLS and basic
    authentication from a web configuration file)."""

    def __init__(self, metrics: Scraped, host: str, port: int,
                 web: "WebConfig | None" = None):
        from .http_server import HttpServer

        self.metrics: Any = metrics   # watch reads its own metrics back through it
        self.gzip = _Gzip()
        self._stop = threading.Event()
        self.warmed = 0   # scrapes built ahead
        try:
            self.httpd = HttpServer(host, port, self._app, web)
        except OSError as exc:
            raise UsageError(f"--metrics-port {port} on {host}: {exc.strerror or exc}") from None

    @property
    def address(self) -> tuple[str, int]:
        return self.httpd.address

    @property
    def loopback(self) -> bool:
        return self.httpd.loopback

    def _app(self, method: str, path: str, headers: dict[str, str]):
        if path == "/healthz":
            ok = self.metrics.healthy
            return (200 if ok else 503), [("Content-Type", "text/plain; charset=utf-8")], \
                b"ok\n" if ok else getattr(self.metrics, "unhealthy_text", b"no contact "
                                            b"with the cluster in the last describe round\n")
        if path == "/metrics":
            return self._metrics(headers)
        return 404, [("Content-Type", "text/plain; charset=utf-8")], \
            b"see /metrics and /healthz\n"

    def _metrics(self, headers: dict[str, str]):
        scrape = self.metrics.scrape()
        out = [("Content-Type", TEXT_FORMAT), ("Vary", "Accept-Encoding")]
        if accepts_gzip(headers.get("accept-encoding", "")):
            body = self.gzip.body(scrape)
            out.append(("Content-Encoding", "gzip"))
        else:
            body = scrape.text()
        return 200, out, body

    def serving(self) -> list[str]:
        """What to say on stderr once started: the address, and when it is reachable
        beyond this machine without TLS or a password, that (and --web-config)."""
        host, port = self.address
        web = self.httpd.web
        said = [f"serving metrics on {'https' if web.tls else 'http'}://{host}:{port}/metrics "
                f"and /healthz"]
        missing = [what for what, there in (("TLS", web.tls is not None),
                                            ("authentication", bool(web.users))) if not there]
        if not self.loopback and missing:
            said.append(f"{host} is reachable beyond this machine and the metrics (group "
                        f"names) are served without {' and without '.join(missing)}: see "
                        f"--web-config")
        return said

    def start(self) -> None:
        self.httpd.start()
        if hasattr(self.metrics, "changed"):
            threading.Thread(target=self._warm, name="groupctl-metrics-warm",
                             daemon=True).start()

    def close(self) -> None:
        self._stop.set()
        self.httpd.close()

    def _warm(self) -> None:
        """Build the scrape ahead once a fleet's changes have come to rest (WARM_AT)."""
        last = 0
        while not self._stop.wait(WARM_EVERY):
            changed = len(self.metrics.changed)
            if changed >= WARM_AT and changed == last:
                try:
                    self.gzip.body(self.metrics.scrape())
                except Exception:   # noqa: BLE001 - only ahead of time: a scrape says it
                    pass
                self.warmed += 1
                changed = 0
            last = changed
