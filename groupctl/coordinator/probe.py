"""The probe driver: asyncio I/O and timers around a sans-IO group member.

    probe = Probe(cluster, ProbeSettings(group="orders"), emit=print)
    result = await probe.join_once(deadline_s=10)   # join, sync, leave; a ProbeResult
    await probe.watch(duration_s=30.0)              # stay until then (or cancelled), leave

The driver knows members only through the GroupMember interface (member.py); which member
protocol it drives is chosen by probe_setup.new_member (or the `new_member` given). One
loop (`_drive`) feeds the member: it sends what `next_requests` asks for (each request a
task that posts its answer or failure to an inbox, on the connection its route names, with
its timeout), runs a leader's client-side assignor in a task when the member has a
`pending_assignment`, and sleeps until the next answer or the member's next deadline
(heartbeat due, back-off over, session expiry). Events: the member's own plus those of the
GroupView (probe_view.py, which feeds observe/story.py), each put in the §4 envelope and
handed to `emit`. Times come from one Clock (groupctl.clock, from Env).

Leaving: `join_once` and `watch` always leave in `finally` (clean stop, error, Ctrl-C and
SIGTERM, which cancel the task) within LEAVE_SECONDS. The exception that ended the run (or
the member's fatal error) is re-raised after the leave.
"""
from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable

from ..client.interface import ClusterLike
from ..client.routes import MemberLinks
from ..clock import SYSTEM_CLOCK, Clock
from ..errors import DeadlineError, GroupctlError, UnreachableError
from ..events import Event, envelope, tp_list
from .member import GroupMember, Outgoing
from .member_driver import leaving_on_exit
from .probe_setup import (  # noqa: F401 - ProbeSettings, ProbeResult, ProbeError re-exported
    ProbeError, ProbeResult, ProbeSettings, compute_assignment, describe_for_join,
    encode_assignments, epoch_snapshot, new_member,
)
from .probe_view import GroupView

LEAVE_SECONDS = 3.0


# ---- what arrives in the driver's inbox --------------------------------------------------
@dataclass(frozen=True)
class Answered:
    out: Outgoing
    body: dict


@dataclass(frozen=True)
class Failed:
    """The request got no answer (`kind`: "timeout", "disconnected", ...)."""
    out: Outgoing
    kind: str


@dataclass(frozen=True)
class SendError:
    """Sending failed in a way the member cannot handle: the run ends with `error`."""
    out: Outgoing
    error: BaseException


@dataclass(frozen=True)
class Assigned:
    """The leader's assignor finished for `pending`: `assignment`, or `error`."""
    pending: Any
    assignment: dict | None = None
    error: BaseException | None = None


@dataclass(frozen=True)
class Described:
    """The group as described for `generation` (a GroupDescription, or the error)."""
    generation: int
    group: Any


@dataclass(frozen=True)
class Polled:
    """An observation of the group (observe.observations) while following a KIP-848
    group."""
    group: Any


class Probe:
    """Drives one group member over real connections. See the module doc."""

    def __init__(self, cluster: ClusterLike, settings: ProbeSettings, *,
                 emit: Callable[[dict], None] | None = None, clock: Clock = SYSTEM_CLOCK,
                 new_member: Callable[[ProbeSettings, Any], GroupMember] = new_member):
        self.cluster = cluster
        self.settings = settings
        self._emit = emit or (lambda event: None)
        self.clock = clock
        self._new_member = new_member
        self.member: GroupMember | None = None
        self.view = GroupView(settings.group, clock=clock.wall)
        self._inbox: deque = deque()
        self._wake = asyncio.Event()
        self._tasks: set[asyncio.Task] = set()
        self._links = MemberLinks(cluster)
        self._assigning_gen: int | None = None
        self._error: BaseException | None = None
        self._leaving = False
        self._epochs = False   # a broker-assigned (KIP-848) member: the group has epochs
        self._started = clock.monotonic()
        self.leave_on_exit = True   # False only in tests that simulate a crashed member
        self.leader_rounds: list[tuple] = []   # (PendingAssignment, assignment) as leader

    # ---- public ----------------------------------------------------------------------
    async def join_once(self, *, deadline_s: float) -> ProbeResult:
        """Join, wait for the first stable generation (at most `deadline_s`), leave. A
        member of a broker-assigned group (KIP-848) is stable once it acknowledged its
        assignment; the group's epochs then come from one describe."""
        async with self._membership("one-shot join done"):
            await self._drive(lambda m: m.stable, self._started + deadline_s, "joined and synced")
            group = None
            if self._epochs:
                group = await self._snapshot()
                group = None if isinstance(group, BaseException) else group
            return self._result(group)

    async def watch(self, *, duration_s: float | None = None) -> None:
        """Stay in the group until `duration_s` ends (None: until cancelled), then leave.
        In a KIP-848 group the group is described (ConsumerGroupDescribe) at the member's
        heartbeat interval, and the story (observe/story.py) tells epochs, members,
        assignments and converged rebalances from those snapshots."""
        async with self._membership("watch ended (--duration reached)"):
            end = None if duration_s is None else self.clock.monotonic() + duration_s
            if self._epochs:
                self._spawn(self._poll_epochs())
            await self._drive(lambda m: False, end, None)

    # ---- membership ------------------------------------------------------------------
    @contextlib.asynccontextmanager
    async def _membership(self, leave_reason: str):
        """Join on entry; on any exit leave (bounded), close, and raise the member's fatal
        error if the body itself ended normally."""
        await self._start()
        async with leaving_on_exit(leave_reason, self._leave_and_close):
            yield
        if self._live.fatal_error is not None:
            raise self._live.fatal_error

    @property
    def _live(self) -> GroupMember:
        """The member, from _start() on (everything but _flush runs after it)."""
        assert self.member is not None, "the probe has not started"
        return self.member

    async def _leave_and_close(self, why: str) -> None:
        if self.leave_on_exit:
            await self._leave(why)
        await self._close()

    async def _start(self) -> None:
        described = await self._describe_first() if self.settings.describe_first else None
        self.member = self._new_member(self.settings, described)
        self._epochs = getattr(self.member, "group_type", "classic") == "consumer"
        self.view.before_join(described, epochs=self._epochs)

    async def _describe_first(self):
        from ..client.errors import UnsupportedVersionError

        try:
            return await describe_for_join(self.cluster, self.settings.group)
        except UnsupportedVersionError:  # e.g. librdkafka's mock cluster: join blind
            return None

    async def _leave(self, why: str) -> None:
        m = self._live
        if m is None or m.done:
            return
        self._leaving = True
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
    async def _drive(self, done: Callable[[GroupMember], bool], until: float | None,
                     goal: str | None, *, leaving: bool = False) -> None:
        m = self._live
        while not m.done:
            now = self._now_ms()
            for out in m.next_requests(now):
                self._spawn(self._send(out))
            self._maybe_assign()
            coordinator = m.coordinator
            for closing in self._links.follow(None if coordinator is None else coordinator.node_id):
                self._spawn(closing)
            self._flush()
            if self._error is not None:
                err, self._error = self._error, None
                raise err
            if done(m):
                return
            left = None if until is None else until - self.clock.monotonic()
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
        deadline = self._live.next_deadline_ms()
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

    def _post(self, item) -> None:
        self._inbox.append(item)
        self._wake.set()

    def _apply(self, item) -> None:
        now = self._now_ms()
        m = self._live
        if isinstance(item, Answered):
            m.on_response(item.out.api, item.body, now, tag=item.out.tag)
        elif isinstance(item, Failed):
            m.on_failure(item.out.api, item.kind, now, tag=item.out.tag)
        elif isinstance(item, Assigned):
            self._provide(item, now)
        elif isinstance(item, Described):
            self._described(item)
        elif isinstance(item, SendError):
            self._error = item.error
        elif isinstance(item, Polled):   # an observation of the group (observe/source.py)
            self.view.observed(item.group)
            for event in self.view.poll_events():
                self._publish(event)
        if self._epochs:
            return
        if m.stable and m.generation != self.view.stable_generation:
            self._on_stable()

    # ---- requests --------------------------------------------------------------------
    def _spawn(self, coro) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _send(self, out: Outgoing) -> None:
        coordinator = self._live.coordinator
        try:
            body = await self._links.send(
                out.spec, out.body, route=out.route, min_version=out.min_version,
                node_id=None if coordinator is None else coordinator.node_id,
                timeout=None if out.timeout_ms is None else out.timeout_ms / 1000)
        except asyncio.CancelledError:
            raise
        except (UnreachableError, DeadlineError) as exc:
            self._post(Failed(out, getattr(exc, "kind", "disconnected")))
        except GroupctlError as exc:
            if self._leaving:  # e.g. the mock's short LeaveGroup v3 answer: the leave ends
                self._post(Failed(out, getattr(exc, "kind", "error")))
            else:
                self._post(SendError(out, exc))
        else:
            self._post(Answered(out, body))

    # ---- leader ----------------------------------------------------------------------
    def _maybe_assign(self) -> None:
        p = self._live.pending_assignment
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
            self._post(Assigned(pending, error=exc))
        else:
            self._post(Assigned(pending, assignment=result))

    def _provide(self, item: Assigned, now_ms: int) -> None:
        m = self._live
        if item.error is not None:
            err = item.error if isinstance(item.error, GroupctlError) else ProbeError(
                f"the probe was elected leader but could not assign: {item.error}")
            m.assignment_failed(str(err), now_ms, error=err)
            return
        generation = item.pending.generation_id
        assert item.assignment is not None  # no error: the assignor's result
        if m.provide_assignment(encode_assignments(item.assignment), now_ms,
                                generation_id=generation):
            self.view.leader_assigned(generation, item.assignment)
            self.leader_rounds.append((item.pending, item.assignment))

    # ---- stable generations ----------------------------------------------------------
    def _on_stable(self) -> None:
        m = self._live
        self.view.synced(m, m.assigned_partitions(), self.clock.wall())
        m.after_stable(self._now_ms())  # e.g. a cooperative member rejoins after revoking
        self._spawn(self._describe(m.generation))  # members and assignments, for events

    async def _describe(self, generation: int) -> None:
        from ..observe.snapshot import describe_group

        described: object  # a GroupDescription, or the error describing it
        try:
            described = await describe_group(self.cluster, self.settings.group)
        except asyncio.CancelledError:
            raise
        except GroupctlError as exc:
            described = exc
        self._post(Described(generation, described))

    def _described(self, item: Described) -> None:
        m = self._live
        group = item.group
        still = m.stable and m.generation == item.generation
        ok = still and not isinstance(group, BaseException) and group.state == "Stable"
        self.view.described(item.generation, group if ok else None)
        for event in self.view.poll_events():
            self._publish(event)

    # ---- KIP-848 groups: the group described at the heartbeat interval ------------------
    async def _snapshot(self):
        try:
            return await epoch_snapshot(self.cluster, self.settings.group)
        except asyncio.CancelledError:
            raise
        except GroupctlError as exc:
            return exc

    async def _poll_epochs(self) -> None:
        """The group's observations from the one describe source (ConsumerGroupDescribe
        only, at the member's heartbeat interval, with back-off when nothing answers)."""
        from ..observe.source import DescribePoller

        def interval() -> float:
            return (getattr(self.member, "heartbeat_interval_ms", None) or 1000) / 1000

        group = self.settings.group
        poller = DescribePoller(self.cluster, [group], types={group: "consumer"},
                                interval=interval(), label="probe", clock=self.clock.wall)
        async for observation in poller.observations():
            self._post(Polled(observation))
            poller.interval = interval()

    # ---- events ----------------------------------------------------------------------
    def _flush(self) -> None:
        member = self.member
        if member is None:
            return
        for event in member.poll_events():
            for told in self.view.member_event(event):  # a follower's generation: members
                self._publish(told)
        for event in self.view.poll_state(member):
            self._publish(event)

    def _publish(self, event: Event) -> None:
        self._emit(envelope(event, group=self.settings.group, at=self.clock.wall(),
                            cluster=getattr(self.cluster, "cluster_id", None), source="probe"))

    def _result(self, group=None) -> ProbeResult:
        m = self._live
        c = m.coordinator
        epochs = {}
        if self._epochs:
            epochs = {"type": "consumer", "member_epoch": m.generation,
                      "group_epoch": getattr(group, "group_epoch", None),
                      "assignment_epoch": getattr(group, "assignment_epoch", None),
                      "member_state": m.state.name}
            if group is not None and group.protocol and not m.protocol_name:
                epochs["protocol"] = group.protocol
        fields: dict[str, Any] = dict(
            group=self.settings.group, generation=m.generation, protocol=m.protocol_name,
            leader=m.leader_id, member_id=m.member_id, instance_id=m.group_instance_id,
            is_leader=m.is_leader, members=self.view.leader_members,
            assignment=self.view.own_assignment_list(),
            group_assignment=self.view.leader_assignment_list() if m.is_leader else None,
            coordinator=None if c is None else c.to_dict(),
            joined_in_ms=int((self.clock.monotonic() - self._started) * 1000))
        if self._epochs:
            fields["assignment"] = tp_list(m.assigned_partitions()) or []
            fields["generation"] = None   # no generations in a KIP-848 group: epochs
            fields.update(epochs)
        return ProbeResult(**fields)

    def _now_ms(self) -> int:
        return self.clock.monotonic_ms()


async def _within(task: asyncio.Future, seconds: float) -> None:
    """Wait for `task` at most `seconds`, then cancel it if it is still running. Not
    asyncio.wait_for: on Python 3.10/3.11 it can swallow a cancellation (Ctrl-C, SIGTERM)
    that arrives just as the awaited task finishes, and the probe would then never leave."""
    try:
        await asyncio.wait({task}, timeout=seconds)
    finally:
        if not task.done():
            task.cancel()
