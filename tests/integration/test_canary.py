"""`groupctl canary` on the real lab: its JSON held against what groupctl did not write
(Kafka's ConsumerGroupCommand: each group's coordinator and members; the broker's log: the
group's __consumer_offsets partition, the canary member's join and leave), and on the
three-broker lab one canary per coordinator, and a stopped broker's canary failing with the
coordinator's error, then completing on the new coordinator (monitor mode). After every
run no canary member is left in any canary group."""
from __future__ import annotations

import io
import json
import os
import re
import signal
import subprocess
import sys
import urllib.request
import uuid

import pytest
from watch_support import _Lines, _json
from waiting import wait_until

from groupctl.cli.app import invoke
from groupctl.cli.env import Env

CLASSIC_STEPS = {"find_coordinator_ms", "join_ms", "sync_ms", "heartbeat_ms", "leave_ms"}
CONSUMER_STEPS = {"find_coordinator_ms", "join_ms", "reconcile_ms", "leave_ms"}
INTERVAL = 0.2


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


def _loaded_at(kafka, node: int, partition: int) -> float:
    """Unix time of broker `node`'s last "Finished loading" line of the partition."""
    from datetime import datetime

    text = kafka.log_files[node - 1].read_text(encoding="utf-8", errors="replace")
    found = re.findall(rf"^\[([0-9-]+ [0-9:,]+)\] INFO \[GroupCoordinator id={node}\] "
                       rf"Finished loading of metadata from __consumer_offsets-{partition} ",
                       text, re.M)
    assert found, f"no load line of partition {partition} on broker {node}"
    return datetime.strptime(found[-1], "%Y-%m-%d %H:%M:%S,%f").timestamp()


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


@pytest.mark.slow
def test_three_brokers_a_canary_each_and_a_stopped_coordinators_canary_moves(kafka3):
    prefix = f"canary-{uuid.uuid4().hex[:8]}-"
    code, rows, err = _canary(kafka3, prefix, "--protocol", "classic")
    assert code == 0, err
    assert sorted(r["coordinator"] for r in rows) == [1, 2, 3]
    groups = [r["group"] for r in rows]
    placed = {r["group"]: int(r["group"].rsplit("-", 2)[1]) for r in rows}   # PREFIX-classic-B-n
    assert _coordinators(kafka3, groups) == placed == {r["group"]: r["coordinator"] for r in rows}
    _no_members(kafka3, groups)

    cmd = [sys.executable, "-m", "groupctl", "-b", kafka3.bootstrap, "-o", "ndjson",
           "--timeout", "5", "canary", "--group-prefix", prefix, "--protocol", "classic",
           "--interval", str(INTERVAL), "--metrics-port", "0"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            bufsize=1, env={**os.environ, "NO_COLOR": "1"})
    out, errs = _Lines(proc.stdout, _json), _Lines(proc.stderr, lambda line: line)
    stopped = None
    try:
        _, first = out.wait(lambda r: r.get("ok"), 30, "a completed round")
        victim = next(g for g, b in placed.items() if b == 3)
        start = len(out.items)
        stopped = 3
        kafka3.stop_node(3, timeout=0.01)   # SIGTERM, then SIGKILL: a crash mid-shutdown
        i, failed = out.wait(lambda r: r["group"] == victim and not r["ok"], 60,
                             "the stopped coordinator's canary failing", start)
        # the old coordinator unloading its groups, or the new one loading them
        assert failed["error"] and failed["coordinator"] in (1, 2, 3), failed
        print("victim rows:", [(r["coordinator"], r["ok"], r["error"], r["failed_step"])
                               for r in out.items[start:] if r["group"] == victim])
        _, moved = out.wait(lambda r: r["group"] == victim and r["ok"], 60,
                            "the canary completing on the new coordinator", i)
        assert moved["coordinator"] in (1, 2)
        # the first completed round on the new coordinator came within one interval (and
        # the length of a round) of the new coordinator's own "Finished loading" line
        loaded = _loaded_at(kafka3, moved["coordinator"], failed["partition"])
        late = moved["started_at"] - loaded
        print(f"first completed round {late:+.3f} s after the load line")
        assert -moved["round_ms"] / 1000 <= late <= INTERVAL + 1.0, late
        told = wait_until(lambda: [line for line in errs.items if victim in line
                                   and "rounds complete again on coordinator" in line
                                   and "(was 3)" in line], 10, "the recovery told on stderr")
        print(told[0].strip())
        serving = next(line for line in errs.items if "serving metrics on" in line)
        url = re.search(r"(http://\S+/metrics)", serving).group(1)
        text = urllib.request.urlopen(url, timeout=10).read().decode()
        assert re.search(r'groupctl_canary_failures_total\{cluster="[^"]+",coordinator="3",'
                         rf'error="{failed["error"]}",protocol="classic",'
                         rf'step="{failed["failed_step"]}"\}} [1-9]', text), text
        assert re.search(rf'groupctl_canary_up\{{cluster="[^"]+",coordinator="{moved["coordinator"]}"\}} 1\.0', text)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        code = proc.wait(60)
        if stopped is not None:
            kafka3.start_node(stopped)
    assert code == 0, "".join(errs.raw)
    assert not [line for line in errs.raw if "Traceback" in line]
    wait_until(lambda: len(_coordinators(kafka3, groups)) == 3, 60, "every group coordinated")
    _no_members(kafka3, groups)
