"""The ACLs the README names for `canary`, on the secure lab's guest user (an authorizer,
no ACL of its own): without DESCRIBE on topic __consumer_offsets it cannot place its
groups (exit 4 naming that ACL); with it, READ on groups with its prefix (a prefixed ACL;
READ implies DESCRIBE) and DESCRIBE on topic groupctl:no-partitions, both protocols'
rounds complete and nothing is left in its groups."""
from __future__ import annotations

import json
import uuid

import pytest
from confluent_kafka.admin import (
    AclBinding, AclBindingFilter, AclOperation, AclPermissionType, AdminClient,
    ResourcePatternType, ResourceType,
)
from test_lab_tls import _props
from tls_support import LIBRDKAFKA_UNKNOWN, guest
from waiting import wait_until

from groupctl.coordinator.members.consumer import NO_PARTITIONS_TOPIC
from groupctl.exitcodes import ExitCode

pytestmark = pytest.mark.broker


def _admin(lab) -> AdminClient:
    conf = {k: v for k, v in _props(lab.sasl["command_configs"]["PLAIN"]).items()
            if k not in LIBRDKAFKA_UNKNOWN}
    return AdminClient({**conf, "bootstrap.servers": lab.sasl_bootstrap})


GRANTED: list[tuple] = []


def _allow(lab, resource: ResourceType, name: str, operation: AclOperation,
           pattern: ResourcePatternType = ResourcePatternType.LITERAL) -> None:
    binding = AclBinding(resource, name, pattern, "User:guest", "*", operation,
                         AclPermissionType.ALLOW)
    GRANTED.append((resource, name, pattern, operation))
    admin = _admin(lab)   # kept until its answer: a dropped client ends its requests
    admin.create_acls([binding])[binding].result(timeout=30)


@pytest.fixture
def granted(secure_lab):
    """The guest's ACLs this test grants, taken back after it: the other secure-lab tests
    expect a guest with none."""
    yield
    gone = [AclBindingFilter(resource, name, pattern, "User:guest", "*", operation,
                             AclPermissionType.ALLOW)
            for resource, name, pattern, operation in GRANTED]
    GRANTED.clear()
    admin = _admin(secure_lab)
    for future in admin.delete_acls(gone).values():
        future.result(timeout=30)


def test_canary_needs_the_acls_the_readme_names(secure_lab, granted):
    prefix = f"canary-acl-{uuid.uuid4().hex[:8]}-"
    code, out, err = guest(secure_lab, "canary", "--group-prefix", prefix)
    assert (code, out) == (ExitCode.AUTH, ""), err
    assert "DESCRIBE on topic __consumer_offsets" in err and err.count("\n") == 1, err

    _allow(secure_lab, ResourceType.TOPIC, "__consumer_offsets", AclOperation.DESCRIBE)
    _allow(secure_lab, ResourceType.GROUP, prefix, AclOperation.READ,
           ResourcePatternType.PREFIXED)
    _allow(secure_lab, ResourceType.TOPIC, NO_PARTITIONS_TOPIC, AclOperation.DESCRIBE)

    def completes():
        code, out, err = guest(secure_lab, "-o", "json", "canary", "--group-prefix", prefix)
        return (code, out, err) if code == 0 else None

    code, out, err = wait_until(completes, 30, "the ACLs to apply", interval=0.5)
    rows = json.loads(out)
    assert sorted(r["protocol"] for r in rows) == ["classic", "consumer"]
    assert all(r["ok"] for r in rows), rows
    described = secure_lab.consumer_group_command(
        "--describe", *[a for r in rows for a in ("--group", r["group"])], "--members")
    text = described.stdout + described.stderr
    for r in rows:
        assert f"Consumer group '{r['group']}' has no active members." in text, text
