"""The version matrix: groupctl's core commands on every Kafka release users run, each
against that release's own tools (ConsumerGroupCommand, DumpLogSegments from the same jars)
and broker log. The rest of the suite runs on the lab's default release (4.4.0); here one
single-node broker per older release is started in turn (`kafka_at`) and shared by its
cases. Set GROUPCTL_TEST_KAFKA_VERSIONS (comma-separated) to run other releases.

What each release lacks, and how groupctl says so:
  3.7  no group types (ListGroups v4): --type is exit 2; KIP-848 only as early access, off:
       a consumer-protocol member or workload is refused (exit 7) with the reason
  3.8, 3.9  KIP-848 a preview that is off unless enabled: ConsumerGroupDescribe answers
       UNSUPPORTED_VERSION, which means "no such consumer group", never a failure
  4.0  KIP-848 on; share groups early access (off); no streams groups
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time

import pytest
from describe_support import cgc_rows, cli
from watch_support import WatchProcess
from waiting import wait_until

from groupctl.lab import dist, dump_log, tools
from groupctl.lab.consumer import wait_balanced

from records_support import snapshot

pytestmark = pytest.mark.broker

VERSIONS = [v.strip() for v in os.environ.get(
    "GROUPCTL_TEST_KAFKA_VERSIONS", "3.7.2,3.9.2,4.0.2,4.3.1").split(",") if v.strip()]


# Kafka 4.0 as users run its early access to share groups: KIP-932's APIs in the versions
# 4.1 replaced (ShareGroupDescribe v0), its records in a layout 4.1 changed.
EARLY_SHARE_GROUPS = {"unstable.api.versions.enable": "true",
                      "group.coordinator.rebalance.protocols": "classic,consumer,share"}


@pytest.fixture(scope="module", params=VERSIONS)
def lab(request, kafka_at):
    early = dist.version_tuple(request.param)[:2] == (4, 0)
    return kafka_at(request.param, EARLY_SHARE_GROUPS if early else None)


def kip848(lab) -> bool:
    return dist.version_tuple(lab.kafka_version) >= (4, 0, 0)


def group_types(lab) -> bool:
    return dist.version_tuple(lab.kafka_version)[:2] >= (3, 8)


class spawn:
    """groupctl as a process, its stderr collected as it comes."""

    def __init__(self, lab, *args: str):
        self.proc = subprocess.Popen([sys.executable, "-m", "groupctl", "-b", lab.bootstrap,
                                      *args], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, text=True)
        self.lines: list[str] = []
        self.reader = threading.Thread(target=lambda: self.lines.extend(self.proc.stderr),
                                       daemon=True)
        self.reader.start()

    def stderr_text(self) -> str:
        return "".join(self.lines)

    def poll(self):
        return self.proc.poll()

    def wait(self, timeout: float) -> int:
        code = self.proc.wait(timeout)
        self.reader.join(5)
        return code

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
        self.wait(30)


def json_cli(lab, *args: str):
    code, out, err = cli(lab, "-o", "json", *args)
    return code, (json.loads(out) if out.strip() else None), err


def test_list_describe_and_all_match_consumer_group_command(lab, topic_factory,
                                                            consumer_factory, unique_group):
    topic = topic_factory(4, cluster=lab)
    members = [consumer_factory(unique_group, topic, cluster=lab) for _ in range(2)]
    wait_balanced(members, [(topic, p) for p in range(4)])

    def settled():
        rows = cgc_rows(lab, "--describe", "--group", unique_group)
        return rows if all(r["CONSUMER-ID"] != "-" for r in rows) else None

    theirs = wait_until(settled, 30, "ConsumerGroupCommand to show both owners")
    code, listed, err = json_cli(lab, "list")
    assert code == 0, err
    (mine,) = [g for g in listed if g["group"] == unique_group]
    assert mine["state"] == "Stable" and mine["protocol_type"] == "consumer"
    assert mine["type"] == ("classic" if group_types(lab) else None)
    code, (desc,), err = json_cli(lab, "describe", unique_group)
    assert code == 0, err
    assert desc["type"] == "classic" and desc["state"] == "Stable"
    owners = {(r["topic"], r["partition"]): (r["member_id"], r["committed"])
              for r in desc["offsets"]}
    assert owners == {(r["TOPIC"], int(r["PARTITION"])): (
        r["CONSUMER-ID"], None if r["CURRENT-OFFSET"] == "-" else int(r["CURRENT-OFFSET"]))
        for r in theirs}
    code, every, err = json_cli(lab, "describe", "--all")
    assert code == 0, err
    assert [g["members"] for g in every if g["group"] == unique_group] == [desc["members"]]


def test_a_group_not_created_yet(lab, topic_factory, consumer_factory, unique_group):
    """describe: exit 5; wait --state Stable: waits for it; watch (every source): no
    "lost contact", and the group is seen as it appears."""
    topic = topic_factory(1, cluster=lab)
    code, _, err = cli(lab, "describe", unique_group)
    assert code == 5 and "not found" in err, err
    watches = [WatchProcess(lab, unique_group, "--duration", "60", *source)
               for source in (("--interval", "0.2"), ("--source", "records"),
                              ("--source", "auto", "--interval", "0.2"))]
    # wait as a deploy script runs it, before the consumers start; its --debug trace
    # tells when it has looked (and found nothing)
    waiter = spawn(lab, "--debug", "wait", unique_group, "--state", "Stable",
                   "--timeout", "60")
    try:
        wait_until(lambda: waiter.poll() is not None or "trace: DescribeGroups" in
                   waiter.stderr_text(), 30, "wait's first look")
        for w in watches:
            w.wait_event(lambda e: e["event"] == "state" and e["state"] == "Dead", 30,
                         "the watch's first look")
        assert waiter.poll() is None, waiter.stderr_text()[-2000:]   # still waiting
        consumer = consumer_factory(unique_group, topic, cluster=lab)
        consumer.wait_assigned()
        assert waiter.wait(60) == 0, waiter.stderr_text()[-2000:]
        for w in watches:
            w.wait_event(lambda e: e["event"] == "rebalance", 30, "the first round")
    finally:
        for w in watches:
            w.stop()
        waiter.stop()
    for w in watches:
        assert "lost contact" not in w.stderr(), w.stderr()[-2000:]


def test_join_watch_of_each_protocol_the_broker_has(lab, topic_factory, unique_group):
    topic = topic_factory(2, cluster=lab)
    code, out, err = json_cli(lab, "join", f"{unique_group}-new", "--topics", topic, "--yes")
    assert code == 0, err   # a new group: classic on every release (3.7 says Dead of it)
    assert out["protocol"] != "consumer" and out["generation"] >= 1, out
    for protocol in ("classic", "consumer"):
        code, _, err = cli(lab, "join", f"{unique_group}-{protocol}", "--topics", topic,
                           "--protocol", protocol, "--watch", "--duration", "2", "--yes")
        if protocol == "consumer" and not kip848(lab):
            assert code == 7 and "KIP-848" in err, (code, err)
        else:
            assert code == 0, err


def test_force_rebalance_and_history(lab, topic_factory, consumer_factory, unique_group):
    from steer_support import stabilized

    topic = topic_factory(2, cluster=lab)
    members = [consumer_factory(unique_group, topic, cluster=lab) for _ in range(2)]
    wait_balanced(members, [(topic, p) for p in range(2)])
    wait_until(lambda: stabilized(lab, unique_group), 30, "a Stabilized line")
    before = stabilized(lab, unique_group)
    code, report, err = json_cli(lab, "force-rebalance", unique_group, "--yes")
    assert code == 0 and report["new_generations"] == 1, (code, err)
    after = wait_until(lambda: (s := stabilized(lab, unique_group)) != before and s, 30,
                       "the new generation in the broker log")
    assert after[-1] == before[-1] + 1
    code, events, err = json_cli(lab, "history", unique_group)
    assert code == 0, err
    # every generation history tells, the broker stabilized; the forced one among them (a
    # generation replaced before its leader's SyncGroup is never stored: 3.7's coordinator
    # writes the group at SyncGroup)
    generations = [e["generation"] for e in events if e["event"] == "generation"]
    assert after[-1] in generations and set(generations) <= set(after), (after, generations)


def test_decode_records_equals_this_releases_dump_log_segments(lab, tmp_path):
    """Record by record against DumpLogSegments of the same jars (3.7's prints no record
    versions and terser keys: the kind, the commit's offset and the generation there)."""
    files = snapshot(lab, str(tmp_path))
    theirs = dump_log.parse(dump_log.run(files, libs=lab.libs_path))
    code, text, err = cli(lab, "-o", "ndjson", "decode", "records", *files)
    assert code == 0, err
    mine = [json.loads(line) for line in text.splitlines()]
    assert theirs and len(mine) == len(theirs)
    assert not [r for r in mine if r.get("error")], "records groupctl could not decode"
    for ours, kafka in zip(mine, theirs):
        assert ours["offset"] == kafka["offset"] and ours["timestamp_ms"] == kafka["timestamp"]
        assert (ours["value"] is None) == (kafka["value"] is None), (ours, kafka)
        if not kafka.get("legacy"):
            assert (ours["type"], ours["version"]) == (kafka["type"], kafka["version"])
            continue
        assert {0: 1, 1: 1, 2: 2}[ours["type"]] == kafka["type"], (ours, kafka)
        if ours["value"] is not None and kafka["type"] == 1:
            assert ours["value"]["offset"] == kafka["value"]["committed_offset"], (ours, kafka)
        elif ours["value"] is not None:
            assert ours["value"]["generation"] == kafka["value"]["generation_id"], (ours, kafka)


def test_what_the_broker_lacks_is_one_line(lab, unique_group):
    code, _, err = cli(lab, "list", "--type", "consumer")
    if group_types(lab):
        assert code == 0, err
    else:
        assert code == 2 and "ListGroups v5" in err, (code, err)
    started = time.monotonic()
    code, _, err = cli(lab, "lab", "workload", "--group", unique_group, "--topic",
                       f"{unique_group}-t", "--protocol", "consumer", "--duration", "1")
    if kip848(lab):
        assert code == 0, err
    else:
        assert code == 7 and "KIP-848 needs Kafka 4.0" in err, (code, err)
        assert time.monotonic() - started < 15


def test_an_early_access_share_group_is_one_line(lab, topic_factory, unique_group, tmp_path):
    """Kafka 4.0 with share groups on: a share group made by Kafka's own share consumer is
    one line naming Kafka 4.1 (was "not found", Dead to wait and watch, Empty -> Dead to
    history), and its records are said to be an early-access broker's."""
    if dist.version_tuple(lab.kafka_version)[:2] != (4, 0):
        pytest.skip("share groups as early access are Kafka 4.0's")
    topic = topic_factory(1, cluster=lab)
    consumer = tools.java_tool(lab.libs_path, "org.apache.kafka.tools.consumer.ConsoleShareConsumer",
                              "--bootstrap-server", lab.bootstrap, "--topic", topic,
                              "--group", unique_group, "--timeout-ms", "3000", timeout=60)
    assert "Processed a total of 0 messages" in consumer.stdout + consumer.stderr, consumer.stderr
    line = (f"group {unique_group!r} is a share group: share groups need Kafka 4.1 or later; "
            "this broker offers ShareGroupDescribe v0")
    for args in (("describe", unique_group), ("wait", unique_group, "--state", "Empty"),
                 ("watch", unique_group, "--duration", "5")):
        code, _, err = cli(lab, *args)
        assert code == 7 and line in err and "lost contact" not in err, (args, code, err)
    code, _, err = cli(lab, "history", unique_group)
    assert code == 7 and "written by an early-access broker (Kafka 4.0)" in err, err
    files = snapshot(lab, str(tmp_path))
    code, _, err = cli(lab, "-o", "ndjson", "decode", "records", "--group", unique_group, *files)
    assert code == 0 and "ShareGroupMetadata records written by an early-access broker " \
        "(Kafka 4.0): not decoded" in err, err
