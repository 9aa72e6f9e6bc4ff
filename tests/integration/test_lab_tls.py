"""`lab up --tls --sasl` end to end (the session's `secure_lab`): the same group seen through
PLAINTEXT, SSL, SASL_SSL (SCRAM-SHA-512) and SASL_PLAINTEXT (PLAIN) gives the same
answers; certificate and password problems give the documented exit codes; the guest user
(no ACLs, StandardAuthorizer) is refused as Kafka refuses it; contexts made with `groupctl
config` reach the lab; and no password ever shows up in what groupctl writes.

Ground truth that groupctl did not write: real librdkafka consumers in the group (their
rebalance counts), Kafka's own ConsumerGroupCommand and librdkafka reading the lab's client
properties files, ACLs created through librdkafka's admin client.
"""
from __future__ import annotations

import io
import json
import os
import socket
import threading
import uuid
from pathlib import Path

import pytest
from describe_support import commit, wait_until

from groupctl.cli.app import invoke
from groupctl.cli.env import Env
from groupctl.exitcodes import ExitCode
from groupctl.lab import dist
from groupctl.lab import tls as labtls
from groupctl.lab.consumer import wait_balanced

pytestmark = pytest.mark.broker

LISTENERS = ("PLAINTEXT", "SSL", "SASL_SSL", "SASL_PLAINTEXT")
LIBRDKAFKA_UNKNOWN = {"sasl.jaas.config", "ssl.truststore.type", "ssl.truststore.location"}


def endpoint(lab, listener: str) -> tuple[str, str | None]:
    """(bootstrap, client properties file) of a listener of the lab."""
    return {
        "PLAINTEXT": (lab.bootstrap, None),
        "SSL": (lab.ssl_bootstrap, lab.tls["command_config"]),
        "SASL_SSL": (lab.sasl_ssl_bootstrap, lab.sasl["ssl_command_configs"]["SCRAM-SHA-512"]),
        "SASL_PLAINTEXT": (lab.sasl_bootstrap, lab.sasl["command_configs"]["PLAIN"]),
    }[listener]


def cli(*args: str) -> tuple[int, str, str]:
    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    code = invoke(["--timeout", "20", *args], env)
    return code, env.stdout.getvalue(), env.stderr.getvalue()


def via(lab, listener: str, *args: str, props: str | None = None) -> tuple[int, str, str]:
    bootstrap, default_props = endpoint(lab, listener)
    props = props or default_props
    return cli("-b", bootstrap, *(["--command-config", props] if props else []), *args)


def guest(lab, *args: str) -> tuple[int, str, str]:
    return via(lab, "SASL_PLAINTEXT", *args, props=lab.sasl["guest_command_configs"]["PLAIN"])


@pytest.fixture(scope="module")
def group(secure_lab):
    """A classic group of two real librdkafka consumers (range) on a 4-partition topic,
    joined over PLAINTEXT."""
    from groupctl.lab.consumer import LabConsumer
    from groupctl.lab.workload import create_topic

    topic, name = f"t-tls-{uuid.uuid4().hex[:8]}", f"g-tls-{uuid.uuid4().hex[:8]}"
    create_topic(secure_lab.bootstrap, topic, 4, 1, None)
    consumers = [LabConsumer(secure_lab.bootstrap, name, [topic], assignor="range")
                 for _ in range(2)]
    try:
        for c in consumers:
            c.start()
        wait_balanced(consumers, [(topic, p) for p in range(4)], timeout=60)
        yield name, consumers
    finally:
        for c in consumers:
            c.begin_close()
        for c in consumers:
            c.close(timeout=30)


def _normal_describe(data: list[dict]) -> list[dict]:
    for g in data:
        g["coordinator"].pop("port")  # each listener has its own port; everything else is equal
    return data


# ---- the same answers on every listener --------------------------------------------------------

def test_list_and_describe_are_the_same_on_every_listener(secure_lab, group):
    name, _ = group
    seen = {}
    for listener in LISTENERS:
        code, listed, err = via(secure_lab, listener, "-o", "json", "list", "--regex", f"^{name}$")
        assert (code, err) == (0, ""), listener
        code, described, err = via(secure_lab, listener, "-o", "json", "describe", name)
        assert (code, err) == (0, ""), listener
        seen[listener] = (json.loads(listed), _normal_describe(json.loads(described)))
    assert seen["PLAINTEXT"][0] == [{"group": name, "state": "Stable", "type": "classic",
                                     "protocol_type": "consumer"}]
    assert len(seen["PLAINTEXT"][1][0]["members"]) == 2
    for listener in LISTENERS[1:]:
        assert seen[listener] == seen["PLAINTEXT"], listener


def test_join_is_the_same_on_every_listener(secure_lab, group):
    name, consumers = group
    results = {}
    for listener in LISTENERS:
        code, out, err = via(secure_lab, listener, "-o", "json", "join", name)
        assert (code, err) == (0, ""), (listener, err)
        data = json.loads(out)
        results[listener] = {k: v for k, v in data.items()
                             if k not in ("generation", "member_id", "joined_in_ms")}
        results[listener]["coordinator"].pop("port")
    plain = results["PLAINTEXT"]
    assert plain["protocol"] == "range" and plain["is_leader"] is False
    assert plain["leader"] in {c.member_id for c in consumers}
    for listener in LISTENERS[1:]:
        assert results[listener] == plain, listener
    # every probe left: only the two consumers remain
    code, out, _ = via(secure_lab, "PLAINTEXT", "-o", "json", "describe", name)
    assert sorted(m["member_id"] for m in json.loads(out)[0]["members"]) == sorted(
        c.member_id for c in consumers)


def test_join_watch_works_on_every_listener(secure_lab, group, tmp_path):
    name, consumers = group
    kinds = {}
    for listener in LISTENERS:
        record = tmp_path / f"{listener}.ndjson"
        code, out, err = via(secure_lab, listener, "-o", "ndjson", "join", name, "--watch",
                             "--duration", "2", "--record", str(record))
        assert code == 0, (listener, err)
        events = [json.loads(line) for line in out.splitlines()]
        assert events == [json.loads(line) for line in record.read_text().splitlines()]
        probe = [e["action"] for e in events if e["event"] == "probe"]
        assert probe[0] == "joined" and probe[-1] == "left", (listener, probe)
        generations = [e for e in events if e["event"] == "generation"]
        assert generations and generations[0]["protocol"] == "range"
        assert generations[0]["leader"] in {c.member_id for c in consumers}
        kinds[listener] = {e["event"] for e in events}
    for listener in LISTENERS[1:]:
        assert kinds[listener] == kinds["PLAINTEXT"], listener


# ---- certificates and passwords ------------------------------------------------------------------

def test_wrong_ca_is_exit_3_naming_the_certificate_problem(secure_lab, tmp_path):
    _, other = labtls.make_ca("not the lab CA")
    (tmp_path / "other-ca.pem").write_bytes(labtls.pem_cert(other))
    props = tmp_path / "wrong-ca.properties"
    props.write_text(f"security.protocol=SSL\nssl.truststore.type=PEM\n"
                     f"ssl.truststore.location={tmp_path / 'other-ca.pem'}\n")
    code, out, err = via(secure_lab, "SSL", "list", props=str(props))
    assert (code, out) == (ExitCode.UNREACHABLE, "")
    assert err.startswith(f"groupctl: error: {secure_lab.ssl_bootstrap}: TLS handshake failed: ")
    assert "certificate" in err and "not signed by a CA in ssl.truststore.location" in err
    assert err.count("\n") == 1


class Forwarder:
    """TCP forwarding from 127.0.0.2:<port> to the lab's SSL listener: a name the broker's
    certificate (localhost, 127.0.0.1) does not cover, on the very same broker."""

    def __init__(self, target: str):
        host, port = target.rsplit(":", 1)
        self.target = (host, int(port))
        self.server = socket.create_server(("127.0.0.2", 0))
        self.address = f"127.0.0.2:{self.server.getsockname()[1]}"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            upstream = socket.create_connection(self.target)
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(src, dst):
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def close(self):
        self.server.close()


def test_hostname_mismatch_is_exit_3_unless_the_check_is_off(secure_lab, group, tmp_path):
    name, _ = group
    fwd = Forwarder(secure_lab.ssl_bootstrap)
    try:
        code, out, err = cli("-b", fwd.address, "--command-config",
                             secure_lab.tls["command_config"], "list")
        assert (code, out) == (ExitCode.UNREACHABLE, "")
        assert f"{fwd.address}: TLS handshake failed: IP address mismatch" in err
        assert "ssl.endpoint.identification.algorithm=" in err
        props = tmp_path / "no-host-check.properties"
        props.write_text(Path(secure_lab.tls["command_config"]).read_text()
                         + "ssl.endpoint.identification.algorithm=\n")
        code, out, err = cli("-b", fwd.address, "--command-config", str(props), "-o", "json",
                             "list", "--regex", f"^{name}$")
        assert (code, err) == (0, "")
        assert [g["group"] for g in json.loads(out)] == [name]
    finally:
        fwd.close()


@pytest.mark.parametrize("listener", ["SASL_SSL", "SASL_PLAINTEXT"])
def test_wrong_password_is_exit_4(secure_lab, tmp_path, listener):
    _, props = endpoint(secure_lab, listener)
    wrong = tmp_path / "wrong.properties"
    text = Path(props).read_text()
    wrong.write_text(text.replace(secure_lab.sasl["password"], "not-the-password"))
    code, out, err = via(secure_lab, listener, "list", props=str(wrong))
    assert (code, out) == (ExitCode.AUTH, "")
    assert "SASL_AUTHENTICATION_FAILED" in err and err.count("\n") == 1


def test_kafka_tools_and_librdkafka_read_the_tls_files(secure_lab, group):
    from confluent_kafka.admin import AdminClient

    name, _ = group
    for listener in ("SSL", "SASL_SSL"):
        bootstrap, props = endpoint(secure_lab, listener)
        proc = dist.consumer_group_command(bootstrap, "--list", "--command-config", props,
                                           libs=secure_lab.libs_path, timeout=60)
        assert proc.returncode == 0, proc.stderr
        assert name in proc.stdout.split()
        conf = {k: v for k, v in _props(props).items() if k not in LIBRDKAFKA_UNKNOWN}
        md = AdminClient({**conf, "bootstrap.servers": bootstrap}).list_topics(timeout=20)
        assert sorted(md.brokers) == [1]


def _props(path: str) -> dict[str, str]:
    out = {}
    for line in Path(path).read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            key, _, value = line.partition("=")
            out[key] = value
    return out


def test_the_broker_certificate(secure_lab):
    from cryptography import x509

    chain = Path(secure_lab.tls["keystore"]).read_bytes()
    cert = x509.load_pem_x509_certificates(chain)[0]
    ca = x509.load_pem_x509_certificate(Path(secure_lab.tls["ca_file"]).read_bytes())
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert san.get_values_for_type(x509.DNSName) == ["localhost"]
    assert [str(ip) for ip in san.get_values_for_type(x509.IPAddress)] == ["127.0.0.1"]
    assert cert.issuer == ca.subject
    cert.verify_directly_issued_by(ca)
    for private in (secure_lab.tls["keystore"], secure_lab.tls["ca_key"],
                    secure_lab.tls["command_config"]):
        assert os.stat(private).st_mode & 0o777 == 0o600


# ---- the guest: no ACLs --------------------------------------------------------------------------

def test_guest_describe_is_exit_4_not_authorized(secure_lab, group):
    name, _ = group
    code, out, err = guest(secure_lab, "describe", name)
    assert (code, out) == (ExitCode.AUTH, "")
    assert err == (f"groupctl: error: not authorized to describe group '{name}' "
                   "(GROUP_AUTHORIZATION_FAILED)\n")


def test_guest_join_is_exit_4_and_leaves_nothing_behind(secure_lab, group):
    name, consumers = group
    callbacks = [len(c.events) for c in consumers]
    code, out, err = guest(secure_lab, "join", name)
    assert (code, out) == (ExitCode.AUTH, "")
    assert err == (f"groupctl: error: not authorized to join group '{name}' "
                   "(GROUP_AUTHORIZATION_FAILED)\n")
    code, out, err = via(secure_lab, "PLAINTEXT", "-o", "json", "describe", name)
    data = json.loads(out)[0]
    assert data["state"] == "Stable"
    assert sorted(m["member_id"] for m in data["members"]) == sorted(c.member_id for c in consumers)
    assert [len(c.events) for c in consumers] == callbacks  # nobody rebalanced


def test_guest_list_shows_only_what_it_may_see(secure_lab, group):
    from confluent_kafka.admin import (
        AclBinding,
        AclOperation,
        AclPermissionType,
        AdminClient,
        ResourcePatternType,
        ResourceType,
    )

    name, consumers = group
    hidden = f"g-hidden-{uuid.uuid4().hex[:8]}"
    topic = next(iter(consumers[0].assignment))[0]
    commit(secure_lab.bootstrap, hidden, {(topic, 0): 0})  # an Empty group with an offset
    code, out, err = guest(secure_lab, "-o", "json", "list")
    assert (code, json.loads(out), err) == (0, [], "")  # no ACLs: no group at all
    # grant DESCRIBE on this one group (as admin, through librdkafka's admin client)
    conf = {k: v for k, v in _props(secure_lab.sasl["command_configs"]["PLAIN"]).items()
            if k not in LIBRDKAFKA_UNKNOWN}
    admin = AdminClient({**conf, "bootstrap.servers": secure_lab.sasl_bootstrap})
    binding = AclBinding(ResourceType.GROUP, name, ResourcePatternType.LITERAL, "User:guest",
                         "*", AclOperation.DESCRIBE, AclPermissionType.ALLOW)
    admin.create_acls([binding])[binding].result(timeout=30)
    del admin

    def guest_sees():
        code, out, err = guest(secure_lab, "-o", "json", "list")
        return code == 0 and [g["group"] for g in json.loads(out)] or None

    assert wait_until(guest_sees, 30, "the ACL to apply") == [name]
    for listener in ("PLAINTEXT", "SASL_SSL"):  # anonymous (a super user), admin
        code, out, _ = via(secure_lab, listener, "-o", "json", "list")
        assert {name, hidden} <= {g["group"] for g in json.loads(out)}, listener


# ---- contexts on the lab ---------------------------------------------------------------------------

def test_config_round_trip_reaches_the_lab(secure_lab, group, tmp_path, monkeypatch):
    name, _ = group
    path = tmp_path / "groupctl" / "config.yaml"
    monkeypatch.setenv("GROUPCTL_CONFIG", str(path))
    monkeypatch.delenv("GROUPCTL_BOOTSTRAP_SERVERS", raising=False)
    monkeypatch.setenv("LAB_PASSWORD", secure_lab.sasl["password"])
    code, out, err = cli("config", "set-context", "lab-tls", "-b", secure_lab.sasl_ssl_bootstrap,
                         "--security-protocol", "SASL_SSL", "--sasl-mechanism", "SCRAM-SHA-512",
                         "--username", "admin", "--password-env", "LAB_PASSWORD",
                         "--ca-file", secure_lab.tls["ca_file"])
    assert (code, out, err) == (0, "", "groupctl: context 'lab-tls' created\n")
    assert os.stat(path).st_mode & 0o777 == 0o600
    assert secure_lab.sasl["password"] not in path.read_text()
    assert cli("config", "set-context", "plain", "-b", secure_lab.bootstrap)[0] == 0
    assert cli("config", "use-context", "lab-tls")[0] == 0
    code, out, _ = cli("-o", "json", "config", "get-contexts")
    assert json.loads(out) == [
        {"current": True, "name": "lab-tls", "bootstrap_servers": secure_lab.sasl_ssl_bootstrap,
         "security_protocol": "SASL_SSL", "sasl_mechanism": "SCRAM-SHA-512", "username": "admin"},
        {"current": False, "name": "plain", "bootstrap_servers": secure_lab.bootstrap,
         "security_protocol": "PLAINTEXT", "sasl_mechanism": None, "username": None}]
    expected = [{"group": name, "state": "Stable", "type": "classic", "protocol_type": "consumer"}]
    for args in ([], ["--context", "lab-tls"], ["--context", "plain"]):  # current, then named
        code, out, err = cli(*args, "-o", "json", "list", "--regex", f"^{name}$")
        assert (code, err) == (0, ""), args
        assert json.loads(out) == expected
    monkeypatch.delenv("LAB_PASSWORD")
    code, out, err = cli("list")
    assert (code, err) == (2, "groupctl: error: context 'lab-tls': the password variable "
                              "$LAB_PASSWORD is not set\n")
    assert cli("config", "delete-context", "lab-tls")[0] == 0
    code, out, _ = cli("config", "current-context")
    assert code == 2
    assert [c["name"] for c in json.loads(cli("-o", "json", "config", "get-contexts")[1])] == ["plain"]


def test_comments_in_a_hand_written_file_survive_an_update(secure_lab, group, tmp_path,
                                                             monkeypatch):
    name, _ = group
    path = tmp_path / "config.yaml"
    monkeypatch.setenv("GROUPCTL_CONFIG", str(path))
    monkeypatch.delenv("GROUPCTL_BOOTSTRAP_SERVERS", raising=False)
    path.write_text("# my clusters\n"
                    "current_context: lab   # the one I use\n"
                    "contexts:\n"
                    "  # the local lab, over SSL\n"
                    "  lab:\n"
                    f"    bootstrap_servers: ['{secure_lab.bootstrap}']  # plain, for now\n"
                    "    properties: {client.id: mine}   # flow style stays\n")
    os.chmod(path, 0o600)
    code, _, err = cli("config", "set-context", "lab", "-b", secure_lab.ssl_bootstrap,
                       "--security-protocol", "SSL", "--ca-file", secure_lab.tls["ca_file"])
    assert (code, err) == (0, "groupctl: context 'lab' modified\n")
    text = path.read_text()
    for kept in ("# my clusters\n", "current_context: lab   # the one I use\n",
                 "  # the local lab, over SSL\n", "client.id: mine", "# flow style stays"):
        assert kept in text, (kept, text)
    code, out, err = cli("-o", "json", "list", "--regex", f"^{name}$")
    assert (code, err) == (0, "")
    assert [g["group"] for g in json.loads(out)] == [name]


# ---- secrets never leave ---------------------------------------------------------------------------

def test_no_password_in_output_traces_errors_or_records(secure_lab, group, tmp_path, monkeypatch):
    name, _ = group
    passwords = [secure_lab.sasl["password"], secure_lab.sasl["guest_password"]]
    path = tmp_path / "config.yaml"
    monkeypatch.setenv("GROUPCTL_CONFIG", str(path))
    monkeypatch.delenv("GROUPCTL_BOOTSTRAP_SERVERS", raising=False)
    jaas = ("org.apache.kafka.common.security.plain.PlainLoginModule required "
            f'username="admin" password="{passwords[0]}";')
    path.write_text("contexts:\n  hand:\n"
                    f"    bootstrap_servers: {secure_lab.sasl_bootstrap}\n"
                    "    properties:\n      security.protocol: SASL_PLAINTEXT\n"
                    "      sasl.mechanism: PLAIN\n"
                    f"      sasl.jaas.config: '{jaas}'\n"
                    f"      sasl.password: '{passwords[0]}'\n"
                    f"      ssl.key.password: '{passwords[1]}'\n")
    os.chmod(path, 0o600)
    broken = tmp_path / "broken.properties"
    broken.write_text("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"
                      "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule "
                      f'required username="admin" password={passwords[0]}"oops;\n')
    record = tmp_path / "events.ndjson"
    written = []
    runs = [
        ("config", "view"), ("-o", "json", "config", "view"), ("-o", "yaml", "config", "view"),
        ("config", "get-contexts"),
        ("--context", "hand", "--debug", "list"),
        ("--context", "hand", "--debug", "describe", name),
        ("--context", "hand", "--debug", "-o", "ndjson", "join", name, "--watch", "--duration",
         "1", "--record", str(record)),
        ("--debug", "-b", secure_lab.sasl_bootstrap, "--command-config",
         secure_lab.sasl["guest_command_configs"]["SCRAM-SHA-512"], "describe", name + "-x"),
        ("--debug", "-b", secure_lab.sasl_ssl_bootstrap, "--command-config",
         secure_lab.sasl["ssl_command_configs"]["SCRAM-SHA-256"], "join", name),
        ("--debug", "-b", secure_lab.sasl_bootstrap, "--command-config", str(broken), "list"),
        ("-o", "json", "lab", "status", "--name", secure_lab.name),
        ("-o", "wide", "lab", "status", "--name", secure_lab.name),
    ]
    monkeypatch.setenv("GROUPCTL_LAB_HOME", str(Path(secure_lab.lab_dir).parent))
    codes = []
    for args in runs:
        code, out, err = cli(*args)
        codes.append(code)
        written += [out, err]
    assert codes == [0, 0, 0, 0, 0, 0, 0, ExitCode.AUTH, 0, ExitCode.USAGE, 0, 0], (codes, written)
    assert "REDACTED" in written[0] and "groupctl: trace: " in written[9]
    written.append(record.read_text())
    assert record.read_text().strip()
    for text in written:
        for pw in passwords:
            assert pw not in text
