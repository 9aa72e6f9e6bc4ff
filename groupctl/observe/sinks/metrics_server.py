"""The HTTP side of `watch --metrics-port`: `/metrics` and `/healthz` in threads of their
own (observe.metrics has what they read; observe.http_server serves them).

    server = MetricsServer(metrics, "127.0.0.1", 9308)   # bound now (a bad port: UsageError)
    server.start(); server.address; server.close()

/metrics is the text format 0.0.4 (what Prometheus 2 and 3 read, whatever its Accept
header prefers), gzip-compressed when the scraper accepts it (Prometheus does; a q-value
of 0 refuses it): at a
quick level, since at 2,000 groups the text is megabytes and a scrape must stay short.
Pieces of the text are compressed apart and kept (metrics_blocks.Scrape.pieces: a family's
lines of a block of groups, kept compressed as last built), so a scrape compresses only
groupctl's own metrics and joins the blocks' deflate (metrics_gzip); the pieces' CRCs are
combined a run of blocks at a time, and a run whose blocks did not change keeps its CRC.
"""
from __future__ import annotations

import struct
import threading
from typing import TYPE_CHECKING, Any, Callable, Iterator, Protocol

from ...errors import UsageError
from .metrics_gzip import GZIP_HEADER, Packed, Run, crc_combine, pack

if TYPE_CHECKING:
    from .web_config import WebConfig


class Pieces(Protocol):
    """One scrape's text in keyed pieces, (run, key, its bytes or metrics_gzip.Packed when
    asked) (metrics_blocks.Scrape)."""

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


class _Gzip:
    """One gzip stream (RFC 1952) per scrape from the scrape's keyed pieces: a piece seen
    at the last scrape is neither compressed nor checksummed again, nor a run of pieces
    (a family's lines of RUN blocks) whose keys are those of the last scrape. At 100,000
    groups a scrape compresses the blocks that changed and combines a few hundred CRCs."""

    def __init__(self):
        self.lock = threading.Lock()
        self.kept: dict[object, Packed] = {}
        self.runs: dict[tuple, Run] = {}

    def body(self, scrape: Pieces) -> bytes:
        out, crc, size = [GZIP_HEADER], 0, 0
        with self.lock:
            kept: dict[object, Packed] = {}
            runs: dict[tuple, Run] = {}

            def packed(key, data) -> Packed:
                p = self.kept.get(key) if key is not None else None
                if p is None:
                    p = data()
                    if not isinstance(p, Packed):
                        p = pack([p], last=key is None)[0]
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
                    whole = Run([packed(key, data) for key, data in pieces])
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
        # called after each: the state the watch built (a fleet's) lives on from there
        self.on_warm: Callable[[], None] | None = None
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
                if self.on_warm is not None:
                    self.on_warm()
                self.warmed += 1
                changed = 0
            last = changed
