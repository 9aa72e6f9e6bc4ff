"""The tests' one way to wait for a condition: poll it with a deadline, never sleep a fixed
time. Import it as `from waiting import wait_until` (tests/ is on sys.path under pytest:
tests/conftest.py has no package)."""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_until(check: Callable[[], T], timeout: float = 30.0, what: str = "condition",
               interval: float | None = None) -> T:
    """Call check() until it returns something truthy, and return that. After `timeout`
    seconds: AssertionError naming `what` and the last value seen (give it a __repr__
    that says what was seen, e.g. describe_support.Pending).

    Polls every 50 ms at first, backing off to 0.5 s: quick conditions are seen at once
    and slow ones (a session timeout, a CLI run per check) do not load the machine.
    `interval` fixes the period instead."""
    deadline = time.monotonic() + timeout
    pause = interval if interval is not None else 0.05
    while True:
        last = check()
        if last:
            return last
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError(f"no {what} within {timeout:g}s; last: {last!r}")
        time.sleep(min(pause, left))
        if interval is None:
            pause = min(pause * 1.5, 0.5)


async def wait_until_async(check: Callable[[], T], timeout: float = 10.0,
                           what: str = "condition", interval: float = 0.005) -> T:
    """wait_until inside an event loop (unit tests' fake brokers): await a short pause
    between checks, so the tasks that make the condition true run; AssertionError after
    `timeout` seconds."""
    import asyncio

    deadline = time.monotonic() + timeout
    while True:
        last = check()
        if last:
            return last
        if time.monotonic() >= deadline:
            raise AssertionError(f"no {what} within {timeout:g}s; last: {last!r}")
        await asyncio.sleep(interval)
