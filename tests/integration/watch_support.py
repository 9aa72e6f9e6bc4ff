"""Helpers of the `groupctl watch` tests:

    WatchProcess(kafka, "g", "--interval", "0.2")   groupctl watch -o ndjson as a process;
                                                   .events (parsed lines), .wait_event(pred),
                                                   .stop() (SIGTERM) -> exit code
    KillableConsumer(bootstrap, group, topic)      a librdkafka consumer in its own process,
                                                   printing its member id and assign/revoke
                                                   callbacks; .kill() is SIGKILL: it never
                                                   sends LeaveGroup
"""
from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time


class _Lines:
    """A reader thread per stream: lines into a list, as they come."""

    def __init__(self, stream, parse):
        self.items: list = []
        self.raw: list[str] = []
        self._q: queue.Queue = queue.Queue()
        self._parse = parse
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream):
        for line in stream:
            self.raw.append(line)
            item = self._parse(line)
            if item is not None:
                self.items.append(item)
                self._q.put(item)
        self._q.put(None)

    def wait(self, predicate, timeout: float, what: str, start: int = 0):
        deadline = time.monotonic() + timeout
        seen = start
        while True:
            for i in range(seen, len(self.items)):
                if predicate(self.items[i]):
                    return i, self.items[i]
            seen = len(self.items)
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no {what} within {timeout:g}s; saw {self.items[start:]}")
            try:
                if self._q.get(timeout=min(left, 0.5)) is None and seen == len(self.items):
                    raise AssertionError(f"the stream ended before {what}; saw {self.items[start:]}")
            except queue.Empty:
                pass


def _json(line: str):
    line = line.strip()
    if not line.startswith("{"):
        return None
    try:
        return json.loads(line)
    except ValueError:
        return None


class WatchProcess:
    def __init__(self, kafka, *args: str, output: str = "ndjson", debug: bool = False):
        cmd = [sys.executable, "-m", "groupctl", "-b", kafka.bootstrap, "-o", output,
               *(["--debug"] if debug else []), "watch", *args]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, bufsize=1, env={**os.environ, "NO_COLOR": "1"})
        self.out = _Lines(self.proc.stdout, _json)
        self.err = _Lines(self.proc.stderr, lambda line: line)

    @property
    def events(self) -> list[dict]:
        return [e for e in self.out.items if "event" in e]

    def wait_event(self, predicate, timeout: float = 30, what: str = "event", start: int = 0):
        return self.out.wait(lambda e: "event" in e and predicate(e), timeout, what, start)

    def stop(self, timeout: float = 30) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        return self.wait(timeout)

    def wait(self, timeout: float = 60) -> int:
        code = self.proc.wait(timeout)
        self.out._thread.join(5)
        self.err._thread.join(5)
        return code

    def stderr(self) -> str:
        return "".join(self.err.raw)


CONSUMER_SCRIPT = r"""
import json, sys
from confluent_kafka import Consumer
bootstrap, group, topic, name, session_ms = sys.argv[1:6]
c = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "client.id": name,
              "session.timeout.ms": int(session_ms), "heartbeat.interval.ms": 500,
              "partition.assignment.strategy": "range", "enable.auto.commit": False})
def say(kind, parts):
    print(json.dumps({"kind": kind, "member_id": c.memberid(),
                      "partitions": sorted([p.topic, p.partition] for p in parts)}), flush=True)
c.subscribe([topic], on_assign=lambda c_, p: say("assign", p),
            on_revoke=lambda c_, p: say("revoke", p))
while True:
    c.poll(0.1)
"""


class KillableConsumer:
    def __init__(self, bootstrap: str, group: str, topic: str, name: str,
                 session_ms: int = 6000):
        self.name = name
        self.proc = subprocess.Popen([sys.executable, "-c", CONSUMER_SCRIPT, bootstrap, group,
                                      topic, name, str(session_ms)],
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     text=True, bufsize=1)
        self.lines = _Lines(self.proc.stdout, _json)

    @property
    def member_id(self) -> str | None:
        ids = [e["member_id"] for e in self.lines.items if e.get("member_id")]
        return ids[-1] if ids else None

    @property
    def assignment(self) -> frozenset:
        assigns = [e for e in self.lines.items if e["kind"] == "assign"]
        return frozenset(tuple(p) for p in assigns[-1]["partitions"]) if assigns else frozenset()

    def wait_assigned(self, timeout: float = 30):
        self.lines.wait(lambda e: e["kind"] == "assign", timeout, f"{self.name}'s assignment")

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait(10)
