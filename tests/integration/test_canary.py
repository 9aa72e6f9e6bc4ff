"""`groupctl canary` on the real lab: its JSON held against what groupctl did not write
(Kafka's ConsumerGroupCommand: each group's coordinator and members; the broker's log: the
group's __consumer_offsets partition, the canary member's join and leave), and on the
three-broker lab one canary per coordinator, a stopped broker's canary failing with the
coordinator's error, then completing on the new coordinator after an outage the brokers'
own load lines bound (monitor mode), and a frozen broker (SIGSTOP) timing out, shown down in
/metrics and to watch's describe poller (the fleet view's COORD), then up again after
SIGCONT. After every run no canary member is left in any
canary group."""
from __future__ import annotations

import asyncio
import io
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
import uuid
from datetime import datetime

import pytest
from prometheus_client.parser import text_string_to_metric_families
from watch_support import _Lines, _json
from waiting import wait_until

from groupctl.cli.app import invoke
from groupctl.cli.env import Env
from groupctl.client import Cluster
from groupctl.observe.sources.poller import DescribePoller

CLASSIC_STEPS = {"find_coordinator_ms", "join_ms", "sync_ms", "heartbeat_ms", "leave_ms"}
CONSUMER_STEPS = {"find_coordinator_ms", "join_ms", "reconcile_ms", "leave_ms"}
INTERVAL = 0.2
SESSION_S = 9.0   # broker.session.timeout.ms: a broker silent this long is fenced


def _canary(kafka, prefix: str, *args: str) -> tuple[int, list[dict], str]:
    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    code = invoke(["-b", kafka.bootstrap, "-o", "json", "--timeout", "10", "canary",
                   "--group-prefix", prefix, *args], env)
    out = env.stdout.getvalue()
    return code, (json.loads(out) if out.strip() else []), env.stderr.getvalue()


def _coordinators(kafka, groups: list[str]) -> dict[str, int]:
    """{group: coordinator id} as Kafka's ConsumerGroupCommand --state shows them."""
    args = [a for g in groups for a in ("--group", g)]
    out = kafka.consumer_group_command("--describe", *args, "--state")
    found = {}
    for line in out.stdout.splitlines():
        m = re.match(r"(\S+)\s+\S+:\d+\s+\((\d+)\)", line)
        if m and m.group(1) in groups:
            found[m.group(1)] = int(m.group(2))
    return found


def _no_members(kafka, groups: list[str]) -> None:
    """Kafka's ConsumerGroupCommand lists no member in any of the groups."""
    args = [a for g in groups for a in ("--group", g)]
    out = kafka.consumer_group_command("--describe", *args, "--members")
    text = out.stdout + out.stderr
    for g in groups:
        assert f"Consumer group '{g}' has no active members." in text, text


def _logged_at(kafka, node: int, pattern: str, what: str) -> float:
    """Unix time of broker `node`'s last INFO line matching `pattern` (its server.log)."""
    text = kafka.log_files[node - 1].read_text(encoding="utf-8", errors="replace")
    found = re.findall(rf"^\[([0-9-]+ [0-9:,]+)\] INFO {pattern}", text, re.M)
    assert found, f"no {what} on broker {node}"
    return datetime.strptime(found[-1], "%Y-%m-%d %H:%M:%S,%f").timestamp()


def _loaded_at(kafka, node: int, partition: int) -> float:
    """Broker `node`'s last "Finished loading" line of the partition."""
    return _logged_at(kafka, node, rf"\[GroupCoordinator id={node}\] Finished loading of "
                      rf"metadata from __consumer_offsets-{partition} ",
                      f"load line of partition {partition}")


def _group_loaded_at(kafka, node: int, group: str) -> float:
    """Broker `node`'s last "Loaded classic group G" line."""
    return _logged_at(kafka, node, rf".*Loaded classic group {re.escape(group)} with ",
                      f"load line of group {group}")


class _Describer:
    """watch's describe poller on a loop of its own, one round at a time: what the fleet
    view's COORD column reads (coordinator(group): (broker, got nothing last round))."""

    def __init__(self, kafka, group: str):
        self.group = group
        self.loop = asyncio.new_event_loop()
        self.cluster = Cluster(kafka.bootstrap.split(","), timeout=10)
        self.loop.run_until_complete(self.cluster.__aenter__())
        self.poller = DescribePoller(self.cluster, [group], poll_deadline=1.5)

    def look(self) -> tuple[int | None, bool]:
        self.loop.run_until_complete(self.poller.round())
        return self.poller.coordinator(self.group)

    def close(self) -> None:
        self.loop.run_until_complete(self.cluster.__aexit__(None, None, None))
        self.loop.close()


def _quorum_leader(kafka) -> int | None:
    """The KRaft quorum's leader (the active controller): the node whose log holds the
    "Completed transition to Leader" line of the highest epoch."""
    best: tuple[int, int] | None = None
    for node, path in enumerate(kafka.log_files, start=1):
        text = path.read_text(encoding="utf-8", errors="replace")
        for m in re.finditer(r"\[RaftManager id=\d+\] Completed transition to Leader\(.*?"
                             r"epoch=(\d+)", text):
            if best is None or int(m.group(1)) > best[0]:
                best = (int(m.group(1)), node)
    return None if best is None else best[1]


class _Monitor:
    """`canary --interval --metrics-port 0 -o ndjson` in a process: its rows, its stderr
    lines, and a scrape of its /metrics."""

    def __init__(self, kafka, prefix: str, timeout: float):
        cmd = [sys.executable, "-m", "groupctl", "-b", kafka.bootstrap, "-o", "ndjson",
               "--timeout", str(timeout), "canary", "--group-prefix", prefix,
               "--protocol", "classic", "--interval", str(INTERVAL), "--metrics-port", "0"]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, bufsize=1, env={**os.environ, "NO_COLOR": "1"})
        self.out = _Lines(self.proc.stdout, _json)
        self.err = _Lines(self.proc.stderr, lambda line: line)

    def scrape(self) -> dict[tuple, float]:
        serving = wait_until(lambda: next((line for line in self.err.items
                                           if "serving metrics on" in line), None),
                             30, "the metrics server")
        url = re.search(r"(http://\S+/metrics)", serving).group(1)
        text = urllib.request.urlopen(url, timeout=10).read().decode()
        return {(s.name, frozenset(s.labels.items())): s.value
                for f in text_string_to_metric_families(text) for s in f.samples}

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        code = self.proc.wait(60)
        assert not [line for line in self.err.raw if "Traceback" in line]
        return code


def _up(samples: dict) -> dict[str, float]:
    return {dict(labels)["coordinator"]: v for (name, labels), v in samples.items()
            if name == "groupctl_canary_up"}


def _failures(samples: dict, coordinator: str, error: str) -> float:
    return sum(v for (name, labels), v in samples.items()
               if name == "groupctl_canary_failures_total"
               and dict(labels)["coordinator"] == coordinator and dict(labels)["error"] == error)


def _log(kafka) -> str:
    return "".join(f.read_text(encoding="utf-8", errors="replace") for f in kafka.log_files)


def test_one_shot_on_the_lab_agrees_with_find_coordinator_and_the_broker_log(kafka):
    prefix = f"canary-{uuid.uuid4().hex[:8]}-"
    code, rows, err = _canary(kafka, prefix, "--max-ms", "5000")
    assert code == 0, err
    assert [(r["protocol"], r["coordinator"]) for r in rows] == [("classic", 1), ("consumer", 1)]
    for r in rows:
        steps = CLASSIC_STEPS if r["protocol"] == "classic" else CONSUMER_STEPS
        assert r["ok"] is True and r["error"] is None and r["failed_step"] is None
        assert steps <= set(r) and all(0 < r[s] < r["round_ms"] for s in steps), r
        assert r["group"].startswith(f"{prefix}{r['protocol']}-1-")
    groups = [r["group"] for r in rows]
    assert _coordinators(kafka, groups) == {g: 1 for g in groups}
    log = _log(kafka)
    classic, consumer = rows
    g, m = re.escape(classic["group"]), re.escape(classic["member_id"])
    assert re.search(rf"partition={classic['partition']}\] Pending dynamic member with id "
                     rf"{m} joins group {g} ", log)
    assert re.search(rf"Stabilized group {g} generation \d+ with 1 members", log)
    assert re.search(rf"partition={classic['partition']}\] \[Group {g}\] Member {m} has left "
                     rf"group through explicit `LeaveGroup` request; client reason: "
                     rf"groupctl canary: leaving: round done", log)
    assert re.search(rf"Group {g} with generation \d+ is now empty", log)
    g, m = re.escape(consumer["group"]), re.escape(consumer["member_id"])
    assert re.search(rf"partition={consumer['partition']}\] \[GroupId {g}\] Member {m} joins "
                     rf"the consumer group", log)
    assert re.search(rf"\[GroupId {g}\] Member {m} left the consumer group", log)
    _no_members(kafka, groups)
    # a second run reuses the same groups (the same leaders place them the same way)
    code, again, err = _canary(kafka, prefix)
    assert code == 0 and [r["group"] for r in again] == groups, err
    _no_members(kafka, groups)


def _every_broker_leads_offsets(lab) -> None:
    """The preferred leaders of __consumer_offsets elected, and waited for: a test before
    may have stopped a node, whose partitions stay led elsewhere until the broker's own
    election (5 minutes), and a broker that leads none coordinates no group."""
    from confluent_kafka import ElectionType
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": lab.bootstrap})
    # (per-partition errors: ELECTION_NOT_NEEDED for those at their preferred leader)
    admin.elect_leaders(ElectionType.PREFERRED).result(timeout=30)

    def leaders():
        topic = admin.list_topics("__consumer_offsets", timeout=10).topics["__consumer_offsets"]
        return {p.leader for p in topic.partitions.values()} >= {n.node_id for n in lab.nodes}

    wait_until(leaders, 60, "every broker to lead __consumer_offsets partitions", interval=0.5)


@pytest.mark.slow
def test_three_brokers_a_canary_each_and_a_stopped_coordinators_canary_moves(kafka3):
    _every_broker_leads_offsets(kafka3)
    prefix = f"canary-{uuid.uuid4().hex[:8]}-"

    def every_round():   # the moved partitions' groups are loaded by their new leaders
        got = _canary(kafka3, prefix, "--protocol", "classic")
        return got if got[0] == 0 else None

    code, rows, err = wait_until(every_round, 60, "a round completed on every coordinator",
                                 interval=0.5)
    assert sorted(r["coordinator"] for r in rows) == [1, 2, 3]
    groups = [r["group"] for r in rows]
    placed = {r["group"]: int(r["group"].rsplit("-", 2)[1]) for r in rows}   # PREFIX-classic-B-n
    assert _coordinators(kafka3, groups) == placed == {r["group"]: r["coordinator"] for r in rows}
    _no_members(kafka3, groups)

    mon = _Monitor(kafka3, prefix, 5)
    out, errs = mon.out, mon.err
    stopped = None
    try:
        _, first = out.wait(lambda r: r.get("ok"), 30, "a completed round")
        victim = next(g for g, b in placed.items() if b == 3)
        start = len(out.items)
        stopped = 3
        killed_at = time.time()
        # a crash: SIGKILL, no controlled shutdown (a SIGTERM lets Kafka 4.4 hand its
        # partitions over within one interval, and no round fails); the lab records it
        os.kill(kafka3.node(3).pid, signal.SIGKILL)
        kafka3.stop_node(3, timeout=0.01)
        i, failed = out.wait(lambda r: r["group"] == victim and not r["ok"], 60,
                             "the stopped coordinator's canary failing", start)
        # the old coordinator unloading its groups, or the new one loading them
        assert failed["error"] and failed["coordinator"] in (1, 2, 3), failed
        print("victim rows:", [(r["coordinator"], r["ok"], r["error"], r["failed_step"])
                               for r in out.items[start:] if r["group"] == victim])
        _, moved = out.wait(lambda r: r["group"] == victim and r["ok"], 60,
                            "the canary completing on the new coordinator", i)
        new = moved["coordinator"]
        assert new in (1, 2)
        # the first completed round on the new coordinator came within one interval (and
        # the length of a round) of the new coordinator's own "Finished loading" line
        loaded = _loaded_at(kafka3, new, failed["partition"])
        late = moved["started_at"] - loaded
        print(f"first completed round {late:+.3f} s after the load line")
        assert -moved["round_ms"] / 1000 <= late <= INTERVAL + 1.0, late
        # the outage it reports: from the first failed round to that one, on which broker;
        # the brokers' witness: the kill, to the new coordinator loading the victim group
        assert moved["previous_coordinator"] == 3 and failed["started_at"] == \
            moved["unavailable_since"], moved
        assert moved["unavailable_s"] == pytest.approx(
            moved["started_at"] - failed["started_at"], abs=0.002)
        group_loaded = _group_loaded_at(kafka3, new, victim)
        witnessed = group_loaded - killed_at
        print(f"unavailable {moved['unavailable_s']:.3f} s; kill to 'Loaded classic group' "
              f"{witnessed:.3f} s; to 'Finished loading' {loaded - killed_at:.3f} s")
        assert group_loaded <= loaded
        assert abs(moved["unavailable_s"] - witnessed) <= INTERVAL + 1.0
        told = wait_until(lambda: [line for line in errs.items if victim in line
                                   and "rounds complete again on coordinator" in line
                                   and "(was 3), unavailable" in line], 10,
                          "the recovery told on stderr")
        print(told[0].strip())
        samples = mon.scrape()
        assert _failures(samples, "3", failed["error"]) >= 1, samples
        assert _up(samples)[str(new)] == 1
        # the dead broker: 0 while the cluster still lists it, no series once dropped;
        # never up
        assert _up(samples).get("3") in (None, 0), samples
    finally:
        code = mon.stop()
        if stopped is not None:
            kafka3.start_node(stopped)
    assert code == 0, "".join(errs.raw)
    wait_until(lambda: len(_coordinators(kafka3, groups)) == 3, 60, "every group coordinated")
    _no_members(kafka3, groups)


@pytest.mark.slow
def test_a_frozen_coordinator_times_out_shows_down_then_up_after_sigcont(kafka3):
    """SIGSTOP: the broker keeps its connections and answers nothing (a long GC pause);
    shorter than the controller's broker session (9 s), so it keeps its partitions."""
    prefix = f"canary-{uuid.uuid4().hex[:8]}-"
    mon = _Monitor(kafka3, prefix, 1)
    frozen, describer = False, None
    try:
        # a broker leading __consumer_offsets partitions now (a failover before may have
        # left one leading none), not the active controller (freezing that one moves the
        # quorum too)
        controller = _quorum_leader(kafka3)
        _, first = mon.out.wait(lambda r: r["ok"] and r["coordinator"] != controller, 30,
                                f"a completed round on a coordinator other than {controller}")
        victim, node, start = first["group"], first["coordinator"], len(mon.out.items)
        before = _failures(mon.scrape(), str(node), "timeout")
        describer = _Describer(kafka3, victim)
        assert describer.look() == (node, False)   # watch --all's COORD: `2`
        frozen_at = time.monotonic()
        kafka3.freeze_node(node)
        frozen = True
        i, failed = mon.out.wait(lambda r: r["group"] == victim and not r["ok"], 30,
                                 "the frozen coordinator's canary failing", start)
        assert (failed["error"], failed["coordinator"]) == ("timeout", node), failed
        samples = mon.scrape()
        print(f"broker {node} frozen: up {_up(samples)}")
        assert _up(samples)[str(node)] == 0
        assert _failures(samples, str(node), "timeout") > before
        assert describer.look() == (node, True)    # COORD `2!`: no answer for the group
        kafka3.thaw_node(node)
        frozen, frozen_s = False, time.monotonic() - frozen_at
        print(f"broker {node} frozen {frozen_s:.1f} s (controller {controller})")
        _, back = mon.out.wait(lambda r: r["group"] == victim and r["ok"], 30,
                               "the canary completing after SIGCONT", i)
        samples = mon.scrape()
        print("after SIGCONT:", back["coordinator"], back.get("unavailable_s"), _up(samples))
        assert back["previous_coordinator"] == node
        assert back["unavailable_since"] == failed["started_at"]
        assert _up(samples)[str(back["coordinator"])] == 1
        if frozen_s < SESSION_S - 1:   # a machine this slow may have let it be fenced
            assert back["coordinator"] == node
            assert describer.look() == (node, False)
    finally:
        if frozen:
            kafka3.thaw_node(node)
        if describer is not None:
            describer.close()
        code = mon.stop()
    assert code == 0, "".join(mon.err.raw)
    _no_members(kafka3, [victim])
