"""Deadlines, back-off and the one retry loop of the client layer.

`retry(op, deadline=..., what=...)` calls `op()` until it returns. It retries only what
can succeed on a second try: a KafkaError whose code Kafka calls retriable
(`error_for(code).retriable`), and transport failures (ConnectionLostError,
RequestTimeoutError). Anything else is raised at once.

When the deadline passes while retrying, it raises **DeadlineError (exit 6)** naming the
last error ("...: gave up after 7 attempts in 10.0 s; last error: ...
COORDINATOR_LOAD_IN_PROGRESS (14)"), with that error as its `last_error` and `__cause__`.
An attempt that timed out only because the deadline capped it (begun with almost no
time left) is not named when a failure came before it. Chosen over re-raising the last KafkaError (exit 7) because the broker did not refuse
anything: the condition was not reached in time, and a longer --timeout may reach it.
The one exception: when the last failure was that a broker could not be reached (refused,
connection lost), it is an UnreachableError (exit 3) with the same wording, since that is
what the user has to fix.
"""
from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

from ..errors import DeadlineError, GroupctlError, KafkaError, UnreachableError
from .errors import ConnectionLostError, RequestTimeoutError

if TYPE_CHECKING:
    import random

T = TypeVar("T")

TRANSIENT = (ConnectionLostError, RequestTimeoutError)


class Deadline:
    """A point in (event loop) time; `remaining()` seconds until it, never negative."""

    __slots__ = ("at", "seconds")

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.at = asyncio.get_running_loop().time() + seconds

    @classmethod
    def of(cls, deadline: Deadline | float | None, default: float) -> Deadline:
        """A Deadline from a Deadline, a number of seconds, or None (then `default` s)."""
        if isinstance(deadline, Deadline):
            return deadline
        return cls(default if deadline is None else float(deadline))

    def remaining(self) -> float:
        return max(0.0, self.at - asyncio.get_running_loop().time())

    @property
    def expired(self) -> bool:
        return self.remaining() <= 0

    def cap(self, seconds: float | None) -> float:
        """`seconds` but no later than the deadline (a tiny positive number if passed)."""
        left = self.remaining()
        return max(0.001, left if seconds is None else min(seconds, left))

    def check(self, what: str) -> None:
        if self.expired:
            raise DeadlineError(f"{what}: not done within {self.seconds:.1f} s "
                                "(raise --timeout?)")


class Backoff:
    """Exponential back-off with full jitter: attempt n waits a random time in
    [base/2, min(cap, base * 2**n)] (Kafka's retry.backoff.ms / retry.backoff.max.ms)."""

    def __init__(self, base: float = 0.1, cap: float = 1.0, rng: random.Random | None = None):
        self.base = base
        self.cap = cap
        self.attempt = 0
        self._rng = rng

    def next(self) -> float:
        high = min(self.cap, self.base * (2 ** self.attempt))
        self.attempt += 1
        if self._rng is None:  # `random` on first retry only: most commands never retry
            import random

            self._rng = random.Random()
        return self._rng.uniform(min(self.base / 2, high), high)

    def reset(self) -> None:
        self.attempt = 0


def is_retriable(exc: BaseException) -> bool:
    """True for retriable Kafka error codes and transient transport failures."""
    if isinstance(exc, TRANSIENT):
        return True
    if isinstance(exc, KafkaError):
        return exc.retriable
    return False


async def sleep_within(deadline: Deadline, seconds: float) -> bool:
    """Sleep `seconds` or until the deadline, whichever is first; False if none is left."""
    left = deadline.remaining()
    if left <= 0:
        return False
    await asyncio.sleep(min(seconds, left))
    return deadline.remaining() > 0


async def retry(op: Callable[[], Awaitable[T]], *, deadline: Deadline, what: str,
                backoff: Backoff | None = None,
                retriable: Callable[[BaseException], bool] = is_retriable,
                on_retry: Callable[[BaseException, float], None] | None = None) -> T:
    """Run `op()` until it succeeds, retrying retriable failures with back-off until the
    deadline; then DeadlineError (exit 6) with the last failure as `last_error`."""
    backoff = backoff or Backoff()
    attempts = 0
    last: GroupctlError | None = None
    while True:
        attempts += 1
        try:
            return await op()
        except GroupctlError as exc:
            if not retriable(exc):
                raise
            # an attempt timed out because the deadline capped it says nothing of the
            # broker: the failure before it is the one to name
            if last is None or not (isinstance(exc, RequestTimeoutError) and deadline.expired):
                last = exc
        delay = backoff.next()
        if on_retry is not None:
            on_retry(last, delay)
        if not await sleep_within(deadline, delay):
            raise gave_up(what, attempts, deadline, last) from last


def gave_up(what: str, attempts: int, deadline: Deadline,
            last: BaseException | None) -> GroupctlError:
    """The error for running out of time while retrying (see the module doc)."""
    text = (f"{what}: gave up after {attempts} attempt{'s' if attempts != 1 else ''} in "
            f"{deadline.seconds:.1f} s; last error: {last}")
    if isinstance(last, UnreachableError):
        err: GroupctlError = UnreachableError(text)
    else:
        err = DeadlineError(text + " (raise --timeout?)")
    err.last_error = last
    return err
