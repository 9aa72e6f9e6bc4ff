"""`lab up --tls --sasl` end to end (the session's `secure_lab`): the same group seen through
PLAINTEXT, SSL, SASL_SSL (SCRAM-SHA-512) and SASL_PLAINTEXT (PLAIN) gives the same
answers; certificate and password problems give the documented exit codes; the guest user
(no ACLs, StandardAuthorizer) is refused as Kafka refuses it. (Contexts and secrets on
this lab: test_lab_contexts.py.)

Ground truth that groupctl did not write: real librdkafka consumers in the group (their
rebalance callbacks), Kafka's own ConsumerGroupCommand and librdkafka reading the lab's
client properties files, ACLs created through librdkafka's admin client.
"""
from __future__ import annotations

import json
import os
import socket
import threading
import uuid
from pathlib import Path

import pytest
from describe_support import commit, wait_until
from tls_support import LIBRDKAFKA_UNKNOWN, LISTENERS, cli, endpoint, group, guest, via
from tls_support import read_props as _props

from groupctl.exitcodes import ExitCode
from groupctl.lab import tools
from groupctl.lab import tls as labtls

pytestmark = pytest.mark.broker
__all__ = ["group"]  # the module's fixture, from tls_support


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
    # the same story on every listener: what every probe round tells (whether a 2 s watch
    # also catches, say, a consumer's member_joined depends on timing, not on the listener)
    core = {"probe", "generation", "assignment", "rebalance"}
    assert all(core <= kinds[listener] for listener in LISTENERS), kinds


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
        proc = tools.consumer_group_command(bootstrap, "--list", "--command-config", props,
                                           libs=secure_lab.libs_path, timeout=60)
        assert proc.returncode == 0, proc.stderr
        assert name in proc.stdout.split()
        conf = {k: v for k, v in _props(props).items() if k not in LIBRDKAFKA_UNKNOWN}
        md = AdminClient({**conf, "bootstrap.servers": bootstrap}).list_topics(timeout=20)
        assert sorted(md.brokers) == [1]


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


def test_guest_watch_is_exit_4_not_a_vacuous_pass(secure_lab, group):
    """A watch gate (--max-rebalances) on a group the principal may not describe: it
    retried for its whole --duration and exited 0, as if the group had been quiet."""
    name, _ = group
    code, out, err = guest(secure_lab, "watch", name, "--duration", "20",
                           "--max-rebalances", "0")
    assert code == ExitCode.AUTH, err
    assert err.endswith(f"groupctl: error: not authorized to describe group '{name}' "
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
