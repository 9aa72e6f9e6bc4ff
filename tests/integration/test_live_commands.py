"""`watch` and `join --watch` run as a new user runs them, on the lab broker (issue 23):
the live header ticks in a real terminal without events and shows no `None`; a reader
that goes (`| head -1`) ends the command at once with exit 0, in a calm group too, and
the probe still leaves (the broker's log says so, with the reason); Ctrl-C / SIGTERM end
a watch with its summary, in YAML with -o yaml."""
from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import threading
import time

import pytest
import yaml
from probe_support import member_ids, wait_until

pytestmark = pytest.mark.broker

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\r")


def _cmd(kafka, *args: str) -> list[str]:
    return [sys.executable, "-m", "groupctl", "-b", kafka.bootstrap, *args]


class _Reader:
    """Lines from a child's stdout pipe, read with a deadline (no thread holds the pipe,
    so the test can close its end: the reader going away)."""

    def __init__(self, proc: subprocess.Popen):
        self.proc = proc
        self.fd = proc.stdout.fileno()
        self.buf = b""
        self.lines: list[str] = []

    def until(self, predicate, timeout: float, what: str) -> str:
        deadline = time.monotonic() + timeout
        while True:
            for line in self.lines:
                if predicate(line):
                    return line
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no {what} within {timeout:g}s; saw {self.lines}")
            ready, _, _ = select.select([self.fd], [], [], min(left, 0.5))
            if ready:
                chunk = os.read(self.fd, 65536)
                if not chunk:
                    raise AssertionError(f"stdout ended before {what}; saw {self.lines}, "
                                         f"stderr {self.proc.stderr.read()}")
                self.buf += chunk
                *done, self.buf = self.buf.split(b"\n")
                self.lines += [d.decode() for d in done]


def _event(kind: str, **fields):
    def match(line: str) -> bool:
        try:
            e = json.loads(line)
        except ValueError:
            return False
        return e.get("event") == kind and all(e.get(k) == v for k, v in fields.items())
    return match


def _broker_log_says(kafka, pattern: str) -> bool:
    with open(kafka.log_file, encoding="utf-8", errors="replace") as f:
        return re.search(pattern, f.read()) is not None


# ---- a closed pipe -------------------------------------------------------------------------

def test_a_calm_watch_ends_with_exit_0_when_its_reader_goes(kafka, topic_factory,
                                                            consumer_factory, unique_group):
    g = unique_group
    consumer = consumer_factory(g, topic_factory(2), name=f"{g}-a")
    consumer.wait_assigned(count=2)
    proc = subprocess.Popen(_cmd(kafka, "-o", "ndjson", "watch", g), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    _Reader(proc).until(_event("state", state="Stable"), 30, "the group's Stable state")
    proc.stdout.close()   # `| head -1` has what it wanted; the group stays calm: no event
    try:
        code = proc.wait(timeout=20)
    finally:
        proc.kill()
    assert code == 0, proc.stderr.read()
    # nothing but the line naming watch's witnesses (--source auto, said at its start)
    assert [line for line in proc.stderr.read().splitlines()
            if b"watch: source auto:" not in line] == []
    assert member_ids(kafka, g) == [consumer.member_id]   # observation only


def test_join_watch_leaves_and_exits_0_when_its_reader_goes(kafka, unique_group, tmp_path):
    g = unique_group
    record = tmp_path / "events.ndjson"
    proc = subprocess.Popen(_cmd(kafka, "-o", "ndjson", "join", g, "--yes", "--watch", "--record",
                                 str(record)), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    reader = _Reader(proc)
    reader.until(_event("rebalance"), 30, "the probe's first generation")
    me = next(json.loads(line)["member_id"] for line in reader.lines
              if _event("probe", action="joined")(line))
    assert member_ids(kafka, g) == [me]
    proc.stdout.close()   # the reader goes while the group is calm (heartbeats only)
    try:
        code = proc.wait(timeout=20)
    finally:
        proc.kill()
    assert code == 0, proc.stderr.read()
    assert proc.stderr.read() == b""
    # the broker's word: an explicit LeaveGroup, with the reason the probe gave
    wait_until(lambda: _broker_log_says(
        kafka, rf"Member {re.escape(me)} has left group through explicit `LeaveGroup` "
               r"request; client reason: groupctl probe: leaving: output closed"),
        10, "the broker's log line of the probe's LeaveGroup")
    assert member_ids(kafka, g) == []
    last = json.loads(record.read_text().splitlines()[-1])   # the record went on
    assert (last["event"], last["action"], last["member_id"]) == ("probe", "left", me)


# ---- Ctrl-C / SIGTERM: the summary ---------------------------------------------------------

@pytest.mark.parametrize("sig, output", [(signal.SIGINT, "yaml"), (signal.SIGTERM, "table")])
def test_a_signal_ends_a_watch_with_its_summary(kafka, unique_group, sig, output):
    g = unique_group   # no such group: a `state` Dead, then nothing
    proc = subprocess.Popen(_cmd(kafka, "-o", output, "watch", g), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    reader = _Reader(proc)
    reader.until(lambda line: "-> Dead" in line, 30, "the missing group's Dead state")
    proc.send_signal(sig)
    rest, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    text = reader.buf.decode() + rest.decode()
    want = {"group": g, "state": "Dead", "rebalances": 0, "rebalances_lower_bound": False, "rebalancing_ms_total": 0,
            "rebalancing_ms_least": 0, "rebalancing_ms_most": 0,
            "rebalancing_ms_longest": 0, "rebalances_timed": 0, "rebalances_untimed": 0,
            "flapping_members": []}
    if output == "yaml":
        assert list(yaml.safe_load_all(text[text.index("---"):])) == [{"summary": want}]
    else:
        assert text.splitlines()[-1] == (f"summary {g}: 0 rebalances, 0 ms rebalancing "
                                         "(longest 0 ms), state Dead, flapping members: none")


# ---- a real terminal -------------------------------------------------------------------------

class _Terminal:
    """A command in a pseudo-terminal (200x60): rich draws its live view as on a desk."""

    def __init__(self, cmd: list[str]):
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 60, 200, 0, 0))
        env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "200", "LINES": "60"}
        env.pop("NO_COLOR", None)
        self.proc = subprocess.Popen(cmd, stdin=slave, stdout=slave, stderr=subprocess.PIPE,
                                     env=env, close_fds=True)
        os.close(slave)
        self.master = master
        self.raw = b""
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._pump, daemon=True)
        self._thread.start()

    def _pump(self):
        while True:
            try:
                chunk = os.read(self.master, 65536)
            except OSError:   # EIO: the child closed the terminal
                return
            if not chunk:
                return
            with self._lock:
                self.raw += chunk

    def text(self) -> str:
        with self._lock:
            return ANSI.sub("", self.raw.decode(errors="replace"))

    def until(self, pattern: str, timeout: float, what: str) -> re.Match:
        deadline = time.monotonic() + timeout
        while True:
            found = list(re.finditer(pattern, self.text()))
            if found:
                return found[-1]
            if time.monotonic() > deadline:
                raise AssertionError(f"no {what} within {timeout:g}s; screen:\n{self.text()[-3000:]}")
            time.sleep(0.1)

    def stop(self, sig=signal.SIGINT, timeout: float = 20) -> int:
        self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout)
        finally:
            self.proc.kill()
            self._thread.join(5)
            os.close(self.master)


def test_join_watch_header_ticks_in_a_terminal_and_never_says_none(kafka, unique_group):
    g = unique_group
    term = _Terminal(_cmd(kafka, "join", g, "--yes", "--watch"))
    try:
        term.until(r"last rebalance \d+ s ago", 30, "the probe's first rebalance")
        # the group is calm now (the probe alone, heartbeating): the clock still moves
        term.until(r"last rebalance ([3-9]|\d\d) s ago", 20, "the header ticking")
        me = term.until(r"probe (groupctl-[0-9a-f-]+)", 5, "the probe's id").group(1)
        assert member_ids(kafka, g) == [me]
    finally:
        code = term.stop(signal.SIGINT)
    assert code == 0, term.proc.stderr.read()
    screen = term.text()
    assert "None" not in screen, screen[-3000:]
    assert re.search(r"generation \d+ .*protocol range", screen)
    assert member_ids(kafka, g) == []


def test_watch_header_ticks_in_a_terminal(kafka, topic_factory, consumer_factory,
                                          unique_group):
    g = unique_group
    term = _Terminal(_cmd(kafka, "watch", g, "--interval", "0.5"))
    try:
        term.until(r"state Dead", 30, "the missing group's Dead state")
        consumer_factory(g, topic_factory(2), name=f"{g}-a").wait_assigned(count=2)
        term.until(r"last rebalance \d+ s ago", 30, "the consumer's rebalance")
        term.until(r"last rebalance ([3-9]|\d\d) s ago", 20, "the header ticking")
    finally:
        code = term.stop(signal.SIGTERM)
    assert code == 0, term.proc.stderr.read()
    screen = term.text()
    assert "None" not in screen, screen[-3000:]
    # librdkafka's members report no generation: the count is said to be "at least"
    assert re.search(rf"summary {re.escape(g)}: (at least )?(1 rebalance|\d+ rebalances)"
                     r"( \([^)]*\))?,", screen), screen
