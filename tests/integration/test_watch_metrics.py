"""`groupctl watch --metrics-port` on the lab broker: what Prometheus would scrape equals
what the broker says. Two librdkafka consumers, then a third: the group's members and state
series equal DescribeGroups (the broker's own answer; it has no generation, so neither
has the scrape of a classic group); the rebalances counter goes up by exactly the number
of "Stabilized group G generation N" lines the broker logged between the two scrapes;
/healthz is 200. Through a broker restart (a lab of its own): groupctl_up goes 0 and
back to 1, /healthz 503 and back to 200, and no counter goes down."""
from __future__ import annotations

import re
import urllib.error
import urllib.request

import pytest
from prometheus_client.parser import text_string_to_metric_families

from probe_support import describe, stabilized
from waiting import wait_until
from watch_support import WatchProcess

pytestmark = pytest.mark.broker


class Pending:
    """What a wait saw instead (falsy)."""

    def __init__(self, seen):
        self.seen = seen

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return repr(self.seen)


class Scrape(dict):
    """One /metrics scrape of the group: {name or (name, state): value}."""

    def __repr__(self) -> str:
        return f"Scrape({dict(self)})"


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def _scrape(base: str, group: str) -> Scrape:
    code, text = _get(base + "/metrics")
    assert code == 200, text
    out = Scrape()
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.labels.get("group") == group:
                out["type"] = s.labels["type"]   # "unknown" while the group is missing
                key = (s.name, s.labels["state"]) if "state" in s.labels else s.name
                if "reason" in s.labels:   # rebalances by reason kind: their sum
                    out[key] = out.get(key, 0) + s.value
                else:
                    out[key] = s.value
            elif not s.labels:
                out[s.name] = s.value
    return out


def _settled(base: str, kafka, group: str, members: int):
    """A scrape showing the group Stable with `members` members, the broker's
    DescribeGroups saying the same at that moment, and the broker log's stabilized
    generations."""
    def check():
        s = _scrape(base, group)
        gens = stabilized(kafka, group)
        d = describe(kafka, group)
        seen = Pending((s, gens, d and (d["group_state"], len(d["members"]))))
        if not gens or d is None or d["group_state"] != "Stable" or len(d["members"]) != members:
            return seen
        if (s.get(("groupctl_group_state", "Stable")) == 1 and s.get("type") == "classic"
                and s.get("groupctl_group_members") == members):
            return s, d, gens
        return seen
    return wait_until(check, 60, f"a scrape of {group} Stable with {members} members")


def test_metrics_equal_the_broker(kafka, topic_factory, consumer_factory, unique_group):
    topic, g = topic_factory(6), unique_group
    watch = WatchProcess(kafka, g, "--interval", "0.2", "--metrics-port", "0")
    try:
        _, line = watch.err.wait(lambda ln: "serving metrics on" in ln, 30, "the metrics address")
        base = re.search(r"(http://\S+)/metrics", line).group(1)
        # the first look before the group forms (a group first seen Stable is a snapshot,
        # not a rebalance: under load the watch's first round can come late)
        watch.wait_event(lambda e: e["group"] == g, 60, "the first look at the group")
        a = consumer_factory(g, topic, name=f"{g}-a")
        b = consumer_factory(g, topic, name=f"{g}-b")
        a.wait_assigned()
        b.wait_assigned()
        s1, d1, gens1 = _settled(base, kafka, g, 2)
        assert sorted(m["member_id"] for m in d1["members"]) == sorted([a.member_id, b.member_id])
        # DescribeGroups has no generation: a classic group's generation is not known to
        # the describe source (a probe or the coordinator's records would know it)
        assert "groupctl_group_generation" not in s1 and "groupctl_group_epoch" not in s1
        assert s1[("groupctl_group_state", "PreparingRebalance")] == 0
        assert s1[("groupctl_group_state", "CompletingRebalance")] == 0
        assert s1["groupctl_up"] == 1 and s1["groupctl_groups_followed"] == 1
        assert s1["groupctl_describe_rounds_failed_total"] == 0
        assert s1["groupctl_describe_round_duration_seconds_count"] >= 1
        assert s1["groupctl_group_rebalances_total"] >= 1
        assert s1["groupctl_group_last_rebalance_timestamp_seconds"] > 0
        assert _get(base + "/healthz") == (200, "ok\n")

        c = consumer_factory(g, topic, name=f"{g}-c")
        c.wait_assigned()
        s2, d2, gens2 = _settled(base, kafka, g, 3)
        assert c.member_id in {m["member_id"] for m in d2["members"]}
        assert gens2[:len(gens1)] == gens1 and len(gens2) > len(gens1)
        grew = s2["groupctl_group_rebalances_total"] - s1["groupctl_group_rebalances_total"]
        assert grew == len(gens2) - len(gens1), (gens1, gens2, s1, s2)
        assert (s2["groupctl_group_rebalance_duration_seconds_count"]
                == s2["groupctl_group_rebalances_total"])
        assert (s2["groupctl_group_last_rebalance_timestamp_seconds"]
                >= s1["groupctl_group_last_rebalance_timestamp_seconds"])
        assert _get(base + "/healthz")[0] == 200
    finally:
        code = watch.stop()
    assert code == 0, watch.stderr()


@pytest.fixture(scope="module")
def own_lab(tmp_path_factory):
    import os

    from groupctl.lab.cluster import Lab

    lab = Lab.up(name=f"pytest-{os.getpid()}-metrics-restart", brokers=1,
                 root=tmp_path_factory.mktemp("lab-metrics"), tie_to_parent=True)
    try:
        yield lab
    finally:
        lab.down()


@pytest.mark.slow
def test_a_broker_restart_takes_up_to_0_and_back_counters_never_fall(own_lab, consumer_factory,
                                                                     unique_group):
    from groupctl.lab.workload import create_topic

    g, topic = unique_group, f"t-{unique_group}"
    create_topic(own_lab.bootstrap, topic, 4, 1, None)
    watch = WatchProcess(own_lab, g, "--interval", "0.2", "--timeout", "3", "--metrics-port", "0")
    try:
        _, line = watch.err.wait(lambda ln: "serving metrics on" in ln, 30, "the metrics address")
        base = re.search(r"(http://\S+)/metrics", line).group(1)
        watch.wait_event(lambda e: e["group"] == g, 60, "the first look at the group")
        a = consumer_factory(g, topic, cluster=own_lab, name=f"{g}-a")
        a.wait_assigned()
        before = wait_until(lambda: (s := _scrape(base, g)).get("groupctl_group_members") == 1
                            and s.get("groupctl_group_rebalances_total") == 1 and s, 30,
                            "the group's first rebalance")
        assert before["groupctl_up"] == 1 and _get(base + "/healthz")[0] == 200
        own_lab.stop_node(1)
        # /healthz says what groupctl_up says: 503 from the first failed round
        down = wait_until(lambda: (s := _scrape(base, g))["groupctl_up"] == 0
                          and s["groupctl_describe_rounds_failed_total"] >= 1
                          and _get(base + "/healthz")[0] == 503 and s, 90,
                          "groupctl_up 0, failed rounds counted, /healthz 503")
        own_lab.start_node(1)
        after = wait_until(lambda: (s := _scrape(base, g))["groupctl_up"] == 1 and s, 90,
                           "groupctl_up 1 again")
        assert _get(base + "/healthz")[0] == 200
        for name in ("groupctl_group_rebalances_total", "groupctl_describe_rounds_failed_total",
                     "groupctl_describe_round_duration_seconds_count"):
            assert before[name] <= down[name] <= after[name], (name, before, down, after)
    finally:
        code = watch.stop()
    assert code == 0, watch.stderr()


def test_healthz_is_503_from_the_first_round_a_frozen_broker_fails(own_lab, unique_group):
    """A broker that stops answering (SIGSTOP: its connections stay open, nothing comes
    back): /healthz turns 503 with the first failed round, as groupctl_up falls (it stayed
    200 through three failed rounds, 24 s at the default --timeout)."""
    import os
    import signal

    watch = WatchProcess(own_lab, unique_group, "--interval", "0.2", "--timeout", "2",
                         "--metrics-port", "0")
    pid = own_lab.nodes[0].pid
    try:
        _, line = watch.err.wait(lambda ln: "serving metrics on" in ln, 30, "the metrics address")
        base = re.search(r"(http://\S+)/metrics", line).group(1)
        wait_until(lambda: _get(base + "/healthz")[0] == 200, 30, "/healthz 200")
        os.kill(pid, signal.SIGSTOP)
        try:
            def unhealthy():
                s = _scrape(base, unique_group)   # before /healthz: its count is no later
                return _get(base + "/healthz")[0] == 503 and s
            s = wait_until(unhealthy, 60, "/healthz 503 while the broker is frozen")
            assert s["groupctl_describe_rounds_failed_total"] <= 1, s
        finally:
            os.kill(pid, signal.SIGCONT)
        wait_until(lambda: _get(base + "/healthz")[0] == 200, 60, "/healthz 200 again")
        assert _scrape(base, unique_group)["groupctl_up"] == 1
    finally:
        code = watch.stop()
    assert code == 0, watch.stderr()
