"""watch --metrics-port's exporter (observe/metrics.py) without a broker: a reducer fed §4
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
from groupctl.observe.metrics import UNHEALTHY_AFTER, MetricsServer, WatchMetrics
from groupctl.observe.reducer import Reducer

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
    feed = metrics.tee(reducer.apply)   # as watch does: reducer first, then the counters
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
    for gen, dur in ((4, 1500), (5, 250)):
        feed(_ev({"event": "rebalance", "from_generation": gen - 1, "to_generation": gen,
                  "duration_ms": dur, "ended": "2023-11-14T22:13:25.000Z",
                  "members_before": ["a"], "members_after": ["a", "b"]}, at=T0 + gen))


def test_scrape_reads_the_reducer(exporter):
    server, feed = exporter
    _classic_story(feed)
    feed(_ev({"event": "snapshot", "state": "Reconciling", "type": "consumer",
              "group_epoch": 7, "assignment_epoch": 7,
              "members": [_member("x", [{"topic": "t", "partitions": [0, 1]}],
                                  [{"topic": "t", "partitions": [0]}]),
                          _member("y", [{"topic": "t", "partitions": [1]}],
                                  [{"topic": "t", "partitions": [1]}])]}, group="pay"))
    code, text = _get(server, "/metrics")
    assert code == 200
    s = _samples(text)
    o, p = (("group", "orders"), ("type", "classic")), (("group", "pay"), ("type", "consumer"))
    assert s[_k("groupctl_group_state", (*o, ("state", "Stable")))] == 1
    assert s[_k("groupctl_group_state", (*o, ("state", "PreparingRebalance")))] == 0
    assert s[_k("groupctl_group_state", (*p, ("state", "Reconciling")))] == 1
    assert s[_k("groupctl_group_generation", o)] == 5       # the rebalances' to_generation
    assert s[_k("kafka_consumergroup_members", o)] == 2
    assert s[_k("groupctl_group_rebalances_total", o)] == 2
    assert s[_k("groupctl_group_rebalance_duration_seconds_sum", o)] == 1.75
    assert s[_k("groupctl_group_rebalance_duration_seconds_bucket", (*o, ("le", "0.25")))] == 1
    assert s[_k("groupctl_group_last_rebalance_timestamp_seconds", o)] == 1700000005.0
    assert s[_k("groupctl_group_epoch", p)] == 7
    assert s[_k("groupctl_group_assignment_epoch", p)] == 7
    assert s[_k("groupctl_group_members_behind_target", p)] == 1   # x still holds t-1
    assert _k("groupctl_group_generation", p) not in s
    assert s[_k("groupctl_groups_followed", ())] == 2


def test_up_and_healthz_follow_the_rounds(exporter):
    server, _ = exporter
    m = server.metrics
    assert _get(server, "/healthz")[0] == 503                  # no round yet
    assert _samples(_get(server, "/metrics")[1])[_k("groupctl_up", ())] == 0
    m.round_done(0.02, failed=False)
    assert _get(server, "/healthz") == (200, "ok\n")
    for n in range(1, UNHEALTHY_AFTER + 1):
        m.round_done(0.5, failed=True)
        assert _get(server, "/healthz")[0] == (503 if n == UNHEALTHY_AFTER else 200)
    s = _samples(_get(server, "/metrics")[1])
    assert s[_k("groupctl_up", ())] == 0
    assert s[_k("groupctl_describe_rounds_failed_total", ())] == UNHEALTHY_AFTER
    assert s[_k("groupctl_describe_round_duration_seconds_count", ())] == UNHEALTHY_AFTER + 1
    m.round_done(0.02, failed=False)
    assert _get(server, "/healthz")[0] == 200
    assert _get(server, "/nothing")[0] == 404


def test_a_dead_group_keeps_its_counters(exporter):
    server, feed = exporter
    _classic_story(feed)
    feed(_ev({"event": "state", "state": "Dead"}, at=T0 + 9))
    s = _samples(_get(server, "/metrics")[1])
    o = (("group", "orders"), ("type", "classic"))
    assert s[_k("groupctl_group_rebalances_total", o)] == 2            # never goes down
    dead = (("group", "orders"), ("type", "unknown"))                # Dead forgets the type
    assert s[_k("groupctl_group_state", (*dead, ("state", "Dead")))] == 1
    assert _k("kafka_consumergroup_members", dead) not in s


def test_the_port_in_use_is_a_usage_error(exporter):
    from groupctl.errors import UsageError

    server, _ = exporter
    host, port = server.address
    with pytest.raises(UsageError, match=f"--metrics-port {port}"):
        MetricsServer(server.metrics, host, port)


def test_promtool_checks_a_real_scrape(exporter):
    server, feed = exporter
    _classic_story(feed)
    server.metrics.round_done(0.01, failed=False)
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
    o = (("group", "orders"), ("type", "classic"))
    assert s[_k("groupctl_group_unowned_partition_seconds_total",
                (*o, ("basis", "upper_bound")))] == 1.75
    assert not any(k[0] == "groupctl_group_unowned_partition_seconds_total"
                   and ("basis", "None") in k[1] for k in s)
