"""`groupctl join --watch` as a real process: SIGINT and SIGTERM make the probe leave (the
group no longer lists it within a second), then exit 0 (docs/reference/exit-codes.md: a clean stop); `--duration` ends with exit 0;
--record writes the same events as -o ndjson."""
from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time

import pytest
from probe_support import member_ids

pytestmark = pytest.mark.broker


def _start(kafka, group: str, *extra: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "groupctl", "-b", kafka.bootstrap, "-o", "ndjson", "join", group,
         "--watch", *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1,
        env={**os.environ, "NO_COLOR": "1"})


def _read_until_stable(proc: subprocess.Popen, timeout: float = 30) -> list[dict]:
    """Read ndjson lines until the first `rebalance` event (the probe is in a Stable
    generation); the readiness condition of these tests. Each line is waited for with the
    time left (a reader thread feeds a queue), so a silent or hung probe fails the test."""
    lines: queue.Queue = queue.Queue()

    def pump() -> None:  # stops after the rebalance line: the rest is the caller's to read
        for line in iter(proc.stdout.readline, ""):
            lines.put(line)
            try:
                if json.loads(line).get("event") == "rebalance":
                    return
            except ValueError:
                pass  # the main loop reports the bad line
        lines.put("")

    reader = threading.Thread(target=pump, daemon=True)
    deadline = time.monotonic() + timeout
    events = []
    reader.start()
    while True:
        left = deadline - time.monotonic()
        try:
            line = lines.get(timeout=max(0.0, left)) if left > 0 else ""
        except queue.Empty:
            line = ""
        if not line:
            break
        events.append(json.loads(line))
        if events[-1]["event"] == "rebalance":
            reader.join(5)
            return events
    proc.kill()
    raise AssertionError(f"the probe never became Stable: {events}, {proc.stderr.read()}")


def _gone_within(kafka, group: str, member: str, seconds: float) -> float:
    start = time.monotonic()
    while member in member_ids(kafka, group):
        assert time.monotonic() - start < seconds, f"{member} still in {group}"
        time.sleep(0.02)
    return time.monotonic() - start


@pytest.mark.slow
def test_signals_leave_the_group_every_time(kafka, topic_factory, unique_group, consumer_factory):
    topic = topic_factory(2)
    consumer = consumer_factory(unique_group, topic)
    consumer.wait_assigned(count=2)
    for i in range(20):
        sig = signal.SIGINT if i % 2 == 0 else signal.SIGTERM
        proc = _start(kafka, unique_group)
        events = _read_until_stable(proc)
        me = next(e["member_id"] for e in events if e["event"] == "probe" and e["member_id"])
        assert me in member_ids(kafka, unique_group)
        proc.send_signal(sig)
        _gone_within(kafka, unique_group, me, 1.0)
        rest, err = proc.communicate(timeout=10)
        assert proc.returncode == 0, (sig, proc.returncode, err)
        assert "Traceback" not in err
        last = json.loads(rest.strip().splitlines()[-1])
        assert last["event"] == "probe" and last["action"] == "left" and last["error"] is None
    # no leftovers: only the consumer is in the group, and it holds both partitions
    assert member_ids(kafka, unique_group) == [consumer.member_id]
    consumer.wait_assigned(count=2)


def test_duration_ends_with_exit_0_and_record_matches_stdout(kafka, unique_group, tmp_path):
    record = tmp_path / "events.ndjson"
    proc = _start(kafka, unique_group, "--duration", "1.5", "--record", str(record))
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    lines = out.splitlines()
    assert lines == record.read_text().splitlines()
    events = [json.loads(line) for line in lines]
    assert {e["v"] for e in events} == {1}
    assert {e["group"] for e in events} == {unique_group}
    assert {e["source"] for e in events} == {"probe"}
    kinds = [e["event"] for e in events]
    assert kinds[0] == "state" and kinds[-1] == "probe" and events[-1]["action"] == "left"
    assert "generation" in kinds and "rebalance" in kinds
    assert member_ids(kafka, unique_group) == []


def test_plain_lines_when_not_a_terminal(kafka, unique_group):
    proc = subprocess.run(
        [sys.executable, "-m", "groupctl", "-b", kafka.bootstrap, "join", unique_group,
         "--watch", "--duration", "1"], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert any(" generation 1 protocol=range" in line for line in lines)
    assert "probe left" in lines[-1]
