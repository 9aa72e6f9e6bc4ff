"""Shared fixtures: real Kafka lab clusters, started with the same code as `groupctl lab up`.

    kafka             session: a one-node KRaft cluster (groupctl.lab.cluster.Lab): .bootstrap,
                      .log_file (server.log, group coordinator INFO lines), .libs / .libs_path,
                      .nodes, .kafka_version, .consumer_group_command(*args),
                      .share_group_command(*args), .streams_group_command(*args),
                      .metadata_brokers(), .stop_node(id) / .start_node(id)
    kafka_at          session: kafka_at("3.7.2", config=None) -> a one-node lab of that Kafka
                      release (jars fetched from Maven Central on first use) with these
                      extra broker settings, started when first
                      asked for; one runs at a time (asking for another version stops the
                      last): the version matrix, tests/integration/test_versions.py
    kafka3            session: a three-node cluster (three combined broker+controller nodes);
                      started only if a test asks for it
    secure_lab        session: a one-node cluster from `lab up --tls --sasl`: PLAINTEXT,
                      SASL_PLAINTEXT, SSL and SASL_SSL listeners (.bootstrap, .sasl_bootstrap,
                      .ssl_bootstrap, .sasl_ssl_bootstrap), users admin and guest (no ACLs,
                      StandardAuthorizer), .sasl / .tls settings with the client properties
                      files; started only if a test asks for it
    topic_factory     topic_factory(partitions=1, *, cluster=None, replication=1, config=None)
                      -> a fresh topic name, created and visible in Metadata
    unique_group      a group id no other test uses
    consumer_factory  consumer_factory(group, topics, *, cluster=None, start=True, **LabConsumer
                      options) -> a running groupctl.lab.consumer.LabConsumer, closed (leaving
                      the group) after the test

Each session's clusters live in its own pytest temp directory on free ports, so several
pytest sessions can run on one machine at once; Kafka's jars come from the shared cache
(~/.cache/groupctl, resolved with Maven on first use). The JVMs are tied to this process
(they die with it) and are stopped at session end. A broker that cannot start makes the
tests that need it ERROR: they are never skipped. Tests using these fixtures get the
`broker` marker (and `cluster3` for kafka3) automatically.
"""
from __future__ import annotations

import os
import re
import uuid

import pytest

BROKER_FIXTURES = {"kafka", "kafka3", "topic_factory", "consumer_factory", "secure_lab",
                   "kafka_at"}


def pytest_collection_modifyitems(config, items):
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        if names & BROKER_FIXTURES:
            item.add_marker(pytest.mark.broker)
        if "kafka3" in names:
            item.add_marker(pytest.mark.cluster3)


def _start_lab(tmp_path_factory, brokers: int, **options):
    from groupctl.lab.cluster import Lab

    version = options.get("kafka_version")
    suffix = f"-{version}" if version else "-secure" if options else ""
    root = tmp_path_factory.mktemp(f"lab{brokers}{suffix}")
    return Lab.up(name=f"pytest-{os.getpid()}-{brokers}{suffix}", brokers=brokers, root=root,
                  tie_to_parent=True, **options)


@pytest.fixture(scope="session")
def kafka(tmp_path_factory):
    lab = _start_lab(tmp_path_factory, 1)
    try:
        yield lab
    finally:
        lab.down()


@pytest.fixture(scope="session")
def kafka3(tmp_path_factory):
    lab = _start_lab(tmp_path_factory, 3)
    try:
        yield lab
    finally:
        lab.down()


@pytest.fixture(scope="session")
def kafka_at(tmp_path_factory):
    running: dict = {}   # (version, broker config) -> Lab

    def start(version: str, config: dict[str, str] | None = None):
        want = (version, tuple(sorted((config or {}).items())))
        if want not in running:
            for other in list(running):   # one version at a time: 2 cores, many sessions
                running.pop(other).down()
            running[want] = _start_lab(tmp_path_factory, 1, kafka_version=version,
                                       extra_config=config)
        return running[want]

    try:
        yield start
    finally:
        for lab in running.values():
            lab.down()


@pytest.fixture(scope="session")
def secure_lab(tmp_path_factory):
    lab = _start_lab(tmp_path_factory, 1, tls=True, sasl=True)
    try:
        yield lab
    finally:
        lab.down()


def _slug(text: str, limit: int = 40) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text)[:limit].strip("-.") or "t"


@pytest.fixture
def topic_factory(request):
    from groupctl.lab.workload import create_topic

    def make(partitions: int = 1, *, cluster=None, replication: int = 1,
             config: dict | None = None, name: str | None = None) -> str:
        cluster = cluster or request.getfixturevalue("kafka")
        topic = name or f"t-{_slug(request.node.name, 30)}-{uuid.uuid4().hex[:8]}"
        create_topic(cluster.bootstrap, topic, partitions, replication, config)
        return topic

    return make


@pytest.fixture
def unique_group(request) -> str:
    return f"g-{_slug(request.node.name)}-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def consumer_factory(request):
    from groupctl.lab.consumer import LabConsumer

    made: list[LabConsumer] = []

    def make(group: str, topics, *, cluster=None, start: bool = True, **options) -> LabConsumer:
        cluster = cluster or request.getfixturevalue("kafka")
        consumer = LabConsumer(cluster.bootstrap, group,
                               [topics] if isinstance(topics, str) else list(topics), **options)
        made.append(consumer)
        return consumer.start() if start else consumer

    yield make
    for consumer in made:  # close them all at once: leaving is quicker in parallel
        consumer.begin_close()
    errors = []
    for consumer in made:
        try:
            consumer.close(timeout=30)
        except Exception as exc:  # report, but close the others first
            errors.append(f"{consumer.name}: {exc}")
    assert not errors, f"consumers did not close: {errors}"
