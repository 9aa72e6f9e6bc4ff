"""`watch --lag --metrics-port`: the lag families of /metrics (add_lag_metrics), per group
kept with the group's other lines (observe.metrics_groups; a lag read rebuilds them: its
time is part of a group's stamp), the lag rounds from a small collector.

Every name starts groupctl_ (kafka-lag-exporter's and kafka_exporter's kafka_consumergroup_*
names carry other labels: a dashboard scraping both would mix two schemas under one
name); labels `cluster`, `group`, `type` as groupctl's other per-group series:

    groupctl_group_lag{group,type}             the group's total lag
    groupctl_group_topic_lag{group,type,topic} its lag per topic
    groupctl_group_lag_max{group,type}             its largest partition lag
    groupctl_group_lag_timestamp_seconds{group,type}          when that lag was read
    groupctl_lag_rounds_total, groupctl_lag_rounds_failed_total, groupctl_lag_last_round_seconds
    (a gauge: the last round's duration)

A group with no committed offset has no lag series (its lag is unknown, not 0).
"""
from __future__ import annotations

from typing import Callable, Iterable, Iterator

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from ..sources.lag import LagPoller
from .metrics import WatchMetrics
from .metrics_groups import GroupFamily, GroupView
from .metrics_text import Family, Sample


def _family(name: str, help: str) -> Callable:
    def make(fn: Callable[[GroupView], Iterator[Sample]]) -> GroupFamily:
        return GroupFamily(Family(name, "gauge", help), fn)
    return make


def _read(v: GroupView) -> bool:
    return v.status.lag is not None and v.status.lag_at is not None   # never read, no commits


@_family("groupctl_group_lag", "Sum of the group's lag over its partitions "
         "with a committed offset")
def _total(v: GroupView) -> Iterator[Sample]:
    if v.status.lag is not None and v.status.lag_at is not None:
        yield "", v.labels(), v.status.lag


@_family("groupctl_group_topic_lag", "Sum of the group's lag over a topic's "
         "partitions")
def _by_topic(v: GroupView) -> Iterator[Sample]:
    if _read(v):
        for topic, lag in sorted(list(v.status.lag_by_topic.items())):
            yield "", v.labels(("topic", topic)), lag


@_family("groupctl_group_lag_max", "The group's largest partition lag")
def _largest(v: GroupView) -> Iterator[Sample]:
    if _read(v) and v.status.lag_max is not None:
        yield "", v.labels(), v.status.lag_max


@_family("groupctl_group_lag_timestamp_seconds", "Unix time the group's lag was read")
def _read_at(v: GroupView) -> Iterator[Sample]:
    if v.status.lag is not None and v.status.lag_at is not None:
        yield "", v.labels(), v.status.lag_at


LAG_FAMILIES = [_total, _by_topic, _largest, _read_at]


class LagRoundsCollector(Collector):
    def __init__(self, poller: LagPoller):
        self.poller = poller

    def collect(self) -> Iterable:
        yield CounterMetricFamily("groupctl_lag_rounds", "Lag rounds (OffsetFetch, "
                                  "ListOffsets) groupctl made", value=self.poller.rounds)
        yield CounterMetricFamily("groupctl_lag_rounds_failed", "Lag rounds that failed as "
                                  "a whole (no coordinator answered)", value=self.poller.failed)
        seconds = self.poller.last_round_seconds
        if seconds is not None:
            yield GaugeMetricFamily("groupctl_lag_last_round_seconds", "Duration of "
                                    "groupctl's last lag round", value=seconds)


def add_lag_metrics(metrics: WatchMetrics, poller: LagPoller) -> None:
    metrics.add_group_families(LAG_FAMILIES)
    metrics.add_collector(LagRoundsCollector(poller))
