"""Every panel of contrib/grafana/groupctl.json queried against a real Prometheus (Debian's
server, tests/integration/prometheus_support.py) that scrapes a `watch --all --lag
--metrics-port` and a `canary --interval --metrics-port` of the lab broker while a classic
group (librdkafka, range) and a KIP-848 consumer group churn: each query, with the
dashboard's variables at "All" and Grafana's $__rate_interval at 1m, is accepted by
Prometheus and returns a value for at least one of the panel's targets; the variables'
own label queries return the groups. One shared run (a member leaves and another joins
in each group, ~2 min on a loaded machine)."""
from __future__ import annotations

import math
import os
import re
import subprocess
import sys
import threading

import pytest
from describe_support import produce
from grafana_dashboard import panels, promql
from prometheus_support import PrometheusServer, wait_scraped
from waiting import wait_until
from watch_support import WatchProcess, _Lines

from groupctl.lab.consumer import LabConsumer

pytestmark = pytest.mark.broker
HOLD_S = 1.5   # a KIP-848 member's revoke callback: it stays behind its target that long


class SlowRevoke(LabConsumer):
    """Its revoke callback holds (a slow commit): a look catches it behind its target, so
    the round has a slowest member (the slowest-member panel's series)."""

    def _on_revoke(self, consumer, partitions):
        super()._on_revoke(consumer, partitions)
        if partitions:
            threading.Event().wait(HOLD_S)   # the slow revoke itself, not a sync


def _canary(kafka) -> tuple[subprocess.Popen, _Lines]:
    proc = subprocess.Popen([sys.executable, "-m", "groupctl", "-b", kafka.bootstrap,
                             "-o", "ndjson", "canary", "--interval", "1", "--metrics-port", "0"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            bufsize=1, env={**os.environ, "NO_COLOR": "1"})
    return proc, _Lines(proc.stderr, lambda line: line)


def _address(lines: _Lines, what: str) -> str:
    _, line = lines.wait(lambda ln: "serving metrics on" in ln, 60, f"{what}'s metrics address")
    return re.search(r"http://(\S+)/metrics", line).group(1)


def _values(prom: PrometheusServer, expr: str) -> list[float]:
    return list(prom.query(expr).values())


class Missing:
    def __init__(self, titles: list[str]):
        self.titles = titles

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return f"panels without data: {self.titles}"


def test_every_panel_returns_data_from_prometheus(kafka, topic_factory, consumer_factory,
                                                  unique_group, tmp_path):
    classic, kip848 = f"{unique_group}-classic", f"{unique_group}-kip848"
    topics = {classic: topic_factory(4), kip848: topic_factory(4)}
    for topic in topics.values():
        produce(kafka.bootstrap, topic, {p: 5 for p in range(4)})
    watch = WatchProcess(kafka, "--all", "--interval", "0.2", "--lag", "--lag-interval", "1",
                         "--metrics-port", "0")
    canary, canary_err = _canary(kafka)
    prom = None
    slow: list[LabConsumer] = []   # the KIP-848 members (consumer_factory closes the others)
    try:
        targets = [_address(watch.err, "watch"), _address(canary_err, "canary")]
        prom = PrometheusServer.start(tmp_path / "prometheus", targets)
        for target in targets:
            wait_scraped(prom, target)

        def member(g: str, i: int) -> LabConsumer:
            if g == classic:
                return consumer_factory(g, topics[g], name=f"{g}-{i}")
            held = SlowRevoke(kafka.bootstrap, g, [topics[g]], protocol="consumer",
                              name=f"{g}-{i}")
            slow.append(held)
            return held.start()

        members = {g: [member(g, i) for i in range(2)] for g in topics}
        for group_members in members.values():
            for m in group_members:
                m.wait_assigned(60)
        for group_members in members.values():
            group_members[0].close()
        # a join last: the member already in must give partitions up (slowly), so the
        # round has a slowest member (the slowest-member series is the last round's)
        for m in [member(g, 2) for g in topics]:
            m.wait_assigned(60)

        queries = [(p["title"], [promql(t["expr"]) for t in p["targets"]]) for p in panels()]

        def every_panel_has_data():
            missing = [title for title, exprs in queries
                       if not any(not math.isnan(v) for e in exprs for v in _values(prom, e))]
            return not missing or Missing(missing)

        wait_until(every_panel_has_data, 120, "data for every panel", interval=2)
        for name in ("cluster", "group"):
            values = prom.api(f"label/{name}/values", **{"match[]": "groupctl_group_state"})
            assert values, name
        assert {classic, kip848} <= set(prom.api("label/group/values",
                                                 **{"match[]": "groupctl_group_state"}))
    finally:
        for m in slow:
            m.begin_close()
        for m in slow:
            m.close(timeout=30)
        if prom is not None:
            prom.stop()
        if canary.poll() is None:
            canary.terminate()
        canary.wait(30)
        assert watch.stop() == 0, watch.stderr()
