"""`groupctl wait` on the lab broker: it returns within one interval of the condition
becoming true (consumers join during the test), --settled holds back through a rebalance,
a timeout is exit 6 naming the failing part, Dead matches a missing group, and the
protocol trace shows it never writes to the cluster."""
from __future__ import annotations

import re
import threading
import time

import pytest
from steer_support import cli, cli_json, describe, wait_until

pytestmark = pytest.mark.broker

WRITES = ("JoinGroup", "SyncGroup", "Heartbeat", "LeaveGroup", "OffsetCommit",
          "ConsumerGroupHeartbeat")


class Background:
    """`groupctl -o json wait ...` in-process on a thread; .result when done, and when."""

    def __init__(self, kafka, *args, timeout=60):
        self.result = None
        self.done_at = None
        self._thread = threading.Thread(target=self._run, args=(kafka, args, timeout), daemon=True)
        self._thread.start()

    def _run(self, kafka, args, timeout):
        self.result = cli_json(kafka, *args, timeout=timeout)
        self.done_at = time.monotonic()

    def join(self, timeout=90):
        self._thread.join(timeout)
        assert not self._thread.is_alive(), "wait did not return"
        return self.result


def stable_with(kafka, group, n):
    d = describe(kafka, group)
    return d is not None and d["state"] == "Stable" and len(d["members"]) == n


def test_returns_within_an_interval_of_the_condition(kafka, topic_factory, consumer_factory,
                                                     unique_group):
    topic = topic_factory(2)
    waiting = Background(kafka, "wait", unique_group, "--state", "stable", "--members", "2",
                         "--interval", "2")
    first = [consumer_factory(unique_group, topic)]
    first[0].wait_assigned(count=2)
    assert waiting.done_at is None  # one member is not the condition
    consumer_factory(unique_group, topic)
    wait_until(lambda: stable_with(kafka, unique_group, 2), 30, "Stable with 2 members",
               interval=0.02)
    true_at = time.monotonic()
    code, data, err = waiting.join()
    assert code == 0, err
    assert data["met"] and data["state"] == "Stable" and data["members"] == 2
    assert data["failing"] == []
    # at most one interval (2 s) after our own poll first saw it, plus a describe's round
    # trip (generous: the machine may be loaded)
    assert waiting.done_at - true_at < 2.75, waiting.done_at - true_at


def test_settled_holds_back_through_a_rebalance(kafka, topic_factory, consumer_factory,
                                                unique_group):
    topic = topic_factory(3)
    for _ in range(2):
        consumer_factory(unique_group, topic)
    wait_until(lambda: stable_with(kafka, unique_group, 2), 30, "Stable with 2 members")
    started = time.monotonic()
    waiting = Background(kafka, "wait", unique_group, "--state", "Stable", "--settled", "4",
                         "--interval", "0.2")
    third = consumer_factory(unique_group, topic)  # a rebalance inside the 4 s
    third.wait_assigned()
    code, data, err = waiting.join()
    assert code == 0, err
    assert data["members"] == 3, data  # it did not return with the group of before
    assert data["held_for_s"] >= 4
    assert waiting.done_at - started >= 4


def test_timeout_is_exit_6_naming_the_failing_part(kafka, topic_factory, consumer_factory,
                                                   unique_group):
    topic = topic_factory(1)
    consumer_factory(unique_group, topic).wait_assigned()
    code, out, err = cli(kafka, "wait", unique_group, "--state", "Stable", "--members", "5",
                         "--interval", "0.3", timeout=4)
    assert code == 6
    assert "condition NOT met" in out and "members: want 5, has 1" in out
    assert err.startswith("groupctl: error: ") and "members: want 5, has 1" in err
    assert "state:" not in err  # the state part holds: only the failing part is named
    code, data, err = cli_json(kafka, "wait", unique_group, "--generation-gt", "1000",
                               "--interval", "0.3", timeout=4)
    assert code == 6 and data["met"] is False and len(data["failing"]) == 1
    assert data["failing"][0].startswith("generation: want > 1000")


def test_dead_matches_a_missing_group(kafka, unique_group):
    code, data, err = cli_json(kafka, "wait", unique_group, "--state", "DEAD", timeout=5)
    assert code == 0, err
    assert data["met"] and data["exists"] is False and data["state"] == "Dead"
    assert err == ""   # a script: nothing on stderr
    import io

    from groupctl.cli.app import invoke
    from groupctl.cli.env import Env

    env = Env(stdout=io.StringIO(), stderr=io.StringIO(), stderr_is_terminal=True)
    code = invoke(["-b", kafka.bootstrap, "wait", unique_group, "--state", "dead"], env)
    assert code == 0   # a person is told what it waits for, before the answer comes
    assert env.stderr.getvalue() == f"groupctl: wait: {unique_group}: state Dead (for up to 60 s) ...\n"
    code, out, err = cli(kafka, "wait", unique_group, "--state", "Stable", "--must-exist",
                         timeout=5)
    assert code == 5 and "does not exist" in err
    # watch: said at the first look; --must-exist ends it there (exit 5)
    code, out, err = cli(kafka, "watch", unique_group, "--duration", "5", timeout=20)
    # (after the line naming the witnesses: watch --source auto, the default)
    assert code == 0 and err.splitlines()[1:] == [
        f"groupctl: watch: group '{unique_group}' does not exist; watching for it to appear"], err
    assert err.startswith("groupctl: watch: source auto: the coordinator's records"), err
    started = time.monotonic()
    code, out, err = cli(kafka, "watch", unique_group, "--duration", "60", "--must-exist",
                         timeout=10)
    assert (code, out) == (5, "") and time.monotonic() - started < 30
    assert err.splitlines()[1:] == [
        f"groupctl: error: group '{unique_group}' does not exist (--must-exist)"], err
    code, data, err = cli_json(kafka, "wait", unique_group, "--state", "Stable",
                               "--interval", "0.2", timeout=4)
    assert code == 6 and data["failing"] == ["state: want Stable, is missing (Dead)"]


def test_consumer_group_epoch_and_max_lag(kafka, topic_factory, consumer_factory, unique_group):
    from describe_support import commit, produce

    topic = topic_factory(1)
    consumer = consumer_factory(unique_group, topic, protocol="consumer")
    consumer.wait_assigned()
    d = wait_until(lambda: (x := describe(kafka, unique_group)) and x["state"] == "Stable" and x,
                   30, "Stable")
    code, data, err = cli_json(kafka, "wait", unique_group, "--state", "stable",
                               "--generation-gt", str(d["group_epoch"] - 1), timeout=10)
    assert code == 0 and data["type"] == "consumer", err
    assert data["group_epoch"] == d["group_epoch"] and data["lag_total"] is None
    # a state consumer groups never have: exit 2 at the first look, not at the timeout
    started = time.monotonic()
    code, out, err = cli(kafka, "wait", unique_group, "--state", "PreparingRebalance",
                         timeout=30)
    assert (code, out) == (2, ""), err
    assert err == (f"groupctl: error: --state PreparingRebalance: group '{unique_group}' is a "
                   f"consumer group, which has no such state; its states: Empty, Assigning, "
                   f"Reconciling, Stable, Dead\n")
    assert time.monotonic() - started < 15

    group = unique_group + "-lag"
    produce(kafka.bootstrap, topic, {0: 50})
    commit(kafka.bootstrap, group, {(topic, 0): 20})
    # 8 s: the first describe with offsets (4 requests) must fit on a loaded machine, where
    # 4 s once ran out while still connecting (exit 3 instead of 6)
    code, data, err = cli_json(kafka, "wait", group, "--max-lag", "10", "--interval", "0.2",
                               timeout=8)
    assert code == 6 and data["failing"] == ["lag: want <= 10, is 30"] and data["lag_total"] == 30, err
    code, data, err = cli_json(kafka, "wait", group, "--max-lag", "30", "--state", "empty",
                               timeout=10)
    assert code == 0 and data["lag_total"] == 30, err


def test_never_writes_to_the_cluster(kafka, topic_factory, consumer_factory, unique_group):
    from describe_support import produce

    topic = topic_factory(1)
    consumer_factory(unique_group, topic).wait_assigned()
    produce(kafka.bootstrap, topic, {0: 3})  # the consumer commits: the lag becomes known
    for extra in ([], ["--max-lag", "1000000"]):
        code, out, err = cli(kafka, "--debug", "wait", unique_group, "--state", "Stable",
                             "--settled", "1", "--interval", "0.2", *extra, timeout=20)
        assert code == 0, err
        sent = re.findall(r"groupctl: trace: (\w+) v\d+ ", err)
        assert "DescribeGroups" in sent and "ConsumerGroupDescribe" in sent
        assert not set(sent) & set(WRITES), sorted(set(sent))
        assert ("OffsetFetch" in sent) == bool(extra) and ("ListOffsets" in sent) == bool(extra)
