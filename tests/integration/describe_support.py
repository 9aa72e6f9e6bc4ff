"""Helpers of the describe/list integration tests: run the CLI in-process, produce and
commit, wait on conditions with a deadline, a raw classic member, ConsumerGroupCommand
output parsing."""
from __future__ import annotations

import asyncio
import json

from cli_runner import run_cli
from groupctl.client import Cluster
from groupctl.protocol.messages import JOIN_GROUP, LEAVE_GROUP, SYNC_GROUP
from waiting import wait_until  # noqa: F401 - re-exported for the describe tests

MEMBER_ID_REQUIRED = 79


def cli(kafka, *args: str) -> tuple[int, str, str]:
    """Run groupctl against the lab in-process: (exit code, stdout, stderr)."""
    return run_cli(*args, bootstrap=kafka.bootstrap, timeout=20)


def describe_json(kafka, *groups: str) -> list[dict]:
    code, out, err = cli(kafka, "-o", "json", "describe", *groups)
    assert code == 0, (code, err)
    return json.loads(out)


class Pending:
    """A falsy result of a wait_until check that says what was seen."""

    def __init__(self, seen):
        self.seen = seen

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return f"Pending({self.seen!r})"


def produce(bootstrap: str, topic: str, counts: dict[int, int]) -> None:
    """counts: {partition: records}."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 2})
    for partition, n in counts.items():
        for i in range(n):
            producer.produce(topic, value=b"v%d" % i, partition=partition)
    assert producer.flush(30) == 0


def commit(bootstrap: str, group: str, offsets: dict[tuple[str, int], int],
           timeout: float = 30.0, config: dict | None = None) -> None:
    """Commit offsets for `group` without joining it (the group stays Empty). Retries the
    retriable errors of a fresh broker (COORDINATOR_LOAD_IN_PROGRESS, NOT_COORDINATOR).
    `config`: extra librdkafka settings (e.g. SASL)."""
    from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition

    consumer = Consumer({**(config or {}), "bootstrap.servers": bootstrap, "group.id": group,
                         "enable.auto.commit": False})
    tps = [TopicPartition(t, p, o) for (t, p), o in offsets.items()]

    def attempt():
        try:
            consumer.commit(offsets=tps, asynchronous=False)
            return True
        except KafkaException as exc:
            err = exc.args[0]
            if not (err.retriable() or err.code() in (KafkaError.NOT_COORDINATOR,
                                                      KafkaError.COORDINATOR_NOT_AVAILABLE,
                                                      KafkaError.COORDINATOR_LOAD_IN_PROGRESS)):
                raise
            return Pending(str(exc))
    try:
        wait_until(attempt, timeout, "offset commit")
    finally:
        consumer.close()


def tp_dicts(tps) -> list[dict]:
    by_topic: dict[str, list[int]] = {}
    for t, p in sorted(tps):
        by_topic.setdefault(t, []).append(p)
    return [{"topic": t, "partitions": ps} for t, ps in by_topic.items()]


def member_tps(assignment) -> set:
    return {(a["topic"], p) for a in assignment or () for p in a["partitions"]}


# ---- a raw classic member, driven through groupctl's client --------------------------------

class RawMember:
    """A classic member that joins (and, if asked, syncs) by hand, on its own event loop
    thread-free: each call runs to completion. Leaves on close()."""

    def __init__(self, bootstrap: str, group: str, protocol_type: str = "consumer",
                 protocols: list[tuple[str, bytes]] | None = None):
        self.bootstrap = bootstrap
        self.group = group
        self.protocol_type = protocol_type
        self.protocols = protocols or [("range", b"")]
        self.member_id = ""
        self.generation = -1
        self.join_response: dict | None = None

    async def _with_cluster(self, fn):
        async with Cluster([self.bootstrap], timeout=30) as cluster:
            return await fn(cluster)

    def run(self, fn):
        return asyncio.run(self._with_cluster(fn))

    def join(self, session_ms: int = 30000, rebalance_ms: int = 30000) -> dict:
        async def go(cluster):
            body = {"group_id": self.group, "session_timeout_ms": session_ms,
                    "rebalance_timeout_ms": rebalance_ms, "member_id": self.member_id,
                    "protocol_type": self.protocol_type,
                    "protocols": [{"name": n, "metadata": m} for n, m in self.protocols],
                    "reason": "groupctl test"}
            resp = await cluster.send_to_coordinator(self.group, JOIN_GROUP, body)
            if resp["error_code"] == MEMBER_ID_REQUIRED:
                body["member_id"] = resp["member_id"]
                resp = await cluster.send_to_coordinator(self.group, JOIN_GROUP, body)
            return resp
        resp = self.run(go)
        assert resp["error_code"] == 0, resp
        self.member_id, self.generation = resp["member_id"], resp["generation_id"]
        self.join_response = resp
        return resp

    def sync(self, assignments: dict[str, bytes]) -> dict:
        async def go(cluster):
            return await cluster.send_to_coordinator(self.group, SYNC_GROUP, {
                "group_id": self.group, "generation_id": self.generation,
                "member_id": self.member_id, "protocol_type": self.protocol_type,
                "protocol_name": self.join_response["protocol_name"],
                "assignments": [{"member_id": m, "assignment": a} for m, a in assignments.items()]})
        resp = self.run(go)
        assert resp["error_code"] == 0, resp
        return resp

    def leave(self) -> None:
        if not self.member_id:
            return

        async def go(cluster):
            return await cluster.send_to_coordinator(self.group, LEAVE_GROUP, {
                "group_id": self.group, "member_id": self.member_id,
                "members": [{"member_id": self.member_id, "reason": "groupctl test done"}]})
        self.run(go)
        self.member_id = ""


# ---- ConsumerGroupCommand ---------------------------------------------------------------------

def cgc_rows(kafka, *args: str) -> list[dict]:
    """ConsumerGroupCommand's table output as dicts keyed by its column headers."""
    proc = kafka.consumer_group_command(*args)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return tool_rows(proc.stdout)


def tool_rows(stdout: str, last_free: bool = False) -> list[dict]:
    """Rows of a Kafka *GroupCommand table, keyed by header (a repeated header line, one
    per group, is skipped). `last_free`: the last column's cells may hold spaces
    (StreamsGroupCommand's ASSIGNMENTS); other cells never do (COORDINATOR (ID) does, but
    no table parsed here has it)."""
    lines = [ln for ln in stdout.splitlines() if ln.strip()]
    header = next(i for i, ln in enumerate(lines) if ln.startswith("GROUP "))
    names = lines[header].split()
    rows = []
    for ln in lines[header + 1:]:
        if ln.startswith("GROUP "):
            continue
        cells = ln.split(None, len(names) - 1) if last_free else ln.split()
        rows.append(dict(zip(names, cells)))
    return rows


def cgc_assignment(text: str) -> set:
    """'t1:0,2;t2:1' (or '-') as a set of (topic, partition)."""
    if text in ("-", ""):
        return set()
    out = set()
    for part in text.split(";"):
        topic, _, parts = part.rpartition(":")
        out |= {(topic, int(p)) for p in parts.split(",") if p}
    return out


def cgc_int(text: str) -> int | None:
    return None if text == "-" else int(text)
