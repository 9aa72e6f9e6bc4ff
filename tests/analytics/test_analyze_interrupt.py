"""Ctrl-C during `groupctl analyze`: one line, exit 130, and no process left behind (the
Spark driver JVM and whatever it started are gone), --out untouched.

A real console-script run in a session of its own; SIGINT goes to its whole process
group, as a terminal's Ctrl-C does, once the Spark job is writing its tables (the
staging directory of --out exists). --out, not there before, is not made: analyze writes
it whole or not at all, and its staging directory is gone."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(300)


def alive_in_session(sid: int) -> list[str]:
    """The processes of session `sid` that still run (zombies are dead: not counted)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        state, session = fields[0], int(fields[3])
        if session == sid and state != "Z":
            found.append(f"{entry} {state}")
    return found


def private_tmp(tmp_path: Path) -> tuple[Path, dict]:
    """A TMPDIR of the test's own, and the environment that gives it to groupctl."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    return tmp, {**os.environ, "TMPDIR": str(tmp)}


def test_a_finished_run_leaves_no_jvm_and_no_spark_files(fixture_dir, tmp_path):
    """Spark's driver JVM deletes its /tmp/spark-* and blockmgr-* directories from a
    shutdown hook, racing the exit of the process that started it: runs left them in /tmp
    and the JVM alive after the command had ended. Its files go to a scratch directory
    under TMPDIR, which is gone, with the JVM, when the command ends."""
    tmp, env = private_tmp(tmp_path)
    groupctl = Path(sys.executable).parent / "groupctl"
    proc = subprocess.Popen(
        [str(groupctl), "analyze", "--broker-logs", str(fixture_dir / "kafka4-server.log"),
         "--out", str(tmp_path / "out")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True, env=env)
    try:
        seen: set[str] = set()
        while proc.poll() is None:   # what the run keeps under TMPDIR while it runs
            seen |= {p.name for d in tmp.glob("groupctl-spark-*") for p in d.iterdir()}
            time.sleep(0.05)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 0, stderr.decode()
    assert any(n.startswith("blockmgr-") for n in seen), seen   # Spark's files were there
    assert not alive_in_session(proc.pid)    # at once: the command waited for its JVM
    assert list(tmp.iterdir()) == []


def test_ctrl_c_mid_job_is_one_line_exit_130_and_no_jvm_left(fixture_dir, tmp_path):
    out = tmp_path / "out"
    tmp, env = private_tmp(tmp_path)
    groupctl = Path(sys.executable).parent / "groupctl"
    proc = subprocess.Popen(
        [str(groupctl), "analyze", "--broker-logs", str(fixture_dir / "kafka4-server.log"),
         "--client-logs", str(fixture_dir / "java-consumer.log"),
         "--events", str(fixture_dir / "probe.ndjson"), "--out", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True, env=env)
    try:
        deadline = time.monotonic() + 240
        while not list(tmp_path.glob(".out.new-*")):   # the job writes its tables
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the Spark job never began"
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, stderr.decode()
    assert stderr.decode().strip().splitlines() == ["groupctl: interrupted"], stderr.decode()
    assert stdout == b""
    left = alive_in_session(proc.pid)
    deadline = time.monotonic() + 5   # a SIGKILLed JVM is gone at once; allow the reaping
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        left = alive_in_session(proc.pid)
    assert not left, left
    assert not out.exists() and not list(tmp_path.glob(".out.new-*")), list(tmp_path.iterdir())
    assert list(tmp.iterdir()) == []   # the killed JVM's hooks deleted nothing: we did
