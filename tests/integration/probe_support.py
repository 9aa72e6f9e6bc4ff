"""Helpers of the probe / join integration tests: the probe in a background thread with its
own event loop (events collected, conditions waited on with a deadline), DescribeGroups,
the broker log's "Stabilized group G generation N" lines, the groupctl CLI in-process."""
from __future__ import annotations

import asyncio
import re
import threading
import time

from cli_runner import run_cli
from groupctl.client import Cluster
from groupctl.coordinator.probe import Probe, ProbeSettings
from groupctl.protocol.messages import DESCRIBE_GROUPS
from waiting import wait_until  # noqa: F401 - re-exported for the probe tests


def cli(kafka, *args: str, timeout: float = 20) -> tuple[int, str, str]:
    return run_cli(*args, bootstrap=kafka.bootstrap, timeout=timeout)


def describe(kafka, group: str) -> dict:
    """The group's raw DescribeGroups entry (the broker's word, not groupctl's reading)."""
    async def main():
        async with Cluster(kafka.bootstrap.split(","), timeout=10) as cluster:
            resp = await cluster.send_to_coordinator(group, DESCRIBE_GROUPS, {
                "groups": [group], "include_authorized_operations": False})
        for entry in resp.get("groups") or ():
            if entry.get("group_id") == group:
                return entry
        return {"group_id": group, "error_code": 0, "group_state": "Dead", "members": []}
    return asyncio.run(main())


def member_ids(kafka, group: str) -> list[str]:
    return sorted(m["member_id"] for m in describe(kafka, group).get("members") or [])


def stabilized(kafka, group: str) -> list[int]:
    """Generations the broker log says the group stabilized at, in order."""
    pattern = re.compile(rf"Stabilized group {re.escape(group)} generation (\d+) ")
    with open(kafka.log_file, encoding="utf-8", errors="replace") as f:
        return [int(m.group(1)) for m in pattern.finditer(f.read())]


class ProbeThread:
    """A Probe watching `group` on a thread of its own until stop() (which leaves).

    start() fails when the probe is not running within its timeout (or died starting);
    stop() fails when the probe failed at any time (the error it recorded), so a test
    whose last wait passed still goes red if the probe died after it."""

    def __init__(self, kafka, group: str, **settings):
        self.kafka, self.group = kafka, group
        self.settings = ProbeSettings(group=group, **settings)
        self.events: list[dict] = []
        self.error: BaseException | None = None
        self.leave_on_exit = True
        self._cond = threading.Condition()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task | None = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._main, daemon=True, name=f"probe-{group}")
        self.probe: Probe | None = None

    def start(self, timeout: float = 10) -> ProbeThread:
        self._thread.start()
        if not self._ready.wait(timeout):
            raise AssertionError(f"the probe of {self.group} did not start within {timeout:g}s")
        if self.error is not None or self._task is None:
            raise AssertionError(f"the probe of {self.group} failed to start: "
                                 f"{self.error!r}") from self.error
        return self

    def _emit(self, event: dict) -> None:
        with self._cond:
            self.events.append(event)
            self._cond.notify_all()

    def _main(self) -> None:
        async def run():
            async with Cluster(self.kafka.bootstrap.split(","), timeout=10) as cluster:
                self.probe = Probe(cluster, self.settings, emit=self._emit)
                self.probe.leave_on_exit = self.leave_on_exit
                self._task = asyncio.current_task()
                self._ready.set()
                await self.probe.watch()

        self._loop = asyncio.new_event_loop()
        try:
            self._loop.run_until_complete(run())
        except asyncio.CancelledError:
            pass
        except BaseException as exc:  # reported to the test by stop()/wait_*
            self.error = exc
        finally:
            self._ready.set()
            self._loop.close()
            with self._cond:
                self._cond.notify_all()

    def stop(self, timeout: float = 10) -> None:
        """Cancel the probe (it leaves) and wait for its thread; AssertionError when the
        thread did not stop, or when the probe recorded an error at any time."""
        if self._loop is not None and self._task is not None and self._thread.is_alive():
            try:
                self._loop.call_soon_threadsafe(self._task.cancel)
            except RuntimeError:  # the loop closed meanwhile: the probe already ended
                pass
        self._thread.join(timeout)
        assert not self._thread.is_alive(), "the probe thread did not stop"
        if self.error is not None:
            raise AssertionError(f"the probe of {self.group} failed: {self.error!r}") from self.error

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    def of(self, kind: str) -> list[dict]:
        with self._cond:
            return [e for e in self.events if e["event"] == kind]

    def wait_event(self, predicate, timeout: float = 30, what: str = "event") -> dict:
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for e in self.events:
                    if predicate(e):
                        return e
                if self.error is not None:
                    raise AssertionError(f"probe failed while waiting for {what}: {self.error}")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"no {what} within {timeout:g}s; "
                                         f"events: {[e['event'] for e in self.events][-20:]}")
                self._cond.wait(min(left, 0.2))

    def wait_rebalance(self, members: set[str] | int, timeout: float = 30) -> dict:
        """The first rebalance event whose members_after is `members` (a set of ids, or a
        count of members)."""
        def match(e):
            if e["event"] != "rebalance" or e["members_after"] is None:
                return False
            after = e["members_after"]
            return len(after) == members if isinstance(members, int) else set(after) == members
        return self.wait_event(match, timeout, f"rebalance to members {members}")

    @property
    def member_id(self) -> str | None:
        return self.probe.member.member_id if self.probe and self.probe.member else None
