"""What each request of a canary round took, as the member's own links carry it.

`TimedLinks` is the member's MemberLinks (client/routes.py) with a stopwatch: every request
the driver sends is timed from the send to its answer (or its failure) on the injected
clock, named by its step, and the first error of the round (an error code in the answer,
or no answer) is kept with the step it ended. A step's figure spans its requests: the
classic join is both JoinGroups (MEMBER_ID_REQUIRED, then the join with the member id),
from the first send to the last answer.

Steps: find_coordinator, join, sync, heartbeat, leave (classic); find_coordinator, join
(ConsumerGroupHeartbeat at member epoch 0), reconcile (the heartbeats after it until the
assignment is acknowledged), leave (member epoch -1) (KIP-848).
"""
from __future__ import annotations

from dataclasses import dataclass

from ...client.routes import MemberLinks
from ...clock import Clock
from ...errors import BrokerErrorCode, DeadlineError, GroupctlError, UnreachableError
from ...protocol.errors import ErrorCode, error_for

CLASSIC_STEPS = ("find_coordinator", "join", "sync", "heartbeat", "leave")
CONSUMER_STEPS = ("find_coordinator", "join", "reconcile", "leave")
STEPS = ("find_coordinator", "join", "sync", "heartbeat", "reconcile", "leave")

# transport outcomes, named as the member is told them (driver: on_failure kinds)
TIMEOUT = "timeout"
DISCONNECTED = "disconnected"


def step_of(api: str, body: dict) -> str:
    """The step a request belongs to."""
    if api == "FindCoordinator":
        return "find_coordinator"
    if api == "JoinGroup":
        return "join"
    if api == "SyncGroup":
        return "sync"
    if api == "Heartbeat":
        return "heartbeat"
    if api == "LeaveGroup":
        return "leave"
    if api == "ConsumerGroupHeartbeat":
        epoch = body.get("member_epoch", 0)
        return "join" if epoch == 0 else "leave" if epoch < 0 else "reconcile"
    return api


def answer_error(api: str, body: dict) -> int:
    """The error code of an answer that ends a canary round (0: none). MEMBER_ID_REQUIRED
    is a step of the classic join (KIP-394), not an error; a LeaveGroup's member entry
    counts as its own."""
    if api == "FindCoordinator":
        entries = body.get("coordinators") or [body]
        return next((e.get("error_code") or 0 for e in entries if e.get("error_code")), 0)
    code = body.get("error_code") or 0
    if api == "JoinGroup" and code == ErrorCode.MEMBER_ID_REQUIRED:
        return 0
    if not code and api == "LeaveGroup":
        code = next((m.get("error_code") or 0 for m in body.get("members") or ()
                     if m.get("error_code")), 0)
    return code


def failure_name(exc: BaseException) -> str:
    """What a request that got no answer is called in the round's `error`."""
    if isinstance(exc, BrokerErrorCode):
        return exc.error.name
    kind = getattr(exc, "kind", None)
    if kind:
        return str(kind)
    if isinstance(exc, DeadlineError):
        return TIMEOUT
    return DISCONNECTED if isinstance(exc, UnreachableError) else type(exc).__name__


@dataclass
class Span:
    """One step's requests: from the first send to the last answer (seconds, monotonic)."""

    started: float
    ended: float | None = None
    requests: int = 0

    @property
    def ms(self) -> float | None:
        return None if self.ended is None else round((self.ended - self.started) * 1000, 3)


class Stopwatch:
    """The spans of one round's steps and its first error (step, name)."""

    def __init__(self, clock: Clock):
        self.clock = clock
        self.spans: dict[str, Span] = {}
        self.error: tuple[str, str] | None = None
        self.in_flight: dict[int, str] = {}   # request number -> step
        self.answers: dict[str, int] = {}     # step -> answers without error
        self._n = 0

    def sent(self, step: str) -> int:
        now = self.clock.monotonic()
        span = self.spans.get(step)
        if span is None:
            span = self.spans[step] = Span(now)
        span.requests += 1
        self._n += 1
        self.in_flight[self._n] = step
        return self._n

    def answered(self, n: int, error: str | None) -> None:
        step = self.in_flight.pop(n)
        self.spans[step].ended = self.clock.monotonic()
        if error is not None:
            self.fail(step, error)
        else:
            self.answers[step] = self.answers.get(step, 0) + 1

    def fail(self, step: str, error: str) -> None:
        """The round's first error is its error; later ones (the leave after it) are not."""
        if self.error is None:
            self.error = (step, error)

    def pending_step(self) -> str | None:
        """The step of the oldest request still without an answer."""
        return self.in_flight[min(self.in_flight)] if self.in_flight else None

    def ms(self, step: str) -> float | None:
        span = self.spans.get(step)
        return None if span is None else span.ms


class TimedLinks(MemberLinks):
    """MemberLinks whose every request goes through a Stopwatch (see the module doc)."""

    def __init__(self, cluster, watch: Stopwatch):
        super().__init__(cluster)
        self.watch = watch

    async def send(self, spec, body: dict, *, route: str, node_id: int | None,
                   min_version: int = 0, timeout: float | None = None) -> dict:
        n = self.watch.sent(step_of(spec.name, body))
        try:
            answer = await super().send(spec, body, route=route, node_id=node_id,
                                        min_version=min_version, timeout=timeout)
        except GroupctlError as exc:
            self.watch.answered(n, failure_name(exc))
            raise
        except BaseException:
            self.watch.in_flight.pop(n, None)   # cancelled: the round's end says why
            raise
        code = answer_error(spec.name, answer)
        self.watch.answered(n, error_for(code).name if code else None)
        return answer
