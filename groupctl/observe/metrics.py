"""Prometheus metrics of a `watch` (`--metrics-port`): `/metrics` and `/healthz`.

    metrics = WatchMetrics(watcher.reducer, followed=lambda: len(watcher.source.groups))
    watcher.source.on_round = metrics.round_done     # each describe round: seconds, failed
    emit = metrics.tee(sinks)                         # rebalance events feed the counters
    server = MetricsServer(metrics, host, port)       # bound now (a bad port: UsageError)
    server.start(); ...; server.close()

What a scrape shows is read from the one reducer (observe.reducer) at scrape time by a
custom collector, so it cannot drift from what the live view shows: state, generation,
epochs, members, members behind their target, the last rebalance's time. Only what must
accumulate is counted as it happens: rebalances and their durations (from `rebalance`
events, after the reducer folded them), describe rounds and their durations (from the
poller's round outcomes). These counters live as long as the process: a broker restart
or a lost contact never makes them go down.

`/healthz`: 503 until the first successful describe round, 200 from then on, 503 again
after UNHEALTHY_AFTER failed rounds in a row (a failed round backs off, so three cover
several seconds of lost contact; one failed round is a hiccup, not a dead monitor).

The scrape runs in the HTTP server's thread while the asyncio loop folds events: the
collector copies each dict with list() (atomic under the GIL) before walking it.
"""
from __future__ import annotations

import threading
from typing import Callable, Iterable
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server
from socketserver import ThreadingMixIn

from prometheus_client import CollectorRegistry, Counter, Histogram, make_wsgi_app
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from ..errors import UsageError
from .reducer import GroupStatus, Reducer

UNHEALTHY_AFTER = 3   # failed describe rounds in a row before /healthz says 503

# The states of each group type (KIP-848 consumer, KIP-932 share, KIP-1071 streams):
# every one is a series, 1 for the current one, so `== 1` and `changes()` both work.
STATES = {
    "classic": ("Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead"),
    "consumer": ("Empty", "Assigning", "Reconciling", "Stable", "Dead"),
    "share": ("Empty", "Stable", "Dead"),
    "streams": ("Empty", "NotReady", "Assigning", "Reconciling", "Stable", "Dead"),
}
# seconds; rebalances last from tens of milliseconds (KIP-848) to the rebalance timeout
REBALANCE_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600)
ROUND_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)


class WatchMetrics:
    def __init__(self, reducer: Reducer, *, followed: Callable[[], int]):
        self.reducer = reducer
        self.followed = followed
        self.registry = CollectorRegistry(auto_describe=True)
        self.rebalances = Counter(
            "groupctl_group_rebalances", "Rebalances of the group seen by groupctl (classic: "
            "stabilized generations; epoch-based: new assignment epochs)",
            ["group", "type"], registry=self.registry)
        self.rebalance_seconds = Histogram(
            "groupctl_group_rebalance_duration_seconds", "Duration of the group's rebalances",
            ["group", "type"], buckets=REBALANCE_BUCKETS, registry=self.registry)
        self.round_seconds = Histogram(
            "groupctl_describe_round_duration_seconds", "Duration of groupctl's describe "
            "rounds", buckets=ROUND_BUCKETS, registry=self.registry)
        self.rounds_failed = Counter(
            "groupctl_describe_rounds_failed", "Describe rounds that failed as a whole "
            "(no coordinator answered)", registry=self.registry)
        # issue 19 (cost): what rebalances cost, by the figure's basis (measured,
        # upper_bound, lower_bound: see observe/unowned.py)
        self.unowned_seconds = Counter(
            "groupctl_group_unowned_partition_seconds", "Partition-seconds without an owner "
            "during the group's rebalances, summed over partitions", ["group", "type", "basis"],
            registry=self.registry)
        self.failed_in_a_row = 0
        self.succeeded_once = False
        self.registry.register(_GroupCollector(self))

    # ---- fed by the watch ----------------------------------------------------------------
    def round_done(self, seconds: float, failed: bool) -> None:
        self.round_seconds.observe(seconds)
        if failed:
            self.rounds_failed.inc()
            self.failed_in_a_row += 1
        else:
            self.failed_in_a_row = 0
            self.succeeded_once = True

    def event(self, e: dict) -> None:
        if e.get("event") != "rebalance":
            return
        status = self.reducer.groups.get(e["group"])
        labels = (str(e["group"]), _type(status))
        self.rebalances.labels(*labels).inc()
        self.rebalance_seconds.labels(*labels).observe((e.get("duration_ms") or 0) / 1000)
        if e.get("unowned_partition_ms") is not None:   # issue 19 (cost)
            self.unowned_seconds.labels(*labels, str(e.get("unowned_basis"))).inc(
                e["unowned_partition_ms"] / 1000)

    def add_collector(self, collector: Collector) -> None:
        """More families on the same scrape (watch --lag: observe.lag_metrics)."""
        self.registry.register(collector)

    def tee(self, sink: Callable[[dict], None]) -> Callable[[dict], None]:
        def both(e: dict) -> None:
            self.event(e)
            sink(e)
        return both

    # ---- read by the server ---------------------------------------------------------------
    @property
    def up(self) -> bool:
        return self.succeeded_once and self.failed_in_a_row == 0

    @property
    def healthy(self) -> bool:
        return self.succeeded_once and self.failed_in_a_row < UNHEALTHY_AFTER


def _type(status: GroupStatus | None) -> str:
    return (status.type if status is not None else None) or "unknown"


def _behind_target(status: GroupStatus) -> int:
    """Members whose assignment is not yet their target (KIP-848 / streams)."""
    def parts(asg) -> set:
        return {(a["topic"], p) for a in asg or () for p in a.get("partitions") or ()}
    return sum(1 for m in list(status.members.values())
               if m.has_target and m.target is not None and parts(m.assignment) != parts(m.target))


class _GroupCollector(Collector):
    """The reducer's per-group state and the watch's own, read at scrape time."""

    def __init__(self, metrics: WatchMetrics):
        self.m = metrics

    def collect(self) -> Iterable:
        labels = ["group", "type"]
        state = GaugeMetricFamily("groupctl_group_state", "1 for the group's current "
                                  "state, 0 for the type's other states",
                                  labels=labels + ["state"])
        gen = GaugeMetricFamily("groupctl_group_generation", "Generation of a classic "
                                "group", labels=labels)
        epoch = GaugeMetricFamily("groupctl_group_epoch", "Group epoch (consumer, share, "
                                  "streams groups)", labels=labels)
        asg_epoch = GaugeMetricFamily("groupctl_group_assignment_epoch", "Target "
                                      "assignment epoch", labels=labels)
        members = GaugeMetricFamily("kafka_consumergroup_members", "Members of the group "
                                    "(kafka_exporter's name; label group)", labels=labels)
        behind = GaugeMetricFamily("groupctl_group_members_behind_target", "Members whose "
                                   "assignment is not yet their target (consumer, streams)",
                                   labels=labels)
        last = GaugeMetricFamily("groupctl_group_last_rebalance_timestamp_seconds",
                                 "Unix time the group's last rebalance ended", labels=labels)
        for name, status in list(self.m.reducer.groups.items()):
            if status.state is None:
                continue   # followed, not yet seen
            kind = _type(status)
            lv = [str(name), kind]
            known = STATES.get(kind, ())
            for s in known + ((status.state,) if status.state not in known else ()):
                state.add_metric(lv + [s], 1.0 if s == status.state else 0.0)
            if not status.exists:
                continue
            members.add_metric(lv, len(status.members))
            for family, value in ((gen, status.generation), (epoch, status.group_epoch),
                                  (asg_epoch, status.assignment_epoch)):
                if value is not None:
                    family.add_metric(lv, value)
            if kind in ("consumer", "streams"):
                behind.add_metric(lv, _behind_target(status))
            ended = _ended(status.last_rebalance)
            if ended is not None:
                last.add_metric(lv, ended)
        yield from (state, gen, epoch, asg_epoch, members, behind, last)
        yield GaugeMetricFamily("groupctl_up", "1 when groupctl's last describe round "
                                "succeeded", value=1.0 if self.m.up else 0.0)
        yield GaugeMetricFamily("groupctl_groups_followed", "Groups groupctl follows",
                                value=self.m.followed())


def _ended(rebalance: dict | None) -> float | None:
    from .reducer import _seconds

    if not rebalance:
        return None
    try:
        return _seconds(rebalance.get("ended") or rebalance.get("ts"))
    except (TypeError, ValueError):
        return None


# ---- the HTTP server ------------------------------------------------------------------------
class _Server(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _Quiet(WSGIRequestHandler):
    def log_message(self, format, *args):   # no access log on stderr (the live view is there)
        pass


class MetricsServer:
    """`/metrics` (Prometheus text format) and `/healthz`, in a thread of their own."""

    def __init__(self, metrics: WatchMetrics, host: str, port: int):
        self.metrics = metrics
        self.prom = make_wsgi_app(metrics.registry)
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
            return self.prom(environ, start_response)
        start_response("404 Not Found", [("Content-Type", "text/plain; charset=utf-8")])
        return [b"see /metrics and /healthz\n"]

    def start(self) -> None:
        self.thread.start()

    def close(self) -> None:
        if self.thread.is_alive():
            self.httpd.shutdown()
        self.httpd.server_close()
