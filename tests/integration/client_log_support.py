"""A librdkafka consumer (confluent-kafka) in its own process that logs the way a user's
would (librdkafka's own `debug=cgrp` lines on stderr, into a file) and prints one JSON
line per rebalance callback, timestamped on entry: ground truth groupctl did not write.

    c = LoggedConsumer(bootstrap, group, topic, name, workdir, assignor="range")
    c.callbacks()      [{"ts", "kind": assign|revoke|lost, "member", "partitions"}, ...]
    c.assignment       what the callbacks left it holding
    c.log              the librdkafka log file (for `analyze --client-logs`)
    c.stop()           SIGTERM: close() (revoke callback, LeaveGroup), wait for the exit
"""
from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

SCRIPT = r"""
import json, signal, sys, time
from confluent_kafka import Consumer
bootstrap, group, topic, name, assignor = sys.argv[1:6]
stop = []
signal.signal(signal.SIGTERM, lambda *a: stop.append(1))
cooperative = "cooperative" in assignor
def callback(kind):
    def call(consumer, partitions):
        print(json.dumps({"ts": time.time(), "kind": kind, "member": consumer.memberid(),
                          "partitions": sorted([p.topic, p.partition] for p in partitions)}),
              flush=True)
        if cooperative:
            (consumer.incremental_assign if kind == "assign"
             else consumer.incremental_unassign)(partitions)
    return call
c = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "client.id": name,
              "debug": "cgrp", "auto.offset.reset": "earliest", "enable.auto.commit": False,
              "session.timeout.ms": 10000, "heartbeat.interval.ms": 1000,
              "partition.assignment.strategy": assignor})
c.subscribe([topic], on_assign=callback("assign"), on_revoke=callback("revoke"),
            on_lost=callback("lost"))
while not stop:
    c.poll(0.1)
c.close()
"""


class LoggedConsumer:
    def __init__(self, bootstrap: str, group: str, topic: str, name: str, workdir: Path,
                 assignor: str = "range"):
        self.name = name
        self.log = workdir / f"{name}.rdkafka.log"
        self.calls = workdir / f"{name}.callbacks.ndjson"
        with open(self.log, "w") as err, open(self.calls, "w") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-c", SCRIPT, bootstrap, group, topic, name, assignor],
                stdin=subprocess.DEVNULL, stdout=out, stderr=err)

    def callbacks(self) -> list[dict]:
        text = self.calls.read_text()
        # a line being written has no newline yet: only whole lines count
        return [json.loads(line) for line in text.splitlines(keepends=True)
                if line.endswith("\n")]

    @property
    def member_id(self) -> str | None:
        ids = [c["member"] for c in self.callbacks() if c["member"]]
        return ids[-1] if ids else None

    @property
    def assignment(self) -> frozenset:
        held: set = set()
        for call in self.callbacks():
            tps = {tuple(p) for p in call["partitions"]}
            held = held | tps if call["kind"] == "assign" else held - tps
        return frozenset(held)

    def stop(self, timeout: float = 30) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout)


def balanced(consumers, every) -> bool:
    """Every partition held by exactly one of `consumers` and each holding some, as their
    callbacks left them (a member still joining holds nothing)."""
    holdings = [c.assignment for c in consumers]
    return all(holdings) and sorted(tp for h in holdings for tp in h) == sorted(every)


def truth(consumers, marks: dict[str, int]) -> tuple[float, float, int]:
    """From the callbacks after `marks` ({name: callbacks before}): (ms summed over
    partitions from a revoke to the next assign of it by any member, the longest, how many
    handovers)."""
    calls = sorted((c["ts"], c["kind"], tuple(tp)) for x in consumers
                   for c in x.callbacks()[marks.get(x.name, 0):] for tp in c["partitions"])
    gaps, open_ = [], {}
    for ts, kind, tp in calls:
        if kind in ("revoke", "lost"):
            open_.setdefault(tp, ts)
        elif tp in open_:
            gaps.append((ts - open_.pop(tp)) * 1000)
    assert not open_, f"revoked, never assigned again: {open_}"
    return sum(gaps), max(gaps, default=0.0), len(gaps)
