"""watch --lag without a broker: the lag round (observe/sources/lag.py fetch_lag) against a fake
cluster that answers real OffsetFetch / ListOffsets bodies and counts the requests; the lag
poller's pacing on an injected clock; lag_before / lag_after on rebalance events
(observe/story/lag_rounds.py); the lag gauges (observe/sinks/lag_metrics.py) checked by promtool; the
--lag options' usage errors."""
from __future__ import annotations

import asyncio
import shutil
import subprocess
from dataclasses import dataclass

import pytest
from prometheus_client.parser import text_string_to_metric_families

from groupctl.errors import UnreachableError
from groupctl.events import envelope, iso_ts
from groupctl.observe.sources.lag import GroupLag, LagPoller, fetch_lag
from groupctl.observe.sinks.lag_metrics import add_lag_metrics
from groupctl.observe.story.lag_rounds import LagRounds
from groupctl.observe.sinks.metrics import WatchMetrics
from groupctl.observe.state.reducer import Reducer
from groupctl.protocol.errors import ErrorCode
from groupctl.protocol.messages import LIST_OFFSETS, OFFSET_FETCH

T0 = 1_700_000_000.0


# ---- a fake cluster: two coordinators, two partition leaders ------------------------------

@dataclass
class Info:
    node_id: int


class Conn:
    def version_for(self, api):
        return 9


class Meta:
    def __init__(self, leaders):
        self.leaders = leaders

    def leader_of(self, topic, partition):
        return self.leaders.get((topic, partition))


class FakeCluster:
    """Groups' coordinators, committed offsets {group: {(t, p): offset}} and log ends;
    `group_errors` {group: code}; `down`: nodes that do not answer."""

    def __init__(self, coordinators, committed, log_end, leaders, group_errors=None, down=()):
        self.coordinators, self.committed, self.log_end = coordinators, committed, log_end
        self.leaders, self.group_errors, self.down = leaders, group_errors or {}, set(down)
        self.requests: list[tuple[str, int, dict]] = []
        self.invalidated: list[str] = []

    def deadline(self, seconds=None):
        return None

    async def find_coordinators(self, groups, deadline=None):
        self.requests.append(("FindCoordinator", -1, {"groups": list(groups)}))
        return {g: Info(self.coordinators[g]) for g in groups}

    def invalidate_coordinator(self, group):
        self.invalidated.append(group)

    async def broker(self, node, deadline=None):
        if node in self.down:
            raise UnreachableError(f"node {node} down")
        return Conn()

    async def metadata(self, topics, deadline=None):
        self.requests.append(("Metadata", -1, {"topics": list(topics)}))
        return Meta(self.leaders)

    async def request(self, api, body, node_id=None, version=None, deadline=None):
        self.requests.append((api.name, node_id, body))
        if api is OFFSET_FETCH:
            return {"groups": [self._group(e["group_id"]) for e in body["groups"]]}
        assert api is LIST_OFFSETS and body["replica_id"] == -1
        return {"topics": [{"name": t["name"], "partitions": [
            {"partition_index": p["partition_index"], "error_code": 0,
             "offset": self.log_end[(t["name"], p["partition_index"])]}
            for p in t["partitions"]]} for t in body["topics"]]}

    def _group(self, g):
        code = self.group_errors.get(g, 0)
        topics: dict = {}
        for (t, p), off in sorted(self.committed.get(g, {}).items()):
            topics.setdefault(t, []).append({"partition_index": p, "committed_offset": off,
                                             "error_code": 0})
        return {"group_id": g, "error_code": code, "topics": [] if code else [
            {"name": t, "partitions": ps} for t, ps in topics.items()]}


def lab(**kw) -> FakeCluster:
    return FakeCluster(
        coordinators={"a": 1, "b": 1, "c": 1, "d": 2, "e": 2},
        committed={"a": {("t", 0): 10, ("t", 1): 20, ("u", 0): -1},   # u-0: no commit
                   "b": {("t", 0): 100},                                # past the end: 0
                   "d": {("u", 0): 5, ("u", 1): 7}},                    # c, e: none
        log_end={("t", 0): 50, ("t", 1): 30, ("u", 0): 9, ("u", 1): 17},
        leaders={("t", 0): 1, ("t", 1): 2, ("u", 0): 2, ("u", 1): 1}, **kw)


def kinds(cluster) -> list[tuple[str, int]]:
    return sorted((name, node) for name, node, _ in cluster.requests)


def test_one_round_batches_offset_fetch_per_coordinator_and_list_offsets_per_leader():
    cluster = lab()
    clock = iter([T0, T0 + 0.05])
    lags = asyncio.run(fetch_lag(cluster, list("abcde"), deadline=None, clock=lambda: next(clock)))
    # one FindCoordinator, one OffsetFetch per coordinator (all its groups), one Metadata,
    # one ListOffsets per leader: 6 requests for 5 groups
    assert kinds(cluster) == [("FindCoordinator", -1), ("ListOffsets", 1), ("ListOffsets", 2),
                              ("Metadata", -1), ("OffsetFetch", 1), ("OffsetFetch", 2)]
    fetched = {node: [g["group_id"] for g in body["groups"]]
               for name, node, body in cluster.requests if name == "OffsetFetch"}
    assert fetched == {1: ["a", "b", "c"], 2: ["d", "e"]}
    assert all(g["topics"] is None for name, _, body in cluster.requests
               if name == "OffsetFetch" for g in body["groups"])      # every committed topic
    asked = {(t["name"], p["partition_index"]) for name, _, body in cluster.requests
             if name == "ListOffsets" for t in body["topics"] for p in t["partitions"]}
    assert asked == {("t", 0), ("t", 1), ("u", 0), ("u", 1)}   # only committed partitions
    a = lags["a"]
    assert a.partitions == {("t", 0): 40, ("t", 1): 10} and a.total == 50 and a.max == 40
    assert a.by_topic == {"t": 50}
    assert (a.asked_at, a.at, a.error) == (T0, T0 + 0.05, None)
    assert lags["b"].total == 0                           # committed past the end: 0
    assert lags["c"].total is None and lags["c"].error is None   # nothing committed
    assert lags["d"].by_topic == {"u": 14} and lags["d"].max == 10
    assert lags["e"].total is None


def test_a_group_error_and_a_moved_coordinator_are_that_groups_only():
    cluster = lab(group_errors={"a": ErrorCode.GROUP_AUTHORIZATION_FAILED,
                                "b": ErrorCode.NOT_COORDINATOR})
    lags = asyncio.run(fetch_lag(cluster, list("abd"), deadline=None))
    assert "GROUP_AUTHORIZATION_FAILED" in lags["a"].error and lags["a"].total is None
    assert "NOT_COORDINATOR" in lags["b"].error
    assert cluster.invalidated == ["b"]      # found again next round
    assert lags["d"].total == 14 and lags["d"].error is None


def test_a_coordinator_down_fails_its_groups_and_all_down_fails_the_round():
    cluster = lab(down={2})
    lags = asyncio.run(fetch_lag(cluster, list("ad"), deadline=None))
    assert lags["a"].total == 50 and "node 2 down" in lags["d"].error
    assert cluster.invalidated == ["d"]
    with pytest.raises(UnreachableError):
        asyncio.run(fetch_lag(lab(down={1, 2}), list("ad"), deadline=None))


# ---- the poller on an injected clock ------------------------------------------------------

class FakeTime:
    def __init__(self):
        self.now = 0.0
        self.alarms: list = []   # [(time, fn)]: fn() once time has come, mid-sleep

    async def sleep(self, seconds):
        """Time passes in steps of 0.1 s, others running between them (a hurry wakes
        the poller mid-sleep: this sleep is then cancelled)."""
        end = self.now + seconds
        while self.now < end:
            self.now = end if end - self.now < 0.1 + 1e-9 else self.now + 0.1
            for alarm in [a for a in self.alarms if a[0] <= self.now]:
                self.alarms.remove(alarm)
                alarm[1]()
            await asyncio.sleep(0)


def poller_with(monkeypatch, answers=None, interval=10.0):
    t = FakeTime()
    rounds: list[tuple[float, list[str]]] = []

    async def fake_fetch(cluster, groups, *, deadline, clock):
        rounds.append((t.now, list(groups)))
        t.now += 0.5        # a round takes half a second
        if answers and answers.pop(0) == "down":
            raise UnreachableError("no broker reachable")
        return {g: GroupLag(g, T0 + t.now, T0 + t.now, {("t", 0): 7}) for g in groups}
    monkeypatch.setattr("groupctl.observe.sources.lag.fetch_lag", fake_fetch)
    told: list = []
    poller = LagPoller(FakeCluster({}, {}, {}, {}), lambda: ["a", "b"], interval=interval,
                       on_round=lambda asked_at, lags: told.append(sorted(lags)),
                       clock=lambda: T0 + t.now, monotonic=lambda: t.now, sleep=t.sleep)
    return poller, t, rounds, told


def test_the_poller_reads_every_interval_and_a_hurried_group_at_once(monkeypatch):
    poller, t, rounds, told = poller_with(monkeypatch)

    t.alarms.append((12.0, lambda: poller.hurry("b")))   # mid-sleep: read b now, not at 20
    asyncio.run(poller.run(until=35.0))
    times = [round(at, 3) for at, _ in rounds]
    assert times[:2] == [0.0, 10.0] and rounds[0][1] == ["a", "b"]
    hurried = [r for r in rounds if r[1] == ["b"]]
    assert len(hurried) == 1 and 12.0 <= hurried[0][0] < 13.0
    assert [at for at, gs in rounds if gs == ["a", "b"]] == [0.0, 10.0, 20.0, 30.0]
    assert told[0] == ["a", "b"] and poller.rounds == 5 and poller.failed == 0


def test_the_first_round_waits_for_the_describe_sources_first_round(monkeypatch):
    """--all lists its groups in the describe source's first round: a lag round before it
    read some groups only (one of three, on a real watch)."""
    poller, t, rounds, told = poller_with(monkeypatch)
    followed: list[str] = []
    poller.groups = lambda: followed
    described = asyncio.Event()

    def first_describe_round():
        followed.extend(["a", "b", "c"])
        described.set()
    t.alarms.append((0.3, first_describe_round))
    asyncio.run(poller.run(until=5.0, after=described))
    assert rounds and 0.3 <= rounds[0][0] < 1.0   # (the fake clock steps 0.1 s)
    assert [gs for _, gs in rounds] == [["a", "b", "c"]]


def test_the_poller_backs_off_after_a_failed_round_and_says_so(monkeypatch):
    poller, t, rounds, told = poller_with(monkeypatch, answers=["ok", "down", "ok", "ok"],
                                          interval=1.0)
    asyncio.run(poller.run(until=7.0))
    assert poller.failed == 1 and told[1] == []       # the failed round: no reads
    assert len(told) >= 4 and told[2] == ["a", "b"]   # and the rounds go on
    gaps = [b[0] - a[0] for a, b in zip(rounds, rounds[1:])]
    assert gaps[0] == pytest.approx(1.0)
    assert 0.5 - 1e-6 <= gaps[1] <= 1.0 + 1e-6       # Backoff: [interval/2, interval] first


# ---- lag_before / lag_after ----------------------------------------------------------------

def rebalance(started: float | None, ended: float, group="g") -> dict:
    return envelope({"event": "rebalance", "from_generation": 1, "to_generation": 2,
                     "started": None if started is None else iso_ts(started),
                     "ended": iso_ts(ended), "duration_ms": int((ended - (started or ended - 3)) * 1000),
                     "members_before": ["m1"], "members_after": ["m1", "m2"],
                     "moved_partitions": 1, "reason": "joined"},
                    group=group, cluster="c", source="describe", at=ended)


def state(s: str, at: float, group="g") -> dict:
    return envelope({"event": "state", "state": s, "previous": "Stable"}, group=group,
                    cluster="c", source="describe", at=at)


def read(total: int | None, asked_at: float, group="g", error=None) -> dict:
    parts = {} if total is None else {("t", 0): total}
    return {group: GroupLag(group, asked_at, asked_at + 0.05, parts, error)}


def rounds_for(*groups):
    reducer = Reducer()
    for g in groups:
        reducer.apply(envelope({"event": "state", "state": "Stable", "previous": None},
                               group=g, cluster="c", source="describe", at=T0))
    told, hurried = [], []
    return LagRounds(reducer, deliver=told.append, hurry=hurried.append), reducer, told, hurried


def test_a_rebalance_carries_the_lag_nearest_its_start_and_the_first_read_after_its_end():
    r, reducer, told, hurried = rounds_for("g")
    r.round_done(T0, read(100, T0))
    r.round_done(T0 + 10, read(120, T0 + 10))
    r.route(state("PreparingRebalance", T0 + 10.6))
    assert hurried == ["g"]                               # a read near the start
    r.round_done(T0 + 10.7, read(130, T0 + 10.7))
    r.route(rebalance(T0 + 10.5, T0 + 14))
    r.route(state("Stable", T0 + 14))                     # behind the held rebalance
    assert [e["event"] for e in told] == ["state"] and hurried == ["g", "g"]
    r.round_done(T0 + 13.9, read(999, T0 + 13.9))         # began before the end: not it
    assert [e["event"] for e in told] == ["state"]
    r.round_done(T0 + 14.1, read(90, T0 + 14.1))
    assert [e["event"] for e in told] == ["state", "rebalance", "state"]   # order kept
    e = told[1]
    assert (e["lag_before"], e["lag_after"]) == (130, 90)   # 10.7 is nearest 10.5
    assert e["lag_before_ts"] == iso_ts(T0 + 10.7) and e["lag_after_ts"] == iso_ts(T0 + 14.1)
    status = reducer.groups["g"]
    assert (status.lag, status.lag_by_topic, status.lag_max) == (90, {"t": 90}, 90)
    assert status.lag_at == pytest.approx(T0 + 14.15)


def test_a_long_round_keeps_the_reads_around_its_start_and_only_a_few_others():
    r, _, told, _ = rounds_for("g")
    r.round_done(T0, read(100, T0))
    r.route(state("PreparingRebalance", T0 + 5))
    for i in range(10):                                   # a round of 100 s, read every 10 s
        r.round_done(T0 + 5.1 + 10 * i, read(110 + i, T0 + 5.1 + 10 * i))
    assert len(r.reads["g"]) == 4                         # bounded, however long the watch
    r.route(rebalance(T0 + 5, T0 + 100))
    r.round_done(T0 + 100.2, read(7, T0 + 100.2))
    assert (told[-1]["lag_before"], told[-1]["lag_after"]) == (110, 7)
    assert "g" not in r.at_start


def test_unknown_lag_is_null_never_a_guess():
    r, reducer, told, _ = rounds_for("g", "h")
    r.route(rebalance(T0 + 1, T0 + 2))                    # no read yet
    r.round_done(T0 + 2.5, read(None, T0 + 2.5, error="GROUP_AUTHORIZATION_FAILED"))
    e = told[-1]
    assert (e["lag_before"], e["lag_after"], e["lag_before_ts"], e["lag_after_ts"]) == (None,) * 4
    r.round_done(T0 + 3, read(5, T0 + 3))
    r.route(rebalance(None, T0 + 6))                      # start unseen: from its first look
    r.round_done(T0 + 6.2, {})                            # the round failed as a whole
    assert (told[-1]["lag_before"], told[-1]["lag_after"]) == (5, None)
    assert reducer.groups["g"].lag == 5                   # a failed read keeps the last one
    r.route(rebalance(T0 + 7, T0 + 8, group="h"))
    assert told[-1]["group"] == "g"
    r.flush()                                             # the watch ends: nothing lost
    assert told[-1]["group"] == "h" and told[-1]["lag_after"] is None and not r.held


def test_a_dead_group_has_no_lag():
    r, reducer, _, _ = rounds_for("g")
    r.round_done(T0, read(4, T0))
    reducer.apply(state("Dead", T0 + 1))
    assert reducer.groups["g"].lag is None and reducer.groups["g"].lag_by_topic == {}


# ---- the gauges ---------------------------------------------------------------------------

def test_lag_gauges_have_groupctl_names_and_are_promtool_clean():
    r, reducer, _, _ = rounds_for("g", "quiet")
    reducer.groups["g"].type = "classic"
    r.round_done(T0, {"g": GroupLag("g", T0, T0 + 0.5, {("t", 0): 40, ("t", 1): 2, ("u", 0): 5}),
                      "quiet": GroupLag("quiet", T0, T0 + 0.5)})
    poller = LagPoller(FakeCluster({}, {}, {}, {}), lambda: [], on_round=r.round_done)
    poller.rounds, poller.failed, poller.last_round_seconds = 3, 1, 0.02
    metrics = WatchMetrics(reducer, followed=lambda: 2)
    add_lag_metrics(metrics, poller)
    text = metrics.render()
    got = {(s.name, tuple(sorted(s.labels.items()))): s.value
           for f in text_string_to_metric_families(text) for s in f.samples}
    lv = (("group", "g"), ("type", "classic"))
    assert got[("groupctl_group_lag", lv)] == 47
    assert got[("groupctl_group_lag_max", lv)] == 40
    for topic, lag in (("t", 42), ("u", 5)):
        key = tuple(sorted(lv + (("topic", topic),)))
        assert got[("groupctl_group_topic_lag", key)] == lag
    assert got[("groupctl_group_lag_timestamp_seconds", lv)] == T0 + 0.5
    assert not [k for k in got if ("group", "quiet") in k[1] and "lag" in k[0]]   # no commits
    assert got[("groupctl_lag_rounds_total", ())] == 3
    assert got[("groupctl_lag_rounds_failed_total", ())] == 1
    promtool = shutil.which("promtool")
    assert promtool, "promtool is missing: ./dev setup installs Debian's prometheus package"
    done = subprocess.run([promtool, "check", "metrics"], input=text, text=True,
                          capture_output=True, timeout=60)
    assert done.returncode == 0 and not done.stdout.strip() and not done.stderr.strip(), \
        done.stdout + done.stderr


# ---- the options --------------------------------------------------------------------------

@pytest.mark.parametrize("args, words", [
    (("watch", "g", "--lag-interval", "5"), ("--lag-interval needs --lag",)),
    (("watch", "g", "--lag", "--lag-interval", "0"), ("--lag-interval must be positive",)),
    (("watch", "g", "--lag", "--lag-interval", "nan"), ("--lag-interval must be positive",)),
])
def test_lag_options_usage_errors_exit_2(args, words):
    from test_cli_offline import assert_usage_error, run

    assert_usage_error(*run(*args), *words)


# ---- in the watch: the lag source beside the describe poller ------------------------------

def test_a_watch_with_lag_holds_the_rebalance_for_its_lag_and_counts_it_then(monkeypatch):
    """The whole pipeline (describe poller, story, lag poller, reducer, --max-rebalances)
    on asyncio's clock: the rebalance reaches the sink with the lag read after its end, and
    exit 8 comes from the lag source's task, which told it."""
    from described_cluster import DescribedCluster
    from test_pipeline import classic, m

    from groupctl.observe.reads.describe import DescribeResult
    from groupctl.observe.watch import ConditionViolated, Watcher, WatchSettings

    looks = [classic("Stable", 1, m("a", 0, 1)), classic("PreparingRebalance", 1, m("a", 0, 1)),
             classic("Stable", 2, m("a", 0), m("b", 1))]

    cluster = DescribedCluster([DescribeResult([look]) for look in looks]).install(monkeypatch)
    reads: list[tuple[float, int]] = []

    async def fake_fetch(cluster, groups, *, deadline, clock):
        asked_at = clock()
        reads.append((asked_at, 1000 + len(reads)))
        return {g: GroupLag(g, asked_at, clock(), {("t", 0): reads[-1][1]}) for g in groups}
    monkeypatch.setattr("groupctl.observe.sources.lag.fetch_lag", fake_fetch)
    told: list[dict] = []
    watcher = Watcher(cluster, WatchSettings(
        groups=["g"], interval=0.01, duration=30, max_rebalances=0, lag_interval=0.05),
        emit=told.append)
    with pytest.raises(ConditionViolated, match="rebalanced 1 time"):
        asyncio.run(watcher.run())
    (e,) = [e for e in told if e["event"] == "rebalance"]
    ended = datetime_of(e["ended"])
    after = [(at, lag) for at, lag in reads if at >= ended - 0.001]
    assert after and e["lag_after"] == after[0][1]
    assert e["lag_before"] in {lag for _, lag in reads} and e["lag_before"] < e["lag_after"]
    assert watcher.reducer.groups["g"].lag == reads[-1][1]
    assert not watcher.lag.held


def datetime_of(ts: str) -> float:
    from groupctl.observe.state.reducer import _seconds

    return _seconds(ts)


def test_the_plain_rebalance_line_says_the_lag_only_with_lag():
    from groupctl.render.watch_lines import plain_line

    r, _, told, _ = rounds_for("g")
    r.round_done(T0, read(120, T0))
    r.route(rebalance(T0 + 1, T0 + 2))
    r.round_done(T0 + 2.1, read(70, T0 + 2.1))
    line = plain_line(told[-1], set())
    assert "moved 1, lag 120 -> 70, reason: joined" in line, line
    unknown = {**told[-1], "lag_after": None}
    assert "lag 120 -> -, reason" in plain_line(unknown, set())
    without = {k: v for k, v in told[-1].items() if not k.startswith("lag_")}
    assert "moved 1, reason: joined" in plain_line(without, set())
