"""Configuration files for lab nodes: server.properties per node and one Log4j 2 config.

Every node is a KRaft combined node (process.roles=broker,controller) on 127.0.0.1 with a
PLAINTEXT listener for clients and a CONTROLLER listener for the quorum (and with
`--sasl` a SASL_PLAINTEXT client listener, see sasl.py; with `--tls` an SSL one, and with
both a SASL_SSL one too, see tls.py). Settings that differ
from Kafka's defaults are in LAB_SETTINGS, each with its reason; `--broker-config` (or
``extra=``) overrides any of them.
"""
from __future__ import annotations

import base64
import uuid
from dataclasses import dataclass
from pathlib import Path

HOST = "127.0.0.1"

# Kafka defaults we change for the lab, and why.
LAB_SETTINGS: dict[str, str] = {
    # docs/commands/lab.md: the first classic rebalance of a group starts at once.
    "group.initial.rebalance.delay.ms": "0",
    # KIP-848 groups: members learn new assignments on their next heartbeat (default 5 s)
    # and a vanished member is dropped after the session timeout (default 45 s).
    "group.consumer.min.heartbeat.interval.ms": "500",
    "group.consumer.heartbeat.interval.ms": "1000",
    "group.consumer.min.session.timeout.ms": "6000",
    "group.consumer.session.timeout.ms": "10000",
    # Brokers are unfenced after their first heartbeats: start faster (default 2000).
    "broker.heartbeat.interval.ms": "500",
    # A new 3-voter quorum elects its first leader after this (randomized up to 2x;
    # default 1000); on one host there is no network to be patient with.
    "controller.quorum.election.timeout.ms": "500",
    # A small machine runs several lab nodes: fewer threads.
    "num.network.threads": "2",
    "num.io.threads": "4",
    "num.recovery.threads.per.data.dir": "1",
    "group.coordinator.threads": "2",
    "share.coordinator.threads": "1",
    "log.cleaner.threads": "1",
    "log.cleaner.dedupe.buffer.size": str(8 * 1024 * 1024),
}


@dataclass
class NodeLayout:
    node_id: int
    broker_port: int
    controller_port: int
    node_dir: Path
    sasl_port: int | None = None  # `lab up --sasl`: the SASL_PLAINTEXT client listener
    ssl_port: int | None = None  # `lab up --tls`: the SSL client listener
    sasl_ssl_port: int | None = None  # `lab up --tls --sasl`: the SASL_SSL client listener

    @property
    def data_dir(self) -> Path:
        return self.node_dir / "data"

    @property
    def log_dir(self) -> Path:
        return self.node_dir / "logs"

    @property
    def log_file(self) -> Path:
        return self.log_dir / "server.log"

    @property
    def stdout_file(self) -> Path:
        return self.log_dir / "stdout.log"

    @property
    def config_file(self) -> Path:
        return self.node_dir / "server.properties"

    @property
    def directory_id(self) -> str:
        # Stable per node directory, so the formatter and --initial-controllers agree.
        return kafka_uuid(f"groupctl-lab-dir:{self.node_dir}")


def kafka_uuid(seed: str | None = None) -> str:
    """A Kafka Uuid in its string form (url-safe base64 of 16 bytes, no padding), as
    `kafka-storage.sh random-uuid` prints: never starting with '-', never a reserved id."""
    while True:
        raw = (uuid.uuid5(uuid.NAMESPACE_URL, seed).bytes if seed else uuid.uuid4().bytes)
        text = base64.urlsafe_b64encode(raw).decode().rstrip("=")
        # Uuid.ZERO_UUID, ONE_UUID (metadata topic) and ids below 100 are reserved.
        if not text.startswith("-") and int.from_bytes(raw, "big") >= 100:
            return text
        seed = (seed or "") + "+"


def replication_settings(nodes: int) -> dict[str, str]:
    rf = str(min(3, nodes))
    isr = str(min(2, nodes))
    return {
        "offsets.topic.replication.factor": rf,
        "transaction.state.log.replication.factor": rf,
        "transaction.state.log.min.isr": isr,
        "share.coordinator.state.topic.replication.factor": rf,
        "share.coordinator.state.topic.min.isr": isr,
        "default.replication.factor": "1",
        "min.insync.replicas": "1",
    }


def dynamic_quorum(version: tuple[int, int, int]) -> bool:
    """KIP-853's dynamic quorum (controller.quorum.bootstrap.servers, StorageTool's
    --standalone / --initial-controllers) is in Kafka 3.9 and later; 3.7 and 3.8 know only
    the static controller.quorum.voters."""
    return version[:2] >= (3, 9)


def server_properties(node: NodeLayout, all_nodes: list[NodeLayout],
                      extra: dict[str, str] | None = None, sasl: dict | None = None,
                      tls: dict | None = None,
                      version: tuple[int, int, int] = (4, 4, 0)) -> str:
    """server.properties of `node` for Kafka `version`; `sasl`, `tls`: the lab's SASL and
    TLS settings (see sasl.py, tls.py)."""
    if dynamic_quorum(version):
        quorum_key = "controller.quorum.bootstrap.servers"
        quorum = ",".join(f"{HOST}:{n.controller_port}" for n in all_nodes)
    else:
        quorum_key = "controller.quorum.voters"
        quorum = ",".join(f"{n.node_id}@{HOST}:{n.controller_port}" for n in all_nodes)
    listeners = f"PLAINTEXT://{HOST}:{node.broker_port},CONTROLLER://{HOST}:{node.controller_port}"
    protocols = "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT"
    for name, port in (("SASL_PLAINTEXT", node.sasl_port), ("SSL", node.ssl_port),
                       ("SASL_SSL", node.sasl_ssl_port)):
        if port is not None:
            listeners += f",{name}://{HOST}:{port}"
            protocols += f",{name}:{name}"
    props: dict[str, str] = {
        "process.roles": "broker,controller",
        "node.id": str(node.node_id),
        "listeners": listeners,
        # before KIP-853 (3.9) a combined node must not advertise its controller listener
        "advertised.listeners": (listeners if dynamic_quorum(version) else
                                 ",".join(x for x in listeners.split(",")
                                          if not x.startswith("CONTROLLER:"))),
        "listener.security.protocol.map": protocols,
        "inter.broker.listener.name": "PLAINTEXT",
        "controller.listener.names": "CONTROLLER",
        quorum_key: quorum,
        "log.dirs": str(node.data_dir),
    }
    props.update(LAB_SETTINGS)
    props.update(replication_settings(len(all_nodes)))
    if sasl:
        from .sasl import broker_settings

        props.update(broker_settings(sasl))
    if tls:
        from .tls import broker_settings as tls_settings

        props.update(tls_settings(tls))
    props.update(extra or {})
    lines = ["# written by groupctl lab; regenerated on every `lab up`"]
    lines += [f"{k}={_escape(v)}" for k, v in props.items()]
    return "\n".join(lines) + "\n"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n")


def initial_controllers(nodes: list[NodeLayout]) -> str:
    """The value of StorageTool's --initial-controllers: id@host:port:directory-id,..."""
    return ",".join(f"{n.node_id}@{HOST}:{n.controller_port}:{n.directory_id}" for n in nodes)


# Kafka 3.x (Log4j 1, reload4j): the same layout from the distribution's log4j.properties.
LOG4J_PROPERTIES = """# written by groupctl lab: Kafka's server.log layout, one file per node
log4j.rootLogger=INFO, server, stderr
log4j.appender.server=org.apache.log4j.RollingFileAppender
log4j.appender.server.File=${kafka.logs.dir}/server.log
log4j.appender.server.MaxFileSize=256MB
log4j.appender.server.MaxBackupIndex=4
log4j.appender.server.layout=org.apache.log4j.PatternLayout
log4j.appender.server.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.appender.stderr=org.apache.log4j.ConsoleAppender
log4j.appender.stderr.Target=System.err
log4j.appender.stderr.Threshold=ERROR
log4j.appender.stderr.layout=org.apache.log4j.PatternLayout
log4j.appender.stderr.layout.ConversionPattern=[%d] %p %m (%c)%n
# the group coordinator: the analytics pipeline parses these INFO lines
log4j.logger.org.apache.kafka.coordinator.group=INFO
log4j.logger.kafka.coordinator.group=INFO
# as in Kafka's own config: requests only on WARN
log4j.logger.kafka.request.logger=WARN
log4j.logger.kafka.network.RequestChannel$=WARN
"""

# Kafka's own pattern (config/log4j2.yaml of the distribution), so lab logs parse like
# production server.log files. ${sys:kafka.logs.dir} is set per node on the command line.
LOG4J2_XML = """<?xml version="1.0" encoding="UTF-8"?>
<!-- written by groupctl lab: Kafka's server.log layout, one file per node -->
<Configuration status="WARN" shutdownHook="disable">
  <Properties>
    <Property name="logPattern">[%d] %p %m (%c)%n</Property>
  </Properties>
  <Appenders>
    <RollingFile name="server" fileName="${sys:kafka.logs.dir}/server.log"
                 filePattern="${sys:kafka.logs.dir}/server.log.%i">
      <PatternLayout pattern="${logPattern}"/>
      <Policies><SizeBasedTriggeringPolicy size="256 MB"/></Policies>
      <DefaultRolloverStrategy max="4"/>
    </RollingFile>
    <Console name="stderr" target="SYSTEM_ERR">
      <PatternLayout pattern="${logPattern}"/>
      <ThresholdFilter level="ERROR"/>
    </Console>
  </Appenders>
  <Loggers>
    <Root level="INFO">
      <AppenderRef ref="server"/>
      <AppenderRef ref="stderr"/>
    </Root>
    <!-- the group coordinator: the analytics pipeline parses these INFO lines -->
    <Logger name="org.apache.kafka.coordinator.group" level="INFO"/>
    <Logger name="kafka.coordinator.group" level="INFO"/>
    <!-- as in Kafka's own config: requests only on WARN -->
    <Logger name="kafka.request.logger" level="WARN"/>
    <Logger name="kafka.network.RequestChannel$" level="WARN"/>
  </Loggers>
</Configuration>
"""
