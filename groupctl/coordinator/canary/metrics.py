"""Prometheus metrics of `canary --metrics-port` (served by observe.sinks.metrics_server, the
server of `watch --metrics-port`), written as watch's are (observe.sinks.metrics_text):

    groupctl_canary_step_duration_seconds{cluster,coordinator,protocol,step}   histogram
    groupctl_canary_round_duration_seconds{cluster,coordinator,protocol}       histogram
    groupctl_canary_rounds_total{cluster,coordinator,protocol}                 counter
    groupctl_canary_failures_total{cluster,coordinator,protocol,step,error}    counter
    groupctl_canary_up{cluster,coordinator}                                    gauge

`coordinator` is the broker a round ran against (the one FindCoordinator named; when the
lookup itself failed, the one the canary last ran on). A step's histogram has the steps
of completed rounds (a failed round's leave may have looked the coordinator up again);
a round's, the rounds that completed. `up` is 1 when every round of the
last run on that broker completed, 0 when one did not; it is written for the brokers that
lead `__consumer_offsets` partitions now, those the last run's rounds ran against, and a
broker whose rounds failed for as long as the cluster's Metadata still lists it: a
coordinator that stopped answering stays at 0 after a failover moved its groups elsewhere,
and leaves the scrape only once the cluster dropped it (fenced, or shut down); back in the
cluster it has a series again when it leads partitions again. Counters live as long as
the process.

`/healthz`: 503 until the first run in which a round completed, then 200, 503 again after
UNHEALTHY_AFTER runs in a row without one (the canary cannot reach the cluster at all).
"""
from __future__ import annotations

import threading
from dataclasses import dataclass

from ...observe.sinks.metrics_text import Family, Histogram, labels_text, sample_line
from .rounds import RoundResult

UNHEALTHY_AFTER = 3
BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)

STEP = Family("groupctl_canary_step_duration_seconds", "histogram",
              "Duration of each step of the canary's membership rounds")
ROUND = Family("groupctl_canary_round_duration_seconds", "histogram",
               "Duration of the canary's completed membership rounds")
ROUNDS = Family("groupctl_canary_rounds", "counter", "Canary rounds run")
FAILURES = Family("groupctl_canary_failures", "counter",
                  "Canary rounds that failed, by the step that failed and its error")
UP = Family("groupctl_canary_up", "gauge",
            "1 when every canary round of the last run on this coordinator completed")


@dataclass
class _Scrape:
    """What observe.sinks.metrics_server serves: the text in one piece (a handful of series)."""

    data: bytes

    def pieces(self):
        yield None, None, lambda: self.data

    def text(self) -> bytes:
        return self.data


class CanaryMetrics:
    """Folds each run's results; `scrape()` / `render()` for the server (thread-safe)."""

    unhealthy_text = b"no canary round completed\n"

    def __init__(self):
        self.cluster = ""
        self.steps: dict[tuple, Histogram] = {}
        self.rounds: dict[tuple, Histogram] = {}
        self.runs: dict[tuple, int] = {}
        self.failures: dict[tuple, int] = {}
        self.up: dict[str, bool] = {}
        self.runs_without_success = 0
        self.succeeded_once = False
        self._lock = threading.Lock()

    def run_done(self, results: list[RoundResult], cluster: str | None,
                 coordinators: set[int], brokers: set[int] | None = None) -> None:
        """One run's results; `coordinators`: the brokers leading `__consumer_offsets`
        partitions now; `brokers`: those the cluster's Metadata lists (None: unknown, then
        a failing broker stays failing)."""
        with self._lock:
            self.cluster = cluster or self.cluster
            up: dict[str, bool] = {str(n): True for n in coordinators}
            for r in results:
                node = "unknown" if r.coordinator is None else str(r.coordinator)
                key = (node, r.canary.protocol)
                self.runs[key] = self.runs.get(key, 0) + 1
                if r.ok:
                    for step, ms in r.steps.items():
                        if ms is not None:
                            self._histogram(self.steps, (*key, step)).observe(ms / 1000)
                    if r.round_ms is not None:
                        self._histogram(self.rounds, key).observe(r.round_ms / 1000)
                else:
                    fkey = (*key, r.failed_step or "unknown", r.error or "unknown")
                    self.failures[fkey] = self.failures.get(fkey, 0) + 1
                up[node] = up.get(node, True) and r.ok
            listed = None if brokers is None else {str(n) for n in brokers}
            for node, ok in self.up.items():
                if not ok and node not in up and (listed is None or node in listed):
                    up[node] = False   # stopped answering, still in the cluster
            self.up = up
            if any(r.ok for r in results):
                self.succeeded_once = True
                self.runs_without_success = 0
            else:
                self.runs_without_success += 1

    @property
    def healthy(self) -> bool:
        return self.succeeded_once and self.runs_without_success < UNHEALTHY_AFTER

    def scrape(self) -> _Scrape:
        return _Scrape(self.render().encode())

    def render(self) -> str:
        with self._lock:
            c = ("cluster", self.cluster)
            out = [STEP.header()]
            for (node, proto, step), h in sorted(self.steps.items()):
                out += _histogram_lines(STEP, (c, ("coordinator", node), ("protocol", proto),
                                               ("step", step)), h)
            out.append(ROUND.header())
            for (node, proto), h in sorted(self.rounds.items()):
                out += _histogram_lines(ROUND, (c, ("coordinator", node), ("protocol", proto)), h)
            out.append(ROUNDS.header())
            out += [sample_line(ROUNDS.name + "_total", labels_text(
                (c, ("coordinator", node), ("protocol", proto))), n)
                for (node, proto), n in sorted(self.runs.items())]
            out.append(FAILURES.header())
            out += [sample_line(FAILURES.name + "_total", labels_text(
                (c, ("coordinator", node), ("protocol", proto), ("step", step),
                 ("error", error))), n)
                for (node, proto, step, error), n in sorted(self.failures.items())]
            out.append(UP.header())
            out += [sample_line(UP.name, labels_text((c, ("coordinator", node))),
                                1 if ok else 0) for node, ok in sorted(self.up.items())]
            return "".join(out)

    @staticmethod
    def _histogram(table: dict, key: tuple) -> Histogram:
        h = table.get(key)
        if h is None:
            h = table[key] = Histogram(BUCKETS)
        return h


def _histogram_lines(family: Family, pairs: tuple, h: Histogram) -> list[str]:
    return [sample_line(family.name + suffix, labels_text(labels), value)
            for suffix, labels, value in h.samples(pairs)]
