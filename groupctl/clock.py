"""The one clock of a command run: wall time (event timestamps), monotonic time (deadlines,
scheduling) and waiting on it (the member driver's idle sleep). Env carries it into the
code that needs time, so tests can drive that code with a clock of their own."""
from __future__ import annotations

import time
from typing import Awaitable, Callable

from .records import Frozen


def _asyncio_sleep(seconds: float) -> Awaitable[None]:
    import asyncio  # only where something waits: the CLI's fast paths import no asyncio

    return asyncio.sleep(seconds)


class Clock(Frozen):
    wall: Callable[[], float]
    monotonic: Callable[[], float]
    #: wait this many seconds of `monotonic` time (a test's clock moves its own time)
    sleep: Callable[[float], Awaitable[None]]
    _fields = ("wall", "monotonic", "sleep")

    def __init__(self, wall: Callable[[], float] = time.time,
                 monotonic: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Awaitable[None]] = _asyncio_sleep):
        self._init(wall=wall, monotonic=monotonic, sleep=sleep)

    def monotonic_ms(self) -> int:
        return int(self.monotonic() * 1000)


SYSTEM_CLOCK = Clock()
