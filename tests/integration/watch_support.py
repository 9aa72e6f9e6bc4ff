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
import re
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
        if "--source" not in args:   # the witness these tests hold: the CLI's default is auto
            args = (*args, "--source", "describe")
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


# ---- "no event told twice" --------------------------------------------------------------
# A classic group's describe carries no generation number, so two distinct rebalances can
# tell equal bodies (`state` PreparingRebalance from Stable, `generation` null with the same
# members). A repeat is therefore an event that does not move its own chain on: a `state`
# whose `previous` is not the last state told, an `assignment` that is not a change of the
# member's last one, a rebalance that is not a generation of its own in the broker's log.

STABILIZED = re.compile(r"Stabilized group (\S+) generation (\d+) with (\d+) members")
ONCE_ONLY = ("snapshot", "member_joined", "member_left", "rebalance", "epoch", "type_changed")


def stabilized(lab, group: str) -> dict[int, int]:
    """{generation: members} of every "Stabilized group" line of `group` in the lab's
    broker logs (one coordinator after another: a generation may be logged by several)."""
    out: dict[int, int] = {}
    for path in lab.log_files:
        for m in STABILIZED.finditer(path.read_text(errors="replace")):
            if m.group(1) == group:
                out[int(m.group(2))] = int(m.group(3))
    return out


def last_stabilized(lab, group: str, timeout: float = 20) -> int:
    """The group's last stabilized generation in the broker's log (waited for)."""
    from waiting import wait_until

    return max(wait_until(lambda: stabilized(lab, group), timeout,
                          f"a Stabilized line of {group} in the broker's log"))


def assert_told_once(events: list[dict], lab, group: str, since: int, *,
                     match_broker_generations: bool = True) -> None:
    """Nothing in `events` (one group's) tells again what was told already (see above);
    with `match_broker_generations`, every rebalance told is a distinct generation the
    broker stabilized after `since` (the last one before the watch's first look), in
    order."""
    bodies = [(e["event"], tuple(sorted((k, str(v)) for k, v in e.items() if k != "ts")))
              for e in events if e["event"] in ONCE_ONLY]
    assert len(bodies) == len(set(bodies)), f"an event was told twice: {bodies}"
    _assert_states_chain([e for e in events if e["event"] == "state"])
    _assert_assignments_chain([e for e in events if e["event"] == "assignment"])
    rebalances = [e for e in events if e["event"] == "rebalance"]
    generations = [e for e in events if e["event"] == "generation"]
    assert [g["members"] for g in generations] == [r["members_after"] for r in rebalances], \
        f"each generation told once, with its rebalance: {generations} / {rebalances}"
    numbers = [g["generation"] for g in generations if g["generation"] is not None]
    assert numbers == sorted(set(numbers)), f"a generation told twice: {numbers}"
    if not match_broker_generations:
        return
    from waiting import wait_until

    wait_until(lambda: _as_broker_generations(rebalances, {
        n: k for n, k in stabilized(lab, group).items() if n > since}), 20,
               f"a distinct stabilized generation in the broker's log for each of "
               f"{[r['members_after'] for r in rebalances]}")


def _assert_states_chain(states: list[dict]) -> None:
    for before, after in zip(states, states[1:]):
        assert after["previous"] == before["state"] != after["state"], \
            f"a state told twice: {before} then {after}"


def _assert_assignments_chain(assignments: list[dict]) -> None:
    last: dict[str, set] = {}
    for e in assignments:
        now = {(i["topic"], p) for i in e["assigned"] or () for p in i["partitions"]}
        was = last.get(e["member_id"])
        if was is not None:
            added = {(i["topic"], p) for i in e["added"] or () for p in i["partitions"]}
            revoked = {(i["topic"], p) for i in e["revoked"] or () for p in i["partitions"]}
            assert now != was and now == (was | added) - revoked, \
                f"an assignment told twice, or not a change of {sorted(was)}: {e}"
        last[e["member_id"]] = now


def _as_broker_generations(rebalances: list[dict], broker: dict[int, int]) -> bool:
    """Each rebalance (in order) matched to a later generation the broker stabilized with
    as many members: a rebalance told twice would need a generation of its own."""
    gens = iter(sorted(broker.items()))
    return all(any(n == len(r["members_after"] or ()) for _, n in gens) for r in rebalances)
