"""The one member driver: asyncio I/O and timers around a sans-IO group member.

    driver = MemberDriver(cluster, member, log=print)
    async with driver.membership("done", leave_budget_s=5.0):   # leaves on every exit
        await driver.run_until(lambda m: m.generation > 0, deadline, "joined")
        ...
        await driver.leave("done", budget_s=5.0)   # False: it may not have reached the broker

Every member groupctl adds runs on it: the probe (probe/probe.py, with its view and a
classic leader's assignor as hooks), and force-rebalance's members on both protocols
(steer/: the classic trigger and the transient KIP-848 member). It knows a member only
through the DrivenMember interface (members/interface.py) and sends over MemberLinks
(client/routes.py).

One loop (`run_until`): send what `next_requests` asks for, each request a task on the
connection its route names, with its timeout, whose answer (or failure) is posted to an
inbox; follow the member's coordinator (close connections to one it left); then sleep
until the next input or the member's next deadline (heartbeat due, back-off over, session
expiry), at most IDLE_S. Inputs are applied in the loop, in the order they came: answers
(`on_response`), transport failures (`on_failure`, mapped here and nowhere else: see
`_answered`), and the results of side tasks a hook spawned (`spawn`, `post`).

Time comes from one Clock (groupctl.clock): its monotonic time for the member and the
deadlines, its `sleep` for the idle wait, so a unit test can drive the loop on a clock of
its own instead of real time.

Every transition of the member goes to `log` as one line with its reason; the member's
events go to `on_events` (default: kept in `events`).

`membership` leaves on every way out of its block (the end, an error, the deadline, and
Ctrl-C / SIGTERM, which cancel the task): the leave is the member's own, shielded so a
second cancellation does not cut it off mid-request, bounded by its budget; then the
connections close. A member that already left (or never joined) sends nothing more.
"""
from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from typing import Any, AsyncIterator, Awaitable, Callable, Coroutine

from ...client.retry import Deadline
from ...client.routes import MemberLinks
from ...clock import SYSTEM_CLOCK, Clock
from ...errors import DeadlineError, GroupctlError, UnreachableError
from ...events import Event
from ..members.interface import DrivenMember, Outgoing

IDLE_S = 1.0   # the longest sleep between looks at the member


@contextlib.asynccontextmanager
async def leaving_on_exit(done_reason: str, leave: Callable[[str], Awaitable[None]]
                          ) -> AsyncIterator[None]:
    """Run the block, then `await leave(why)` however it ended; `why` is the leave's reason:
    `done_reason`, "interrupted (signal)" (Ctrl-C / SIGTERM cancel the task; a
    cancellation with a message gives that instead) or "error: ...". Every member
    groupctl adds leaves this way."""
    why = done_reason
    try:
        yield
    except asyncio.CancelledError as exc:   # the canceller may say why (cli.live: no reader)
        why = exc.args[0] if exc.args and isinstance(exc.args[0], str) and exc.args[0] \
            else "interrupted (signal)"
        raise
    except BaseException as exc:
        why = f"error: {exc}"
        raise
    finally:
        await leave(why)


class MemberDriver:
    """Drives one member over real connections. See the module doc.

    `step(now_ms)`: a hook called once per turn, after the inputs were applied and before
    the member is asked for requests (the probe starts a leader's assignor there, or tells
    a new stable generation). `on_events(events)`: the member's events, once per turn
    (possibly none; default: kept in `events`).
    `name`: how a deadline's message names the member."""

    def __init__(self, cluster, member: DrivenMember, *, links=None,
                 log: Callable[[str], None] | None = None, clock: Clock = SYSTEM_CLOCK,
                 step: Callable[[int], None] | None = None,
                 on_events: Callable[[list[Event]], None] | None = None,
                 name: str | None = None):
        self.member = member
        self.links = links if links is not None else MemberLinks(cluster)
        self.clock = clock
        self.events: list[Event] = []
        #: (api, kind) of each request that got no answer while leaving: the leave may not
        #: have reached the broker
        self.unanswered: list[tuple[str, str]] = []
        self._log = log
        self._step = step
        self._on_events = on_events or self.events.extend
        self._name = name or f"the member of group {member.group_id}"
        self._inbox: deque[Callable[[], None]] = deque()
        self._waiter: asyncio.Future | None = None   # the idle wait, ended by post()
        self._requests: dict[asyncio.Future, Outgoing] = {}
        self._tasks: set[asyncio.Future] = set()
        self._error: BaseException | None = None
        self._logged = 0
        self._leaving = False

    # ---- public ----------------------------------------------------------------------
    async def run_until(self, done: Callable[[Any], bool], deadline: Deadline | float | None,
                        goal: str | None) -> None:
        """Feed the member until done(member) or the member is done. `deadline`: a
        client.retry.Deadline, seconds from now, or None (no end). Raises the member's
        fatal error (not while leaving), an error no member could handle, or, when the
        deadline passes first, DeadlineError naming `goal` and the member's state (with
        `goal` None it returns quietly then)."""
        m = self.member
        until = self._until(deadline)
        while True:
            now = self._now_ms()
            if self._step is not None and not m.done:
                self._step(now)
            self._flush()
            if self._error is not None:
                err, self._error = self._error, None
                raise err
            if m.fatal_error is not None and not self._leaving:
                raise m.fatal_error
            if m.done or done(m):
                return
            for out in m.next_requests(now):
                self._send(out)
            await self._follow_coordinator()
            self._flush()
            left = None if until is None else until - self.clock.monotonic()
            if left is not None and left <= 0:
                if goal is None:
                    return
                raise DeadlineError(f"{self._name} was not {goal} in time "
                                    f"(state {m.state.name})")
            await self._wait(self._idle_s(now, left))

    @contextlib.asynccontextmanager
    async def membership(self, done_reason: str, *, leave_budget_s: float,
                         leave: bool = True) -> AsyncIterator[MemberDriver]:
        """Run the block; on any exit leave (see the module doc; `leave` False only where a
        test simulates a crashed member) and close."""
        async with leaving_on_exit(done_reason,
                                   lambda why: self.stop(why, leave_budget_s, leave=leave)):
            yield self

    async def connect(self) -> None:
        """Open the connections to the member's coordinator before its first request."""
        c = self.member.coordinator
        if c is not None:
            await self.links.open(c.node_id)

    async def leave(self, why: str, budget_s: float) -> bool:
        """Leave (the member's own leave: its request, its epoch) within `budget_s`. True
        when the broker answered it (or there was nothing to leave)."""
        m = self.member
        self._leaving = True
        if m.leave(why, self._now_ms()) or not m.done:
            try:
                await self.run_until(lambda _m: False, budget_s, "left")
            except DeadlineError:
                self.unanswered.append(("leave", "timeout"))
        self._flush()
        return not self.unanswered

    async def stop(self, why: str, budget_s: float, *, leave: bool = True) -> None:
        """Leave (unless `leave` is False) and close, shielded from a second cancellation;
        an error while leaving ends the leave, nothing more."""
        async def leave_and_close() -> None:
            try:
                if leave:
                    await self.leave(why, budget_s)
            except Exception:  # noqa: BLE001 - a failure while leaving ends the leave
                pass
            finally:
                await self.close()

        try:
            await asyncio.shield(asyncio.ensure_future(leave_and_close()))
        except (asyncio.CancelledError, GroupctlError):
            pass   # a second Ctrl-C: the shielded leave goes on for at most its budget

    async def close(self) -> None:
        """Cancel what is still in flight (requests, side tasks); close the connections."""
        tasks = [*self._requests, *self._tasks]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._requests.clear()
        self._tasks.clear()
        await self.links.close()

    def settle(self) -> None:
        """Apply the answers that already came (without waiting): e.g. a request still in
        flight when the member was done, answered since."""
        for task, out in list(self._requests.items()):
            if task.done():
                self._answered(task, out)
        while self._inbox:
            self._inbox.popleft()()
        self._flush()

    # ---- side tasks (hooks) ----------------------------------------------------------
    def spawn(self, coro: Coroutine, then: Callable[[Any], None] | None = None) -> None:
        """Run `coro` beside the member; `then(result)` is applied in the loop, in order
        with the member's answers. An exception other than cancellation ends the run."""
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)

        def finished(t: asyncio.Future) -> None:
            self._tasks.discard(t)
            if t.cancelled():
                return
            exc = t.exception()
            if exc is not None:
                self.post(lambda: self._fail(exc))
            elif then is not None:
                self.post(lambda: then(t.result()))
        task.add_done_callback(finished)

    def post(self, apply: Callable[[], None]) -> None:
        """Apply `apply()` in the loop at its next turn."""
        self._inbox.append(apply)
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    # ---- the loop --------------------------------------------------------------------
    def _send(self, out: Outgoing) -> None:
        c = self.member.coordinator
        task = asyncio.ensure_future(self.links.send(
            out.spec, out.body, route=out.route, min_version=out.min_version,
            node_id=None if c is None else c.node_id,
            timeout=None if out.timeout_ms is None else out.timeout_ms / 1000))
        self._requests[task] = out

        def finished(t: asyncio.Future) -> None:
            if t in self._requests:
                self.post(lambda: self._answered(t, self._requests[t])
                          if t in self._requests else None)
        task.add_done_callback(finished)

    def _answered(self, task: asyncio.Future, out: Outgoing) -> None:
        """The one place a request's outcome becomes the member's input: an answer
        (`on_response`); no answer (cancelled, unreachable, timed out; while leaving any
        groupctl error, e.g. a mock's short LeaveGroup answer) is `on_failure` with its
        kind; anything else ends the run."""
        del self._requests[task]
        m, now = self.member, self._now_ms()
        exc = None if task.cancelled() else task.exception()
        if task.cancelled() or isinstance(exc, (UnreachableError, DeadlineError)) or (
                self._leaving and isinstance(exc, GroupctlError)):
            kind = "cancelled" if task.cancelled() else _kind(exc)
            # only a request the member still waited for counts (not a join it dropped)
            if m.on_failure(out.api, kind, now, tag=out.tag) and self._leaving:
                self.unanswered.append((out.api, kind))
        elif exc is not None:
            self._fail(exc)
        else:
            m.on_response(out.api, task.result(), now, tag=out.tag)

    def _fail(self, exc: BaseException) -> None:
        if self._error is None:
            self._error = exc

    async def _follow_coordinator(self) -> None:
        """Close connections to a coordinator the member no longer follows."""
        c = self.member.coordinator
        closing = self.links.follow(None if c is None else c.node_id)
        if closing:
            await asyncio.gather(*closing, return_exceptions=True)

    def _idle_s(self, now_ms: int, left: float | None) -> float:
        """How long to sleep when nothing comes: until the member's next deadline or the
        run's, at most IDLE_S."""
        wait = IDLE_S
        deadline = self.member.next_deadline_ms()
        if deadline is not None:
            wait = min(wait, max(0.0, (deadline - now_ms) / 1000))
        if left is not None:
            wait = min(wait, left)
        return wait

    async def _wait(self, seconds: float) -> None:
        """Sleep `seconds` on the clock or until an input comes; apply the inputs. On the
        system clock the loop's own timer does (no timer task per turn)."""
        if not self._inbox:
            self._waiter = waiter = asyncio.get_running_loop().create_future()
            timer = None if self.clock.sleep is SYSTEM_CLOCK.sleep else \
                asyncio.ensure_future(self.clock.sleep(seconds))
            try:
                if timer is None:
                    await asyncio.wait({waiter}, timeout=seconds)
                else:
                    await asyncio.wait({waiter, timer}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                self._waiter = None
                if timer is not None:
                    timer.cancel()
        while self._inbox:
            self._inbox.popleft()()

    def _flush(self) -> None:
        """Log the member's new transitions; hand on its events."""
        self._on_events(self.member.poll_events())
        if self._log is None:
            return
        transitions = self.member.transitions
        for t in transitions[self._logged:]:
            self._log(f"member {self.member.member_id}: {t.from_state.name} -> "
                      f"{t.to_state.name}: {t.reason}")
        self._logged = len(transitions)

    def _until(self, deadline: Deadline | float | None) -> float | None:
        if deadline is None:
            return None
        seconds = deadline if isinstance(deadline, (int, float)) else deadline.remaining()
        return self.clock.monotonic() + seconds

    def _now_ms(self) -> int:
        return self.clock.monotonic_ms()


def _kind(exc: BaseException | None) -> str:
    """What a member is told about a request that got no answer."""
    kind = getattr(exc, "kind", None)
    if kind:
        return kind
    if isinstance(exc, DeadlineError):
        return "timeout"
    return "disconnected" if isinstance(exc, UnreachableError) else "error"
