"""`groupctl lab up --sasl` end to end: a lab broker with a SASL_PLAINTEXT listener (SCRAM
users created at format time, PLAIN users in the listener's JAAS config), the client
properties files it writes, and groupctl talking through them, with peers as ground truth:
librdkafka (confluent-kafka) and Kafka's own ConsumerGroupCommand read the very same files.
(TLS, the guest user and authorization: test_lab_tls.py, on the same lab.)
"""
from __future__ import annotations

import asyncio
import json
import os
import uuid
from pathlib import Path

import pytest
from describe_support import commit

from cli_runner import run_cli
from groupctl.client import Cluster
from groupctl.config import load_command_config
from groupctl.exitcodes import ExitCode
from groupctl.lab import tools
from groupctl.lab.sasl import MECHANISMS, client_properties

pytestmark = pytest.mark.broker

LIBRDKAFKA_UNKNOWN = {"sasl.jaas.config"}  # Java's spelling; librdkafka reads username/password


@pytest.fixture(scope="module")
def sasl_lab(secure_lab):
    """`lab up --tls --sasl` (the session's secure lab): its SASL_PLAINTEXT side here."""
    return secure_lab


def _props(path: str) -> dict[str, str]:
    """The file as plain key=value lines (it is ours: no continuations, no escapes)."""
    out = {}
    for line in Path(path).read_text(encoding="utf-8").splitlines(True):
        if line.strip() and not line.startswith("#"):
            key, _, value = line.rstrip("\n").partition("=")
            out[key] = value
    return out


def _librdkafka_config(path: str, bootstrap: str) -> dict[str, str]:
    conf = {k: v for k, v in _props(path).items() if k not in LIBRDKAFKA_UNKNOWN}
    return {**conf, "bootstrap.servers": bootstrap}


@pytest.fixture(scope="module")
def committed_group(sasl_lab):
    """A group with a committed offset, made by librdkafka through the SCRAM-SHA-256
    file (topic created by librdkafka's admin client through it too)."""
    from confluent_kafka.admin import AdminClient, NewTopic

    conf = _librdkafka_config(sasl_lab.sasl["command_configs"]["SCRAM-SHA-256"],
                              sasl_lab.sasl_bootstrap)
    topic, group = f"t-sasl-{uuid.uuid4().hex[:8]}", f"g-sasl-{uuid.uuid4().hex[:8]}"
    admin = AdminClient(conf)  # referenced until the future completes
    admin.create_topics([NewTopic(topic, 1, 1)], operation_timeout=30)[topic].result(timeout=30)
    # a fresh broker may still be loading the group's offsets partition: commit() retries
    commit(sasl_lab.sasl_bootstrap, group, {(topic, 0): 0}, config=conf)
    return group


def cli(*args: str) -> tuple[int, str, str]:
    return run_cli(*args, timeout=20)


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_list_through_each_mechanism(sasl_lab, committed_group, mechanism):
    path = sasl_lab.sasl["command_configs"][mechanism]
    code, out, err = cli("-b", sasl_lab.sasl_bootstrap, "--command-config", path,
                         "-o", "json", "list", "--regex", f"^{committed_group}$")
    assert (code, err) == (0, "")
    assert json.loads(out) == [{"group": committed_group, "state": "Empty",
                                "type": "classic", "protocol_type": None}]  # offsets only: no protocol


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_wrong_password_is_exit_4_in_one_line(sasl_lab, tmp_path, mechanism):
    path = tmp_path / "wrong.properties"
    path.write_text(client_properties(sasl_lab.sasl, mechanism, password="not-the-password"))
    code, out, err = cli("-b", sasl_lab.sasl_bootstrap, "--command-config", str(path), "list")
    assert code == ExitCode.AUTH == 4
    assert out == ""
    assert err.startswith("groupctl: error: ") and err.endswith("\n")
    assert err.count("\n") == 1, err
    assert "Traceback" not in err


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_client_metadata_with_the_command_config(sasl_lab, mechanism):
    security = load_command_config(sasl_lab.sasl["command_configs"][mechanism])
    assert (security.protocol, security.sasl_mechanism, security.sasl_username) == (
        "SASL_PLAINTEXT", mechanism, "admin")

    async def brokers():
        async with Cluster([sasl_lab.sasl_bootstrap], timeout=20, security=security) as c:
            return sorted((await c.metadata([])).brokers)

    assert asyncio.run(brokers()) == [1]


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_librdkafka_reads_the_same_file(sasl_lab, mechanism):
    from confluent_kafka.admin import AdminClient

    conf = _librdkafka_config(sasl_lab.sasl["command_configs"][mechanism],
                              sasl_lab.sasl_bootstrap)
    admin = AdminClient(conf)
    md = admin.list_topics(timeout=20)
    assert sorted(md.brokers) == [1]


def test_consumer_group_command_reads_the_same_file(sasl_lab, committed_group):
    path = sasl_lab.sasl["command_configs"]["SCRAM-SHA-512"]
    proc = tools.consumer_group_command(sasl_lab.sasl_bootstrap, "--list", "--command-config",
                                       path, libs=sasl_lab.libs_path, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert committed_group in proc.stdout.split()


def test_lab_status_names_the_sasl_bootstrap_and_command_config(sasl_lab, monkeypatch):
    monkeypatch.setenv("GROUPCTL_LAB_HOME", str(os.path.dirname(sasl_lab.lab_dir)))
    code, out, err = cli("-o", "json", "lab", "status", "--name", sasl_lab.name)
    assert (code, err) == (0, "")
    sasl = json.loads(out)["sasl"]

    def files(prefix: str) -> dict:
        return {m: os.path.join(sasl_lab.lab_dir, f"client-{prefix}{m.lower()}.properties")
                for m in MECHANISMS}

    assert sasl == {
        "bootstrap": sasl_lab.sasl_bootstrap, "security_protocol": "SASL_PLAINTEXT",
        "username": "admin", "mechanisms": list(MECHANISMS),
        "command_config": os.path.join(sasl_lab.lab_dir, "client-scram-sha-256.properties"),
        "command_configs": files(""),
        "guest": {"username": "guest", "acls": "none",
                  "command_config": os.path.join(sasl_lab.lab_dir,
                                                 "client-guest-scram-sha-256.properties"),
                  "command_configs": files("guest-")},
        "sasl_ssl": {"bootstrap": sasl_lab.sasl_ssl_bootstrap, "security_protocol": "SASL_SSL",
                     "command_configs": files("sasl-ssl-"),
                     "guest_command_configs": files("guest-sasl-ssl-")},
    }
    assert "password" not in out
    code, out, err = cli("lab", "status", "--name", sasl_lab.name)
    assert code == 0, err
    assert f"sasl bootstrap: {sasl_lab.sasl_bootstrap} " in out
    assert f"sasl command config: {sasl['command_config']}\n" in out
    assert f"sasl command config (user guest, no ACLs): {sasl['guest']['command_config']}\n" in out
    for files_ in (sasl["command_configs"], sasl["guest"]["command_configs"],
                   sasl["sasl_ssl"]["command_configs"], sasl["sasl_ssl"]["guest_command_configs"]):
        for path in files_.values():
            assert os.stat(path).st_mode & 0o777 == 0o600
