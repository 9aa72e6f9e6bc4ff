"""Prometheus metrics of a `watch` (`--metrics-port`): `/metrics` and `/healthz`.

    metrics = WatchMetrics(watcher.reducer, followed=lambda: len(watcher.source.groups))
    watcher.source.on_round = metrics.round_done     # each describe round: seconds, failed
    emit = metrics.tee(sinks)                         # every event, after the reducer's fold
    server = MetricsServer(metrics, host, port)       # bound now (a bad port: UsageError)
    server.start(); ...; server.close()
    metrics.render()                                  # the text of one scrape

A scrape reads the one reducer (observe.reducer), so it cannot drift from what the live
view shows: state, generation, epochs, members, members behind their target, the last
rebalance's time and its slowest member (issue 19: who held it up, one series per group). What accumulates is counted as events come (GroupCounts): rebalances by
reason kind and their durations, the time the current state began; describe rounds, failed
rounds and lost contacts from the poller's round outcomes. Counters live as long as the
process: a broker restart or a lost contact never makes them go down. A group's rebalance
counters start at 0 for every reason kind as soon as its type is known, so `increase()`
counts a group's first rebalance too.

Labels of every group series: `cluster` (Kafka's cluster id from Metadata, the `cluster`
of the events: group names are unique per cluster only; a readable name is a target
label in the scrape config), `group`, `type` (classic, consumer, share, streams).

Adding a metric is one small function (the group families are in observe.metrics_groups):
- per group: a `@group_family` function of a GroupView (the reducer's GroupStatus, the
  group's GroupCounts) yielding samples (metrics_text.Sample); its lines are built when
  the group changes and kept. What changes without an event (lag, read on its own
  interval) calls `metrics.touch(group)` when it has a new value for the group;
- a histogram of a figure of the `rebalance` events (duration, unowned partitions):
  one `rebalance_histogram(name, help, figure of an event, buckets)` call;
- anything else: a collector on `metrics.registry` (prometheus_client's custom collector
  API, `registry.register(c)`), written after groupctl's own metrics at every scrape.

`/healthz`: 503 until the first successful describe round, 200 from then on, 503 again
from the first failed round (contact lost: groupctl_up is 0) until a round succeeds.

The scrape runs in the HTTP server's thread while the asyncio loop folds events: dicts are
copied with list() (atomic under the GIL) before they are walked; a group's kept lines
carry the version they were built from, read before building, so a change during a build
is built again at the next scrape. A selected group's lines are built at its event (under
the render lock) and placed, so a full block is compressed as it fills and the first
scrape of a fleet builds no group's lines. A scrape hands the server its text in keyed pieces
(Scrape.pieces): a piece with the same key is the same bytes, so metrics_server compresses
it once.
"""
from __future__ import annotations

import threading
from typing import Callable

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.registry import Collector

from .metrics_blocks import BLOCK, Blocks, Scrape
from .metrics_groups import (GROUP_FAMILIES, STATES, GroupCounts, GroupFamily, GroupView,
                             _Kept, group_family, rebalance_histogram, stamp)
from .metrics_fleet import FleetCounts, GroupSelection, fleet_text
from .metrics_groups import _type
from .metrics_text import Family, Histogram, labels_text, sample_line
from ..state.reducer import GroupStatus, Reducer

ROUND_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)


# ---- groupctl's own -----------------------------------------------------------------------
UP = Family("groupctl_up", "gauge", "1 when groupctl's last describe round succeeded")
FOLLOWED = Family("groupctl_groups_followed", "gauge", "Groups groupctl follows")
ROUNDS = Family("groupctl_describe_round_duration_seconds", "histogram",
                "Duration of groupctl's describe rounds")
FAILED = Family("groupctl_describe_rounds_failed", "counter",
                "Describe rounds that failed as a whole (no coordinator answered)")
LOST = Family("groupctl_contact_lost", "counter",
              "Times groupctl lost contact with the cluster (the first failed round of a "
              "streak)")


class WatchMetrics:
    def __init__(self, reducer: Reducer, *, followed: Callable[[], int],
                 select: GroupSelection | None = None):
        self.reducer = reducer
        self.select = select if select is not None else GroupSelection.every_group()
        self.fleet = FleetCounts()
        self.followed = followed
        self.registry = CollectorRegistry(auto_describe=True)   # more metrics (lag, ...)
        self.counts: dict[str, GroupCounts] = {}
        self.cluster: str | None = None
        self.rounds = Histogram(ROUND_BUCKETS)
        self.rounds_failed = 0
        self.contact_lost = 0
        self.failed_in_a_row = 0
        self.succeeded_once = False
        self.families: list[GroupFamily] = list(GROUP_FAMILIES)   # + add_group_families
        self._kept: dict[str, _Kept] = {}
        # the selected groups with an event since the last scrape began (how much a scrape
        # would build: metrics_server builds ahead when that is a fleet)
        self.changed: set[str] = set()
        self._blocks = Blocks()
        self._render_lock = threading.Lock()

    # ---- fed by the watch ----------------------------------------------------------------
    def round_done(self, seconds: float, failed: bool) -> None:
        self.rounds.observe(seconds)
        if failed:
            self.rounds_failed += 1
            if self.failed_in_a_row == 0:
                self.contact_lost += 1
            self.failed_in_a_row += 1
        else:
            self.failed_in_a_row = 0
            self.succeeded_once = True

    def event(self, e: dict) -> None:
        group = e.get("group")
        if group is None:
            return
        if e.get("cluster") and e["cluster"] != self.cluster:
            self.cluster = e["cluster"]   # every group's text is built again with it
        status = self.reducer.groups.get(group)
        self.fleet.event(e, _type(status))
        if not self.select(group):
            return   # fleet-level series only: nothing kept per group
        counts = self.counts.get(group) or self.counts.setdefault(group, GroupCounts())
        counts.event(e, status)
        self.changed.add(group)
        if status is not None and status.state is not None:
            # built now and placed, its block compressed once full: a scrape, even the
            # first at 100,000 groups, builds only blocks groups have left since
            with self._render_lock:
                self._build(group, status, counts)

    def touch(self, group: str) -> None:
        """Something a group family reads changed without an event: build its lines again."""
        if not self.select(group):
            return
        counts = self.counts.get(group) or self.counts.setdefault(group, GroupCounts())
        counts.version += 1
        self.changed.add(group)

    def add_group_families(self, families: list[GroupFamily]) -> None:
        """More per-group families on this watch's scrape (watch --lag), kept like the
        others; before the server starts."""
        self.families += families
        self._kept.clear()
        self._blocks.clear()

    def add_collector(self, collector: Collector) -> None:
        """More families on the same scrape, after groupctl's own (watch --lag:
        observe.lag_metrics), written by prometheus_client at every scrape."""
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
        """/healthz: what groupctl_up says (no contact since the last round: 503)."""
        return self.up

    def render(self) -> str:
        """The text of one scrape (Prometheus text format 0.0.4)."""
        return self.scrape().text().decode()

    def scrape(self) -> Scrape:
        """One scrape: the groups' kept lines (built again for the groups that changed),
        groupctl's own metrics, the registry's."""
        with self._render_lock:
            self.changed = set()
            self._place()
            blocks = self._blocks.settle(len(self.families))
            rows = self._blocks.rows()
        tail = (self._own_text() + self._fleet_text()
                + generate_latest(self.registry).decode())
        return Scrape(blocks, tail.encode(), self.families, rows)

    def _place(self) -> None:
        """The lines of the selected groups (every group has passed event(), where the
        selection decided it) built again for those that changed, and placed."""
        cluster = self.cluster
        groups = self.reducer.groups
        kept_of, blocks = self._kept, self._blocks
        named: list[tuple[str | None, GroupStatus | None]]
        if self.select.everyone:
            named = list(groups.items())
        else:
            named = [(name, groups.get(name)) for name in list(self.select.chosen)]
        present = 0
        for name, status in named:
            if status is None or status.state is None or name is None:
                continue   # followed, not yet seen (or forgotten)
            present += 1
            counts = self.counts.get(name) or GroupCounts()
            kept = kept_of.get(name)
            if kept is None or kept.stamp != stamp(status, counts) or kept.cluster != cluster:
                self._build(name, status, counts)
        if present != len(blocks.where):   # some are gone: their lines too
            here = {name for name, status in named
                    if status is not None and status.state is not None}
            for name in [n for n in blocks.where if n not in here]:
                blocks.drop(name)
                kept_of.pop(name, None)

    def _build(self, name: str, status: GroupStatus, counts: GroupCounts) -> None:
        """A group's lines built again and placed (the render lock held)."""
        kept = self._kept[name] = _Kept(name, status, counts, self.cluster, self.families)
        self._blocks.place(name, kept, len(self.families))

    def _fleet_text(self) -> str:
        select = self.select
        return fleet_text(list(self.reducer.groups.values()), self.fleet, self.cluster,
                          select.decided - select.selected)

    def _own_text(self) -> str:
        rounds = "".join(sample_line(ROUNDS.name + suffix, labels_text(pairs), value)
                         for suffix, pairs, value in self.rounds.samples())
        return "".join((
            UP.header(), sample_line(UP.name, "", 1.0 if self.up else 0.0),
            FOLLOWED.header(), sample_line(FOLLOWED.name, "", self.followed()),
            ROUNDS.header(), rounds,
            FAILED.header(), sample_line(FAILED.name + "_total", "", self.rounds_failed),
            LOST.header(), sample_line(LOST.name + "_total", "", self.contact_lost)))


__all__ = ["BLOCK", "GROUP_FAMILIES", "STATES", "GroupCounts", "GroupFamily", "GroupView",
           "Scrape", "WatchMetrics", "group_family", "rebalance_histogram"]
