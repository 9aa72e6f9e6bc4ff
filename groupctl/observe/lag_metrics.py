"""`watch --lag --metrics-port`: the lag families of /metrics, read from the reducer at
scrape time (added with WatchMetrics.add_collector).

Names follow kafka-lag-exporter's `kafka_consumergroup_group_*` family (labels `group`,
`topic`, as there; `type` as groupctl's other per-group series):

    kafka_consumergroup_group_sum_lag{group,type}             the group's total lag
    kafka_consumergroup_group_topic_sum_lag{group,type,topic} its lag per topic
    kafka_consumergroup_group_max_lag{group,type}             its largest partition lag
    groupctl_group_lag_timestamp_seconds{group,type}          when that lag was read
    groupctl_lag_rounds_total, groupctl_lag_rounds_failed_total, groupctl_lag_round_duration_seconds

A group with no committed offset has no lag series (its lag is unknown, not 0).
"""
from __future__ import annotations

from typing import Iterable

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from .lag import LagPoller
from .reducer import Reducer


class LagCollector(Collector):
    def __init__(self, reducer: Reducer, poller: LagPoller):
        self.reducer = reducer
        self.poller = poller

    def collect(self) -> Iterable:
        labels = ["group", "type"]
        total = GaugeMetricFamily("kafka_consumergroup_group_sum_lag", "Sum of the group's "
                                  "lag over its partitions with a committed offset "
                                  "(kafka-lag-exporter's name)", labels=labels)
        by_topic = GaugeMetricFamily("kafka_consumergroup_group_topic_sum_lag", "Sum of the "
                                     "group's lag over a topic's partitions "
                                     "(kafka-lag-exporter's name)", labels=labels + ["topic"])
        largest = GaugeMetricFamily("kafka_consumergroup_group_max_lag", "The group's "
                                    "largest partition lag (kafka-lag-exporter's name)",
                                    labels=labels)
        read_at = GaugeMetricFamily("groupctl_group_lag_timestamp_seconds", "Unix time "
                                    "the group's lag was read", labels=labels)
        for name, status in list(self.reducer.groups.items()):
            if status.lag is None or status.lag_at is None:
                continue   # never read, no commits, or gone
            lv = [str(name), status.type or "unknown"]
            total.add_metric(lv, status.lag)
            if status.lag_max is not None:
                largest.add_metric(lv, status.lag_max)
            for topic, lag in list(status.lag_by_topic.items()):
                by_topic.add_metric(lv + [topic], lag)
            read_at.add_metric(lv, status.lag_at)
        yield from (total, by_topic, largest, read_at)
        yield CounterMetricFamily("groupctl_lag_rounds", "Lag rounds (OffsetFetch, "
                                  "ListOffsets) groupctl made", value=self.poller.rounds)
        yield CounterMetricFamily("groupctl_lag_rounds_failed", "Lag rounds that failed as "
                                  "a whole (no coordinator answered)", value=self.poller.failed)
        seconds = self.poller.last_round_seconds
        if seconds is not None:
            yield GaugeMetricFamily("groupctl_lag_round_duration_seconds", "Duration of "
                                    "groupctl's last lag round", value=seconds)
