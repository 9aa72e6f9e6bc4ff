"""The canary: which groups (plan.py), their rounds (rounds.py), once or on an interval, and
what a one-shot run's results mean for its exit code.

    runner = CanaryRunner(cluster, CanarySettings(...), clock)
    results = await runner.once()                # every canary, each protocol, once
    raise_for(results, max_ms)                   # CanaryFailed (exit 3, 4, 7 or 6) or None
    await runner.monitor(interval_s, duration_s, on_results)   # rounds until the end

Each run reads where `__consumer_offsets` is led (Metadata) and places the canaries
anew (plan.plan keeps the ones still placed right). Canaries of different coordinators run
at once; a coordinator's protocols one after the other, so its rounds never overlap.
"""
from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Awaitable, Callable

from ...clock import SYSTEM_CLOCK, Clock
from ...errors import AuthError, GroupctlError
from ...exitcodes import ExitCode
from ...observe.reads.describe import OFFSETS_TOPIC
from ...protocol import messages as M
from ...protocol.errors import ErrorCode, error_for
from .plan import DEFAULT_PREFIX, PROTOCOLS, Canary, plan
from .rounds import RoundResult, RoundSettings, run_round
from .timing import DISCONNECTED, TIMEOUT

AUTH_ERRORS = frozenset({error_for(ErrorCode.GROUP_AUTHORIZATION_FAILED).name,
                         error_for(ErrorCode.TOPIC_AUTHORIZATION_FAILED).name})


@dataclass(frozen=True)
class CanarySettings:
    prefix: str = DEFAULT_PREFIX
    protocols: tuple[str, ...] = PROTOCOLS
    round: RoundSettings = field(default_factory=RoundSettings)


class CanaryFailed(GroupctlError):
    """A one-shot run whose rounds did not all complete in time; its exit code says the
    worst (3 unreachable, 4 not authorized, 7 a coordinator's error, 6 a timeout or a
    round over --max-ms)."""

    def __init__(self, message: str, exit_code: ExitCode):
        super().__init__(message)
        self.exit_code = exit_code


def _code(error: str) -> ExitCode:
    if error == DISCONNECTED:
        return ExitCode.UNREACHABLE
    if error in AUTH_ERRORS:
        return ExitCode.AUTH
    if error == TIMEOUT:
        return ExitCode.TIMEOUT
    return ExitCode.KAFKA_ERROR


_WORST_FIRST = (ExitCode.UNREACHABLE, ExitCode.AUTH, ExitCode.KAFKA_ERROR, ExitCode.TIMEOUT)


def raise_for(results: list[RoundResult], max_ms: float | None) -> None:
    """CanaryFailed naming every round that failed or took longer than `max_ms`."""
    bad: list[tuple[ExitCode, str]] = []
    for r in results:
        where = f"{r.canary.protocol} round on coordinator {_node(r.coordinator)}"
        if not r.ok:
            bad.append((_code(r.error or ""), f"{where}: {r.error} on {r.failed_step}"))
        elif max_ms is not None and r.round_ms is not None and r.round_ms > max_ms:
            bad.append((ExitCode.TIMEOUT, f"{where}: {r.round_ms:.1f} ms > --max-ms {max_ms:g}"))
    if bad:
        worst = min((code for code, _ in bad), key=_WORST_FIRST.index)
        raise CanaryFailed(f"canary: {len(bad)} of {len(results)} rounds failed: "
                           + "; ".join(text for _, text in bad), worst)


def _node(node: int | None) -> str:
    return "unknown" if node is None else str(node)


class CanaryRunner:
    """Places the canaries and runs their rounds (see the module doc). `notice(text)`:
    one line for a person (a protocol the brokers lack, a plan that failed)."""

    def __init__(self, cluster, settings: CanarySettings, clock: Clock = SYSTEM_CLOCK, *,
                 notice: Callable[[str], None] | None = None,
                 log: Callable[[str], None] | None = None):
        self.cluster = cluster
        self.settings = settings
        self.clock = clock
        self.notice = notice or (lambda text: None)
        self.log = log
        self.canaries: list[Canary] = []
        self.leaders: dict[int, int | None] = {}   # __consumer_offsets partition -> leader
        self.cluster_id: str | None = None
        self.brokers: set[int] | None = None      # the brokers Metadata lists (None: unread)
        self.last_coordinator: dict[str, int] = {}  # group -> the broker it last ran on
        self._protocols: tuple[str, ...] | None = None

    async def place(self) -> list[Canary]:
        """Read where `__consumer_offsets` is led; place the canaries (plan.plan)."""
        d = self.cluster.deadline(self.settings.round.timeout_s)
        md = await self.cluster.metadata([OFFSETS_TOPIC], deadline=d)
        topic = md.topics.get(OFFSETS_TOPIC)
        if topic is not None and topic.error_code == ErrorCode.TOPIC_AUTHORIZATION_FAILED:
            raise AuthError(f"canary: not authorized to describe topic {OFFSETS_TOPIC}: the "
                            f"canary places its groups by its partitions' leaders (grant "
                            f"DESCRIBE on topic {OFFSETS_TOPIC})")
        created = topic is None or bool(topic.error_code) or not topic.partitions
        if created:
            # a new cluster: the first FindCoordinator creates the topic, as a consumer's
            # first one does (the lookup waits for its leaders)
            self.notice(f"{OFFSETS_TOPIC} does not exist: creating it (a new cluster), "
                        f"then waiting for its coordinators to load")
            await self.cluster.find_coordinator(f"{self.settings.prefix}first", deadline=d)
            md = await self.cluster.metadata([OFFSETS_TOPIC], deadline=d)
            topic = md.topics.get(OFFSETS_TOPIC)
        if topic is None or topic.error_code or not topic.partitions:
            raise CanaryFailed(f"{OFFSETS_TOPIC} is not there: no broker coordinates groups",
                               ExitCode.KAFKA_ERROR)
        self.cluster_id = md.cluster_id
        self.brokers = set(md.brokers)
        self.leaders = {p: info.leader for p, info in topic.partitions.items()}
        protocols = await self._supported(d)
        self.canaries = plan(self.settings.prefix, protocols, self.leaders, self.canaries)
        if created:
            await self._loaded(d)
        return self.canaries

    async def _loaded(self, d) -> None:
        """Wait until each canary group's coordinator answers for it: a partition just
        created is led before its coordinator has loaded it (NOT_COORDINATOR), which says
        nothing of the coordinator's health (send_to_coordinator rediscovers and waits)."""
        for c in self.canaries:
            await self.cluster.send_to_coordinator(
                c.group, M.DESCRIBE_GROUPS, {"groups": [c.group],
                                             "include_authorized_operations": False},
                deadline=d)

    async def once(self) -> list[RoundResult]:
        """Place the canaries, run one round of each."""
        await self.place()
        return await self.rounds()

    async def rounds(self) -> list[RoundResult]:
        """One round of every placed canary: coordinators at once, a coordinator's
        protocols in turn."""
        by_broker: dict[int, list[Canary]] = {}
        for c in self.canaries:
            by_broker.setdefault(c.broker, []).append(c)

        async def in_turn(canaries: list[Canary]) -> list[RoundResult]:
            out = []
            for c in canaries:
                r = await run_round(self.cluster, c, self.settings.round, self.clock,
                                    last_coordinator=self.last_coordinator.get(c.group, c.broker),
                                    log=self.log)
                if r.coordinator is not None:
                    self.last_coordinator[c.group] = r.coordinator
                out.append(r)
            return out

        done = await asyncio.gather(*(in_turn(cs) for _, cs in sorted(by_broker.items())))
        return [r for results in done for r in results]

    async def monitor(self, interval_s: float, duration_s: float | None,
                      on_results: Callable[[list[RoundResult]], Awaitable[None] | None]
                      ) -> None:
        """A run every `interval_s` (start to start; at once after one that took longer)
        until `duration_s` ends (None: until cancelled). A run that cannot place the
        canaries (no broker answers Metadata) runs the canaries placed before, if any."""
        end = None if duration_s is None else self.clock.monotonic() + duration_s
        while end is None or self.clock.monotonic() < end:
            started = self.clock.monotonic()
            try:
                await self.place()
            except GroupctlError as exc:
                self.notice(f"cannot place the canaries: {exc}")
            results = await self.rounds()
            outcome = on_results(results)
            if asyncio.iscoroutine(outcome):
                await outcome
            wait = interval_s - (self.clock.monotonic() - started)
            if end is not None:
                wait = min(wait, end - self.clock.monotonic())
            if wait > 0:
                await self.clock.sleep(wait)

    async def _supported(self, deadline: float) -> tuple[str, ...]:
        """The asked protocols the brokers serve: KIP-848 where ApiVersions lists
        ConsumerGroupHeartbeat (said once when it does not)."""
        if self._protocols is None:
            asked = self.settings.protocols
            if "consumer" in asked:
                conn = await self.cluster.any_broker(deadline=deadline)
                if not conn.supports(M.CONSUMER_GROUP_HEARTBEAT):
                    self.notice("the brokers do not serve ConsumerGroupHeartbeat (KIP-848): "
                                "classic rounds only")
                    asked = tuple(p for p in asked if p != "consumer")
            self._protocols = asked
        return self._protocols


@dataclass(frozen=True)
class Outage:
    """How long a canary group was unavailable: from the start of its first failed round
    to the start of its first completed round after it (`seconds`), on which coordinator
    it completed and which one it last completed on before (None: none yet). The outage
    began after the last completed round and ended before the first completed one, so
    `seconds` is exact to the monitor's interval (plus a round's length)."""

    first_failed_at: float     # Unix time
    recovered_at: float        # Unix time
    coordinator: int | None
    was: int | None

    @property
    def seconds(self) -> float:
        return round(self.recovered_at - self.first_failed_at, 3)

    def to_dict(self) -> dict:
        return {"unavailable_s": self.seconds,
                "unavailable_since": round(self.first_failed_at, 3),
                "previous_coordinator": self.was}


class Outcomes:
    """Per canary group, across a monitor's runs: since when its rounds fail, and the
    broker its last completed round ran on; `tell(results)` gives a line per change (a
    first failed round; rounds completing again, and on which coordinator, after how long
    since the first failed round started: exact to the interval between runs) and keeps
    the outages that ended in those results (`ended`: group -> Outage)."""

    def __init__(self) -> None:
        self.failing_since: dict[str, float] = {}
        self.completed_on: dict[str, int | None] = {}
        self.ended: dict[str, Outage] = {}

    def tell(self, results: list[RoundResult]) -> list[str]:
        lines = []
        self.ended = {}
        for r in results:
            g, name = r.canary.group, f"{r.canary.group} ({r.canary.protocol})"
            if not r.ok:
                if g not in self.failing_since:
                    self.failing_since[g] = r.started_at
                    lines.append(f"{name}: {r.error} on {r.failed_step} at coordinator "
                                 f"{_node(r.coordinator)}")
                continue
            since = self.failing_since.pop(g, None)
            before = self.completed_on.get(g)
            moved = before is not None and before != r.coordinator
            where = f"coordinator {_node(r.coordinator)}" + (
                f" (was {_node(before)})" if moved else "")
            if since is not None:
                outage = self.ended[g] = Outage(since, r.started_at, r.coordinator, before)
                lines.append(f"{name}: rounds complete again on {where}, unavailable "
                             f"{outage.seconds:.1f} s (from the first failed round to this "
                             f"one)")
            elif moved:
                lines.append(f"{name}: rounds now run on {where}")
            self.completed_on[g] = r.coordinator
        return lines
