"""The canary without a broker: where its groups go (plan.py, against Kafka's partitionFor),
how a round's requests become steps and errors (timing.py, on an injected clock), what a
one-shot run's results mean for the exit code, the lines a monitor tells, the metrics
(`promtool check metrics`) and the alert rules (`promtool test rules`), and the usage
errors of the command. The rounds themselves run on the lab broker
(tests/integration/test_canary.py)."""
from __future__ import annotations

import io
import shutil
import subprocess
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from groupctl.cli.app import invoke
from groupctl.cli.env import Env
from groupctl.clock import Clock
from groupctl.coordinator.canary.metrics import UNHEALTHY_AFTER, CanaryMetrics
from groupctl.coordinator.canary.plan import Canary, place, plan
from groupctl.coordinator.canary.rounds import RoundResult
from groupctl.coordinator.canary.runner import CanaryFailed, Outcomes, raise_for
from groupctl.coordinator.canary.timing import Stopwatch, answer_error, step_of
from groupctl.observe.reads.model import coordinator_partition
from groupctl.protocol.errors import ErrorCode

RULES = Path(__file__).resolve().parents[2] / "contrib" / "prometheus"


def _promtool() -> str:
    path = shutil.which("promtool")
    assert path, "promtool is missing: ./dev setup installs Debian's prometheus package"
    return path


# ---- plan ------------------------------------------------------------------------------------
def _leaders(n: int = 50, brokers=(1, 2, 3)) -> dict[int, int]:
    return {p: brokers[p % len(brokers)] for p in range(n)}


def test_each_coordinator_gets_a_canary_per_protocol_on_a_partition_it_leads():
    leaders = _leaders()
    canaries = plan("groupctl-canary-", ("classic", "consumer"), leaders)
    assert [(c.broker, c.protocol) for c in canaries] == [
        (b, p) for b in (1, 2, 3) for p in ("classic", "consumer")]
    for c in canaries:
        assert c.group.startswith(f"groupctl-canary-{c.protocol}-{c.broker}-")
        assert coordinator_partition(c.group, 50) == c.partition   # Kafka's partitionFor
        assert leaders[c.partition] == c.broker
    # the same leaders give the same names: the groups are reused run after run
    assert plan("groupctl-canary-", ("classic", "consumer"), leaders) == canaries


def test_a_broker_leading_nothing_gets_no_canary_and_leaderless_partitions_are_nobodys():
    leaders: dict[int, int | None] = {p: 1 for p in range(10)}
    leaders[3] = None
    assert {c.broker for c in plan("p-", ("classic",), leaders)} == {1}


def test_a_kept_canary_follows_its_group_after_a_failover_and_is_placed_again_later():
    before = plan("p-", ("classic",), _leaders())
    two = next(c for c in before if c.broker == 2)
    after_failover = {p: (1 if b == 2 else b) for p, b in _leaders().items()}   # 2 stopped
    kept = plan("p-", ("classic",), after_failover, before)
    assert two in kept   # it runs on broker 1 now: the failover is what it measures
    # broker 2 back, leading other partitions than the canary's: placed again there
    back = dict(after_failover)
    back[(two.partition + 1) % 50] = 2
    again = plan("p-", ("classic",), back, kept)
    new_two = next(c for c in again if c.broker == 2)
    assert new_two != two and back[new_two.partition] == 2


def test_place_searches_the_counter_until_partition_for_lands():
    c = place("x-", "classic", 7, {42}, 50)
    assert c.partition == 42 and coordinator_partition(c.group, 50) == 42
    n = int(c.group.rsplit("-", 1)[1])
    assert all(coordinator_partition(f"x-classic-7-{i}", 50) != 42 for i in range(n))


# ---- timing ----------------------------------------------------------------------------------
def test_requests_become_steps():
    assert step_of("JoinGroup", {}) == "join"
    assert step_of("ConsumerGroupHeartbeat", {"member_epoch": 0}) == "join"
    assert step_of("ConsumerGroupHeartbeat", {"member_epoch": 3}) == "reconcile"
    assert step_of("ConsumerGroupHeartbeat", {"member_epoch": -1}) == "leave"
    assert step_of("LeaveGroup", {}) == "leave"


def test_member_id_required_is_a_step_and_a_leave_members_error_counts():
    assert answer_error("JoinGroup", {"error_code": ErrorCode.MEMBER_ID_REQUIRED}) == 0
    assert answer_error("JoinGroup", {"error_code": ErrorCode.NOT_COORDINATOR}) == \
        ErrorCode.NOT_COORDINATOR
    assert answer_error("LeaveGroup", {"error_code": 0, "members": [
        {"member_id": "m", "error_code": ErrorCode.UNKNOWN_MEMBER_ID}]}) == \
        ErrorCode.UNKNOWN_MEMBER_ID
    assert answer_error("FindCoordinator", {"coordinators": [
        {"key": "g", "error_code": ErrorCode.COORDINATOR_NOT_AVAILABLE}]}) == \
        ErrorCode.COORDINATOR_NOT_AVAILABLE


def test_a_step_spans_its_requests_and_the_first_error_is_the_rounds():
    now = [10.0]
    watch = Stopwatch(Clock(monotonic=lambda: now[0]))
    a = watch.sent("join")            # MEMBER_ID_REQUIRED
    now[0] += 0.004
    watch.answered(a, None)
    b = watch.sent("join")            # the join with the member id
    now[0] += 0.006
    watch.answered(b, None)
    c = watch.sent("sync")
    assert watch.pending_step() == "sync"
    now[0] += 0.5
    watch.answered(c, "REBALANCE_IN_PROGRESS")
    watch.fail("leave", "timeout")    # after the round's error: not the round's
    assert watch.ms("join") == 10.0 and watch.spans["join"].requests == 2
    assert watch.ms("sync") == 500.0 and watch.ms("heartbeat") is None
    assert watch.error == ("sync", "REBALANCE_IN_PROGRESS")


# ---- verdict and outcomes ----------------------------------------------------------------------
def _result(broker=1, protocol="classic", ok=True, error=None, step=None, round_ms=20.0,
            coordinator=None, at=100.0, group=None) -> RoundResult:
    c = Canary(group or f"g-{protocol}-{broker}", protocol, broker, 0)
    steps = {"find_coordinator": 1.0, "join": 8.0, "sync": 2.0, "heartbeat": 2.0,
             "leave": 2.0} if ok else {"find_coordinator": 1.0, "join": None}
    return RoundResult(c, broker if coordinator is None else coordinator, ok, error, step,
                       steps, round_ms if ok else None, at, "m")


@pytest.mark.parametrize("results,max_ms,code", [
    ([_result(), _result(2, round_ms=900.0)], 500.0, 6),
    ([_result(), _result(2, ok=False, error="NOT_COORDINATOR", step="join")], None, 7),
    ([_result(ok=False, error="timeout", step="sync"),
      _result(2, ok=False, error="NOT_COORDINATOR", step="join")], None, 7),
    ([_result(ok=False, error="GROUP_AUTHORIZATION_FAILED", step="join"),
      _result(2, ok=False, error="NOT_COORDINATOR", step="join")], None, 4),
    ([_result(ok=False, error="disconnected", step="join"),
      _result(2, ok=False, error="NOT_COORDINATOR", step="join"),
      _result(3, round_ms=900.0)], 500.0, 3),
    ([_result(ok=False, error="timeout", step="heartbeat")], None, 6),
])
def test_the_worst_failure_is_the_exit_code(results, max_ms, code):
    with pytest.raises(CanaryFailed) as info:
        raise_for(results, max_ms)
    assert info.value.exit_code == code
    bad = sum(1 for r in results if not r.ok or (max_ms and r.round_ms > max_ms))
    assert f"{bad} of {len(results)} rounds failed" in str(info.value)


def test_every_round_in_time_raises_nothing():
    raise_for([_result(), _result(2, protocol="consumer")], 500.0)
    raise_for([_result(round_ms=900.0)], None)


def test_a_monitor_tells_a_failure_once_and_the_recovery_with_its_coordinator():
    outcomes = Outcomes()
    assert outcomes.tell([_result(2, group="g2", at=100.0)]) == []
    failed = _result(2, ok=False, error="NOT_COORDINATOR", step="join", group="g2", at=101.0)
    assert outcomes.tell([failed]) == ["g2 (classic): NOT_COORDINATOR on join at coordinator 2"]
    assert outcomes.tell([_result(2, ok=False, error="timeout", step="join", group="g2",
                                  at=102.0)]) == []
    assert outcomes.ended == {}
    assert outcomes.tell([_result(2, coordinator=3, group="g2", at=104.5)]) == [
        "g2 (classic): rounds complete again on coordinator 3 (was 2), unavailable 3.5 s "
        "(from the first failed round to this one)"]
    assert outcomes.ended["g2"].to_dict() == {
        "unavailable_s": 3.5, "unavailable_since": 101.0, "previous_coordinator": 2}
    assert outcomes.tell([_result(2, coordinator=1, group="g2", at=106.0)]) == [
        "g2 (classic): rounds now run on coordinator 1 (was 3)"]
    assert outcomes.ended == {}   # told once, with the round that ended it


# ---- metrics and rules -------------------------------------------------------------------------
def _samples(text: str) -> dict:
    return {(s.name, frozenset(s.labels.items())): s.value
            for f in text_string_to_metric_families(text) for s in f.samples}


def test_metrics_per_coordinator_and_protocol_pass_promtool():
    m = CanaryMetrics()
    assert not m.healthy
    m.run_done([_result(1), _result(1, "consumer"), _result(2)], "c1", {1, 2})
    m.run_done([_result(1), _result(2, ok=False, error="NOT_COORDINATOR", step="join")],
               "c1", {1, 2})
    text = m.render()
    s = _samples(text)
    c1 = ("cluster", "c1")
    assert s[("groupctl_canary_rounds_total", frozenset({c1, ("coordinator", "2"),
                                                         ("protocol", "classic")}))] == 2
    assert s[("groupctl_canary_failures_total", frozenset({
        c1, ("coordinator", "2"), ("protocol", "classic"), ("step", "join"),
        ("error", "NOT_COORDINATOR")}))] == 1
    assert s[("groupctl_canary_up", frozenset({c1, ("coordinator", "1")}))] == 1
    assert s[("groupctl_canary_up", frozenset({c1, ("coordinator", "2")}))] == 0
    # the failed round's steps are not observed: only completed rounds' (2 of 3 on 1/2)
    assert s[("groupctl_canary_step_duration_seconds_count", frozenset({
        c1, ("coordinator", "2"), ("protocol", "classic"), ("step", "join")}))] == 1
    assert s[("groupctl_canary_round_duration_seconds_sum", frozenset({
        c1, ("coordinator", "1"), ("protocol", "classic")}))] == pytest.approx(0.04)
    done = subprocess.run([_promtool(), "check", "metrics"], input=text, text=True,
                          capture_output=True, timeout=60)
    assert done.returncode == 0 and not (done.stdout + done.stderr).strip(), \
        done.stdout + done.stderr
    # served gzipped as the watch's (its one piece is plain bytes, compressed at the scrape)
    import gzip

    from groupctl.observe.sinks.metrics_server import _Gzip
    assert gzip.decompress(_Gzip().body(m.scrape())).decode() == text


def _up(m: CanaryMetrics) -> dict[str, float]:
    return {dict(labels)["coordinator"]: v for (name, labels), v in _samples(m.render()).items()
            if name == "groupctl_canary_up"}


def test_a_silent_coordinator_stays_down_until_the_cluster_drops_it_and_health_follows_runs():
    m = CanaryMetrics()
    m.run_done([_result(2, ok=False, error="timeout", step="join")], "c1", {1, 2}, {1, 2})
    assert _up(m) == {"1": 1, "2": 0} and not m.healthy
    # the failover moved its groups to 1: 2 leads nothing but is still listed, so still 0
    m.run_done([_result(2, coordinator=1)], "c1", {1}, {1, 2})
    assert _up(m) == {"1": 1, "2": 0} and m.healthy
    m.run_done([_result(2, coordinator=1)], "c1", {1}, None)   # Metadata unanswered
    assert _up(m) == {"1": 1, "2": 0}
    # fenced: gone from Metadata, gone from the scrape; back and leading nothing: no series
    m.run_done([_result(2, coordinator=1)], "c1", {1}, {1})
    assert _up(m) == {"1": 1}
    m.run_done([_result(2, coordinator=1)], "c1", {1}, {1, 2})
    assert _up(m) == {"1": 1}
    # rounds completing on a broker that failed before: 1 again
    m.run_done([_result(1, ok=False, error="timeout", step="join")], "c1", {1}, {1})
    m.run_done([_result(1)], "c1", {1}, {1})
    assert _up(m) == {"1": 1}
    for _ in range(UNHEALTHY_AFTER):
        m.run_done([_result(1, ok=False, error="timeout", step="join")], "c1", {1})
    assert not m.healthy


def test_canary_alert_rules_pass_their_promtool_tests():
    done = subprocess.run([_promtool(), "test", "rules", "groupctl-canary-rules.test.yml"],
                          cwd=RULES, text=True, capture_output=True, timeout=120)
    assert done.returncode == 0 and "SUCCESS" in done.stdout, done.stdout + done.stderr
    checked = subprocess.run([_promtool(), "check", "rules", "groupctl-canary-rules.yml"],
                             cwd=RULES, text=True, capture_output=True, timeout=60)
    assert checked.returncode == 0 and "3 rules found" in checked.stdout, checked.stdout


# ---- the command's usage errors ------------------------------------------------------------
@pytest.mark.parametrize("args,words", [
    (["canary", "--duration", "5"], "need --interval"),
    (["canary", "--metrics-port", "0"], "need --interval"),
    (["canary", "--protocol", "clasic"], "not clasic"),
    (["canary", "--max-ms", "0"], "--max-ms must be positive"),
    (["canary", "--interval", "0"], "--interval must be positive"),
    (["canary", "--group-prefix", ""], "must not be empty"),
    (["canary", "--interval", "1", "--metrics-port", "70000"], "0..65535"),
])
def test_usage_errors(args, words):
    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    code = invoke(["-b", "127.0.0.1:1", "--timeout", "1", *args], env)
    err = env.stderr.getvalue()
    assert code == 2 and env.stdout.getvalue() == ""
    assert err.startswith("groupctl: error: ") and words in err and err.count("\n") == 1


def test_an_unreachable_cluster_is_exit_3():
    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    code = invoke(["-b", "127.0.0.1:1", "--timeout", "1", "canary"], env)
    err = env.stderr.getvalue()
    assert code == 3 and err.startswith("groupctl: error: ") and err.count("\n") == 1, err
