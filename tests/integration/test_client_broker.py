"""groupctl.client against real Kafka 4.x brokers: the lab broker (`kafka` fixture) for
ApiVersions, Metadata, FindCoordinator and routing; and, for SASL (PLAIN, SCRAM-SHA-256,
SCRAM-SHA-512) and TLS, the `lab up --tls --sasl` broker (`secure_lab` fixture) with
PLAINTEXT, SASL_PLAINTEXT, SSL and SASL_SSL listeners and SCRAM users created at format
time."""
from __future__ import annotations

import asyncio
import io
import socket
import time
import uuid

import pytest

from groupctl.client import BrokerConnection, Cluster, NotKafkaError, Tracer
from groupctl.config import SecurityConfig, load_command_config
from groupctl.errors import AuthError, UnreachableError
from groupctl.exitcodes import ExitCode
from groupctl.lab import sasl as labsasl
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


def test_find_coordinators_of_a_fleet_larger_than_one_answer_holds(kafka):
    """50,000 groups (FindCoordinator needs no group to exist): their batched answer
    (~1.6 MB) is over the 1 MiB groupctl reads of one FindCoordinator answer, so the keys
    go in several requests and every group gets its coordinator."""
    groups = [f"g-fleet-{uuid.uuid4().hex[:6]}-{i:06d}" for i in range(50_000)]

    async def main():
        async with Cluster(kafka.bootstrap.split(","), timeout=30) as cluster:
            found = await cluster.find_coordinators(groups, deadline=25)
            return found, set(cluster.nodes)

    found, nodes = run(main())
    assert list(found) == groups
    assert {info.node_id for info in found.values()} <= nodes


def test_request_sharded_reroutes_a_group_whose_coordinator_vanished(kafka):
    """The sharded helper against the broker: the groups go to their coordinator in
    batches; one whose cached coordinator is a broker not in the cluster is forgotten,
    found again and asked there; every group is answered once."""
    from groupctl.client.coordinators import REDISCOVER, WAIT
    from groupctl.client.errors import kafka_error
    from groupctl.client.metadata import BrokerInfo
    from groupctl.client.sharded import Retry, coordinator_route, request_sharded

    groups = [f"g-shard-{i}-{uuid.uuid4().hex[:6]}" for i in range(5)]
    out = io.StringIO()

    async def main():
        async with Cluster(kafka.bootstrap.split(","), timeout=30, trace=Tracer(out)) as cluster:
            d = cluster.deadline(20)
            await cluster.find_coordinators(groups, deadline=d)
            with socket.socket() as s:    # a port nothing listens on: a broker gone
                s.bind(("127.0.0.1", 0))
                gone = s.getsockname()[1]
            cluster.nodes[999] = BrokerInfo(999, "127.0.0.1", gone)
            cluster._coordinators[groups[0]] = 999
            sent: list = []

            async def send(node, batch):
                sent.append((node, list(batch)))
                resp = await cluster.request(DESCRIBE_GROUPS, {"groups": batch}, node_id=node,
                                             deadline=d)
                return {g["group_id"]: Retry(kafka_error("DescribeGroups", g["error_code"]))
                        if g["error_code"] in REDISCOVER | WAIT else g["error_code"]
                        for g in resp["groups"]}

            got = await request_sharded(groups, route=coordinator_route(cluster, d), send=send,
                                        deadline=d, what="DescribeGroups of group", batch=2,
                                        forget=cluster.invalidate_coordinator)
            return got, sent, set(cluster.nodes)

    got, sent, nodes = run(main())
    from groupctl.protocol.errors import ErrorCode
    # no such group: the coordinator's own answer (DescribeGroups v6+), for each one
    assert got.results == {g: ErrorCode.GROUP_ID_NOT_FOUND for g in groups} and not got.errors
    assert (999, [groups[0]]) in sent
    asked = {g for node, batch in sent if node != 999 for g in batch}
    assert asked == set(groups)
    assert all(len(batch) <= 2 for _, batch in sent)


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


# ---- the lab's SASL and TLS listeners (`lab up --tls --sasl`) -------------------------------

def _connect(address: str, security: SecurityConfig | None, timeout: float = 10):
    async def main():
        async with Cluster([address], timeout=timeout, security=security) as cluster:
            return await cluster.metadata([])
    return run(main())


MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")


@pytest.mark.parametrize("mech", MECHANISMS)
@pytest.mark.parametrize("user", ["admin", "guest"])
def test_sasl_mechanisms(secure_lab, mech, user):
    good = labsasl.security(secure_lab.sasl, mech, user=user)
    md = _connect(secure_lab.sasl_bootstrap, good)
    assert 1 in md.brokers  # Metadata without topics: allowed without any ACL
    t0 = time.monotonic()
    with pytest.raises(AuthError, match="SASL_AUTHENTICATION_FAILED") as info:
        _connect(secure_lab.sasl_bootstrap, SecurityConfig("SASL_PLAINTEXT", mech, user, "wrong"))
    assert info.value.exit_code == ExitCode.AUTH
    assert time.monotonic() - t0 < 5  # an auth failure is not retried until the deadline


def test_sasl_from_a_properties_file(secure_lab, tmp_path):
    props = tmp_path / "client.properties"
    props.write_text("security.protocol=SASL_PLAINTEXT\n"
                     "sasl.mechanism=SCRAM-SHA-512\n"
                     "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule "
                     f"required username=\"guest\" password=\"{secure_lab.sasl['guest_password']}\";\n")
    assert 1 in _connect(secure_lab.sasl_bootstrap, load_command_config(props)).brokers


def test_sasl_over_tls(secure_lab):
    security = labsasl.security(secure_lab.sasl, "SCRAM-SHA-512", tls=secure_lab.tls)
    assert security.protocol == "SASL_SSL"
    assert 1 in _connect(secure_lab.sasl_ssl_bootstrap, security).brokers


def test_listener_mismatches_are_explained(secure_lab):
    with pytest.raises(UnreachableError, match="a SASL listener") as info:
        _connect(secure_lab.sasl_bootstrap, None)
    assert info.value.exit_code == ExitCode.UNREACHABLE
    with pytest.raises(AuthError, match="ILLEGAL_SASL_STATE.*security.protocol"):
        _connect(secure_lab.bootstrap, labsasl.security(secure_lab.sasl, "PLAIN"))


def test_tls(secure_lab):
    ca = secure_lab.tls["ca_file"]
    assert 1 in _connect(secure_lab.ssl_bootstrap, SecurityConfig("SSL", ssl_cafile=ca)).brokers
    port = secure_lab.ssl_bootstrap.rsplit(":", 1)[1]
    assert 1 in _connect(f"localhost:{port}", SecurityConfig("SSL", ssl_cafile=ca)).brokers
    with pytest.raises(UnreachableError, match="TLS handshake failed") as info:
        _connect(secure_lab.ssl_bootstrap, SecurityConfig("SSL"), timeout=3)  # the system CAs
    assert info.value.exit_code == ExitCode.UNREACHABLE
    with pytest.raises(NotKafkaError, match="it speaks TLS"):
        _connect(secure_lab.ssl_bootstrap, None)
    with pytest.raises(UnreachableError, match="TLS handshake failed"):
        _connect(secure_lab.bootstrap, SecurityConfig("SSL", ssl_cafile=ca), timeout=3)


# ---- through the CLI ------------------------------------------------------------------------

def test_closed_port_is_exit_3_through_the_cli(tmp_path, monkeypatch):
    """`groupctl list` against a port nobody listens on: exit 3 (UNREACHABLE), one error
    line naming the refusal, no traceback."""
    import socket

    from groupctl.cli.app import invoke
    from groupctl.cli.env import Env

    monkeypatch.setenv("GROUPCTL_CONFIG", str(tmp_path / "none.yaml"))
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    code = invoke(["list", "-b", f"127.0.0.1:{port}", "--timeout", "1"], env)
    err = env.stderr.getvalue()
    assert code == ExitCode.UNREACHABLE, (code, err)
    assert err.startswith("groupctl: error: ") and err.count("\n") == 1, err
    assert "connection refused" in err and "Traceback" not in err
    assert env.stdout.getvalue() == ""
