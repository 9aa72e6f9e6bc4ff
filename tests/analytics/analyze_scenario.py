"""Drives every kind of rebalance on a real lab broker, for `groupctl analyze`'s proof
(tests/analytics/test_analyze_lab.py) and for harvesting the log fixtures under
tests/fixtures/analyze/ (`python -m tests.analytics.analyze_scenario OUTDIR` against a
running `groupctl lab up`).

Peers groupctl did not write: librdkafka consumers (LabConsumer, and one in a subprocess
with debug=cgrp for its client log), Kafka's own ConsoleConsumer from the lab jars (a Java
consumer whose coordinator log we keep, then SIGKILLed so the broker times its session
out), and the `groupctl join --watch --record` probe, whose record is the ground truth for
generations and durations.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

try:
    from waiting import wait_until
except ImportError:  # run as `python -m tests.analytics.analyze_scenario`
    from tests.waiting import wait_until

CONSOLE_CONSUMER = "org.apache.kafka.tools.consumer.ConsoleConsumer"
CLIENT_LOG4J = """\
status = error
appender.file.type = File
appender.file.name = file
appender.file.fileName = {path}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = warn
rootLogger.appenderRef.file.ref = file
logger.coord.name = org.apache.kafka.clients.consumer.internals
logger.coord.level = info
"""
RDKAFKA_CONSUMER = r"""
import signal, sys
from confluent_kafka import Consumer
bootstrap, group, topic, client_id = sys.argv[1:5]
stop = []
signal.signal(signal.SIGTERM, lambda *a: stop.append(1))
c = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "client.id": client_id,
              "debug": "cgrp", "auto.offset.reset": "earliest",
              "session.timeout.ms": 10000})
c.subscribe([topic])
print("ready", flush=True)
while not stop:
    c.poll(0.1)
c.close()
"""


def log_text(paths) -> str:
    return "".join(Path(p).read_text(errors="replace") for p in paths)


def stabilized(log_files, group: str, generation: int) -> bool:
    return f"Stabilized group {group} generation {generation} " in log_text(log_files)


def epoch_bumped(log_files, group: str, epoch: int) -> bool:
    return f"[GroupId {group}] Bumped group epoch to {epoch}" in log_text(log_files)


@dataclass
class ClassicRun:
    group: str
    record: Path
    java_log: Path
    rdkafka_log: Path
    generations: int
    killed_member_client: str = "console-consumer-killed"
    notes: dict = field(default_factory=dict)


def start_java_consumer(libs: Path, bootstrap: str, group: str, topic: str, log: Path,
                        client_id: str, session_ms: int = 6000) -> subprocess.Popen:
    from groupctl.lab.dist import java_cmd
    from groupctl.lab.tools import TOOL_JVM_OPTS, classpath

    config = log.with_suffix(".log4j2.properties")
    config.write_text(CLIENT_LOG4J.format(path=log))
    opts = [o for o in TOOL_JVM_OPTS if not o.startswith("-Dlog4j2.level")]
    cmd = [java_cmd(), *opts, f"-Dlog4j2.configurationFile={config}", "-cp", classpath(libs),
           CONSOLE_CONSUMER, "--bootstrap-server", bootstrap, "--topic", topic,
           "--group", group, "--consumer-property", f"client.id={client_id}",
           "--consumer-property", f"session.timeout.ms={session_ms}",
           "--consumer-property", "heartbeat.interval.ms=1000"]
    return subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


def start_rdkafka_consumer(bootstrap: str, group: str, topic: str, log: Path,
                           client_id: str) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", RDKAFKA_CONSUMER, bootstrap, group, topic,
                             client_id], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=open(log, "w"), text=True)
    assert proc.stdout.readline().strip() == "ready"
    return proc


def start_probe(bootstrap: str, group: str, record: Path, duration: float) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "groupctl", "-b", bootstrap, "join", group, "--watch",
         "--record", str(record), "--duration", str(duration), "-o", "ndjson"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def run_classic(lab, topic: str, group: str, workdir: Path, make_consumer) -> ClassicRun:
    """Generations, in order (each waited for in the broker log):
    1 first librdkafka member joins the empty group; 2 the groupctl probe joins;
    3 a Java ConsoleConsumer joins; 4 a librdkafka consumer (debug=cgrp) joins;
    5 the Java consumer is SIGKILLed: its session times out; 6 the debug consumer leaves
    (LeaveGroup); 7 a static member joins; (its restart replaces the member id without a
    rebalance); 8 the probe's --duration ends and it leaves."""
    logs = lab.log_files
    record = workdir / "probe.ndjson"
    java_log = workdir / "java-consumer.log"
    rd_log = workdir / "rdkafka-consumer.log"
    gen = 0

    def step(start):
        nonlocal gen
        start()
        gen += 1
        wait_until(lambda: stabilized(logs, group, gen), 60, f"{group} generation {gen}")

    first = []
    step(lambda: first.append(make_consumer(group, topic, name="analyze-first")))
    probe = []
    step(lambda: probe.append(start_probe(lab.bootstrap, group, record, 300)))
    java = []
    step(lambda: java.append(start_java_consumer(lab.libs_path, lab.bootstrap, group, topic,
                                                 java_log, "console-consumer-killed")))
    rd = []
    step(lambda: rd.append(start_rdkafka_consumer(lab.bootstrap, group, topic, rd_log,
                                                  "rdkafka-debug")))
    # The broker logs "Stabilized" as it answers the JoinGroups; each client logs its join
    # when it reads that answer: wait for both clients' lines of generation 4 before the kill
    # (on a loaded machine the Java consumer's line came after an immediate SIGKILL).
    wait_until(lambda: f"generationId={gen}, " in log_text([java_log])
               and f"JoinGroup response: GenerationId {gen}," in log_text([rd_log]),
               60, f"both clients' join lines of generation {gen}")
    step(lambda: java[0].send_signal(signal.SIGKILL))
    java[0].wait(10)
    wait_until(lambda: f"JoinGroup response: GenerationId {gen}," in log_text([rd_log]), 60,
               f"the debug consumer's join line of generation {gen}")
    step(lambda: rd[0].send_signal(signal.SIGTERM))
    rd[0].wait(30)
    static = []
    step(lambda: static.append(make_consumer(group, topic, name="analyze-static",
                                             instance_id="static-1")))
    # A static member's restart: librdkafka sends no LeaveGroup for a static member, so the
    # broker replaces the member id on its next join (no rebalance while Stable).
    static[0].close()
    make_consumer(group, topic, name="analyze-static-2", instance_id="static-1")
    wait_until(lambda: "Static member with groupInstanceId=static-1 " in log_text(logs)
               and group in log_text(logs), 60, "the static member's restart")
    step(lambda: probe[0].send_signal(signal.SIGINT))  # Ctrl-C: the probe leaves
    probe[0].wait(30)
    return ClassicRun(group, record, java_log, rd_log, gen)


def run_consumer_protocol(lab, topic: str, group: str, make_consumer) -> None:
    """A KIP-848 group scales 1 -> 3 -> 1 (the last member stays, for describe)."""
    members = [make_consumer(group, topic, name="analyze-848-0", protocol="consumer")]
    members[0].wait_assigned(timeout=60)
    for i in (1, 2):
        members.append(make_consumer(group, topic, name=f"analyze-848-{i}", protocol="consumer"))
    for m in members:
        m.wait_for(lambda c: len(c.assignment) > 0, timeout=60)
    for m in members[1:]:
        m.close()
    wait_until(lambda: len(members[0].assignment) == 6, 60, "the last member to own all")


if __name__ == "__main__":  # harvest against a running lab: python -m ... OUTDIR
    from groupctl.lab.cluster import Lab
    from groupctl.lab.consumer import LabConsumer
    from groupctl.lab.workload import create_topic

    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    lab = Lab.load()
    stamp = str(int(time.time()))
    topic = f"analyze-{stamp}"
    create_topic(lab.bootstrap, topic, 6)
    made = []

    def make(group, topic, **kw):
        c = LabConsumer(lab.bootstrap, group, [topic], **kw).start()
        made.append(c)
        return c

    try:
        run = run_classic(lab, topic, f"harvest-classic-{stamp}", out, make)
        run_consumer_protocol(lab, topic, f"harvest-848-{stamp}", make)
    finally:
        for c in made:
            c.begin_close()
        for c in made:
            c.close()
    print(json.dumps({"record": str(run.record), "generations": run.generations,
                      "log": str(lab.log_file)}))
    os._exit(0)
