"""The scripted scenarios: each drives real librdkafka consumers (and groupctl's own members)
through one story in a group of its own, from the group's first member to its last leaving.
Steps wait on conditions with deadlines: the clients' callbacks, the broker's log, and (at
most a few seconds, never failing) the watches having told the step, so that most rounds
are ones a watch can see.

    CLIENTS      eager (classic range), coop (classic cooperative-sticky), 848 (consumer)
    SCENARIOS    name -> function(ctx)
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

sys.path[:0] = [str(Path(__file__).resolve().parents[1] / d) for d in ("", "integration")]

from truth_ground import broker_truth, log_lines  # noqa: E402
from watch_support import _json, _Lines  # noqa: E402

from groupctl.lab.consumer import LabConsumer, wait_balanced  # noqa: E402
from groupctl.lab.workload import create_topic  # noqa: E402

CLIENTS = {   # name -> LabConsumer options (java: Kafka's VerifiableConsumer, truth_clients)
    "eager": {"protocol": "classic", "assignor": "range"},
    "coop": {"protocol": "classic", "assignor": "cooperative-sticky"},
    "848": {"protocol": "consumer"},
    "java": {"java": "classic"},
    "java-848": {"java": "consumer"},
    "share": {"kind": "share"},
    "streams": {"kind": "streams"},
}
# the scenarios each client that cannot run them all runs: Kafka's VerifiableConsumer
# cannot change its subscription or be refused by choice; share and streams groups have
# their own (truth_kinds)
ONLY = {
    "java": {"join", "leave", "kill", "probe", "more-members", "force-rebalance", "static-restart"},
    "java-848": {"join", "leave", "kill", "probe", "more-members", "force-rebalance",
                 "static-restart"},
    "share": {"join", "leave", "kill"},
    "streams": {"join", "leave", "kill"},
}


def runs(scenario: str, client: str) -> bool:
    if scenario == "epoch-no-move":
        return client == "848"
    return scenario in ONLY.get(client, SCENARIOS)


def group_kind(client: str) -> str:
    """classic, consumer, share or streams: which ground truth a client's group has."""
    opts = CLIENTS[client]
    return opts.get("kind") or ("consumer" if "consumer" in (opts.get("protocol"),
                                                             opts.get("java")) else "classic")
# a join the group refuses: an assignor the group's members do not offer (classic:
# INCONSISTENT_GROUP_PROTOCOL), a server assignor the broker does not have (KIP-848:
# UNSUPPORTED_ASSIGNOR)
REJECTED = {
    "eager": {"protocol": "classic", "assignor": "roundrobin"},
    "coop": {"protocol": "classic", "assignor": "range"},
    "848": {"protocol": "consumer", "config": {"group.remote.assignor": "no-such-assignor"}},
}

STATS_MS = 500   # librdkafka statistics: the clients' own group state, every half second

KILLABLE = r"""
import json, sys, time
from confluent_kafka import Consumer
bootstrap, group, topic, name, options = sys.argv[1:6]
options = json.loads(options)
conf = {"bootstrap.servers": bootstrap, "group.id": group, "client.id": name,
        "group.protocol": options["protocol"], "enable.auto.commit": False, "log_level": 2}
if options["protocol"] == "classic":
    conf.update({"session.timeout.ms": 10000, "heartbeat.interval.ms": 1000,
                 "partition.assignment.strategy": options["assignor"]})
c = Consumer(conf)
def say(kind):
    def call(consumer, parts):
        print(json.dumps({"ts": time.time(), "kind": kind,
                          "partitions": sorted([p.topic, p.partition] for p in parts)}), flush=True)
    return call
c.subscribe([topic], on_assign=say("assign"), on_revoke=say("revoke"))
while True:
    c.poll(0.1)
"""


@dataclass
class Ctx:
    lab: object
    scenario: str
    client: str
    group: str
    topic: str
    partitions: int
    workdir: Path
    watches: object = None                  # truth_witness.Watches, set before the run
    consumers: list = field(default_factory=list)
    callbacks: list = field(default_factory=list)   # others' callbacks: .name, .events
    probe_lines: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    readings: dict = field(default_factory=dict)   # witness -> truth_witness.Reading
    truth: object = None                    # truth_ground.LogTruth the cells were judged on
    failure: str | None = None

    @property
    def tps(self):
        return [(self.topic, p) for p in range(self.partitions)]

    def consumer(self, name: str, **options) -> LabConsumer:
        opts = {**CLIENTS[self.client], **options}
        if "java" in opts or "kind" in opts:   # not librdkafka's
            import truth_clients

            m = truth_clients.member(self, name, opts)
            self.consumers.append(m)
            return m
        opts["config"] = {"log_level": 2, **opts.get("config", {})}   # librdkafka: critical only
        c = LabConsumer(self.lab.bootstrap, self.group, [self.topic], name=f"{self.group}-{name}",
                        stats_interval_ms=STATS_MS, **opts)
        self.consumers.append(c)
        return c.start()

    def balanced(self, consumers, timeout: float = 60) -> None:
        """The consumers' callbacks cover every partition once, and each has since said in
        its statistics that its group state is steady (librdkafka's own word that the round
        is over for it: the group then stays put for at least a statistics interval)."""
        wait_balanced(consumers, self.tps, timeout=timeout)
        self.steady(consumers)

    def steady(self, consumers, timeout: float = 15) -> None:
        def stamp(c):
            with c._cond:
                return (c.stats or {}).get("ts")
        consumers = [c for c in consumers if hasattr(c, "stats")]   # librdkafka's only
        seen = {c.name: stamp(c) for c in consumers}

        def fresh_and_steady(c) -> bool:
            with c._cond:
                stats = c.stats or {}
            cgrp = stats.get("cgrp") or {}
            # a KIP-848 member given nothing stays in "init", its state "up"
            idle = (cgrp.get("join_state") == "init" and cgrp.get("state") == "up"
                    and not cgrp.get("assignment_size"))
            return stats.get("ts") != seen[c.name] and (cgrp.get("join_state") == "steady" or idle)
        from waiting import wait_until
        wait_until(lambda: all(fresh_and_steady(c) for c in consumers if c.running), timeout,
                   "a steady group state in every consumer's statistics")

    def rounds(self) -> int:
        return len(self.rounds_of())

    def rounds_of(self):
        return broker_truth(log_lines(self.lab), self.group).rounds

    def wait_rounds(self, n: int, timeout: float = 40) -> None:
        from waiting import wait_until
        wait_until(lambda: self.rounds() >= n, timeout, f"round {n} of {self.group} in the broker log")

    def witnessed(self, members: int, timeout: float = 6.0) -> None:
        """Give the watches up to `timeout` s to tell a rebalance to `members` members (a
        watch that never does is a finding of the comparison, not a failure here)."""
        if self.watches is None:
            return
        deadline = time.monotonic() + timeout

        def told(proc) -> bool:
            last = [e for e in proc.events if e["group"] == self.group and e["event"] == "rebalance"]
            return bool(last) and len(last[-1]["members_after"] or ()) == members
        while time.monotonic() < deadline:
            if all(told(p) for p in self.watches.procs.values()):
                return
            time.sleep(0.1)

    def close_all(self) -> None:
        for c in self.consumers:
            if c.running:
                c.close()

    def groupctl(self, *args: str) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, "-m", "groupctl", "-b", self.lab.bootstrap, *args],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env={**os.environ, "NO_COLOR": "1"})


# ---- the scenarios --------------------------------------------------------------------------

def join(ctx: Ctx) -> None:
    a = ctx.consumer("a")
    ctx.balanced([a])
    ctx.witnessed(1)
    b = ctx.consumer("b")
    ctx.balanced([a, b])
    ctx.witnessed(2)
    ctx.close_all()


def leave(ctx: Ctx) -> None:
    a, b = ctx.consumer("a"), ctx.consumer("b")
    ctx.balanced([a, b])
    ctx.witnessed(2)
    b.close()
    ctx.balanced([a])
    ctx.witnessed(1)
    ctx.close_all()


def kill(ctx: Ctx) -> None:
    a = ctx.consumer("a")
    ctx.balanced([a])
    ctx.witnessed(1)
    before = ctx.rounds()
    if ctx.client.startswith("java"):
        import truth_kinds

        return truth_kinds.kill_java(ctx, a)
    proc = subprocess.Popen([sys.executable, "-c", KILLABLE, ctx.lab.bootstrap, ctx.group, ctx.topic,
                             f"{ctx.group}-killed", json.dumps(CLIENTS[ctx.client])],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        from waiting import wait_until
        wait_until(lambda: len(a.assignment) < ctx.partitions, 60, "the second member's share")
        ctx.witnessed(2)
        before = ctx.rounds()
    finally:
        proc.kill()
        out, _ = proc.communicate(timeout=10)
        # its callbacks, up to its death, are ground truth as the others' are
        ctx.callbacks.append(SimpleNamespace(name=f"{ctx.group}-killed", events=[
            SimpleNamespace(ts=e["ts"], kind=e["kind"], partitions=frozenset(map(tuple, e["partitions"])))
            for e in map(json.loads, out.splitlines())]))
    ctx.wait_rounds(before + 1, 60)   # the session expiry
    ctx.balanced([a])
    ctx.witnessed(1)
    ctx.close_all()


def probe(ctx: Ctx) -> None:
    a, b = ctx.consumer("a"), ctx.consumer("b")
    ctx.balanced([a, b])
    ctx.witnessed(2)
    proc = ctx.groupctl("-o", "ndjson", "join", ctx.group, "--watch", "--yes")
    lines = _Lines(proc.stdout, _json)
    try:
        lines.wait(lambda e: e.get("event") == "rebalance" and len(e.get("members_after") or ()) == 3,
                   60, "the probe's rebalance to 3 members")
        ctx.balanced([a, b])
        ctx.witnessed(3)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        finally:
            lines._thread.join(5)
            ctx.probe_lines[:] = lines.items
        if proc.returncode != 0:
            ctx.notes.append(f"probe exit {proc.returncode}: {proc.stderr.read().strip()[-300:]}")
    ctx.balanced([a, b])
    ctx.witnessed(2)
    ctx.close_all()


def more_members(ctx: Ctx) -> None:
    a, b = ctx.consumer("a"), ctx.consumer("b")
    ctx.balanced([a, b])
    ctx.witnessed(2)
    before = ctx.rounds()
    c = ctx.consumer("c")   # one member too many: it gets nothing (KIP-848: no callback)
    ctx.wait_rounds(before + 1, 60)
    ctx.balanced([a, b, c])
    ctx.witnessed(3)
    ctx.close_all()


def force(ctx: Ctx) -> None:
    a, b = ctx.consumer("a"), ctx.consumer("b")
    ctx.balanced([a, b])
    ctx.witnessed(2)
    before = ctx.rounds()
    proc = ctx.groupctl("force-rebalance", ctx.group, "--yes")
    _, err = proc.communicate(timeout=90)
    if proc.returncode != 0:
        ctx.notes.append(f"force-rebalance exit {proc.returncode}: {err.strip()[-300:]}")
    ctx.wait_rounds(before + 1)
    ctx.balanced([a, b])
    ctx.close_all()


def subscription_change(ctx: Ctx) -> None:
    """b subscribes to a second topic too (subscribe() again: the same member)."""
    more = f"{ctx.topic}-more"
    create_topic(ctx.lab.bootstrap, more, 2, 1, None)
    a, b = ctx.consumer("a"), ctx.consumer("b")
    ctx.balanced([a, b])
    ctx.witnessed(2)
    before = ctx.rounds()
    b.subscribe([ctx.topic, more])
    ctx.wait_rounds(before + 1, 60)
    wait_balanced([a, b], [*ctx.tps, (more, 0), (more, 1)], timeout=60)
    ctx.steady([a, b])
    ctx.close_all()


def static_restart(ctx: Ctx) -> None:
    instance = f"{ctx.group}-static"
    a = ctx.consumer("a", instance_id=instance)
    b = ctx.consumer("b")
    ctx.balanced([a, b])
    ctx.witnessed(2)
    a.close()
    a2 = ctx.consumer("a2", instance_id=instance)
    ctx.balanced([a2, b])
    ctx.witnessed(2)
    ctx.close_all()


def rejected(ctx: Ctx) -> None:
    a, b = ctx.consumer("a"), ctx.consumer("b")
    ctx.balanced([a, b])
    ctx.witnessed(2)
    opts = REJECTED[ctx.client]
    r = LabConsumer(ctx.lab.bootstrap, ctx.group, [ctx.topic], name=f"{ctx.group}-rejected",
                    **{**opts, "config": {"log_level": 0, **opts.get("config", {})}}).start()
    try:
        r.wait_for(lambda c: bool(c.errors), 30, "the refused join's error")
        ctx.notes.append(f"refused: {r.errors[0][:120]}")
    finally:
        r.close()
    ctx.balanced([a, b])
    ctx.close_all()


from truth_lab_scenarios import broker_restart, coordinator_move  # noqa: E402

SCENARIOS = {
    "join": join,
    "leave": leave,
    "kill": kill,
    "probe": probe,
    "more-members": more_members,
    "force-rebalance": force,
    "static-restart": static_restart,
    "subscription-change": subscription_change,
    "rejected-join": rejected,
    "broker-restart": broker_restart,
    "coordinator-move": coordinator_move,
    "epoch-no-move": None,   # truth_kinds.epoch_no_move (KIP-848 only)
}
# scenarios that touch the whole lab: each runs alone (a wave of its own); coordinator-move
# needs a lab of three brokers
EXCLUSIVE = {"broker-restart", "coordinator-move"}
CLUSTER3 = {"coordinator-move"}
PARTITIONS = {"more-members": 2}


def make_ctx(lab, scenario: str, client: str, workdir: Path, tag: str | None = None) -> Ctx:
    tag = tag or uuid.uuid4().hex[:6]
    group = f"truth-{scenario}-{client}-{tag}"
    partitions = PARTITIONS.get(scenario, 4)
    topic = f"truth-{scenario}-{client}-{tag}"
    create_topic(lab.bootstrap, topic, partitions, 1, None)
    return Ctx(lab, scenario, client, group, topic, partitions, workdir)


def run(ctx: Ctx) -> None:
    """Run ctx's scenario; a failure is kept (ctx.failure), its consumers always closed."""
    import truth_kinds

    kind = group_kind(ctx.client)
    step = (truth_kinds.KIND_SCENARIOS[ctx.scenario] if kind in ("share", "streams") else
            truth_kinds.epoch_no_move if ctx.scenario == "epoch-no-move" else SCENARIOS[ctx.scenario])
    try:
        step(ctx)
    except BaseException as exc:  # kept for the table: one scenario's failure is not all
        ctx.failure = f"{type(exc).__name__}: {exc}"[:300]
    finally:
        for c in ctx.consumers:
            c.begin_close()
        for c in ctx.consumers:
            try:
                c.close(30)
            except Exception as exc:
                ctx.notes.append(f"close: {exc}")
