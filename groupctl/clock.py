"""The one clock of a command run: wall time (event timestamps) and monotonic time
(deadlines, scheduling). Env carries it into the code that needs time, so tests can drive
that code with a clock of their own."""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Clock:
    wall: Callable[[], float] = time.time
    monotonic: Callable[[], float] = time.monotonic

    def monotonic_ms(self) -> int:
        return int(self.monotonic() * 1000)


SYSTEM_CLOCK = Clock()
