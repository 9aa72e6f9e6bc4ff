"""What groupctl promises a cluster with security on (issue 36), on the session's
`secure_lab` (TLS, SASL, StandardAuthorizer; users admin and guest):

- `enable.ssl.certificate.verification=false` (librdkafka's property, which Kafka's Java
  tools ignore) turns the certificate check off: said on stderr on every run, one line
  naming the property and the risk, --debug or not; a run without it says nothing;
- `history` and `watch --source records` show only the groups the principal may describe:
  Read on __consumer_offsets lets it fetch every group's records, but a group the broker
  refuses to describe is refused by history and a named records watch too (exit 4,
  nothing of it printed), and left out of `watch --all --source records` (said once).
"""
from __future__ import annotations

import json
import uuid

import pytest
from confluent_kafka.admin import AclOperation, ResourceType
from tls_support import guest, via

from groupctl.exitcodes import ExitCode
from groupctl.lab import tls as labtls

pytestmark = pytest.mark.broker

WARNING = ("groupctl: warning: enable.ssl.certificate.verification=false ({where}): the "
           "brokers' TLS certificates are not checked")


def test_tls_verification_off_is_said_on_every_run(secure_lab, tmp_path):
    _, other = labtls.make_ca("not the lab CA")   # nothing the broker's certificate meets
    (tmp_path / "other-ca.pem").write_bytes(labtls.pem_cert(other))
    props = tmp_path / "unverified.properties"
    props.write_text(f"security.protocol=SSL\nssl.truststore.type=PEM\n"
                     f"ssl.truststore.location={tmp_path / 'other-ca.pem'}\n"
                     "enable.ssl.certificate.verification=false\n")
    want = WARNING.format(where=props)
    for debug in ([], ["--debug"]):
        code, out, err = via(secure_lab, "SSL", *debug, "-o", "json", "list", "--regex",
                             "^nothing-here$", props=str(props))
        assert (code, json.loads(out)) == (0, []), err   # connected: nothing was checked
        said = [line for line in err.splitlines() if "enable.ssl.certificate" in line]
        assert len(said) == 1 and said[0].startswith(want), err
        assert "SASL passwords" in said[0]
    code, out, err = via(secure_lab, "SSL", "-o", "json", "list", "--regex", "^nothing-here$")
    assert code == 0 and err == "", err   # verified (the lab's CA): no word


def test_history_and_the_records_watch_show_only_groups_the_principal_may_describe(
        secure_lab, topic_factory, consumer_factory):
    from test_probe_acl import allow

    topic = topic_factory(2, cluster=secure_lab)
    run = uuid.uuid4().hex[:8]
    hidden, shown = f"g-acl-{run}-hidden", f"g-acl-{run}-shown"
    for name in (hidden, shown):
        consumer = consumer_factory(name, topic, cluster=secure_lab, name=f"client-{name}")
        consumer.wait_assigned(count=2)
        consumer.close()
    allow(secure_lab, ResourceType.TOPIC, "__consumer_offsets", AclOperation.READ)
    allow(secure_lab, ResourceType.TOPIC, "__consumer_offsets", AclOperation.DESCRIBE)
    allow(secure_lab, ResourceType.GROUP, shown, AclOperation.DESCRIBE)
    try:
        _shown_and_hidden(secure_lab, shown, hidden, run)
    finally:   # the session lab's guest has no ACL on the topic again
        _remove_topic_acls(secure_lab)


def _remove_topic_acls(lab) -> None:
    from confluent_kafka.admin import (
        AclBindingFilter, AclPermissionType, AdminClient, ResourcePatternType,
    )
    from test_lab_tls import _props
    from tls_support import LIBRDKAFKA_UNKNOWN

    conf = {k: v for k, v in _props(lab.sasl["command_configs"]["PLAIN"]).items()
            if k not in LIBRDKAFKA_UNKNOWN}
    admin = AdminClient({**conf, "bootstrap.servers": lab.sasl_bootstrap})
    gone = [AclBindingFilter(ResourceType.TOPIC, "__consumer_offsets",
                             ResourcePatternType.LITERAL, "User:guest", "*", operation,
                             AclPermissionType.ALLOW)
            for operation in (AclOperation.READ, AclOperation.DESCRIBE)]
    for future in admin.delete_acls(gone).values():
        future.result(timeout=30)


def _shown_and_hidden(secure_lab, shown: str, hidden: str, run: str) -> None:
    from waiting import wait_until

    def history_of_shown():
        code, out, err = guest(secure_lab, "history", shown)
        return (code, out, err) if code == 0 else None

    code, out, err = wait_until(history_of_shown, 30, "the DESCRIBE ACL to apply", interval=0.5)
    assert f"client-{shown}" in out, out

    code, out, err = guest(secure_lab, "describe", hidden)   # the broker's own answer
    assert code == ExitCode.AUTH, err
    for fmt in ("table", "json"):
        code, out, err = guest(secure_lab, "-o", fmt, "history", hidden)
        assert code == ExitCode.AUTH, (code, out, err)
        assert f"client-{hidden}" not in out + err and out in ("", "[]\n"), (out, err)
        assert "not authorized to describe group" in err and hidden in err, err
    code, out, err = guest(secure_lab, "watch", hidden, "--source", "records",
                           "--duration", "5")
    assert code == ExitCode.AUTH and f"client-{hidden}" not in out + err, (code, out, err)
    assert "not authorized to describe group" in err, err

    code, out, err = guest(secure_lab, "-o", "ndjson", "watch", "--all", "--source", "records",
                           "--regex", f"^g-acl-{run}-", "--duration", "4")
    assert code == 0, err
    groups = {json.loads(line).get("group") for line in out.splitlines()}
    assert shown in groups and hidden not in groups, out
    assert f"client-{hidden}" not in out + err
    assert f"group {hidden!r} not shown: not authorized to describe" in err, err
