"""The probe: a group member on the one member driver, telling the group's story.

    probe = Probe(cluster, ProbeSettings(group="orders"), emit=print)
    result = await probe.join_once(deadline_s=10)   # join, sync, leave; a ProbeResult
    await probe.watch(duration_s=30.0)              # stay until then (or cancelled), leave

The member (which protocol: setup.new_member, or the `new_member` given) runs on
driver/member_driver.MemberDriver, which does its I/O, timers and failures. The probe adds
two hooks: a classic leader's client-side assignor (a member with the
ClientSideAssignment capability and a `pending_assignment`: the assignor runs beside the
member, its result goes back through the driver's inbox), and its view of the group
(view.py, which feeds observe/story/story.py): each new stable generation is described, and a
KIP-848 group (a member without that capability: the broker assigns, the group counts
epochs) is described at the member's heartbeat interval. Events: the member's own plus
those of the view, each put in the event envelope and handed to `emit`. Times come from one
Clock (groupctl.clock, from Env), the driver's too.

Leaving: `join_once` and `watch` always leave (clean stop, error, Ctrl-C and SIGTERM,
which cancel the task) within LEAVE_SECONDS, through the driver's membership. The
exception that ended the run (or the member's fatal error) is re-raised after the leave.
"""
from __future__ import annotations

import asyncio
import contextlib
import functools
from typing import Any, Callable

from ...client.routes import MemberLinks
from ...clock import SYSTEM_CLOCK, Clock
from ...errors import GroupctlError
from ...events import Event, envelope, tp_list
from ..driver.member_driver import MemberDriver
from ..members.interface import ClientSideAssignment, GroupMember
from .setup import (  # noqa: F401 - ProbeSettings, ProbeResult, ProbeError re-exported
    ProbeError, ProbeResult, ProbeSettings, compute_assignment, describe_for_join,
    encode_assignments, epoch_snapshot, new_member,
)
from .view import GroupView

LEAVE_SECONDS = 3.0


class Probe:
    """One group member and its view of the group. See the module doc."""

    def __init__(self, cluster, settings: ProbeSettings, *,
                 emit: Callable[[dict], None] | None = None, clock: Clock = SYSTEM_CLOCK,
                 new_member: Callable[[ProbeSettings, Any], GroupMember] = new_member):
        self.cluster = cluster
        self.settings = settings
        self._emit = emit or (lambda event: None)
        self.clock = clock
        self._new_member = new_member
        self.member: GroupMember | None = None
        self.driver: MemberDriver | None = None
        self.view = GroupView(settings.group, clock=clock.wall)
        self._links = MemberLinks(cluster)
        self._assigning_gen: int | None = None
        #: the member, when it has the client-side assignment capability (a classic leader
        #: runs the assignor); told once by type: an isinstance on a Protocol is not cheap
        self._assigner: ClientSideAssignment | None = None
        self._epochs = False   # a broker-assigned (KIP-848) member: the group has epochs
        self._group_type: str | None = None   # the group's type, as first described
        self._started = clock.monotonic()
        self.leave_on_exit = True   # False only in tests that simulate a crashed member
        self.leader_rounds: list[tuple] = []   # (PendingAssignment, assignment) as leader

    @property
    def _live(self) -> GroupMember:
        """The member, from _start() on (everything but _flush runs after it)."""
        assert self.member is not None, "the probe has not started"
        return self.member

    @property
    def _driving(self) -> MemberDriver:
        """The member's driver, from _start() on."""
        assert self.driver is not None, "the probe has not started"
        return self.driver

    # ---- public ----------------------------------------------------------------------
    async def join_once(self, *, deadline_s: float) -> ProbeResult:
        """Join, wait for the first stable generation (at most `deadline_s`), leave. A
        member of a broker-assigned group (KIP-848) is stable once it acknowledged its
        assignment; the group's epochs then come from one describe."""
        async with self._membership("one-shot join done"):
            left = self._started + deadline_s - self.clock.monotonic()
            await self._driving.run_until(lambda m: m.stable, left, "joined and synced")
            group = None
            if self._epochs or self._classic_in_consumer_group:
                group = await self._snapshot()
                group = None if isinstance(group, BaseException) else group
            return self._result(group)

    async def watch(self, *, duration_s: float | None = None) -> None:
        """Stay in the group until `duration_s` ends (None: until cancelled), then leave.
        In a KIP-848 group the group is described (ConsumerGroupDescribe) at the member's
        heartbeat interval, and the story (observe/story/story.py) tells epochs, members,
        assignments and converged rebalances from those snapshots."""
        async with self._membership("watch ended (--duration reached)"):
            if self._epochs:
                self._driving.spawn(self._poll_epochs())
            await self._driving.run_until(lambda m: False, duration_s, None)

    # ---- membership ------------------------------------------------------------------
    @contextlib.asynccontextmanager
    async def _membership(self, leave_reason: str):
        """Join on entry; on any exit leave (bounded), close, and raise the member's fatal
        error if the body itself ended normally."""
        await self._start()
        async with self._driving.membership(leave_reason, leave_budget_s=LEAVE_SECONDS,
                                          leave=self.leave_on_exit):
            yield
        self._flush()
        if self._live.fatal_error is not None:
            raise self._live.fatal_error

    async def _start(self) -> None:
        described = await self._describe_first() if self.settings.describe_first else None
        self._group_type = getattr(described, "type", None)
        self.member = self._new_member(self.settings, described)
        if isinstance(self.member, ClientSideAssignment):
            self._assigner = self.member
        self._epochs = self._assigner is None
        self.view.before_join(described, epochs=self._epochs)
        self.driver = MemberDriver(self.cluster, self.member, links=self._links,
                                   clock=self.clock, step=self._step,
                                   on_events=self._member_events,
                                   name=f"the probe in group {self.settings.group}")

    async def _describe_first(self):
        from ...client.errors import UnsupportedVersionError

        try:
            return await describe_for_join(self.cluster, self.settings.group)
        except UnsupportedVersionError:  # e.g. librdkafka's mock cluster: join blind
            return None

    def _step(self, now_ms: int) -> None:
        """The driver's hook, once per turn: a leader's assignor; a new stable generation."""
        m = self._live
        if not self._epochs:
            self._maybe_assign()
            if m.stable and m.generation != self.view.stable_generation:
                self._on_stable()

    # ---- leader ----------------------------------------------------------------------
    def _maybe_assign(self) -> None:
        m = self._assigner
        if m is None:
            return
        p = m.pending_assignment
        if p is None or self._assigning_gen == p.generation_id:
            return
        self._assigning_gen = p.generation_id
        self.view.leader_joined(p)
        self._driving.spawn(self._assign(p), lambda outcome: self._provide(p, *outcome))

    async def _assign(self, pending) -> tuple:
        """(assignment, None), or (None, the error): the assignor's outcome."""
        try:
            return await compute_assignment(self.cluster, pending), None
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # unknown assignor, metadata failure, assignor error
            return None, exc

    def _provide(self, pending, assignment: dict | None, error: BaseException | None) -> None:
        m = self._assigner
        assert m is not None   # only a leader's assignor gets here
        now_ms = self._now_ms()
        if error is not None:
            err = error if isinstance(error, GroupctlError) else ProbeError(
                f"the probe was elected leader but could not assign: {error}")
            m.assignment_failed(str(err), now_ms, error=err)
            return
        assert assignment is not None  # no error: the assignor's result
        generation = pending.generation_id
        if m.provide_assignment(encode_assignments(assignment), now_ms,
                                generation_id=generation):
            self.view.leader_assigned(generation, assignment)
            self.leader_rounds.append((pending, assignment))

    # ---- stable generations ----------------------------------------------------------
    def _on_stable(self) -> None:
        m = self._live
        self.view.synced(m, m.assigned_partitions(), self.clock.wall())
        m.after_stable(self._now_ms())  # e.g. a cooperative member rejoins after revoking
        generation = m.generation
        self._driving.spawn(self._describe(generation),  # members and assignments, for events
                          lambda group: self._described(generation, group))

    async def _describe(self, generation: int) -> object:
        from ...observe.reads.snapshot import describe_group

        described: object  # a GroupDescription, or the error describing it
        try:
            described = await describe_group(self.cluster, self.settings.group)
        except asyncio.CancelledError:
            raise
        except GroupctlError as exc:
            described = exc
        return described

    def _described(self, generation: int, group) -> None:
        m = self._live
        still = m.stable and m.generation == generation
        ok = still and not isinstance(group, BaseException) and group.state == "Stable"
        self.view.described(generation, group if ok else None)
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
        from ...observe.sources.poller import DescribePoller

        def interval() -> float:
            return (getattr(self.member, "heartbeat_interval_ms", None) or 1000) / 1000

        group = self.settings.group
        poller = DescribePoller(self.cluster, [group], types={group: "consumer"},
                                interval=interval(), label="probe", clock=self.clock.wall)
        async for observation in poller.observations():
            self._driving.post(functools.partial(self._polled, observation))
            poller.interval = interval()

    def _polled(self, observation) -> None:
        """An observation of the group (observe/sources/poller.py) while following a KIP-848 group."""
        self.view.observed(observation)
        for event in self.view.poll_events():
            self._publish(event)

    # ---- events ----------------------------------------------------------------------
    def _member_events(self, events: list[Event]) -> None:
        """The driver's hook for the member's events."""
        for event in events:
            for told in self.view.member_event(event):  # a follower's generation: members
                self._publish(told)
        self._flush()

    def _flush(self) -> None:
        if self.member is None:
            return
        for event in self.view.poll_state(self.member):
            self._publish(event)

    def _publish(self, event: Event) -> None:
        self._emit(envelope(event, group=self.settings.group, at=self.clock.wall(),
                            cluster=getattr(self.cluster, "cluster_id", None), source="probe"))

    def _result(self, group=None) -> ProbeResult:
        m = self._live
        c = m.coordinator
        epochs = {}
        if self._epochs:
            epochs = {"type": "consumer", "member_protocol": "consumer",
                      "member_epoch": m.generation,
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
        elif self._classic_in_consumer_group:
            # the broker assigns and there is no leader; JoinGroup's generation id is the
            # member's epoch (GroupMetadataManager: setGenerationId(member.memberEpoch()))
            fields.update(type="consumer", member_protocol="classic", generation=None,
                          member_epoch=m.generation, leader=None, is_leader=False,
                          group_epoch=getattr(group, "group_epoch", None),
                          assignment_epoch=getattr(group, "assignment_epoch", None))
        return ProbeResult(**fields)

    @property
    def _classic_in_consumer_group(self) -> bool:
        """The probe joined a consumer (KIP-848) group as a classic member."""
        return self._group_type == "consumer" and not self._epochs

    def _now_ms(self) -> int:
        return self.clock.monotonic_ms()

