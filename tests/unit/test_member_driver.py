"""The one member driver (coordinator/driver/member_driver.py) on an injected clock: its
timers (the member's heartbeat deadlines, the run's deadline) run on the clock it is
given, so a minute of membership takes no real minute; and a request's outcome reaches
the member once, mapped to on_response / on_failure in one place."""
from __future__ import annotations

import asyncio
import time

import pytest

from groupctl.clock import Clock
from groupctl.coordinator.driver.member_driver import MemberDriver
from groupctl.coordinator.members.consumer import ConsumerMember
from groupctl.coordinator.members.interface import ClientSideAssignment
from groupctl.errors import DeadlineError, UnreachableError

G = "orders"
HB = "ConsumerGroupHeartbeat"
INTERVAL_MS = 5000


class VirtualClock:
    """Monotonic time that moves only when the driver sleeps on it. Before it moves, it
    lets the event loop run a few turns, so answers already on their way arrive first
    (the driver's wait ends at the first of the two)."""

    def __init__(self):
        self.now = 100.0

    def clock(self) -> Clock:
        return Clock(wall=lambda: 1_700_000_000.0 + self.now, monotonic=lambda: self.now,
                     sleep=self.sleep)

    async def sleep(self, seconds: float) -> None:
        for _ in range(5):
            await asyncio.sleep(0)
        self.now += seconds


class Links:
    """A coordinator that lets a KIP-848 member join at epoch 7 and heartbeat; records the
    virtual time of each heartbeat. `fail` holds exceptions to raise instead of answers."""

    def __init__(self, clock: VirtualClock):
        self.clock = clock
        self.heartbeats: list[tuple[float, int]] = []
        self.fail: list[BaseException] = []

    async def send(self, spec, body, *, route, node_id, min_version=0, timeout=None):
        if spec.name == "FindCoordinator":
            return {"coordinators": [{"key": G, "node_id": 1, "host": "b1", "port": 9092,
                                      "error_code": 0, "error_message": None}]}
        self.heartbeats.append((self.clock.now, body["member_epoch"]))
        if self.fail:
            raise self.fail.pop(0)
        epoch = body["member_epoch"]
        return {"throttle_time_ms": 0, "error_code": 0, "error_message": None,
                "member_id": body["member_id"], "member_epoch": 7 if epoch == 0 else epoch,
                "heartbeat_interval_ms": INTERVAL_MS if epoch >= 0 else 0,
                "assignment": {"topic_partitions": []} if epoch == 0 else None}

    def follow(self, node_id):
        return []

    async def close(self):
        pass


def member() -> ConsumerMember:
    return ConsumerMember(G, topics=["t"], member_id="groupctl-test")


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 10))


def test_a_minute_of_heartbeats_runs_on_the_injected_clock_not_real_time():
    vc = VirtualClock()
    links = Links(vc)
    driver = MemberDriver(None, member(), links=links, clock=vc.clock())
    started = time.monotonic()

    async def main():
        await driver.run_until(lambda m: False, 60.0, None)   # stay a minute, then return
        assert await driver.leave("done", 5.0)
    run(main())
    assert time.monotonic() - started < 5          # no real minute went by
    epochs = [e for _, e in links.heartbeats]
    assert epochs[:2] == [0, 7] and epochs[-1] == -1   # join, acknowledgement ... leave
    beats = [t for t, e in links.heartbeats[2:-1]]
    # one heartbeat per interval the broker asked for, on the virtual clock
    assert len(beats) == 12
    assert all(abs((b - a) - INTERVAL_MS / 1000) < 0.01 for a, b in zip(beats, beats[1:]))


def test_the_deadline_is_the_clocks_and_names_the_goal():
    vc = VirtualClock()
    links = Links(vc)
    links.fail = [UnreachableError("connection refused")] * 1000   # never an answer
    driver = MemberDriver(None, member(), links=links, clock=vc.clock())
    started = time.monotonic()

    async def main():
        with pytest.raises(DeadlineError, match="was not joined in time .state JOINING"):
            await driver.run_until(lambda m: m.generation > 0, 30.0, "joined")
    run(main())
    assert time.monotonic() - started < 5 and vc.now >= 130.0
    # every failure reached the member as "disconnected", and it backed off between them
    times = [t for t, _ in links.heartbeats]
    assert len(times) >= 3 and times[1] - times[0] > 0


def test_the_probe_tells_members_apart_by_type():
    from groupctl.coordinator.members.classic import ClassicMember

    assert not isinstance(member(), ClientSideAssignment)   # the broker assigns
    classic = ClassicMember(G, protocols=[("range", b"")], session_timeout_ms=10_000,
                            rebalance_timeout_ms=10_000, heartbeat_interval_ms=3_000)
    assert isinstance(classic, ClientSideAssignment)   # a classic leader assigns
