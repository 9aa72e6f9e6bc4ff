"""force-rebalance as a real process, stopped by SIGINT or SIGTERM at each phase: before its
JoinGroup, while the JoinGroup is parked, after its LeaveGroup. Every time: exit 130 (an
interrupted command, docs/reference/exit-codes.md), and no groupctl member in the group afterwards.

The test hook _GROUPCTL_PAUSE_AT=PHASE:SECONDS holds the command at a phase, and --debug
prints each phase on stderr, so the signal lands there and nowhere else."""
from __future__ import annotations

import signal
import time

import pytest
from steer_support import describe, groupctl_members, spawn, stabilized, wait_until

from groupctl.cli.steer import PAUSE_ENV

pytestmark = pytest.mark.broker

# phase -> the generations the interrupted run adds (parked: the rebalance it started
# completes without it; before the join: none; after the leave: the one it caused)
PHASES = {"described": 0, "parked": 1, "left": 1}


def read_until(proc, marker: str, timeout: float = 30) -> str:
    deadline = time.monotonic() + timeout
    seen = []
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        seen.append(line)
        if marker in line:
            return line
    proc.kill()
    raise AssertionError(f"never reached {marker!r}: {''.join(seen)}")


@pytest.mark.slow
@pytest.mark.parametrize("phase", list(PHASES))
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_at_each_phase_leaves_nothing_behind(kafka, topic_factory, consumer_factory,
                                                     unique_group, phase, sig):
    topic = topic_factory(2)
    # a 3 s heartbeat: the members rejoin up to 3 s after the rebalance starts, so a loaded
    # machine's delay between the "parked" line and the signal cannot let the join complete
    consumers = [consumer_factory(unique_group, topic, config={"heartbeat.interval.ms": 3000})
                 for _ in range(2)]
    wait_until(lambda: all(c.assignment for c in consumers), 30, "both consumers assigned")
    ids = sorted(c.member_id for c in consumers)
    wait_until(lambda: (d := describe(kafka, unique_group)) and d["state"] == "Stable"
               and sorted(m["member_id"] for m in d["members"]) == ids, 30, "a Stable group")
    gens = stabilized(kafka, unique_group)
    proc = spawn(kafka, "--debug", "force-rebalance", unique_group, "--yes",
                 env={PAUSE_ENV: f"{phase}:30"})
    read_until(proc, f"force-rebalance: {phase}")
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 130, (proc.returncode, err[-2000:])
    assert "Traceback" not in err.replace("groupctl: trace:", ""), err[-3000:]
    if phase == "parked":  # it left while its JoinGroup was out
        assert "LeaveGroup" in err
    assert groupctl_members(kafka, unique_group) == []
    wait_until(lambda: (d := describe(kafka, unique_group)) and d["state"] == "Stable"
               and sorted(m["member_id"] for m in d["members"]) == ids, 30,
               "the group Stable with its own members")
    assert groupctl_members(kafka, unique_group) == []
    added = len(stabilized(kafka, unique_group)) - len(gens)
    assert added == PHASES[phase], (phase, gens, stabilized(kafka, unique_group))


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_consumer_group_member_leaves_on_a_signal(kafka, topic_factory, consumer_factory,
                                                  unique_group, sig):
    """KIP-848: stopped right after its transient member joined, it still leaves."""
    topic = topic_factory(2)
    consumer = consumer_factory(unique_group, topic, protocol="consumer")
    consumer.wait_assigned(count=2)
    wait_until(lambda: (d := describe(kafka, unique_group)) and d["state"] == "Stable", 30,
               "a Stable consumer group")
    proc = spawn(kafka, "--debug", "force-rebalance", unique_group, "--yes",
                 env={PAUSE_ENV: "joined:30"})
    line = read_until(proc, "force-rebalance: joined")
    me = line.split("member_id=")[1].split()[0]
    assert me in [m["member_id"] for m in describe(kafka, unique_group)["members"]]
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 130, (proc.returncode, err[-2000:])
    wait_until(lambda: me not in [m["member_id"] for m in describe(kafka, unique_group)["members"]],
               1.0, "groupctl's member gone")
    assert groupctl_members(kafka, unique_group) == []
    assert consumer.assignment == {(topic, 0), (topic, 1)}
