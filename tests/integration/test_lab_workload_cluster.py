"""`lab workload` runs on the cluster every command resolves (-b, --context,
$GROUPCTL_BOOTSTRAP_SERVERS, the current context), and on a lab only when none is given:
with the variable pointing at one cluster it must never touch the lab named `default`
(maybe someone else's). The `default` lab here is a decoy: a recorded lab whose address is
a socket of this test, so any connection to it is seen. Ground truth that the workload ran
on the session broker: the topic it created, in the broker's Metadata (librdkafka's AdminClient).
"""
from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from cli_runner import run_cli
from groupctl.lab.cluster import Lab, NodeState


@pytest.fixture
def decoy_default_lab(tmp_path, monkeypatch):
    """A recorded lab `default` at a listening socket nobody serves; yields a function
    that returns how many connections reached it."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    port = listener.getsockname()[1]
    root = tmp_path / "labs"
    lab_dir = root / "default"
    lab_dir.mkdir(parents=True)
    node_dir = lab_dir / "node-1"
    Lab(name="default", lab_dir=str(lab_dir), kafka_version="4.3.1", libs="", kafka_home=None,
        cluster_id="decoy", created="2026-01-01T00:00:00.000Z",
        nodes=[NodeState(1, 0, None, port, 0, str(node_dir), str(node_dir / "server.properties"),
                         str(node_dir / "data"), str(node_dir / "server.log"),
                         str(node_dir / "stdout.log"))]).save()
    monkeypatch.setenv("GROUPCTL_LAB_HOME", str(root))
    monkeypatch.setenv("GROUPCTL_CONFIG", str(tmp_path / "no-config.yaml"))
    monkeypatch.delenv("GROUPCTL_BOOTSTRAP_SERVERS", raising=False)

    def connections() -> int:
        listener.setblocking(False)
        count = 0
        while True:
            try:
                conn, _ = listener.accept()  # completed handshakes wait here, even if closed
            except BlockingIOError:
                return count
            conn.close()
            count += 1

    assert Lab.load("default").bootstrap == f"127.0.0.1:{port}"
    yield connections
    listener.close()


def _topics_on(bootstrap: str) -> set[str]:
    from confluent_kafka.admin import AdminClient

    return set(AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=10).topics)


def _workload(group: str, topic: str, *extra: str) -> tuple[int, dict, list[str]]:
    code, out, err = run_cli("lab", "workload", "--group", group, "--topic", topic,
                             "--consumers", "1", "--duration", "2", "--rate", "20",
                             "-o", "json", *extra)
    assert code == 0, err
    return code, json.loads(out), err.splitlines()


def test_workload_follows_the_bootstrap_variable_not_the_default_lab(
        kafka, unique_group, decoy_default_lab, monkeypatch):
    monkeypatch.setenv("GROUPCTL_BOOTSTRAP_SERVERS", kafka.bootstrap)
    topic = f"wl-env-{unique_group}"
    _, summary, lines = _workload(unique_group, topic)
    assert lines[0] == (f"groupctl: lab workload: bootstrap {kafka.bootstrap} "
                        "(from $GROUPCTL_BOOTSTRAP_SERVERS)")
    # the topic it made is on the session broker (the consumers' callbacks are timing)
    assert (summary["group"], summary["topic"], summary["partitions"]) == (unique_group, topic, 1)
    assert topic in _topics_on(kafka.bootstrap)
    assert decoy_default_lab() == 0


def test_workload_follows_the_current_context(kafka, unique_group, decoy_default_lab,
                                              tmp_path, monkeypatch):
    config = tmp_path / "config.yaml"
    config.write_text(f"current_context: mine\ncontexts:\n  mine:\n"
                      f"    bootstrap_servers: {kafka.bootstrap}\n")
    monkeypatch.setenv("GROUPCTL_CONFIG", str(config))
    topic = f"wl-ctx-{unique_group}"
    _, summary, lines = _workload(unique_group, topic)
    assert lines[0] == (f"groupctl: lab workload: bootstrap {kafka.bootstrap} "
                        f"(from current context 'mine' in {config})")
    assert summary["partitions"] == 1 and topic in _topics_on(kafka.bootstrap)
    assert decoy_default_lab() == 0


def test_workload_without_any_cluster_names_the_lab_it_uses(kafka, unique_group, tmp_path,
                                                            monkeypatch):
    """No -b, variable or context: the lab --name names (here: the session broker's)."""
    monkeypatch.setenv("GROUPCTL_LAB_HOME", str(Path(kafka.lab_dir).parent))
    monkeypatch.setenv("GROUPCTL_CONFIG", str(tmp_path / "no-config.yaml"))
    monkeypatch.delenv("GROUPCTL_BOOTSTRAP_SERVERS", raising=False)
    topic = f"wl-lab-{unique_group}"
    _, summary, lines = _workload(unique_group, topic, "--name", kafka.name)
    assert lines[0] == (f"groupctl: lab workload: bootstrap {kafka.bootstrap} "
                        f"(from lab {kafka.name!r})")
    assert summary["partitions"] == 1 and topic in _topics_on(kafka.bootstrap)


def test_a_topic_the_broker_refuses_is_exit_7_with_its_error(kafka, unique_group):
    code, out, err = run_cli("-b", kafka.bootstrap, "lab", "workload", "--group", unique_group,
                             "--topic", "bad topic!", "--duration", "1")
    assert (code, out) == (7, "")
    lines = err.splitlines()
    assert lines[0].startswith("groupctl: lab workload: bootstrap ")
    assert lines[1:] == [lines[1]] and lines[1].startswith(
        "groupctl: error: CreateTopics failed: INVALID_TOPIC_EXCEPTION (17): topic 'bad topic!'")


def test_workload_usage_errors_come_before_any_work(tmp_path, decoy_default_lab):
    def fails(*argv: str) -> str:
        code, out, err = run_cli("lab", "workload", "--group", "g", "--topic", "t", *argv)
        assert (code, out) == (2, "") and err.count("\n") == 1, err
        return err

    assert fails("--name", "default", "-b", "127.0.0.1:1") == (
        "groupctl: error: --name runs on a lab; -b/--bootstrap-server and --context name "
        "another cluster: give one of them\n")
    assert fails("--name", "other") == (
        "groupctl: error: no lab named 'other' is running (start one with "
        "`groupctl lab up --name other`)\n")
    for path, why in ((tmp_path, "Is a directory"),
                      (tmp_path / "missing" / "events.ndjson", "No such file or directory")):
        assert fails("--record", str(path)) == (
            f"groupctl: error: --record {path}: cannot write: {why}\n")
    assert fails("--record", "/proc/version").startswith(
        "groupctl: error: --record /proc/version: cannot write: ")
    assert decoy_default_lab() == 0  # nothing was started, nothing connected anywhere


def test_workload_uses_the_contexts_security_settings(secure_lab, unique_group, tmp_path,
                                                      monkeypatch):
    """A SASL_SSL context (SCRAM, the lab's CA, the password from a variable): librdkafka's
    clients get the same settings groupctl's own client does."""
    config = tmp_path / "config.yaml"
    monkeypatch.setenv("GROUPCTL_CONFIG", str(config))
    monkeypatch.delenv("GROUPCTL_BOOTSTRAP_SERVERS", raising=False)
    monkeypatch.setenv("LAB_PASSWORD", secure_lab.sasl["password"])
    assert run_cli("config", "set-context", "lab-tls", "-b", secure_lab.sasl_ssl_bootstrap,
                   "--security-protocol", "SASL_SSL", "--sasl-mechanism", "SCRAM-SHA-512",
                   "--username", "admin", "--password-env", "LAB_PASSWORD",
                   "--ca-file", secure_lab.tls["ca_file"], "--current")[0] == 0
    topic = f"wl-sasl-{unique_group}"
    _, summary, lines = _workload(unique_group, topic)
    assert lines[0] == (f"groupctl: lab workload: bootstrap {secure_lab.sasl_ssl_bootstrap} "
                        f"(from current context 'lab-tls' in {config})")
    assert summary["partitions"] == 1 and summary["errors"] == []
    assert topic in _topics_on(secure_lab.bootstrap)  # seen over the PLAINTEXT listener
    assert all(secure_lab.sasl["password"] not in line for line in lines)
