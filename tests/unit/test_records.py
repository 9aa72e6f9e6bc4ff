"""records.Frozen gives the classes it replaces what @dataclass(frozen=True) gave them:
equality and hash over the fields, the repr without hidden fields, no attribute set or
deleted afterwards, copies and pickles equal to the original."""
from __future__ import annotations

import copy
import pickle

import pytest

from groupctl.client.metadata import BrokerInfo, ClusterMetadata, PartitionInfo, TopicInfo
from groupctl.clock import SYSTEM_CLOCK, Clock
from groupctl.config.security import SecurityConfig


def test_equality_hash_and_defaults():
    assert BrokerInfo(1, "h", 9092) == BrokerInfo(1, "h", 9092, None)
    assert BrokerInfo(1, "h", 9092) != BrokerInfo(2, "h", 9092)
    assert BrokerInfo(1, "h", 9092) != (1, "h", 9092, None)   # another type: never equal
    assert len({BrokerInfo(1, "h", 9092), BrokerInfo(1, "h", 9092)}) == 1
    assert PartitionInfo(0, 1, 5).error_code == 0 and PartitionInfo(0, 1, 5).isr == ()
    assert TopicInfo("t", None, False, 0).partitions == {}
    assert SecurityConfig() == SecurityConfig(protocol="PLAINTEXT")
    assert hash(SecurityConfig(sasl_password="a")) == hash(SecurityConfig(sasl_password="a"))
    assert SecurityConfig(sasl_password="a") != SecurityConfig(sasl_password="b")
    assert Clock() == SYSTEM_CLOCK


def test_repr_leaves_secrets_out():
    text = repr(SecurityConfig(protocol="SASL_SSL", sasl_username="u", sasl_password="s3cret",
                               ssl_key_pem="KEY", ssl_key_password="pw", ssl_cert_pem="CERT"))
    assert text.startswith("SecurityConfig(protocol='SASL_SSL', sasl_mechanism=None, "
                           "sasl_username='u', ssl_cafile=None")
    for secret in ("s3cret", "KEY", "pw", "CERT"):
        assert secret not in text
    assert repr(BrokerInfo(1, "h", 9092)) == "BrokerInfo(node_id=1, host='h', port=9092, rack=None)"
    assert "raw" not in repr(ClusterMetadata("c", 1, {}, {}, {"x": 1}))


def test_frozen_and_copies():
    b = BrokerInfo(1, "h", 9092)
    with pytest.raises(AttributeError):
        b.port = 1   # type: ignore[misc]
    with pytest.raises(AttributeError):
        del b.host
    sec = SecurityConfig(protocol="SSL", ssl_cafile="/ca.pem")
    assert pickle.loads(pickle.dumps(sec)) == sec and copy.deepcopy(sec) == sec
    assert copy.copy(b) == b and pickle.loads(pickle.dumps(b)) == b


def test_the_command_environment_is_a_mutable_record():
    import io

    from groupctl.cli.env import Env, Settings

    out = io.StringIO()
    env = Env(stdout=out, stderr=out, tracer=object())
    assert env.settings == Settings() and env.settings is not Env(out, out).settings
    assert env.environ is not Env(out, out).environ   # each its own copy
    env.settings.output = "json"
    assert env.settings == Settings(output="json") != Settings()
    assert "tracer" not in repr(env) and repr(Settings()).startswith("Settings(bootstrap_server=None,")
    with pytest.raises(TypeError):
        hash(Settings())   # mutable: no hash, as a dataclass with eq
