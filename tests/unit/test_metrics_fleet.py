"""Metrics at fleet size (observe/sinks/metrics_fleet.py): fleet-level series for every group,
per-group series only for the selected ones (kminion's allowed/ignored regexes, exact
names, or by default the first groups seen up to a limit)."""
from __future__ import annotations

import subprocess

import pytest
from prometheus_client.parser import text_string_to_metric_families
from test_cli_offline import assert_usage_error, run
from test_metrics_prometheus import _ev, _member, _promtool

from groupctl.observe.sinks.metrics import WatchMetrics
from groupctl.observe.sinks.metrics_fleet import GroupSelection
from groupctl.observe.state.reducer import Reducer

T0 = 1_700_000_000.0


def test_the_default_selects_the_first_groups_seen_up_to_the_limit_and_keeps_them():
    select = GroupSelection(ignored=["tmp-.*"], limit=2)
    assert [select(g) for g in ("a", "tmp-1", "b", "c", "a", "b")] == [
        True, False, True, False, True, True]
    assert select.selected == 2 and select.decided == 4


def test_named_groups_and_regexes_select_without_limit_and_ignore_wins():
    select = GroupSelection(names=["orders"], allowed=["pay-.*"], ignored=["pay-test"], limit=1)
    assert [select(g) for g in ("orders", "pay-1", "pay-2", "pay-test", "payments", "x")] == [
        True, True, True, False, False, False]
    assert GroupSelection.every_group()("anything") and GroupSelection.every_group().everyone


def _story(metrics: WatchMetrics, reducer: Reducer) -> None:
    for group, kind, state in (("orders", "classic", "Stable"), ("pay", "consumer", "Reconciling"),
                               ("audit", "classic", "PreparingRebalance")):
        for e in (_ev({"event": "snapshot", "state": state, "type": kind, "generation": 3,
                       "group_epoch": 3, "assignment_epoch": 3,
                       "members": [_member("a", [{"topic": "t", "partitions": [0]}])]},
                      group=group),
                  _ev({"event": "rebalance", "from_generation": 2, "to_generation": 3,
                       "duration_ms": 200, "ended": "2023-11-14T22:13:25.000Z",
                       "members_before": ["a"], "members_after": ["a", "b"],
                       "reason": "member b (client b) joined", "unowned_partition_ms": 1500,
                       "unowned_basis": "exact"}, group=group, at=T0 + 1)):
            reducer.apply(e)
            metrics.event(e)


def test_fleet_series_count_every_group_and_per_group_series_only_the_selected():
    reducer = Reducer()
    metrics = WatchMetrics(reducer, followed=lambda: 3, select=GroupSelection(names=["orders"]))
    _story(metrics, reducer)
    text = metrics.render()
    s = {(x.name, frozenset(x.labels.items())): x.value
         for f in text_string_to_metric_families(text) for x in f.samples}
    groups = {dict(k[1]).get("group") for k in s if dict(k[1]).get("group")}
    assert groups == {"orders"}           # pay and audit: fleet-level series only
    c1 = ("cluster", "c1")

    def at(name, *labels):
        return s[(name, frozenset((c1, *labels)))]
    assert at("groupctl_fleet_groups", ("type", "classic"), ("state", "Stable")) == 1
    assert at("groupctl_fleet_groups", ("type", "classic"), ("state", "PreparingRebalance")) == 1
    assert at("groupctl_fleet_groups", ("type", "consumer"), ("state", "Reconciling")) == 1
    assert at("groupctl_fleet_groups_rebalancing", ("type", "classic")) == 1
    assert at("groupctl_fleet_groups_rebalancing", ("type", "consumer")) == 1
    assert at("groupctl_fleet_rebalances_total", ("type", "classic"), ("reason", "member_joined")) == 2
    assert at("groupctl_fleet_rebalances_total", ("type", "consumer"), ("reason", "member_left")) == 0
    assert at("groupctl_fleet_unowned_partition_seconds_total", ("type", "classic"),
              ("basis", "exact")) == 3.0
    assert at("groupctl_groups_without_series") == 2
    done = subprocess.run([_promtool(), "check", "metrics"], input=text, text=True,
                          capture_output=True)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("args,words", [
    (["--metrics-regex", "orders"], ["--metrics-port"]),
    (["--metrics-port", "0", "--metrics-regex", "(orders"], ["bad metrics regex", "(orders"]),
])
def test_metrics_selection_usage_errors_exit_2(args, words):
    assert_usage_error(*run("-b", "localhost:1", "watch", "orders", *args), *words)


@pytest.mark.parametrize("select,wanted", [
    (GroupSelection(names=["orders"]), {"orders"}),
    (GroupSelection(ignored=["pay"]), {"orders", "audit"}),     # --all: the default limit
    (GroupSelection(limit=2), {"orders", "pay"}),                # the first two seen
])
def test_lag_series_follow_the_selection(select, wanted):
    """watch --lag reads every followed group's lag (its rebalance events need it), but
    only the selected groups get lag series, like their other per-group series."""
    from groupctl.observe.sources.lag import GroupLag, LagPoller
    from groupctl.observe.sinks.lag_metrics import add_lag_metrics
    from groupctl.observe.story.lag_rounds import LagRounds

    reducer = Reducer()
    metrics = WatchMetrics(reducer, followed=lambda: 3, select=select)
    add_lag_metrics(metrics, LagPoller(None, lambda: [],  # type: ignore[arg-type]  # never run
                                       on_round=lambda at, reads: None))
    _story(metrics, reducer)
    rounds = LagRounds(reducer, deliver=lambda e: None, hurry=lambda g: None)
    rounds.round_done(T0 + 2, {g: GroupLag(g, T0 + 2, T0 + 3, {("t", 0): 7})
                               for g in ("orders", "pay", "audit", "never-seen")})
    lagged = {x.labels["group"] for f in text_string_to_metric_families(metrics.render())
              if f.name.startswith("groupctl_group_") and "lag" in f.name for x in f.samples}
    assert lagged == wanted


def test_kept_blocks_give_the_text_built_afresh_through_changes_and_departures():
    """Groups change (their lines move to the last block), leave (their blocks shrink, then
    merge): at every scrape the text and its gzip are those of the same state built from
    nothing, line for line (the order of groups within a family is free)."""
    import gzip
    import random

    from groupctl.observe.sinks.metrics_blocks import BLOCK
    from groupctl.observe.sinks.metrics_server import _Gzip

    rng = random.Random(34)
    reducer = Reducer()
    metrics = WatchMetrics(reducer, followed=lambda: len(reducer.groups))
    zipper = _Gzip()
    names = [f"g{i:04d}" for i in range(BLOCK * 6)]

    def tell(group: str, at: float, members: int) -> None:
        e = _ev({"event": "snapshot", "state": "Stable", "type": "classic", "generation": at,
                 "members": [_member(f"m{j}", []) for j in range(members)]},
                group=group, at=T0 + at)
        reducer.apply(e)
        metrics.event(e)

    for g in names:
        tell(g, 1, 1)
    for step in range(2, 8):
        for g in rng.sample(sorted(n for n in names if n in reducer.groups), BLOCK):
            tell(g, step, step)
        if step >= 4:   # groups forgotten: blocks thin out until neighbours merge
            for g in rng.sample(sorted(n for n in names if n in reducer.groups), BLOCK):
                del reducer.groups[g]
        afresh = WatchMetrics(reducer, followed=metrics.followed)
        afresh.counts, afresh.cluster, afresh.fleet = metrics.counts, metrics.cluster, metrics.fleet
        scrape = metrics.scrape()
        text = scrape.text().decode()
        assert sorted(text.splitlines()) == sorted(afresh.render().splitlines())
        assert gzip.decompress(zipper.body(scrape)).decode() == text
        assert len(metrics._blocks.blocks) <= 2 * (len(reducer.groups) // BLOCK + 1)
    assert {k for k in metrics._blocks.where} == {g for g in names if g in reducer.groups}


def test_a_scrape_keeps_its_groups_lines_compressed_only():
    """At 100,000 groups the text is hundreds of megabytes: what the metrics keep of it
    between scrapes (the blocks' lines) is their deflate, not the text (the text was kept
    whole as well: 181 MB at 100,000 groups); the plain text and the gzip served are
    still those of the state built afresh, before and after a change."""
    import gc
    import gzip
    import tracemalloc

    from groupctl.observe.sinks.metrics_blocks import BLOCK
    from groupctl.observe.sinks.metrics_server import _Gzip

    reducer = Reducer()
    metrics = WatchMetrics(reducer, followed=lambda: len(reducer.groups))
    zipper = _Gzip()

    def tell(group: str, at: float) -> None:
        e = _ev({"event": "snapshot", "state": "Stable", "type": "classic", "generation": at,
                 "members": [_member(f"member-{j}", [{"topic": "t", "partitions": [j]}])
                             for j in range(3)]}, group=group, at=T0 + at)
        reducer.apply(e)
        metrics.event(e)

    gc.collect()
    tracemalloc.start()
    try:
        for i in range(BLOCK * 6):
            tell(f"orders-service-{i:05d}", 1)
        text = metrics.scrape().text()
        size = len(text)
        del text
        gc.collect()
        sinks = tracemalloc.Filter(True, "*/observe/sinks/*")   # the metrics' own
        kept = sum(s.size for s in tracemalloc.take_snapshot().filter_traces(
            [sinks]).statistics("filename"))
    finally:
        tracemalloc.stop()
    assert kept < size * 3 / 4, (kept, size)   # counters and all: the text was kept whole
    for step in (None, 2):
        if step is not None:
            tell("orders-service-00100", step)
        afresh = WatchMetrics(reducer, followed=metrics.followed)
        afresh.counts, afresh.cluster, afresh.fleet = metrics.counts, metrics.cluster, metrics.fleet
        scrape = metrics.scrape()
        assert sorted(scrape.text().decode().splitlines()) == sorted(
            afresh.render().splitlines())
        assert gzip.decompress(zipper.body(scrape)) == scrape.text()


def test_a_groups_lines_are_built_at_its_event_not_at_the_first_scrape(monkeypatch):
    """The first scrape of a fleet (100,000 groups: seconds of building) builds no
    group's lines: each was built and placed as its event came, full blocks compressed as
    they filled; a lag read without an event is built at the scrape."""
    from groupctl.observe.sinks import metrics_groups
    from groupctl.observe.sinks.metrics_blocks import BLOCK

    reducer = Reducer()
    metrics = WatchMetrics(reducer, followed=lambda: len(reducer.groups))
    for i in range(BLOCK * 2 + 3):
        e = _ev({"event": "snapshot", "state": "Stable", "type": "classic",
                 "members": [_member("a", [{"topic": "t", "partitions": [0]}])]},
                group=f"g{i:04d}")
        reducer.apply(e)
        metrics.event(e)
    built: list[str] = []
    real = metrics_groups._Kept.__init__
    monkeypatch.setattr(metrics_groups._Kept, "__init__",
                        lambda self, name, *a: built.append(name) or real(self, name, *a))
    text = metrics.render()
    assert built == [] and 'group="g0130"' in text
    metrics.touch("g0007")
    assert 'group="g0007"' in metrics.render() and built == ["g0007"]


def test_an_events_timestamp_is_read_as_strptime_reads_it():
    from datetime import datetime, timezone

    from groupctl.observe.state.reducer import _seconds

    for ts in ("2023-11-14T22:13:25.000Z", "2026-02-28T23:59:59.999Z", "1999-12-31T00:00:00.5Z"):
        assert _seconds(ts) == datetime.strptime(ts, "%Y-%m-%dT%H:%M:%S.%fZ").replace(
            tzinfo=timezone.utc).timestamp()
    with pytest.raises(ValueError):
        _seconds("2023-11-14T22:13:25.00xZ")


def test_a_fleets_scrape_is_built_ahead_once_its_changes_come_to_rest(monkeypatch):
    """Many groups changed and no more coming (a fleet's first looks told): the server
    builds the scrape in its own thread, so the next scrape builds no group's lines; then
    says so (the watch freezes what it built: startup.settled)."""
    import time

    from groupctl.observe.sinks import metrics_groups, metrics_server

    monkeypatch.setattr(metrics_server, "WARM_AT", 20)
    monkeypatch.setattr(metrics_server, "WARM_EVERY", 0.05)
    reducer = Reducer()
    metrics = WatchMetrics(reducer, followed=lambda: len(reducer.groups))
    server = metrics_server.MetricsServer(metrics, "127.0.0.1", 0)
    settled: list[int] = []
    server.on_warm = lambda: settled.append(server.warmed)
    server.start()
    try:
        for i in range(30):
            e = _ev({"event": "snapshot", "state": "Empty", "type": "classic", "members": []},
                    group=f"g{i:02d}")
            reducer.apply(e)
            metrics.event(e)
        deadline = time.monotonic() + 30
        while server.warmed == 0 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert server.warmed == 1 and settled == [0]
        built: list[str] = []
        real = metrics_groups._Kept.__init__
        monkeypatch.setattr(metrics_groups._Kept, "__init__",
                            lambda self, name, *a: built.append(name) or real(self, name, *a))
        assert 'group="g29"' in metrics.render() and built == []
    finally:
        server.close()
