"""BaseMember: the bookkeeping every member protocol shares (the shape of the Java client's
AbstractMembershipManager). See member.py for the interface and the values it uses."""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any, Callable, Mapping

from ...errors import AuthError, GroupctlError, KafkaError
from ...events import ErrorSeen, Event, ProbeAction
from ...protocol import messages as M
from ...protocol.errors import ErrorCode
from .interface import (
    ROUTE_ANY, Coordinator, Outgoing, Reaction, StateTracker, Transition, classify,
    error_name, error_retriable, kip800,
)


# coordinator answers to a leave that mean "not here, not yet": the leave is sent again to
# the coordinator found anew, LEAVE_TRIES times at most, LEAVE_PAUSE_MS apart
LEAVE_AGAIN = frozenset({ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_NOT_AVAILABLE,
                         ErrorCode.COORDINATOR_LOAD_IN_PROGRESS})
LEAVE_TRIES = 10
LEAVE_PAUSE_MS = 200


@dataclass
class InFlight:
    tag: int
    sent_ms: int
    generation_id: int
    member_id: str


class BaseMember:
    """Bookkeeping shared by every member protocol. A subclass sets the class attributes
    naming its states (UNJOINED, LEAVING, LEFT, FATAL), its transition table (TRANSITIONS),
    which in-flight requests still matter in a state (RELEVANT: api -> predicate), and the
    APIs it speaks (APIS); it implements next_requests and its response handlers."""

    UNJOINED: Enum
    LEAVING: Enum
    LEFT: Enum
    FATAL: Enum
    TRANSITIONS: Mapping[Any, frozenset]  # the subclass's state enum -> its successors
    RELEVANT: Mapping[str, Callable[[Enum], bool]]
    APIS: tuple[str, ...]
    HEARTBEATING: frozenset = frozenset()   # states that heartbeat and watch the session
    REACTIONS: Mapping[int, Reaction] = {}        # error code -> what the member does
    FIND_REACTIONS: Mapping[int, Reaction] = {}   # FindCoordinator errors: RETRY/REDISCOVER/FATAL
    FATAL_HINTS: Mapping[int, str] = {}           # what a fatal code means for this member
    LEAVE_GONE: frozenset = frozenset()   # codes that answer a leave when the group is gone

    def __init__(self, group_id: str, *, session_timeout_ms: int, heartbeat_interval_ms: int,
                 reason_prefix: str, retry_backoff_ms: int, retry_backoff_max_ms: int,
                 keep_history: int):
        self.group_id = group_id
        self.session_timeout_ms = session_timeout_ms
        self.heartbeat_interval_ms = heartbeat_interval_ms
        self._next_heartbeat_ms: int | None = None
        self._last_heartbeat_ok_ms: int | None = None
        self.reason_prefix = reason_prefix
        self.retry_backoff_ms = retry_backoff_ms
        self.retry_backoff_max_ms = retry_backoff_max_ms
        self._keep_history = keep_history
        self._sm: StateTracker = StateTracker(self.UNJOINED, self.TRANSITIONS, keep=keep_history)
        self.member_id = ""
        self.coordinator: Coordinator | None = None
        self.fatal_error: GroupctlError | None = None
        self._events: list[Event] = []
        self._inflight: dict[str, InFlight] = {}
        self._tag = 0
        self._not_before_ms = 0
        self._failures = 0
        self._leave_reason: str | None = None
        self._fatal_after_leave: str | None = None
        self._leave_tries = 0               # leaves the coordinator bounced (moving, loading)
        self._leave_not_before_ms = 0

    # ---- read side -------------------------------------------------------------------
    @property
    def state(self):
        return self._sm.state

    @property
    def transitions(self) -> list[Transition]:
        return list(self._sm.transitions)

    @property
    def done(self) -> bool:
        """True in LEFT and FATAL: nothing more will be sent."""
        return self._sm.state in (self.LEFT, self.FATAL)

    @property
    def in_flight(self) -> dict[str, int]:
        """{api: tag} of the requests whose answers still matter."""
        return {api: f.tag for api, f in self._inflight.items()}

    @property
    def generation(self) -> int:
        """The generation (classic) or member epoch (KIP-848) of the current membership."""
        return -1

    def poll_events(self) -> list[Event]:
        """Events since the last call (the types of docs/reference/events.md; `groupctl.events.envelope` wraps)."""
        out, self._events = self._events, []
        return out

    def coordinator_found(self, node_id: int, host: str, port: int) -> None:
        """For a driver that looks the coordinator up itself (instead of sending the
        FindCoordinator this machine asks for)."""
        self.coordinator = Coordinator(node_id, host, port)

    def after_stable(self, now_ms: int) -> None:
        """Called by the driver once per new stable generation; a protocol may rejoin or
        change its subscription here."""

    def leave(self, reason: str, now_ms: int) -> bool:
        """Leave the group (with a KIP-800 reason). Works in every non-terminal state, also
        while a join is in flight. Returns False when already leaving or done."""
        if self.done or self._sm.state is self.LEAVING:
            return False
        self._start_leave(reason, now_ms)
        return True

    # ---- sending and taking ------------------------------------------------------------
    def _send(self, spec, body: dict, now_ms: int, *, route: str, min_version: int = 0,
              timeout_ms: int | None = None) -> Outgoing:
        self._tag += 1
        self._inflight[spec.name] = InFlight(self._tag, now_ms, self.generation, self.member_id)
        return Outgoing(spec, body, self._tag, route, min_version, timeout_ms)

    def _take(self, api: str, tag: int | None) -> InFlight | None:
        if api not in self.APIS:
            raise ValueError(f"not an API of the {type(self).__name__}: {api!r}")
        fl = self._inflight.get(api)
        if fl is None or (tag is not None and tag != fl.tag):
            return None
        del self._inflight[api]
        return fl

    def _move(self, to, reason: str, now_ms: int) -> None:
        self._sm.move(to, reason, now_ms)
        for api in [a for a in self._inflight if not self.RELEVANT[a](to)]:
            del self._inflight[api]

    # ---- back-off ------------------------------------------------------------------------
    def _backoff(self, now_ms: int) -> int:
        """Exponential: retry_backoff_ms doubling per failure, capped, no jitter."""
        self._failures += 1
        delay = min(self.retry_backoff_max_ms, self.retry_backoff_ms * 2 ** (self._failures - 1))
        self._not_before_ms = now_ms + delay
        return delay

    def _progress(self) -> None:
        self._failures = 0
        self._not_before_ms = 0

    # ---- heartbeat and session ---------------------------------------------------------------
    def _heartbeats_from(self, now_ms: int) -> None:
        """A membership began (or was confirmed): heartbeat one interval from now, and count
        the session from now."""
        self._last_heartbeat_ok_ms = now_ms
        self._next_heartbeat_ms = now_ms + self.heartbeat_interval_ms

    def _heartbeat_due(self, api: str, now_ms: int) -> bool:
        if self._sm.state not in self.HEARTBEATING or api in self._inflight:
            return False
        assert self._next_heartbeat_ms is not None  # set when the membership began
        if now_ms < self._next_heartbeat_ms:
            return False
        self._next_heartbeat_ms = now_ms + self.heartbeat_interval_ms
        return True

    def _heartbeat_ok(self, now_ms: int) -> None:
        self._failures = 0
        self._last_heartbeat_ok_ms = now_ms

    def _heartbeat_deadlines(self, api: str) -> list[int]:
        if self._sm.state not in self.HEARTBEATING:
            return []
        # both set when the membership began
        assert self._last_heartbeat_ok_ms is not None and self._next_heartbeat_ms is not None
        times = [self._last_heartbeat_ok_ms + self.session_timeout_ms]
        if self.coordinator is not None and api not in self._inflight:
            times.append(self._next_heartbeat_ms)
        return times

    def _session_lost_for(self, now_ms: int) -> int | None:
        """How long without a successful heartbeat, when that is a whole session (membership
        is then lost), else None."""
        if self._sm.state not in self.HEARTBEATING or self._last_heartbeat_ok_ms is None:
            return None
        silent = now_ms - self._last_heartbeat_ok_ms
        return silent if silent >= self.session_timeout_ms else None

    # ---- events --------------------------------------------------------------------------
    def _probe(self, action: str, *, error: str | None = None, reason: str | None = None) -> None:
        gen = self.generation
        self._events.append(ProbeAction(action, self.member_id or None,
                                        gen if gen >= 0 else None, error, reason))

    def _error_event(self, api: str, code: int) -> str:
        name = error_name(code)
        self._events.append(ErrorSeen(api, code, name, error_retriable(code)))
        return name

    # ---- the coordinator -------------------------------------------------------------------
    def _find_coordinator(self, now_ms: int) -> list[Outgoing]:
        """A FindCoordinator (key type 0: a group) unless one is in flight or a back-off
        runs. A leaving member does not wait out a back-off: leaving is urgent, and a failed
        lookup ends the leave anyway."""
        api = M.FIND_COORDINATOR
        leaving = self._sm.state is self.LEAVING
        if api.name in self._inflight or not (
                leaving and now_ms >= self._leave_not_before_ms
                or not leaving and now_ms >= self._not_before_ms):
            return []
        return [self._send(api, {"key": self.group_id, "key_type": 0,
                                 "coordinator_keys": [self.group_id]}, now_ms, route=ROUTE_ANY)]

    def _coordinator_answered(self, body: dict, now_ms: int) -> bool:
        coords = body.get("coordinators") or []
        entry = next((c for c in coords if c.get("key") == self.group_id),
                     coords[0] if coords else body)
        code = entry.get("error_code", ErrorCode.NONE)
        if code == ErrorCode.NONE:
            self.coordinator = Coordinator(entry["node_id"], entry["host"], entry["port"])
            return True
        name = self._error_event(M.FIND_COORDINATOR.name, code)
        if self._sm.state is self.LEAVING:
            self._finish_leave(now_ms, error=name,
                               why=f"could not find the coordinator to leave ({name})")
        elif classify(code, self.FIND_REACTIONS) is Reaction.FATAL:
            self._fatal(M.FIND_COORDINATOR.name, code, now_ms, entry.get("error_message"))
        else:
            self._backoff(now_ms)
        return True

    def _failed_outside_membership(self, api: str, kind: str, now_ms: int) -> bool:
        """A FindCoordinator or leave request got no answer (True: handled here)."""
        if api == M.FIND_COORDINATOR.name:
            if self._sm.state is self.LEAVING:
                self._finish_leave(now_ms, error=kind,
                                   why=f"could not find the coordinator to leave ({kind})")
            else:
                self._backoff(now_ms)
            return True
        if self._sm.state is self.LEAVING and api == self._leave_api():
            self._finish_leave(now_ms, error=kind, why=f"{api} failed ({kind})")
            return True
        return False

    def _lookup_deadline(self) -> list[int]:
        """Deadlines of the coordinator lookup and the leave (see next_deadline_ms)."""
        if self.coordinator is None:
            if M.FIND_COORDINATOR.name in self._inflight:
                return []
            return [self._leave_not_before_ms if self._sm.state is self.LEAVING
                    else self._not_before_ms]
        if self._sm.state is self.LEAVING:
            return [] if self._leave_api() in self._inflight else [0]
        return []

    # ---- fatal ----------------------------------------------------------------------------
    def _fatal(self, api: str, code: int, now_ms: int, detail: str | None = None) -> None:
        """End membership on a fatal error code: `fatal_error` is what the driver raises
        (AuthError for GROUP_AUTHORIZATION_FAILED, else KafkaError with the hint)."""
        name = error_name(code)
        detail = detail or self.FATAL_HINTS.get(code)
        if code == ErrorCode.GROUP_AUTHORIZATION_FAILED:
            exc: GroupctlError = AuthError(
                f"{api} failed: {name} ({code}): not authorized to access group {self.group_id}")
            exc.api, exc.code = api, code  # type: ignore[attr-defined]
        else:
            exc = KafkaError(api, code, detail)
        self.fatal_error = exc
        self._clear_pending()
        self._move(self.FATAL, f"{api}: {name} ({code}) is fatal"
                               + (f": {detail}" if detail else ""), now_ms)
        self._probe("fenced" if code == ErrorCode.FENCED_INSTANCE_ID else "failed", error=name,
                    reason=detail)

    def _react(self, api: str, code: int, now_ms: int) -> tuple[str, Reaction | None]:
        """An error code in `api`'s answer: the error event, then the member's reaction from
        its table; a FATAL one is carried out here (the reaction returned is then None)."""
        name = self._error_event(api, code)
        reaction = classify(code, self.REACTIONS)
        if reaction is Reaction.FATAL:
            self._fatal(api, code, now_ms)
            return name, None
        return name, reaction

    # ---- leaving -------------------------------------------------------------------------
    def _start_leave(self, why: str, now_ms: int) -> None:
        self._leave_reason = kip800(f"{self.reason_prefix}: leaving: {why}")
        self._clear_pending()
        if self._sm.state is self.UNJOINED or not self._has_identity():
            self._move(self.LEFT, f"leave ({why}): not a member yet, nothing to leave", now_ms)
            self._probe("left", reason=self._leave_reason)
            return
        self._move(self.LEAVING, f"leave: {why}", now_ms)

    def _finish_leave(self, now_ms: int, *, error: str | None, why: str) -> None:
        self._probe("left", error=error, reason=self._leave_reason)
        if self._fatal_after_leave is not None:
            self._move(self.FATAL, f"{self._fatal_after_leave} ({why})", now_ms)
            self._probe("failed", reason=self._fatal_after_leave)
        else:
            self._move(self.LEFT, why, now_ms)

    def _leave_answered(self, api: str, body: dict, now_ms: int) -> bool:
        """A leave request's answer: any outcome ends the leave (errors are reported)."""
        if self._sm.state is not self.LEAVING:
            return False
        code = body.get("error_code", ErrorCode.NONE)
        if code in LEAVE_AGAIN and self._leave_tries < LEAVE_TRIES:
            # the group is moving or loading (a thawed broker fenced and reloading its
            # partitions): a leave given up now lets the reload bring the member back, so
            # find the coordinator again and leave there, within the driver's leave budget
            self._leave_tries += 1
            self.coordinator = None
            self._leave_not_before_ms = now_ms + LEAVE_PAUSE_MS
            return True
        if code in self.LEAVE_GONE:
            self._finish_leave(now_ms, error=None, why=f"left the group: {api} answered "
                                                      f"{ErrorCode(code).name} (it is gone)")
            return True
        former = self._former_ids()   # their UNKNOWN_MEMBER_ID is the usual answer
        if code == ErrorCode.NONE:
            code = next((m.get("error_code", ErrorCode.NONE) for m in body.get("members") or []
                         if m.get("error_code", ErrorCode.NONE)
                         and m.get("member_id") not in former), ErrorCode.NONE)
        if code == ErrorCode.NONE:
            self._finish_leave(now_ms, error=None, why="left the group")
        else:
            name = self._error_event(api, code)
            self._finish_leave(now_ms, error=name, why=f"{api} answered {name}; "
                                                        f"membership ends anyway")
        return True

    def _leave_api(self) -> str:
        """The name of the API this protocol leaves with."""
        return M.LEAVE_GROUP.name

    def _has_identity(self) -> bool:
        """Whether the broker may know this member (there is something to leave)."""
        return bool(self.member_id)

    def _former_ids(self) -> frozenset[str]:
        """Member ids this member held before its current one, named in its leave."""
        return frozenset()

    def _clear_pending(self) -> None:
        """Forget work that only a member in the group would finish (a pending assignment)."""
