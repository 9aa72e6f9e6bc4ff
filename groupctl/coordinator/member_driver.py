"""A small driver for a group member with a short errand: join, do one thing, leave.

    driver = MemberDriver(cluster, member, log=print)
    async with driver.membership("done", leave_budget_s=5.0):   # leaves on every exit
        await driver.run_until(lambda m: m.generation > 0, deadline, "joined")
        ...
        await driver.leave("done", budget_s=5.0)   # False: it may not have reached the broker

It knows the member only through the GroupMember interface (member.py), like the probe
driver (probe.py), and sends over the same MemberLinks (client/routes.py): each request
on the route it names, with its timeout, as a task whose answer (or transport failure) is
fed back to the member. Between answers it sleeps until the member's next deadline.

Why not the probe driver: the probe tells a group's story (GroupView events, describes
after each generation, a classic leader's assignor) for as long as it stays. A steering
command needs none of that; it needs the member's own state machine (its requests, error
table and leave), a hook between joining and leaving, and its own view of the group.
`force-rebalance` of a consumer group (force_consumer.py) is the first user.

Every transition of the member goes to `log` as one line with its reason (the house's
"every transition logged"); the member's events are kept in `events`.

`membership` leaves on every way out of its block (the end, an error, the deadline, and
Ctrl-C / SIGTERM, which cancel the task): the leave is the member's own, shielded so a
second cancellation does not cut it off mid-request, bounded by its budget; then the
connections close. A member that already left (or never joined) sends nothing more.
"""
from __future__ import annotations

import asyncio
import contextlib
import time
from typing import AsyncIterator, Awaitable, Callable

from ..client.retry import Deadline
from ..client.routes import MemberLinks
from ..errors import DeadlineError, GroupctlError, UnreachableError
from ..events import Event
from .member import GroupMember, Outgoing


@contextlib.asynccontextmanager
async def leaving_on_exit(done_reason: str, leave: Callable[[str], Awaitable[None]]
                          ) -> AsyncIterator[None]:
    """Run the block, then `await leave(why)` however it ended; `why` is the leave's reason:
    `done_reason`, "interrupted (signal)" (Ctrl-C / SIGTERM cancel the task; a
    cancellation with a message gives that instead) or "error: ...". The probe and the
    member driver both leave this way."""
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

IDLE_S = 1.0   # the longest sleep between looks at the member


class MemberDriver:
    """Drives one member over real connections. See the module doc."""

    def __init__(self, cluster, member: GroupMember, *, links=None,
                 log: Callable[[str], None] | None = None,
                 monotonic: Callable[[], float] = time.monotonic):
        self.member = member
        self.links = links if links is not None else MemberLinks(cluster)
        self.events: list[Event] = []
        #: (api, kind) of each request that got no answer while leaving: the leave may not
        #: have reached the broker
        self.unanswered: list[tuple[str, str]] = []
        self._log = log
        self._monotonic = monotonic
        self._pending: dict[asyncio.Future, Outgoing] = {}
        self._logged = 0
        self._leaving = False

    # ---- public ----------------------------------------------------------------------
    async def run_until(self, done: Callable[[GroupMember], bool], deadline: Deadline,
                        goal: str) -> None:
        """Feed the member until done(member) or the member is done. Raises the member's
        fatal error (not while leaving), an error no member could handle, or DeadlineError
        naming `goal` and the member's state when `deadline` passes first."""
        m = self.member
        while True:
            self._flush()
            if m.fatal_error is not None and not self._leaving:
                raise m.fatal_error
            if m.done or done(m):
                return
            now = self._now_ms()
            for out in m.next_requests(now):
                self._start(out)
            await self._follow_coordinator()
            self._flush()
            left = deadline.remaining()
            if left <= 0:
                raise DeadlineError(f"the member of group {m.group_id} was not {goal} in "
                                    f"time (state {m.state.name})")
            await self._wait(min(left, self._idle_s(now)))

    @contextlib.asynccontextmanager
    async def membership(self, done_reason: str, *,
                         leave_budget_s: float) -> AsyncIterator[MemberDriver]:
        """Run the block; on any exit leave (see the module doc) and close."""
        async with leaving_on_exit(done_reason,
                                   lambda why: self._stop(why, leave_budget_s)):
            yield self

    async def leave(self, why: str, budget_s: float) -> bool:
        """Leave (the member's own leave: its request, its epoch) within `budget_s`. True
        when the broker answered it (or there was nothing to leave)."""
        m = self.member
        self._leaving = True
        if m.leave(why, self._now_ms()) or not m.done:
            try:
                await self.run_until(lambda _m: False, Deadline(budget_s), "left")
            except DeadlineError:
                self.unanswered.append(("leave", "timeout"))
        self._flush()
        return not self.unanswered

    async def close(self) -> None:
        """Cancel what is still in flight and close the connections."""
        for task in self._pending:
            task.cancel()
        await asyncio.gather(*self._pending, return_exceptions=True)
        self._pending.clear()
        await self.links.close()

    async def _stop(self, why: str, budget_s: float) -> None:
        async def leave_and_close() -> None:
            try:
                await self.leave(why, budget_s)
            except GroupctlError:
                pass
            finally:
                await self.close()

        try:
            await asyncio.shield(asyncio.ensure_future(leave_and_close()))
        except (asyncio.CancelledError, GroupctlError):
            pass   # a second Ctrl-C: the shielded leave goes on for at most its budget

    # ---- the loop --------------------------------------------------------------------
    def _start(self, out: Outgoing) -> None:
        c = self.member.coordinator
        self._pending[asyncio.ensure_future(self.links.send(
            out.spec, out.body, route=out.route, min_version=out.min_version,
            node_id=None if c is None else c.node_id,
            timeout=None if out.timeout_ms is None else out.timeout_ms / 1000))] = out

    async def _follow_coordinator(self) -> None:
        """Close connections to a coordinator the member no longer follows."""
        c = self.member.coordinator
        closing = self.links.follow(None if c is None else c.node_id)
        if closing:
            await asyncio.gather(*closing, return_exceptions=True)

    def _idle_s(self, now_ms: int) -> float:
        deadline = self.member.next_deadline_ms()
        if deadline is None:
            return IDLE_S
        return min(IDLE_S, max(0.0, (deadline - now_ms) / 1000))

    async def _wait(self, seconds: float) -> None:
        if not self._pending:
            await asyncio.sleep(seconds)
            return
        finished, _ = await asyncio.wait(set(self._pending), timeout=seconds,
                                         return_when=asyncio.FIRST_COMPLETED)
        for task in finished:
            self._answer(task, self._pending.pop(task))

    def _answer(self, task: asyncio.Future, out: Outgoing) -> None:
        m, now = self.member, self._now_ms()
        exc = None if task.cancelled() else task.exception()
        if task.cancelled() or isinstance(exc, (UnreachableError, DeadlineError)) or (
                self._leaving and isinstance(exc, GroupctlError)):
            kind = "cancelled" if task.cancelled() else getattr(exc, "kind", None) or "error"
            # only a request the member still waited for counts (not a join it dropped)
            if m.on_failure(out.api, kind, now, tag=out.tag) and self._leaving:
                self.unanswered.append((out.api, kind))
        elif exc is not None:
            raise exc
        else:
            m.on_response(out.api, task.result(), now, tag=out.tag)

    def _flush(self) -> None:
        """Log the member's new transitions; keep its events."""
        self.events.extend(self.member.poll_events())
        transitions = self.member.transitions
        if self._log is not None:
            for t in transitions[self._logged:]:
                self._log(f"member {self.member.member_id}: {t.from_state.name} -> "
                          f"{t.to_state.name}: {t.reason}")
        self._logged = len(transitions)

    def _now_ms(self) -> int:
        return int(self._monotonic() * 1000)
