"""The KIP-848 probe without topics under an authorizer (the secure lab's guest user): it
subscribes to NO_PARTITIONS_TOPIC (never [], see coordinator/consumer/types.py), and the
broker checks DESCRIBE on every subscribed topic name, that one too. Without that ACL the
join is refused with TOPIC_AUTHORIZATION_FAILED (exit 7, with the hint naming the ACL to
add) and nothing is left in the group; with a literal DESCRIBE ACL on the name it joins,
gets nothing, and leaves."""
from __future__ import annotations

import json
import uuid

import pytest
from confluent_kafka.admin import (
    AclBinding, AclOperation, AclPermissionType, AdminClient, ResourcePatternType, ResourceType,
)
from probe_support import wait_until
from test_lab_tls import _props
from test_probe_consumer import cg_describe
from tls_support import LIBRDKAFKA_UNKNOWN, guest

from groupctl.coordinator.members.consumer import NO_PARTITIONS_TOPIC
from groupctl.exitcodes import ExitCode

pytestmark = pytest.mark.broker


def allow(lab, resource: ResourceType, name: str, operation: AclOperation) -> None:
    """An ALLOW ACL for User:guest, created as the lab's admin (librdkafka's admin client)."""
    conf = {k: v for k, v in _props(lab.sasl["command_configs"]["PLAIN"]).items()
            if k not in LIBRDKAFKA_UNKNOWN}
    admin = AdminClient({**conf, "bootstrap.servers": lab.sasl_bootstrap})
    binding = AclBinding(resource, name, ResourcePatternType.LITERAL, "User:guest", "*",
                         operation, AclPermissionType.ALLOW)
    admin.create_acls([binding])[binding].result(timeout=30)


def test_probe_needs_describe_on_its_placeholder_topic(secure_lab):
    name = f"g-acl848-{uuid.uuid4().hex[:8]}"
    allow(secure_lab, ResourceType.GROUP, name, AclOperation.READ)
    code, out, err = guest(secure_lab, "join", name, "--protocol", "consumer", "--yes")
    assert (code, out) == (ExitCode.KAFKA_ERROR, ""), err
    assert "TOPIC_AUTHORIZATION_FAILED" in err and repr(NO_PARTITIONS_TOPIC) in err, err
    assert err.startswith("groupctl: error: ") and err.count("\n") == 1, err
    group = cg_describe(secure_lab, name)
    assert group is None or group["members"] == []     # refused: nothing left behind

    allow(secure_lab, ResourceType.TOPIC, NO_PARTITIONS_TOPIC, AclOperation.DESCRIBE)

    def joins():
        code, out, err = guest(secure_lab, "-o", "json", "join", name, "--protocol", "consumer",
                               "--yes")
        return (code, out, err) if code == 0 else None

    code, out, err = wait_until(joins, 30, "the ACL to apply", interval=0.5)
    data = json.loads(out)
    assert data["type"] == "consumer" and data["assignment"] == [], data
    assert cg_describe(secure_lab, name)["members"] == []   # it left
