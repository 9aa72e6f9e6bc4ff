"""groupctl.client against real Kafka 4.x brokers: the lab broker (`kafka` fixture) for
ApiVersions, Metadata, FindCoordinator and routing; and, for SASL (PLAIN, SCRAM-SHA-256,
SCRAM-SHA-512) and TLS, a broker of this module's own (`secure_broker`) with PLAINTEXT,
SASL_PLAINTEXT and SSL listeners and SCRAM users created at format time, started from the
lab's cached jars with the lab's helpers. (Switch it to `groupctl lab up --sasl` when the
lab grows SASL listeners.)"""
from __future__ import annotations

import asyncio
import io
import shutil
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from groupctl.client import BrokerConnection, Cluster, NotKafkaError, Tracer
from groupctl.config import SecurityConfig, load_command_config
from groupctl.errors import AuthError, UnreachableError
from groupctl.exitcodes import ExitCode
from groupctl.protocol.messages import APIS, DESCRIBE_GROUPS, LIST_GROUPS, METADATA

pytestmark = pytest.mark.broker


def run(coro, timeout: float = 60.0):
    async def guarded():
        return await asyncio.wait_for(coro, timeout)
    return asyncio.run(guarded())


def host_port(bootstrap: str) -> tuple[str, int]:
    host, port = bootstrap.split(",")[0].rsplit(":", 1)
    return host, int(port)


# ---- the lab broker -------------------------------------------------------------------------

def test_negotiated_versions_are_the_brokers_maxes(kafka):
    async def main():
        host, port = host_port(kafka.bootstrap)
        async with BrokerConnection(host, port) as conn:
            await conn.connect(10)
            return dict(conn.broker_versions), {k: conn.version_for(a) for k, a in APIS.items()}

    broker, ours = run(main())
    for key, api in APIS.items():
        assert key in broker, f"the broker does not list {api.name}"
        assert ours[key] == broker[key][1], (
            f"{api.name}: groupctl uses v{ours[key]}, the broker's max is v{broker[key][1]} "
            f"(our spec: v{api.min_version}-{api.max_version})")


def test_metadata_lists_the_broker_and_a_created_topic(kafka, topic_factory):
    topic = topic_factory(3)

    async def main():
        async with Cluster(kafka.bootstrap.split(","), timeout=20) as cluster:
            everything = await cluster.metadata()
            one = await cluster.metadata([topic])
            missing = await cluster.metadata([f"absent-{uuid.uuid4().hex[:8]}"])
            return cluster.nodes, everything, one, missing

    nodes, everything, one, missing = run(main())
    node_ids = {n.node_id for n in kafka.nodes}
    assert set(nodes) == node_ids == set(everything.brokers)
    host, port = host_port(kafka.bootstrap)
    assert any((b.host, b.port) == (host, port) for b in everything.brokers.values())
    assert everything.controller_id in node_ids and everything.cluster_id
    assert topic in everything.topics
    t = one.topics[topic]
    assert t.error_code == 0 and t.topic_id and not t.is_internal
    assert sorted(t.partitions) == [0, 1, 2]
    assert all(p.leader in node_ids for p in t.partitions.values())
    (absent,) = missing.topics.values()
    assert absent.error_code == 3  # UNKNOWN_TOPIC_OR_PARTITION, left to the caller


def test_find_coordinators_batched_for_several_groups(kafka):
    groups = [f"g-coord-{i}-{uuid.uuid4().hex[:6]}" for i in range(6)]
    out = io.StringIO()

    async def main():
        async with Cluster(kafka.bootstrap.split(","), timeout=30, trace=Tracer(out)) as cluster:
            found = await cluster.find_coordinators(groups)
            before = out.getvalue().count("FindCoordinator")
            again = await cluster.find_coordinators(groups)
            after = out.getvalue().count("FindCoordinator")
            return found, again, before, after, set(cluster.nodes)

    found, again, before, after, nodes = run(main())
    assert list(found) == groups and found == again
    assert {info.node_id for info in found.values()} <= nodes
    lines = [ln for ln in out.getvalue().splitlines() if "FindCoordinator" in ln]
    assert lines and all("FindCoordinator v6 " in ln for ln in lines)  # batched (v4+)
    assert before == after  # the second lookup came from the cache


def test_send_to_coordinator_and_for_each_broker(kafka):
    group = f"g-absent-{uuid.uuid4().hex[:8]}"

    async def main():
        async with Cluster(kafka.bootstrap.split(","), timeout=30) as cluster:
            described = await cluster.send_to_coordinator(group, DESCRIBE_GROUPS,
                                                          {"groups": [group]})
            listed = await cluster.for_each_broker(LIST_GROUPS, {})
            return described, listed, set(cluster.nodes)

    described, listed, nodes = run(main())
    assert described["groups"][0]["error_code"] == 69  # GROUP_ID_NOT_FOUND, the caller's
    assert set(listed) == nodes
    assert all(isinstance(r, dict) and r["error_code"] == 0 for r in listed.values())


def test_many_requests_pipelined_on_one_connection(kafka):
    async def main():
        host, port = host_port(kafka.bootstrap)
        async with BrokerConnection(host, port) as conn:
            await conn.connect(10)
            bodies = [{"groups": [f"p-{i}"]} for i in range(30)]
            resps = await asyncio.gather(
                *(conn.request(DESCRIBE_GROUPS, b) for b in bodies),
                *(conn.request(METADATA, {"topics": []}) for _ in range(10)))
            return resps

    resps = run(main())
    assert [r["groups"][0]["group_id"] for r in resps[:30]] == [f"p-{i}" for i in range(30)]
    assert all(r["brokers"] for r in resps[30:])


# ---- a broker with SASL and TLS listeners ---------------------------------------------------

USERS = {"PLAIN": ("alice", "alice-secret"), "SCRAM-SHA-256": ("bob", "bob-secret"),
         "SCRAM-SHA-512": ("carol", "carol-secret")}


def _make_certs(d: Path) -> bool:
    openssl = shutil.which("openssl")
    if not openssl:
        return False

    def sh(*args):
        subprocess.run([openssl, *args], cwd=d, check=True, capture_output=True, timeout=60)

    sh("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem",
       "-days", "2", "-subj", "/CN=groupctl-test-ca")
    sh("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr",
       "-subj", "/CN=localhost")
    (d / "ext.cnf").write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    sh("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
       "-CAcreateserial", "-out", "server.pem", "-days", "2", "-extfile", "ext.cnf")
    sh("pkcs8", "-topk8", "-nocrypt", "-in", "server.key", "-out", "server.pk8")
    (d / "keystore.pem").write_text((d / "server.pk8").read_text() + (d / "server.pem").read_text())
    return True


class SecureBroker:
    def __init__(self, plaintext: int, sasl: int, ssl: int | None, ca: Path | None):
        self.plaintext = f"127.0.0.1:{plaintext}"
        self.sasl = f"127.0.0.1:{sasl}"
        self.ssl = f"127.0.0.1:{ssl}" if ssl else None
        self.ca = ca


@pytest.fixture(scope="module")
def secure_broker(tmp_path_factory):
    from groupctl.lab import dist, process
    from groupctl.lab.cluster import JVM_OPTS
    from groupctl.lab.config import kafka_uuid

    root = tmp_path_factory.mktemp("secure-broker")
    tls = _make_certs(root)
    plain, controller, sasl, ssl_port = process.free_ports(4)
    listeners = [f"PLAINTEXT://127.0.0.1:{plain}", f"CONTROLLER://127.0.0.1:{controller}",
                 f"SASL_PLAINTEXT://127.0.0.1:{sasl}"]
    advertised = [listeners[0], listeners[2]]
    protocols = "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT"
    if tls:
        listeners.append(f"SSL://127.0.0.1:{ssl_port}")
        advertised.append(listeners[-1])
        protocols += ",SSL:SSL"
    jaas = "org.apache.kafka.common.security.{0}.{1} required{2};"
    props = {
        "process.roles": "broker,controller", "node.id": "1",
        "listeners": ",".join(listeners), "advertised.listeners": ",".join(advertised),
        "listener.security.protocol.map": protocols,
        "inter.broker.listener.name": "PLAINTEXT", "controller.listener.names": "CONTROLLER",
        "controller.quorum.bootstrap.servers": f"127.0.0.1:{controller}",
        "log.dirs": str(root / "data"),
        "offsets.topic.replication.factor": "1", "offsets.topic.num.partitions": "3",
        "transaction.state.log.replication.factor": "1", "transaction.state.log.min.isr": "1",
        "share.coordinator.state.topic.replication.factor": "1",
        "share.coordinator.state.topic.min.isr": "1",
        "group.initial.rebalance.delay.ms": "0",
        "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": jaas.format(
            "plain", "PlainLoginModule", ' user_alice="alice-secret"'),
        "listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config": jaas.format(
            "scram", "ScramLoginModule", ""),
        "listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config": jaas.format(
            "scram", "ScramLoginModule", ""),
    }
    if tls:
        props.update({"ssl.keystore.type": "PEM", "ssl.keystore.location": str(root / "keystore.pem"),
                      "ssl.truststore.type": "PEM", "ssl.truststore.location": str(root / "ca.pem")})
    config = root / "server.properties"
    config.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    libs = dist.kafka_libs()
    fmt = dist.java_tool(libs, "kafka.tools.StorageTool", "format", "--standalone",
                         "--cluster-id", kafka_uuid(), "--config", str(config),
                         "--add-scram", "SCRAM-SHA-256=[name=bob,password=bob-secret]",
                         "--add-scram", "SCRAM-SHA-512=[name=carol,password=carol-secret]")
    assert fmt.returncode == 0, fmt.stdout + fmt.stderr
    cmd = [dist.java_cmd(), *JVM_OPTS, "-cp", dist.classpath(libs), "kafka.Kafka", str(config)]
    pid, start_time = process.spawn(cmd, root, root / "stdout.log", tie_to_parent=True)
    try:
        async def ready():  # the client's own bootstrap retries until the broker listens
            async with Cluster([f"127.0.0.1:{plain}"], timeout=90) as cluster:
                await cluster.metadata([])

        run(ready(), timeout=100)
        yield SecureBroker(plain, sasl, ssl_port if tls else None, root / "ca.pem" if tls else None)
    finally:
        process.stop([(pid, str(config), start_time)], timeout=20)


def _connect(address: str, security: SecurityConfig | None, timeout: float = 10):
    async def main():
        async with Cluster([address], timeout=timeout, security=security) as cluster:
            return await cluster.metadata([])
    return run(main())


@pytest.mark.parametrize("mech", list(USERS))
def test_sasl_mechanisms(secure_broker, mech):
    user, password = USERS[mech]
    md = _connect(secure_broker.sasl, SecurityConfig("SASL_PLAINTEXT", mech, user, password))
    assert 1 in md.brokers
    t0 = time.monotonic()
    with pytest.raises(AuthError, match="SASL_AUTHENTICATION_FAILED") as info:
        _connect(secure_broker.sasl, SecurityConfig("SASL_PLAINTEXT", mech, user, "wrong"))
    assert info.value.exit_code == ExitCode.AUTH
    assert time.monotonic() - t0 < 5  # an auth failure is not retried until the deadline


def test_sasl_from_a_properties_file(secure_broker, tmp_path):
    props = tmp_path / "client.properties"
    props.write_text("security.protocol=SASL_PLAINTEXT\n"
                     "sasl.mechanism=SCRAM-SHA-512\n"
                     "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule "
                     "required username=\"carol\" password=\"carol-secret\";\n")
    assert 1 in _connect(secure_broker.sasl, load_command_config(props)).brokers


def test_listener_mismatches_are_explained(secure_broker):
    with pytest.raises(UnreachableError, match="a SASL listener") as info:
        _connect(secure_broker.sasl, None)
    assert info.value.exit_code == ExitCode.UNREACHABLE
    with pytest.raises(AuthError, match="ILLEGAL_SASL_STATE.*security.protocol"):
        _connect(secure_broker.plaintext, SecurityConfig("SASL_PLAINTEXT", "PLAIN", "alice",
                                                         "alice-secret"))


def test_tls(secure_broker):
    if secure_broker.ssl is None:
        pytest.skip("openssl is not installed: no certificates for the TLS listener")
    ca = str(secure_broker.ca)
    assert 1 in _connect(secure_broker.ssl, SecurityConfig("SSL", ssl_cafile=ca)).brokers
    port = secure_broker.ssl.rsplit(":", 1)[1]
    assert 1 in _connect(f"localhost:{port}", SecurityConfig("SSL", ssl_cafile=ca)).brokers
    with pytest.raises(UnreachableError, match="TLS handshake failed") as info:
        _connect(secure_broker.ssl, SecurityConfig("SSL"), timeout=3)  # the system CAs
    assert info.value.exit_code == ExitCode.UNREACHABLE
    with pytest.raises(NotKafkaError, match="it speaks TLS"):
        _connect(secure_broker.ssl, None)
    with pytest.raises(UnreachableError, match="TLS handshake failed"):
        _connect(secure_broker.plaintext, SecurityConfig("SSL", ssl_cafile=ca), timeout=3)


# ---- through the CLI ------------------------------------------------------------------------

def test_closed_port_is_exit_3_through_the_cli(tmp_path, monkeypatch):
    """Runs once a command that talks to the cluster (`list`) is wired into the CLI."""
    import socket

    from groupctl.cli.app import _register_commands, app, invoke
    from groupctl.cli.env import Env

    _register_commands()
    names = {c.name for c in app.registered_commands}
    if "list" not in names:
        pytest.skip("no `groupctl list` yet: the network commands are not wired in")
    monkeypatch.setenv("GROUPCTL_CONFIG", str(tmp_path / "none.yaml"))
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    code = invoke(["list", "-b", f"127.0.0.1:{port}", "--timeout", "1"], env)
    assert code == ExitCode.UNREACHABLE
    assert env.stderr.getvalue().startswith("groupctl: error: ")
    assert "connection refused" in env.stderr.getvalue()
