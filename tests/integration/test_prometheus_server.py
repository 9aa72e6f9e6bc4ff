"""`groupctl watch --metrics-port` scraped by a real Prometheus server (Debian's
/usr/bin/prometheus, every second) while real librdkafka consumers churn on the lab
broker; everything asked of Prometheus through its HTTP API, and checked against what
groupctl did not write: the broker's log and its DescribeGroups.

- `increase(groupctl_group_rebalances_total{group=G}[window])` (and the raw counter delta)
  equals the number of "Stabilized group G generation N" lines the broker logged in the
  window; every rebalance has a reason kind.
- The state series follow the group: one state at 1 per scrape; PreparingRebalance seen
  only inside the broker's own "Preparing to rebalance" .. "Stabilized" windows (one of
  them held open ~10 s by a member that stopped, SIGSTOP, until its session expired),
  Stable never deep inside one; Empty once every member left.
- A broker restart: groupctl_up goes 0 then 1, Prometheus's own `up` of groupctl stays 1
  (the monitor stays scrapable), no counter goes down (`resets()` is 0), one lost contact.
"""
from __future__ import annotations

import os
import re
import signal
import time
from datetime import datetime

import pytest

from probe_support import describe
from prometheus_support import PrometheusServer, wait_scraped
from waiting import wait_until
from watch_support import KillableConsumer, WatchProcess

pytestmark = pytest.mark.broker

SLACK = 3.0   # s: a scrape shows groupctl's last describe round (every 0.2 s) of the broker
TOTAL = 'sum(groupctl_group_rebalances_total{{group="{g}"}})'


def _start_watch(kafka, group: str, *extra: str) -> tuple[WatchProcess, str]:
    watch = WatchProcess(kafka, group, "--interval", "0.2", "--metrics-port", "0", *extra)
    _, line = watch.err.wait(lambda ln: "serving metrics on" in ln, 30, "the metrics address")
    # its first look (the group missing) before any consumer: the group's forming is then
    # a rebalance it sees, as the broker's first Stabilized line
    watch.wait_event(lambda e: e["group"] == group, 60, "the first look at the group")
    return watch, re.search(r"http://(\S+)/metrics", line).group(1)


def _stabilized(kafka, group: str) -> list[tuple[float, int]]:
    """(time, generation) of each "Stabilized group G generation N" line."""
    return [(t, int(m.group(1))) for t, m in _log(kafka, rf"Stabilized group {re.escape(group)} "
                                                          r"generation (\d+) ")]


def _preparing(kafka, group: str) -> list[float]:
    return [t for t, _ in _log(kafka, rf"Preparing to rebalance group {re.escape(group)} ")]


def _log(kafka, pattern: str):
    line = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\] .*?" + pattern, re.M)
    text = kafka.log_file.read_text(errors="replace")
    for m in line.finditer(text):   # the broker logs local time (the machine's zone)
        at = datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S,%f").timestamp()
        yield at, re.search(pattern, m.group(0))


class Seen:
    """What a wait saw instead (falsy)."""

    def __init__(self, **seen):
        self.seen = seen

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return repr(self.seen)


def _settled(prom: PrometheusServer, kafka, group: str, members: int,
             watch: WatchProcess | None = None) -> tuple[float, int]:
    """A Prometheus scrape taken after the broker said the group is Stable with `members`
    members and its log's stabilized count equalled the Prometheus counter: (the scrape's
    time, the count)."""
    def broker_and_prometheus_agree():
        d, count = describe(kafka, group), len(_stabilized(kafka, group))
        now = prom.query(TOTAL.format(g=group))
        total = next(iter(now.values()), None)
        if d["group_state"] != "Stable" or len(d["members"]) != members or total != count:
            return Seen(state=d["group_state"], members=len(d["members"]), log=count,
                        prometheus=total, told=watch and [
                            (e["ts"][11:], e["event"], e.get("state") or "")
                            for e in watch.events], err=watch and watch.stderr())
        return time.time(), count

    since, count = wait_until(broker_and_prometheus_agree, 120,
                              f"{group} Stable with {members} members, counted by Prometheus")
    at = _scrape_after(prom, since)
    assert len(_stabilized(kafka, group)) == count, "the group rebalanced meanwhile"
    return at, count


def _scrape_after(prom: PrometheusServer, since: float) -> float:
    """The time of Prometheus's first scrape of groupctl after `since`."""
    def a_later_scrape():
        later = [t for series in prom.samples("groupctl_up", 30).values() for t, _ in series
                 if t > since]
        return later and min(later)
    return wait_until(a_later_scrape, 30, "a scrape after the group settled")


def _states(prom: PrometheusServer, group: str, start: float, end: float) -> dict[float, list]:
    """{scrape time: [states at 1]} between start and end (inclusive)."""
    out: dict[float, list] = {}
    series = prom.samples(f'groupctl_group_state{{group="{group}"}}', int(end - start) + 5, at=end)
    for labels, values in series.items():
        state = dict(labels)["state"]
        for t, v in values:
            if start <= t <= end:
                out.setdefault(t, [])
                if v == 1:
                    out[t].append(state)
    return out


def test_prometheus_counts_what_the_broker_stabilized(kafka, topic_factory, consumer_factory,
                                                      unique_group, tmp_path):
    topic, g = topic_factory(6), unique_group
    watch, target = _start_watch(kafka, g)
    prom = stopped = None
    try:
        prom = PrometheusServer.start(tmp_path / "prometheus", [target])
        wait_scraped(prom, target)
        a = consumer_factory(g, topic, name=f"{g}-a")
        a.wait_assigned(60)
        t1, c1 = _settled(prom, kafka, g, 1, watch)

        # churn, one change at a time: a describe watch sees a generation that lasts
        # longer than its interval (two closer together are one rebalance to it)
        b = consumer_factory(g, topic, name=f"{g}-b")
        b.wait_assigned(60)
        _settled(prom, kafka, g, 2, watch)
        c = consumer_factory(g, topic, name=f"{g}-c")
        c.wait_assigned(60)
        _settled(prom, kafka, g, 3, watch)
        a.close()
        _settled(prom, kafka, g, 2, watch)
        stopped = KillableConsumer(kafka.bootstrap, g, topic, f"{g}-d", session_ms=10000)
        stopped.wait_assigned(60)
        _settled(prom, kafka, g, 3, watch)
        # a member that stops holds the next rebalance open until its session expires
        os.kill(stopped.proc.pid, signal.SIGSTOP)
        e = consumer_factory(g, topic, name=f"{g}-e")
        e.wait_assigned(90)
        t2, c2 = _settled(prom, kafka, g, 3, watch)
        assert c2 - c1 >= 5, (c1, c2)

        # both ends on a scrape: no extrapolation (Prometheus 2: both ends of a range are in)
        window = f"{round((t2 - t1) * 1000)}ms"
        increase = prom.query(f'sum(increase(groupctl_group_rebalances_total{{group="{g}"}}'
                              f'[{window}]))', at=t2)
        assert list(increase.values()) == [c2 - c1], (increase, c1, c2)
        before, after = (prom.query(TOTAL.format(g=g), at=t) for t in (t1, t2))
        assert list(after.values())[0] - list(before.values())[0] == c2 - c1
        by_reason = prom.query(f'sum by (reason) (increase(groupctl_group_rebalances_total'
                               f'{{group="{g}"}}[{window}]))', at=t2)
        kinds = {dict(k)["reason"]: v for k, v in by_reason.items() if v}
        assert sum(kinds.values()) == c2 - c1 and "unknown" not in kinds, kinds
        assert kinds.get("member_joined", 0) >= 3 and kinds.get("member_left", 0) >= 1, kinds

        _states_follow_the_broker(prom, kafka, g, t1, t2)

        for consumer in (b, c, e):
            consumer.begin_close()
        stopped.kill()
        wait_until(lambda: describe(kafka, g)["group_state"] == "Empty", 60, "the group Empty")
        wait_until(lambda: prom.query(f'groupctl_group_state{{group="{g}",state="Empty"}} == 1')
                   or None, 60, "Prometheus showing the group Empty")
        assert list(prom.query(f'sum(groupctl_group_state{{group="{g}"}})').values()) == [1.0]
    finally:
        if stopped is not None:
            stopped.kill()
        if prom is not None:
            prom.stop()
        code = watch.stop()
    assert code == 0, watch.stderr()


def _states_follow_the_broker(prom, kafka, g: str, t1: float, t2: float) -> None:
    states = _states(prom, g, t1, t2)
    assert all(len(s) == 1 for s in states.values()), states   # one current state a scrape
    assert states[t1] == ["Stable"] and states[t2] == ["Stable"], states
    stable_at = [t for t, _ in _stabilized(kafka, g)]
    windows = [(p, min([s for s in stable_at if s >= p], default=float("inf")))
               for p in _preparing(kafka, g) if t1 - 60 <= p <= t2]
    rebalancing = [t for t, s in states.items() if s[0] in ("PreparingRebalance",
                                                            "CompletingRebalance")]
    held_open = [(p, s) for p, s in windows if s - p >= 5]
    assert held_open, f"no rebalance held open by the stopped member: {windows}"
    assert sum(1 for t in rebalancing if held_open[0][0] <= t <= held_open[0][1]) >= 2, \
        (held_open, sorted(states.items()))
    for t in rebalancing:   # seen only while the broker rebalanced (shown up to SLACK late)
        assert any(p <= t <= s + SLACK for p, s in windows), (t, windows)
    for t, s in states.items():   # Stable never deep inside a rebalance
        if s == ["Stable"]:
            assert not any(p + SLACK < t < s_ for p, s_ in windows), (t, windows)


@pytest.mark.slow
def test_prometheus_through_a_broker_restart(kafka, topic_factory, consumer_factory,
                                             unique_group, tmp_path):
    topic, g = topic_factory(4), unique_group
    watch, target = _start_watch(kafka, g, "--timeout", "3")
    prom = None
    try:
        prom = PrometheusServer.start(tmp_path / "prometheus", [target])
        wait_scraped(prom, target)
        a = consumer_factory(g, topic, name=f"{g}-a")
        a.wait_assigned(60)
        t1, _ = _settled(prom, kafka, g, 1, watch)
        kafka.stop_node(1)
        try:
            wait_until(lambda: prom.query("groupctl_up == 0") or None, 90,
                       "Prometheus seeing groupctl_up 0")
        finally:
            kafka.start_node(1, tie_to_parent=True)
        wait_until(lambda: prom.query("groupctl_up == 1") or None, 120,
                   "Prometheus seeing groupctl_up 1 again")
        a.wait_assigned(60)
        t2 = _scrape_after(prom, time.time())

        span = int(t2 - t1) + 2
        ups = [v for t, v in next(iter(prom.samples("groupctl_up", span, at=t2).values()))
               if t >= t1]
        assert ups[0] == 1 and ups[-1] == 1 and 0 in ups, ups
        first_0 = ups.index(0)
        assert ups[first_0:].index(1) > 0, ups           # 1, then 0, then 1 again
        scraped = [v for t, v in next(iter(prom.samples('up{job="groupctl"}', span,
                                                         at=t2).values())) if t >= t1]
        assert set(scraped) == {1.0}, scraped            # the monitor itself stayed up
        window = f"{round((t2 - t1) * 1000)}ms"
        for counter in (f'groupctl_group_rebalances_total{{group="{g}"}}',
                        "groupctl_describe_rounds_failed_total", "groupctl_contact_lost_total",
                        "groupctl_describe_round_duration_seconds_count"):
            resets = prom.query(f"sum(resets({counter}[{window}]))", at=t2)
            assert list(resets.values()) == [0.0], (counter, resets)
            for series in prom.samples(counter, span, at=t2).values():
                values = [v for _, v in series]
                assert values == sorted(values), (counter, values)
        lost = prom.query(f"increase(groupctl_contact_lost_total[{window}])", at=t2)
        assert list(lost.values())[0] >= 1, lost
        failed = prom.query(f"increase(groupctl_describe_rounds_failed_total[{window}])", at=t2)
        assert list(failed.values())[0] >= 1, failed
    finally:
        if prom is not None:
            prom.stop()
        code = watch.stop()
    assert code == 0, watch.stderr()
