"""watch --metrics-port's exporter (observe/sinks/metrics.py) without a broker: a reducer fed §4
events, scraped over HTTP; the exposition checked by `promtool check metrics` and the alert
rules of contrib/prometheus by `promtool test rules`. promtool comes from Debian's
prometheus package (./dev setup installs it): missing, these tests fail, never skip."""
from __future__ import annotations

import shutil
import subprocess
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from groupctl.events import envelope
from groupctl.observe.sinks.metrics import GROUP_FAMILIES, WatchMetrics
from groupctl.observe.sinks.metrics_server import MetricsServer
from groupctl.observe.story.reasons import REASON_KINDS, explain, kind as reason_kind
from groupctl.observe.state.reducer import Reducer

RULES = Path(__file__).resolve().parents[2] / "contrib" / "prometheus"
T0 = 1_700_000_000.0


def _promtool() -> str:
    path = shutil.which("promtool")
    assert path, "promtool is missing: ./dev setup installs Debian's prometheus package"
    return path


def _ev(body: dict, group: str = "orders", at: float = T0) -> dict:
    return envelope(body, group=group, cluster="c1", source="describe", at=at)


def _member(mid: str, asg, target=None) -> dict:
    return {"member_id": mid, "client_id": mid, "assignment": asg, "target_assignment": target}


@pytest.fixture
def exporter():
    reducer = Reducer()
    metrics = WatchMetrics(reducer, followed=lambda: len(reducer.groups))
    server = MetricsServer(metrics, "127.0.0.1", 0)
    server.start()

    def feed(e: dict) -> None:   # as watch does: the reducer folds first, then the metrics
        reducer.apply(e)
        metrics.event(e)
    yield server, feed
    server.close()


def _get(server, path: str) -> tuple[int, str]:
    host, port = server.address
    try:
        with urllib.request.urlopen(f"http://{host}:{port}{path}", timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def _samples(text: str) -> dict:
    return {(s.name, frozenset(s.labels.items())): s.value
            for f in text_string_to_metric_families(text) for s in f.samples}


def _k(name: str, labels: tuple = ()) -> tuple:
    return (name, frozenset(labels))


def _classic_story(feed):
    feed(_ev({"event": "snapshot", "state": "Stable", "type": "classic", "protocol": "range",
              "generation": 3, "members": [_member("a", [{"topic": "t", "partitions": [0]}])]}))
    for gen, dur, reason in ((4, 1500, "member b (client b) joined"),
                             (5, 250, "rebalance with no membership change")):
        feed(_ev({"event": "rebalance", "from_generation": gen - 1, "to_generation": gen,
                  "duration_ms": dur, "ended": "2023-11-14T22:13:25.000Z",
                  "members_before": ["a"], "members_after": ["a", "b"], "reason": reason},
                 at=T0 + gen))


C1 = (("cluster", "c1"),)
ORDERS = (*C1, ("group", "orders"), ("type", "classic"))
PAY = (*C1, ("group", "pay"), ("type", "consumer"))


def test_scrape_reads_the_reducer(exporter):
    server, feed = exporter
    _classic_story(feed)
    feed(_ev({"event": "snapshot", "state": "Reconciling", "type": "consumer",
              "group_epoch": 7, "assignment_epoch": 7,
              "members": [_member("x", [{"topic": "t", "partitions": [0, 1]}],
                                  [{"topic": "t", "partitions": [0]}]),
                          _member("y", [{"topic": "t", "partitions": [1]}],
                                  [{"topic": "t", "partitions": [1]}])]}, group="pay",
             at=T0 + 7))
    code, text = _get(server, "/metrics")
    assert code == 200
    s = _samples(text)
    o, p = ORDERS, PAY
    assert s[_k("groupctl_group_state", (*o, ("state", "Stable")))] == 1
    assert s[_k("groupctl_group_state", (*o, ("state", "PreparingRebalance")))] == 0
    assert s[_k("groupctl_group_state", (*p, ("state", "Reconciling")))] == 1
    assert s[_k("groupctl_group_state_entered_timestamp_seconds", (*o, ("state", "Stable")))] == T0
    assert s[_k("groupctl_group_state_entered_timestamp_seconds",
                (*p, ("state", "Reconciling")))] == T0 + 7
    assert s[_k("groupctl_group_generation", o)] == 5       # the rebalances' to_generation
    assert s[_k("groupctl_group_members", o)] == 2
    by_reason = {dict(k[1])["reason"]: v for k, v in s.items()
                 if k[0] == "groupctl_group_rebalances_total" and dict(k[1])["group"] == "orders"}
    assert by_reason == {**{kind: 0 for kind in REASON_KINDS},
                         "member_joined": 1, "no_membership_change": 1}
    assert s[_k("groupctl_group_rebalance_duration_seconds_sum", o)] == 1.75
    assert s[_k("groupctl_group_rebalance_duration_seconds_count", o)] == 2
    assert s[_k("groupctl_group_rebalance_duration_seconds_bucket", (*o, ("le", "0.25")))] == 1
    assert s[_k("groupctl_group_last_rebalance_timestamp_seconds", o)] == 1700000005.0
    assert s[_k("groupctl_group_epoch", p)] == 7
    assert s[_k("groupctl_group_assignment_epoch", p)] == 7
    assert s[_k("groupctl_group_members_behind_target", p)] == 1   # x still holds t-1
    assert _k("groupctl_group_generation", p) not in s
    assert s[_k("groupctl_groups_followed", ())] == 2
    # pay has not rebalanced: its counters are there, at 0 (increase() counts the first)
    assert {dict(k[1])["reason"] for k, v in s.items() if v == 0 and dict(k[1]).get("group")
            == "pay" and k[0] == "groupctl_group_rebalances_total"} == set(REASON_KINDS)
    assert not any(k[0].startswith("groupctl_group_rebalance_duration") and
                   dict(k[1])["group"] == "pay" for k in s)


def test_state_entered_moves_with_the_state_only(exporter):
    server, feed = exporter
    _classic_story(feed)
    entered = "groupctl_group_state_entered_timestamp_seconds"
    feed(_ev({"event": "state", "state": "PreparingRebalance", "previous": "Stable"},
             at=T0 + 20))
    feed(_ev({"event": "member_joined", "member_id": "c"}, at=T0 + 21))
    s = _samples(_get(server, "/metrics")[1])
    assert {k: v for k, v in s.items() if k[0] == entered} == {
        _k(entered, (*ORDERS, ("state", "PreparingRebalance"))): T0 + 20}
    feed(_ev({"event": "state", "state": "Stable", "previous": "PreparingRebalance"},
             at=T0 + 30.5))
    s = _samples(_get(server, "/metrics")[1])
    assert s[_k(entered, (*ORDERS, ("state", "Stable")))] == T0 + 30.5


def test_a_type_change_starts_the_new_types_counters_at_0(exporter):
    server, feed = exporter
    _classic_story(feed)
    feed(_ev({"event": "type_changed", "type": "consumer", "previous": "classic"}, at=T0 + 40))
    s = _samples(_get(server, "/metrics")[1])
    total = "groupctl_group_rebalances_total"
    assert sum(v for k, v in s.items() if k[0] == total and ("type", "classic") in k[1]) == 2
    consumer = {dict(k[1])["reason"]: v for k, v in s.items()
                if k[0] == total and ("type", "consumer") in k[1]}
    assert consumer == {kind: 0 for kind in REASON_KINDS}
    feed(_ev({"event": "rebalance", "from_generation": None, "to_generation": None,
              "duration_ms": 40, "reason": "member z left or expired"}, at=T0 + 41))
    s = _samples(_get(server, "/metrics")[1])
    assert s[_k(total, (*C1, ("group", "orders"), ("type", "consumer"),
                        ("reason", "member_left")))] == 1
    assert sum(v for k, v in s.items() if k[0] == total and ("type", "classic") in k[1]) == 2


@pytest.mark.parametrize("reason, kind", [
    (None, "unknown"),
    ("", "unknown"),
    ("static member i-1 restarted (new member id); member m (client c) left or expired",
     "static_member_restarted"),
    ("member m (client c, host /1.2.3.4) joined; member n left or expired", "member_joined"),
    ("member m (client x joined) left or expired", "member_left"),
    ("subscription of m changed (a -> a,b)", "subscription_changed"),
    ("new partitions on orders", "partitions_added"),
    ("rebalance with no membership change", "no_membership_change"),
    ("rebalance with no membership change (REBALANCE_IN_PROGRESS)", "no_membership_change"),
    ("REBALANCE_IN_PROGRESS", "unknown"),
])
def test_reason_kinds(reason, kind):
    assert reason_kind(reason) == kind


def test_the_reason_texts_of_the_story_have_their_kind():
    """Every text reasons.explain() writes maps to its kind (not to "unknown")."""
    from types import SimpleNamespace as M

    def m(mid, iid=None, topics=("t",)):
        return M(member_id=mid, instance_id=iid, client_id="c", host="/h", topics=topics,
                 assignment={"t": [0]})

    cases = {
        "member_joined": ({}, {"a": m("a")}),
        "member_left": ({"a": m("a")}, {}),
        "static_member_restarted": ({"a": m("a", "i")}, {"b": m("b", "i")}),
        "subscription_changed": ({"a": m("a")}, {"a": m("a", topics=("t", "u"))}),
        "no_membership_change": ({"a": m("a")}, {"a": m("a")}),
    }
    for kind, (before, after) in cases.items():
        assert reason_kind(explain(before, after)) == kind, explain(before, after)
    grown = {"a": M(member_id="a", instance_id=None, client_id="c", host="/h", topics=("t",),
                    assignment={"t": [0, 5]})}
    assert reason_kind(explain({"a": m("a")}, grown)) == "partitions_added"


def test_the_exposition_is_prometheus_clients(exporter):
    """The hand-written text equals generate_latest() over the same samples as
    prometheus_client's metric families (custom collector API), escaping included."""
    from prometheus_client import CollectorRegistry, generate_latest
    from prometheus_client.core import Metric

    server, feed = exporter
    _classic_story(feed)
    odd = 'we"ird\\name\nwith a newline'
    feed(_ev({"event": "snapshot", "state": "Stable", "type": "share", "group_epoch": 2,
              "assignment_epoch": 2, "members": [_member("s", None)]}, group=odd))
    ours = server.metrics.render()

    class Same:
        def collect(self):
            from groupctl.observe.sinks.metrics_groups import GroupCounts, GroupView, _type

            m = server.metrics
            for g in GROUP_FAMILIES:
                fam = Metric(g.family.name, g.family.help, g.family.kind)
                for name, status in m.reducer.groups.items():
                    view = GroupView(status, m.counts.get(name) or GroupCounts(), _type(status))
                    for suffix, pairs, value in g.samples(view):
                        fam.add_sample(g.family.name + suffix, dict(
                            (("cluster", "c1"), ("group", name)) + pairs), value)
                yield fam

    registry = CollectorRegistry()
    registry.register(Same())
    theirs = generate_latest(registry).decode()
    head = ours[:ours.index("# HELP groupctl_up ")]
    assert head == theirs
    assert 'group="we\\"ird\\\\name\\nwith a newline"' in head


def test_up_and_healthz_follow_the_rounds(exporter):
    server, _ = exporter
    m = server.metrics
    assert _get(server, "/healthz")[0] == 503                  # no round yet
    assert _samples(_get(server, "/metrics")[1])[_k("groupctl_up", ())] == 0
    m.round_done(0.02, failed=False)
    assert _get(server, "/healthz") == (200, "ok\n")
    m.round_done(0.5, failed=True)   # contact lost: 503 at once, as groupctl_up falls
    assert _get(server, "/healthz")[0] == 503
    s = _samples(_get(server, "/metrics")[1])
    assert s[_k("groupctl_up", ())] == 0
    assert s[_k("groupctl_describe_rounds_failed_total", ())] == 1
    assert s[_k("groupctl_describe_round_duration_seconds_count", ())] == 2
    m.round_done(0.02, failed=False)
    assert _get(server, "/healthz")[0] == 200
    assert _get(server, "/nothing")[0] == 404


def test_a_dead_group_keeps_its_counters(exporter):
    server, feed = exporter
    _classic_story(feed)
    feed(_ev({"event": "state", "state": "Dead"}, at=T0 + 9))
    s = _samples(_get(server, "/metrics")[1])
    assert sum(v for k, v in s.items()
               if k[0] == "groupctl_group_rebalances_total") == 2      # never goes down
    assert s[_k("groupctl_group_rebalance_duration_seconds_count", ORDERS)] == 2
    dead = (*C1, ("group", "orders"), ("type", "unknown"))            # Dead forgets the type
    assert s[_k("groupctl_group_state", (*dead, ("state", "Dead")))] == 1
    assert _k("groupctl_group_members", dead) not in s


def test_the_port_in_use_is_a_usage_error(exporter):
    from groupctl.errors import UsageError

    server, _ = exporter
    host, port = server.address
    with pytest.raises(UsageError, match=f"--metrics-port {port}"):
        MetricsServer(server.metrics, host, port)


def test_promtool_checks_a_real_scrape(exporter):
    server, feed = exporter
    _classic_story(feed)
    for group, kind, state in (("pay", "consumer", "Reconciling"), ("s", "share", "Stable"),
                               ('we"ird\\name\n', "streams", "NotReady")):
        feed(_ev({"event": "snapshot", "state": state, "type": kind, "group_epoch": 4,
                  "assignment_epoch": 3, "members": [_member("x", None)]}, group=group))
    feed(_ev({"event": "state", "state": "Dead"}, group="s", at=T0 + 3))
    server.metrics.round_done(0.01, failed=False)
    server.metrics.round_done(0.5, failed=True)
    text = _get(server, "/metrics")[1]
    done = subprocess.run([_promtool(), "check", "metrics"], input=text, text=True,
                          capture_output=True, timeout=60)
    assert done.returncode == 0 and not done.stdout.strip() and not done.stderr.strip(), \
        done.stdout + done.stderr


def test_alert_rules_pass_their_promtool_tests():
    done = subprocess.run([_promtool(), "test", "rules", "groupctl-rules.test.yml"],
                          cwd=RULES, text=True, capture_output=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SUCCESS" in done.stdout
    checked = subprocess.run([_promtool(), "check", "rules", "groupctl-rules.yml"],
                             cwd=RULES, text=True, capture_output=True, timeout=60)
    assert checked.returncode == 0 and "5 rules found" in checked.stdout, checked.stdout


def _cli(*args: str) -> tuple[int, str, str]:
    import io

    from groupctl.cli.app import invoke
    from groupctl.cli.env import Env

    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    code = invoke(["-b", "127.0.0.1:1", "--timeout", "2", *args], env)
    return code, env.stdout.getvalue(), env.stderr.getvalue()


def test_watch_refuses_a_port_it_cannot_bind_before_any_work(exporter):
    server, _ = exporter
    host, port = server.address
    code, out, err = _cli("watch", "g", "--metrics-port", str(port), "--metrics-host", host)
    assert (code, out) == (2, "")
    assert err.startswith(f"groupctl: error: --metrics-port {port} on {host}: ")
    assert err.count("\n") == 1 and "Traceback" not in err
    code, out, err = _cli("watch", "g", "--metrics-port", "70000")
    assert (code, err) == (2, "groupctl: error: --metrics-port must be 0..65535\n")


def _get_gzip(server) -> tuple[dict, bytes]:
    host, port = server.address
    req = urllib.request.Request(f"http://{host}:{port}/metrics",
                                 headers={"Accept-Encoding": "gzip"})
    with urllib.request.urlopen(req, timeout=10) as r:
        return dict(r.headers), r.read()


def test_gzip_scrapes_are_the_text_and_keep_up_with_changes(exporter):
    """Prometheus asks for gzip: the body is one gzip stream of the same text, also when
    only groupctl's own metrics changed (the group section's compression is kept) and
    after a group event (compressed again)."""
    import gzip

    server, feed = exporter
    _classic_story(feed)
    for change in (lambda: None, lambda: server.metrics.round_done(0.02, failed=False),
                   lambda: feed(_ev({"event": "member_joined", "member_id": "c"}, at=T0 + 9))):
        change()
        headers, body = _get_gzip(server)
        assert headers["Content-Encoding"] == "gzip"
        assert headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
        assert int(headers["Content-Length"]) == len(body)
        assert gzip.decompress(body).decode() == server.metrics.render()
    s = _samples(gzip.decompress(body).decode())
    assert s[_k("groupctl_group_members", ORDERS)] == 3
    assert s[_k("groupctl_describe_round_duration_seconds_count", ())] == 1


def test_a_groups_lines_are_built_again_at_its_events_only(exporter):
    server, feed = exporter
    m = server.metrics
    _classic_story(feed)
    feed(_ev({"event": "snapshot", "state": "Empty", "type": "classic", "members": []},
             group="other"))
    orders, other = m.scrape().rows
    m.round_done(0.01, failed=False)
    assert m.scrape().rows == [orders, other] and m.scrape().rows[0] is orders   # kept
    feed(_ev({"event": "member_left", "member_id": "b"}, at=T0 + 9))
    rows = m.scrape().rows
    assert len(rows) == 2 and other in rows and orders not in rows   # only orders built again
    assert 'groupctl_group_members{cluster="c1",group="orders",type="classic"} 1.0' \
        in m.render()
    # what changes without an event: touch() builds the group's lines again
    m.reducer.groups["orders"].members.clear()
    assert m.scrape().rows == rows
    m.touch("orders")
    assert 'groupctl_group_members{cluster="c1",group="orders",type="classic"} 0.0' \
        in m.render()


def test_gzip_pieces_are_compressed_once_and_join_into_one_stream(monkeypatch):
    """Many groups (several pieces a family): after one group's change only the pieces
    holding it (one per family) and the tail are compressed again; the body is one gzip
    stream whose CRC and size gzip checks."""
    import gzip

    from groupctl.observe.sinks import metrics_blocks, metrics_gzip, metrics_server
    from groupctl.observe.sinks.metrics import BLOCK

    reducer = Reducer()
    m = WatchMetrics(reducer, followed=lambda: len(reducer.groups))
    for i in range(BLOCK * 3 + 5):
        e = _ev({"event": "snapshot", "state": "Stable", "type": "classic",
                 "members": [_member("a", [{"topic": "t", "partitions": [0]}])]},
                group=f"g{i:04d}")
        reducer.apply(e)
        m.event(e)
    compressed: list[int] = []
    real = metrics_gzip.pack

    def counted(texts, last=False):
        texts = list(texts)
        compressed.extend(len(t) for t in texts)
        return real(texts, last)

    for module in (metrics_blocks, metrics_server):   # the blocks' pieces, the scrape's own
        monkeypatch.setattr(module, "pack", counted)
    zipper = metrics_server._Gzip()
    first = zipper.body(m.scrape())
    assert gzip.decompress(first).decode() == m.render()
    pieces = len(compressed)
    # headers, the last block and the tail (the full blocks were compressed as they filled)
    assert pieces == len(GROUP_FAMILIES) * (1 + 1) + 1
    compressed.clear()
    e = _ev({"event": "member_joined", "member_id": "b"}, group="g0100", at=T0 + 1)
    reducer.apply(e)
    m.event(e)
    second = zipper.body(m.scrape())
    # the block g0100 left and the last block, it joined: two a family, and the tail
    assert len(compressed) == 2 * len(GROUP_FAMILIES) + 1
    assert gzip.decompress(second).decode() == m.render()
    assert 'groupctl_group_members{cluster="c1",group="g0100",type="classic"} 2.0' \
        in gzip.decompress(second).decode()
    compressed.clear()
    e = _ev({"event": "member_left", "member_id": "b"}, group="g0100", at=T0 + 2)
    reducer.apply(e)
    m.event(e)
    third = zipper.body(m.scrape())   # a group that changes again: its block only
    assert len(compressed) == len(GROUP_FAMILIES) + 1
    assert gzip.decompress(third).decode() == m.render()


def test_a_collector_on_the_registry_is_scraped_too(exporter):
    from prometheus_client.core import GaugeMetricFamily

    server, feed = exporter
    _classic_story(feed)

    class Lag:
        def collect(self):
            g = GaugeMetricFamily("kafka_consumergroup_group_lag", "lag", labels=["group"])
            g.add_metric(["orders"], 42)
            yield g

    server.metrics.registry.register(Lag())
    s = _samples(_get(server, "/metrics")[1])
    assert s[_k("kafka_consumergroup_group_lag", (("group", "orders"),))] == 42


def test_contact_lost_counts_streaks_of_failed_rounds(exporter):
    server, _ = exporter
    m = server.metrics
    for failed in (False, True, True, True, False, True, False):
        m.round_done(0.01, failed=failed)
    s = _samples(_get(server, "/metrics")[1])
    assert s[_k("groupctl_contact_lost_total", ())] == 2
    assert s[_k("groupctl_describe_rounds_failed_total", ())] == 4
    assert s[_k("groupctl_up", ())] == 1


def test_crc_combine_is_zlibs_crc_of_the_joined_bytes():
    import random
    import zlib

    from groupctl.observe.sinks.metrics_gzip import crc_combine, crc_shift

    rng = random.Random(22)
    pieces = [b"", b"a", bytes(rng.randrange(256) for _ in range(1000)), b"x" * 70_000, b""]
    crc = 0
    for piece in pieces:
        crc = crc_combine(crc, zlib.crc32(piece), crc_shift(len(piece)))
    assert crc == zlib.crc32(b"".join(pieces))


def test_a_lag_read_without_an_event_builds_the_groups_lines_again(exporter):
    from types import SimpleNamespace

    from groupctl.observe.sinks.lag_metrics import add_lag_metrics

    server, feed = exporter
    m = server.metrics
    _classic_story(feed)
    add_lag_metrics(m, SimpleNamespace(rounds=2, failed=0, last_round_seconds=0.01))
    assert "groupctl_group_lag{" not in m.render()   # never read
    kept = m.scrape().rows[0]
    read = SimpleNamespace(group="orders", error=None, total=47, max=40,
                           by_topic={"t": 42, "u": 5}, at=T0 + 60)
    m.reducer.apply_lag(read)
    s = _samples(_get(server, "/metrics")[1])
    assert m.scrape().rows[0] is not kept
    assert s[_k("groupctl_group_lag", ORDERS)] == 47
    assert s[_k("groupctl_group_topic_lag", (*ORDERS, ("topic", "u")))] == 5
    assert s[_k("groupctl_group_lag_timestamp_seconds", ORDERS)] == T0 + 60
    assert s[_k("groupctl_lag_rounds_total", ())] == 2
    m.reducer.apply_lag(SimpleNamespace(**{**vars(read), "total": 3, "at": T0 + 70}))
    assert _samples(m.render())[_k("groupctl_group_lag", ORDERS)] == 3


def test_unowned_partition_seconds_count_by_basis(exporter):
    """Issue 19 (cost): each rebalance's unowned_partition_ms adds up per group and basis;
    a rebalance whose figure is unknown adds nothing."""
    server, feed = exporter
    feed(_ev({"event": "snapshot", "state": "Stable", "type": "classic", "protocol": "range",
              "generation": 3, "members": [_member("a", [{"topic": "t", "partitions": [0]}])]}))
    for gen, ms, basis in ((4, 1500, "upper_bound"), (5, 250, "upper_bound"), (6, None, None)):
        feed(_ev({"event": "rebalance", "from_generation": gen - 1, "to_generation": gen,
                  "duration_ms": 10, "ended": "2023-11-14T22:13:25.000Z",
                  "unowned_partition_ms": ms, "unowned_basis": basis}, at=T0 + gen))
    s = _samples(_get(server, "/metrics")[1])
    assert s[_k("groupctl_group_unowned_partition_seconds_total",
                (*ORDERS, ("basis", "upper_bound")))] == 1.75
    assert not any(k[0] == "groupctl_group_unowned_partition_seconds_total"
                   and ("basis", "None") in k[1] for k in s)


def test_the_last_slowest_member_is_one_series_per_group_and_a_histogram(exporter):
    """Issue 19: the last rebalance's slowest member, named (member, client_id) with its
    time after target and its hold after told; one series per group however many members
    were slowest over time; a hold the source could not see has no series; every promtool
    check passes."""
    server, feed = exporter
    feed(_ev({"event": "snapshot", "state": "Stable", "type": "consumer", "group_epoch": 3,
              "assignment_epoch": 3, "members": [_member("a", [], []), _member("b", [], [])]},
             group="pay"))
    for epoch, slow, after, held in ((4, "a", 4300, 4000), (5, "b", 800, None)):
        feed(_ev({"event": "rebalance", "from_generation": epoch - 1, "to_generation": epoch,
                  "duration_ms": after + 10, "ended": "2023-11-14T22:13:25.000Z",
                  "members_after": ["a", "b"], "slowest_member": slow,
                  "slowest_member_ms": after, "slowest_member_held_ms": held},
                 group="pay", at=T0 + epoch))
        s = _samples(_get(server, "/metrics")[1])
        last = {k: v for k, v in s.items() if k[0] == "groupctl_group_last_slowest_member_seconds"}
        assert last == {_k("groupctl_group_last_slowest_member_seconds",
                           (*PAY, ("member", slow), ("client_id", slow))): after / 1000}
        held_series = {k: v for k, v in s.items()
                       if k[0] == "groupctl_group_last_slowest_member_held_seconds"}
        assert held_series == ({} if held is None else {_k(
            "groupctl_group_last_slowest_member_held_seconds",
            (*PAY, ("member", slow), ("client_id", slow))): held / 1000})
    hist = "groupctl_group_rebalance_slowest_member_seconds"
    assert s[_k(f"{hist}_count", PAY)] == 2 and s[_k(f"{hist}_sum", PAY)] == 5.1
    assert s[_k(f"{hist}_bucket", (*PAY, ("le", "1.0")))] == 1
    text = _get(server, "/metrics")[1]
    done = subprocess.run([_promtool(), "check", "metrics"], input=text, text=True,
                          capture_output=True, timeout=60)
    assert done.returncode == 0 and not done.stdout.strip() and not done.stderr.strip(), \
        done.stdout + done.stderr


def test_every_name_is_groupctls_and_no_help_points_at_a_source_file(exporter):
    """kafka_exporter's kafka_consumergroup_members is labelled `consumergroup`: a
    dashboard scraping both mixed two schemas under one name; users have no observe/*.py
    to read; a gauge is not named like a histogram's _duration_seconds."""
    from groupctl.observe.sources.lag import LagPoller
    from groupctl.observe.sinks.lag_metrics import add_lag_metrics

    server, feed = exporter
    poller = LagPoller(None, lambda: [], on_round=lambda *a: None)
    poller.last_round_seconds = 0.1
    add_lag_metrics(server.metrics, poller)
    _classic_story(feed)
    server.metrics.reducer.groups["orders"].lag, server.metrics.reducer.groups["orders"].lag_at = 4, T0
    families = list(text_string_to_metric_families(_get(server, "/metrics")[1]))
    names = {f.name for f in families}
    assert {"groupctl_group_members", "groupctl_group_lag", "groupctl_lag_last_round_seconds"} <= names
    assert [n for n in names if not n.startswith("groupctl_")] == []
    assert [f.name for f in families if ".py" in f.documentation] == []
    assert [f.name for f in families if f.type != "histogram"
            and f.name.endswith("_duration_seconds")] == []
