"""The probe driver: asyncio I/O and timers around the sans-IO ClassicMember.

    probe = Probe(cluster, ProbeSettings(group="orders"), emit=print)
    result = await probe.join_once(deadline_s=10)   # join, sync, leave; a ProbeResult
    await probe.watch(duration_s=30.0)              # stay until then (or cancelled), leave

One loop (`_drive`) feeds the member: it sends what `next_requests` asks for (each request
a task that posts its answer or failure to an inbox), runs the leader's assignor in a task
when the member needs an assignment, and sleeps until the next answer or the member's next
deadline (heartbeat due, back-off over, session expiry). Connections: probe_links.py.
Events: the member's own plus those of the GroupView (probe_view.py), each put in the §4
envelope and handed to `emit`.

Leaving: `join_once` and `watch` always leave in `finally` (clean stop, error, Ctrl-C and
SIGTERM, which cancel the task): LeaveGroup with the member id, and the instance id of a
static probe, within LEAVE_SECONDS. The exception that ended the run (or the member's fatal
error) is re-raised after the leave.
"""
from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from typing import Callable

from ..errors import DeadlineError, GroupctlError, UnreachableError
from ..events import envelope
from . import classic as C
from .classic import ClassicMember, ClassicMemberState
from .probe_setup import (  # noqa: F401 - ProbeSettings, ProbeResult, ProbeError re-exported
    ProbeError, ProbeResult, ProbeSettings, choose_protocols, compute_assignment, decode_assignment_map, describe_group,
    encode_assignments, protocols_for,
)
from .probe_links import CoordinatorLinks
from .probe_view import GroupView

LEAVE_SECONDS = 3.0

class Probe:
    """Drives one ClassicMember over real connections. See the module doc."""

    def __init__(self, cluster, settings: ProbeSettings, *,
                 emit: Callable[[dict], None] | None = None,
                 clock: Callable[[], float] = time.time):
        self.cluster = cluster
        self.settings = settings
        self._emit = emit or (lambda event: None)
        self._clock = clock
        self.member: ClassicMember | None = None
        self.view = GroupView(settings.group)
        self._inbox: deque[tuple] = deque()   # answers, failures, assignments
        self._wake = asyncio.Event()
        self._tasks: set[asyncio.Task] = set()
        self._links = CoordinatorLinks(cluster, settings, LEAVE_SECONDS)
        self._assigning_gen: int | None = None
        self._error: BaseException | None = None
        self._protocol_names: list[str] = []
        self._started = time.monotonic()
        self.leave_on_exit = True   # False only in tests that simulate a crashed member
        self.leader_rounds: list[tuple] = []   # (PendingAssignment, assignment) as leader

    # ---- public ----------------------------------------------------------------------
    async def join_once(self, *, deadline_s: float) -> ProbeResult:
        """Join, wait for the first STABLE (at most `deadline_s`), leave; the result."""
        async with self._membership("one-shot join done"):
            await self._drive(lambda m: m.state is ClassicMemberState.STABLE,
                              self._started + deadline_s, "joined and synced")
            return self._result()

    async def watch(self, *, duration_s: float | None = None) -> None:
        """Stay in the group until `duration_s` ends (None: until cancelled), then leave."""
        async with self._membership("watch ended (--duration reached)"):
            end = None if duration_s is None else time.monotonic() + duration_s
            await self._drive(lambda m: False, end, None)

    # ---- membership ------------------------------------------------------------------
    @contextlib.asynccontextmanager
    async def _membership(self, leave_reason: str):
        """Join on entry; on any exit leave (bounded), close, and raise the member's fatal
        error if the body itself ended normally."""
        await self._start()
        why = leave_reason
        try:
            yield
        except asyncio.CancelledError:
            why = "interrupted (signal)"
            raise
        except BaseException as exc:
            why = f"error: {exc}"
            raise
        finally:
            if self.leave_on_exit:
                await self._leave(why)
            await self._close()
        if self.member.fatal_error is not None:
            raise self.member.fatal_error

    async def _start(self) -> None:
        s = self.settings
        described = await self._describe_first() if s.describe_first else None
        self.view.before_join(described)
        self._protocol_names = choose_protocols(described, s.assignor)
        self.member = ClassicMember(
            s.group, protocols=protocols_for(self._protocol_names, s.topics, {}, -1),
            session_timeout_ms=s.session_timeout_ms, rebalance_timeout_ms=s.rebalance_timeout_ms,
            heartbeat_interval_ms=s.heartbeat_ms, group_instance_id=s.instance_id,
            reason_prefix=s.reason_prefix)

    async def _describe_first(self) -> dict | None:
        from ..client.errors import UnsupportedVersionError

        try:
            return await describe_group(self.cluster, self.settings.group)
        except UnsupportedVersionError:  # e.g. librdkafka's mock cluster: join blind
            return None

    async def _leave(self, why: str) -> None:
        m = self.member
        if m is None or m.done:
            return
        m.leave(why, self._now_ms())
        drive = asyncio.ensure_future(self._drive(lambda _m: False, None, None, leaving=True))
        await _within(drive, LEAVE_SECONDS)
        if drive.done() and not drive.cancelled():
            drive.exception()  # a failure while leaving ends the leave, nothing more
        self._flush()

    async def _close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._links.close()

    # ---- the loop --------------------------------------------------------------------
    async def _drive(self, done: Callable[[ClassicMember], bool], until: float | None,
                     goal: str | None, *, leaving: bool = False) -> None:
        m = self.member
        while not m.done:
            now = self._now_ms()
            for out in m.next_requests(now):
                self._dispatch(out)
            self._maybe_assign()
            self._links.follow(self.member.coordinator, self._spawn)
            self._flush()
            if self._error is not None:
                err, self._error = self._error, None
                raise err
            if done(m):
                return
            left = None if until is None else until - time.monotonic()
            if left is not None and left <= 0:
                if goal is None:
                    return
                raise DeadlineError(f"the probe was not {goal} in group {self.settings.group} "
                                    f"in time (state {m.state.name})")
            await self._wait_input(self._wait_seconds(now, left))
        self._flush()
        if not leaving and m.fatal_error is not None:
            raise m.fatal_error

    def _wait_seconds(self, now_ms: int, left: float | None) -> float:
        wait = 1.0
        deadline = self.member.next_deadline_ms()
        if deadline is not None:
            wait = min(wait, max(0.0, (deadline - now_ms) / 1000))
        if left is not None:
            wait = min(wait, left)
        return wait

    async def _wait_input(self, seconds: float) -> None:
        if not self._inbox:
            await _within(asyncio.ensure_future(self._wake.wait()), seconds)
            if not self._inbox:
                return
        self._wake.clear()
        while self._inbox:
            self._apply(self._inbox.popleft())

    def _post(self, item: tuple) -> None:
        self._inbox.append(item)
        self._wake.set()

    def _apply(self, item: tuple) -> None:
        kind, out, payload = item
        now = self._now_ms()
        m = self.member
        if kind == "response":
            m.on_response(out.api, payload, now, tag=out.tag)
        elif kind == "failure":
            m.on_failure(out.api, payload, now, tag=out.tag)
        elif kind == "assigned":
            self._provide(out, payload, now)
        elif kind == "described":
            self._described(out, payload)
        elif kind == "error":
            self._error = payload
        self._after_input()

    def _after_input(self) -> None:
        m = self.member
        if m.state is ClassicMemberState.STABLE and m.generation_id != self.view.stable_generation:
            self._on_stable()

    # ---- requests --------------------------------------------------------------------
    def _dispatch(self, out: C.Outgoing) -> None:
        self._spawn(self._send(out))

    def _spawn(self, coro) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _send(self, out: C.Outgoing) -> None:
        try:
            if out.api == C.FIND_COORDINATOR:
                body = await self._links.find_coordinator(self.settings.group)
            else:
                body = await self._links.send(out, self.member.coordinator)
        except asyncio.CancelledError:
            raise
        except (UnreachableError, DeadlineError) as exc:
            self._post(("failure", out, getattr(exc, "kind", "disconnected")))
        except GroupctlError as exc:
            if out.api == C.LEAVE_GROUP:  # e.g. the mock's short v3 answer: the leave ends
                self._post(("failure", out, getattr(exc, "kind", "error")))
            else:
                self._post(("error", out, exc))
        else:
            self._post(("response", out, body))

    # ---- leader ----------------------------------------------------------------------
    def _maybe_assign(self) -> None:
        p = self.member.pending_assignment
        if p is None or self._assigning_gen == p.generation_id:
            return
        self._assigning_gen = p.generation_id
        self.view.leader_joined(p)
        self._spawn(self._assign(p))

    async def _assign(self, pending) -> None:
        try:
            result = await compute_assignment(self.cluster, pending)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # unknown assignor, metadata failure, assignor error
            self._post(("assigned", pending, exc))
        else:
            self._post(("assigned", pending, result))

    def _provide(self, pending, result, now_ms: int) -> None:
        m = self.member
        if isinstance(result, BaseException):
            err = result if isinstance(result, GroupctlError) else ProbeError(
                f"the probe was elected leader but could not assign: {result}")
            m.assignment_failed(str(err), now_ms, error=err)
            return
        if m.provide_assignment(encode_assignments(result), now_ms,
                                generation_id=pending.generation_id):
            self.view.leader_assigned(pending.generation_id, result)
            self.leader_rounds.append((pending, result))

    # ---- stable generations ----------------------------------------------------------
    def _on_stable(self) -> None:
        m = self.member
        own = decode_assignment_map(m.assignment)
        before = {(t, p) for t, ps in self.view.own_assignment.items() for p in ps}
        self.view.synced(m, own, self._clock())
        self._refresh_protocols(own, m.generation_id)
        revoked = before - {(t, p) for t, ps in own.items() for p in ps}
        if revoked and m.protocol_name == "cooperative-sticky":
            # KIP-429: partitions revoked in this generation go to their new owner in the
            # next one, which needs the revoking member to rejoin.
            m.request_rejoin(f"revoked {len(revoked)} partitions (cooperative)", self._now_ms())
        self._spawn(self._describe(m.generation_id))  # members and assignments, for events

    def _refresh_protocols(self, owned: dict[str, list[int]], generation: int) -> None:
        if self.settings.topics:  # the next join carries owned partitions (KIP-429)
            self.member.set_protocols(protocols_for(self._protocol_names, self.settings.topics,
                                                    owned, generation))

    async def _describe(self, generation: int) -> None:
        try:
            described = await describe_group(self.cluster, self.settings.group)
        except asyncio.CancelledError:
            raise
        except GroupctlError as exc:
            described = exc
        self._post(("described", generation, described))

    def _described(self, generation: int, described) -> None:
        m = self.member
        still = m.state is ClassicMemberState.STABLE and m.generation_id == generation
        ok = still and isinstance(described, dict) and described.get("group_state") == "Stable"
        self.view.described(generation, described if ok else None)
        self._flush_view()

    # ---- events ----------------------------------------------------------------------
    def _flush(self) -> None:
        if self.member is None:
            return
        for body in self.member.poll_events():
            self.view.note_member_event(body)
            self._publish(body)
        for body in self.view.poll_state(self.member):
            self._publish(body)

    def _flush_view(self) -> None:
        for body in self.view.poll_events():
            self._publish(body)

    def _publish(self, body: dict) -> None:
        self._emit(envelope(body, group=self.settings.group,
                            cluster=getattr(self.cluster, "cluster_id", None), source="probe"))

    def _result(self) -> ProbeResult:
        m = self.member
        c = m.coordinator
        return ProbeResult(
            group=self.settings.group, generation=m.generation_id, protocol=m.protocol_name,
            leader=m.leader_id, member_id=m.member_id, instance_id=m.group_instance_id,
            is_leader=m.is_leader, members=self.view.leader_members,
            assignment=self.view.own_assignment_list(),
            group_assignment=self.view.leader_assignment_list() if m.is_leader else None,
            coordinator=None if c is None else {"id": c.node_id, "host": c.host, "port": c.port},
            joined_in_ms=int((time.monotonic() - self._started) * 1000))

    def _now_ms(self) -> int:
        return int(time.monotonic() * 1000)


async def _within(task: asyncio.Future, seconds: float) -> None:
    """Wait for `task` at most `seconds`, then cancel it if it is still running. Not
    asyncio.wait_for: on Python 3.10/3.11 it can swallow a cancellation (Ctrl-C, SIGTERM)
    that arrives just as the awaited task finishes, and the probe would then never leave."""
    try:
        await asyncio.wait({task}, timeout=seconds)
    finally:
        if not task.done():
            task.cancel()


