"""The lab: `groupctl lab up/status/down/workload` against real Kafka, Kafka's own
ConsumerGroupCommand from the cached jars, and LabConsumer (real librdkafka consumers)."""
from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cli_runner import run_cli
from groupctl.lab import config as labconfig
from groupctl.lab import dist, process
from groupctl.lab.consumer import LabConsumer, wait_balanced
from groupctl.lab.ready import metadata_brokers


@pytest.fixture
def lab_home(tmp_path, monkeypatch):
    """CLI labs of this test live in a temp dir, never in the user's ~/.cache."""
    monkeypatch.setenv("GROUPCTL_LAB_HOME", str(tmp_path))
    return tmp_path


def java_processes_under(path: Path) -> list[str]:
    """Live (non-zombie) processes whose command line mentions `path`."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        info = process.proc_info(int(proc.name))
        if info and not info.zombie and any(str(path) in a for a in info.cmdline):
            found.append(f"{info.pid}: {' '.join(info.cmdline)[:120]}")
    return found


def _up_status_down(lab_home: Path, name: str, brokers: int) -> None:
    code, out, err = run_cli("lab", "up", "--brokers", str(brokers), "--name", name, "-o", "json")
    assert code == 0, err
    up = json.loads(out)
    try:
        assert up["state"] == "running" and up["alive"] == brokers
        assert up["kafka_version"] == dist.DEFAULT_KAFKA_VERSION
        # Metadata from the cluster itself lists every broker
        assert metadata_brokers(up["bootstrap"], timeout=10) == list(range(1, brokers + 1))

        code, out, err = run_cli("lab", "status", "--name", name, "-o", "json")
        assert code == 0, err
        status = json.loads(out)
        assert [n["alive"] for n in status["nodes"]] == [True] * brokers
        assert len({n["pid"] for n in status["nodes"]}) == brokers
        assert status["bootstrap"] == up["bootstrap"]
        for n in status["nodes"]:
            log = Path(n["log_file"])
            assert log.is_file() and log.parent.parent.parent == lab_home / name
            assert "Kafka Server started" in log.read_text()

        code, out, err = run_cli("lab", "status", "--name", name)  # the table view
        assert code == 0, err
        assert f"bootstrap: {up['bootstrap']}" in out
        assert f"{brokers}/{brokers} node(s) alive" in out
        for n in status["nodes"]:
            assert n["log_file"] in out
    finally:
        code, out, err = run_cli("lab", "down", "--name", name)
    assert code == 0, err
    assert not (lab_home / name / "state.json").exists()
    for n in up["nodes"]:
        info = process.proc_info(n["pid"])
        assert info is None or info.zombie, f"node {n['node_id']} still running"
    assert java_processes_under(lab_home / name) == []
    code, out, err = run_cli("lab", "status", "--name", name)
    assert code == 2 and err == (f"groupctl: error: no lab named {name!r} is running (start "
                                 f"one with `groupctl lab up --name {name}`)\n")


@pytest.mark.broker
def test_lab_up_status_down_one_node(lab_home):
    _up_status_down(lab_home, "one", 1)


@pytest.mark.broker
@pytest.mark.cluster3
def test_lab_up_status_down_three_nodes(lab_home):
    _up_status_down(lab_home, "three", 3)


@pytest.mark.broker
def test_lab_up_twice_is_refused_and_down_twice_is_harmless(lab_home):
    code, _, err = run_cli("lab", "up", "--name", "twice")
    assert code == 0, err
    try:
        # a lab that runs is a usage error (exit 2) found before anything starts, whose
        # advice starts a second lab instead of stopping this one (maybe someone else's)
        code, out, err = run_cli("lab", "up", "--name", "twice")
        assert (code, out) == (2, "")
        assert re.fullmatch(r"groupctl: error: lab 'twice' is already running at \S+: start "
                            r"another beside it with `groupctl lab up --name NAME` \(or stop "
                            r"this one: `groupctl lab down --name twice`\)\n", err)
    finally:
        assert run_cli("lab", "down", "--name", "twice")[0] == 0
    code, _, err = run_cli("lab", "down", "--name", "twice")
    assert code == 0 and "nothing to stop" in err


def test_port_taken_is_a_clean_error(lab_home):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        code, out, err = run_cli("lab", "up", "--port", str(port), "--name", "taken")
    assert code == 2
    assert out == ""
    assert err == (f"groupctl: error: port {port} on 127.0.0.1 is already in use (choose "
                   f"another --port, or leave it out to pick free ports)\n")
    assert not (lab_home / "taken" / "state.json").exists()


def test_unwritable_lab_and_cache_directories_are_exit_2_before_any_work(tmp_path,
                                                                        monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("GROUPCTL_LAB_HOME", str(blocker / "labs"))
    code, out, err = run_cli("lab", "up", "--name", "x")
    assert (code, out) == (2, "")
    assert err == (f"groupctl: error: lab directory {blocker / 'labs'}: cannot create it (Not "
                   "a directory); set GROUPCTL_LAB_HOME to a writable directory\n")
    monkeypatch.setenv("GROUPCTL_LAB_HOME", str(tmp_path / "labs"))
    monkeypatch.setenv("GROUPCTL_CACHE", str(blocker / "cache"))
    code, out, err = run_cli("lab", "up", "--name", "x", "--kafka-version", "4.3.1")
    assert (code, out) == (2, "")
    assert err == (f"groupctl: error: cache directory {blocker / 'cache' / 'kafka' / '4.3.1'}: "
                   "cannot create it (Not a directory); set GROUPCTL_CACHE to a writable "
                   "directory\n")
    assert not (tmp_path / "labs" / "x").exists()


def test_lab_usage_errors(lab_home):
    assert run_cli("lab", "up", "--brokers", "2", "--name", "x")[0] == 2
    assert run_cli("lab", "up", "--name", "../x")[0] == 2
    code, _, err = run_cli("lab", "workload", "--group", "g", "--topic", "t",
                           "--protocol", "consumer", "--assignor", "range", "-b", "127.0.0.1:1")
    assert code == 2 and "--assignor" in err


# --- Kafka's own tool and LabConsumer against the session broker ---------------------

def test_consumer_group_command_sees_a_lab_consumer(kafka, topic_factory, unique_group,
                                                    consumer_factory):
    topic = topic_factory(3)
    consumer = consumer_factory(unique_group, topic, name="cgc-peer")
    consumer.wait_assigned(timeout=30, count=3)

    listed = kafka.consumer_group_command("--list")
    assert listed.returncode == 0, listed.stderr
    assert unique_group in listed.stdout.split()

    described = kafka.consumer_group_command("--describe", "--group", unique_group)
    assert described.returncode == 0, described.stderr
    rows = [ln.split() for ln in described.stdout.splitlines()
            if ln.startswith(unique_group + " ")]
    # GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID HOST CLIENT-ID
    owners = {(r[1], int(r[2])): (r[6], r[-1]) for r in rows}
    assert set(owners) == consumer.assignment
    assert set(owners.values()) == {(consumer.member_id, "cgc-peer")}


@pytest.mark.parametrize("protocol,assignor", [
    ("classic", "range"),
    ("classic", "cooperative-sticky"),
    ("consumer", None),
])
def test_two_consumers_share_four_partitions(protocol, assignor, topic_factory, unique_group,
                                             consumer_factory):
    topic = topic_factory(4)
    everything = {(topic, p) for p in range(4)}
    a = consumer_factory(unique_group, topic, protocol=protocol, assignor=assignor, name="a")
    a.wait_assigned(timeout=30, partitions=everything)
    b = consumer_factory(unique_group, topic, protocol=protocol, assignor=assignor, name="b")
    got = wait_balanced([a, b], everything, timeout=60)
    assert len(got["a"]) == len(got["b"]) == 2
    assert a.member_id and b.member_id and a.member_id != b.member_id
    for c in (a, b):  # every callback's recorded assignment follows from the callbacks
        owned: set = set()
        for e in c.events:
            if e.kind == "assign":
                owned = set(e.partitions) if c.eager else owned | e.partitions
            else:
                owned -= e.partitions
            assert frozenset(owned) == e.assignment
    if not a.eager:  # incremental: `a` gave up two partitions and kept the other two
        assert [e.kind for e in a.events][:2] == ["assign", "revoke"]
        assert len(a.events[1].partitions) == 2

    b.close()  # leaves the group: `a` gets everything back
    a.wait_assigned(timeout=60, partitions=everything)
    assert b.assignment == frozenset()


def test_lab_consumer_reports_bad_config(kafka):
    with pytest.raises(Exception, match="consumer failed"):
        LabConsumer(kafka.bootstrap, "g", ["t"], config={"no.such.setting": "1"}).start()


def test_workload_cli_churns_real_consumers(kafka, unique_group, tmp_path):
    record = tmp_path / "events.ndjson"
    topic = f"wl-{unique_group}"
    code, out, err = run_cli("-b", kafka.bootstrap, "lab", "workload", "--group", unique_group,
                             "--topic", topic, "--consumers", "2", "--partitions", "4",
                             "--churn", "3", "--duration", "8", "--rate", "50",
                             "--record", str(record), "-o", "json")
    assert code == 0, err
    summary = json.loads(out)
    assert summary["partitions"] == 4 and summary["produced"] > 0 and summary["consumed"] > 0
    assert "churn: c1 leaves" in err and "churn: c1 rejoins" in err
    written = [json.loads(ln) for ln in record.read_text().splitlines()]
    assert written and {e["group"] for e in written} == {unique_group}
    # the assignment events, and the rounds they went through (lab.rounds' own tests judge
    # those against the broker log)
    events = [e for e in written if e["event"] == "assignment"]
    assert {e["event"] for e in written} == {"assignment", "rebalance"}
    # c1 had two sessions (two member ids: the JoinGroup answers the rounds name; a session
    # cut short may leave before its first assign); every partition was owned at some point
    joined = {m for e in written if e["event"] == "rebalance"
              for m in e["members_after"] or () if m.startswith("c1-")}
    assert len(joined | {e["member_id"] for e in events if e["client_id"] == "c1"}) == 2
    seen = {(t["topic"], p) for e in events for t in e["added"] for p in t["partitions"]}
    assert seen == {(topic, p) for p in range(4)}


def test_kafka3_fixture(kafka3, topic_factory, unique_group, consumer_factory):
    assert kafka3.metadata_brokers() == [1, 2, 3]
    topic = topic_factory(6, cluster=kafka3, replication=3)
    consumers = [consumer_factory(unique_group, topic, cluster=kafka3, name=f"m{i}")
                 for i in range(3)]
    got = wait_balanced(consumers, {(topic, p) for p in range(6)}, timeout=60)
    assert sorted(len(a) for a in got.values()) == [2, 2, 2]


def test_broker_log_has_group_coordinator_lines(kafka, topic_factory, unique_group,
                                                consumer_factory):
    topic = topic_factory(1)
    consumer_factory(unique_group, topic).wait_assigned(timeout=30)
    text = kafka.log_file.read_text()
    assert re.search(rf"INFO \[GroupCoordinator id=1 topic=__consumer_offsets partition=\d+\] "
                     rf"Stabilized group {re.escape(unique_group)} generation 1 .*"
                     rf"\(org\.apache\.kafka\.coordinator\.group\.GroupMetadataManager\)", text)


# --- no broker needed ------------------------------------------------------------------

def test_kafka_uuid_form():
    for seed in (None, "a", "b"):
        u = labconfig.kafka_uuid(seed)
        assert re.fullmatch(r"[A-Za-z0-9_-]{22}", u) and not u.startswith("-")
    assert labconfig.kafka_uuid("x") == labconfig.kafka_uuid("x")


def test_server_properties_fit_the_node_count(tmp_path):
    nodes = [labconfig.NodeLayout(i, 9000 + i, 9100 + i, tmp_path / f"n{i}") for i in (1, 2, 3)]
    props = dict(ln.split("=", 1) for ln in
                 labconfig.server_properties(nodes[1], nodes).splitlines() if "=" in ln)
    assert props["node.id"] == "2"
    assert props["process.roles"] == "broker,controller"
    assert props["controller.quorum.bootstrap.servers"] == \
        "127.0.0.1:9101,127.0.0.1:9102,127.0.0.1:9103"
    assert props["offsets.topic.replication.factor"] == "3"
    assert props["transaction.state.log.min.isr"] == "2"
    assert props["group.initial.rebalance.delay.ms"] == "0"
    assert "offsets.topic.num.partitions" not in props  # Kafka's default, 50
    one = labconfig.server_properties(nodes[0], nodes[:1], {"num.partitions": "3"})
    assert "offsets.topic.replication.factor=1\n" in one and "num.partitions=3\n" in one
    assert labconfig.initial_controllers(nodes).count("@127.0.0.1:91") == 3


def test_kafka_3_nodes_use_a_static_quorum_and_log4j_1(tmp_path):
    # 3.7/3.8 know only controller.quorum.voters and refuse a combined node that
    # advertises its controller listener; 3.x reads log4j.properties through reload4j
    nodes = [labconfig.NodeLayout(i, 9000 + i, 9100 + i, tmp_path / f"n{i}") for i in (1, 2, 3)]
    for version, dynamic in (((3, 7, 2), False), ((3, 8, 1), False), ((3, 9, 2), True),
                             ((4, 4, 0), True)):
        props = dict(ln.split("=", 1) for ln in labconfig.server_properties(
            nodes[0], nodes, version=version).splitlines() if "=" in ln)
        assert ("controller.quorum.bootstrap.servers" in props) is dynamic
        assert ("controller.quorum.voters" in props) is not dynamic
        assert ("CONTROLLER://" in props["advertised.listeners"]) is dynamic
        if not dynamic:
            assert props["controller.quorum.voters"] == \
                "1@127.0.0.1:9101,2@127.0.0.1:9102,3@127.0.0.1:9103"
    pom3, pom4 = dist.pom_xml("3.7.2"), dist.pom_xml("4.4.0")
    assert "reload4j" in pom3 and "log4j-core" not in pom3
    assert "log4j-core" in pom4 and "reload4j" not in pom4
    assert "ConversionPattern=[%d] %p %m (%c)%n" in labconfig.LOG4J_PROPERTIES


def test_missing_maven_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("GROUPCTL_CACHE", str(tmp_path))
    real_which = dist.shutil.which
    monkeypatch.setattr(dist.shutil, "which",
                        lambda name, *a, **k: None if name == "mvn" else real_which(name, *a, **k))
    with pytest.raises(dist.LabError, match="mvn not found"):
        dist.kafka_libs("4.3.1")
    with pytest.raises(dist.LabError, match="3.7 or later .*3.6.2 is too old"):
        dist.kafka_libs("3.6.2")


def test_maven_failure_shows_its_output(tmp_path, monkeypatch):
    monkeypatch.setenv("GROUPCTL_CACHE", str(tmp_path))
    fake = tmp_path / "bin" / "mvn"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho 'Could not resolve dependencies: no network'\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}:{Path(sys.executable).parent}:/usr/bin:/bin")
    with pytest.raises(dist.LabError, match=r"(?s)exit 1.*no network"):
        dist.kafka_libs("4.3.1")
    # nothing half-made is left for the next run to trust
    assert not (tmp_path / "kafka" / "4.3.1" / "libs").exists()
    assert [p.name for p in (tmp_path / "kafka" / "4.3.1").iterdir()] == []


def test_file_lock_is_released_when_its_holder_dies(tmp_path):
    lock = tmp_path / ".x.lock"
    holder = subprocess.Popen([sys.executable, "-c", (
        "import fcntl, os, sys, time\n"
        f"fd = os.open({str(lock)!r}, os.O_RDWR | os.O_CREAT)\n"
        "fcntl.flock(fd, fcntl.LOCK_EX)\nprint('locked', flush=True)\ntime.sleep(60)\n")],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(dist.LabError, match="timed out"):
            with dist._file_lock(lock, 0.3, "test"):
                pass
    finally:
        holder.kill()
        holder.wait()
    with dist._file_lock(lock, 5, "test"):
        pass


def test_a_restarted_node_of_a_tied_lab_dies_with_its_process(tmp_path):
    """A fixture's lab dies with the test run, a node a fault test restarted too: a run
    killed mid-way leaves no broker behind."""
    script = (
        "import sys\n"
        "from groupctl.lab.cluster import Lab\n"
        f"lab = Lab.up(name='tied', root={str(tmp_path)!r}, tie_to_parent=True)\n"
        "lab.stop_node(1)\n"
        "lab.start_node(1)\n"
        "print(lab.node(1).pid, flush=True)\n"
        "sys.stdin.read()\n")
    proc = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    try:
        pid = int(proc.stdout.readline())
        assert process.proc_info(pid) is not None
    finally:
        proc.kill()
        proc.wait(timeout=30)
    deadline = time.monotonic() + 30
    while process.proc_info(pid) is not None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert process.proc_info(pid) is None, f"node 1 (pid {pid}) outlived its lab's process"
