"""A sans-IO KIP-848 consumer-protocol member (ConsumerGroupHeartbeat), the sibling of the
classic member on the shared BaseMember (coordinator/members/base.py). The broker assigns; the
member reconciles towards what it is given and acknowledges it.

The contract followed (docs/commands/join.md, the Java client's ConsumerMembershipManager
and ConsumerHeartbeatRequestManager):

- FindCoordinator (key type 0) whenever the coordinator is unknown.
- Join: ConsumerGroupHeartbeat with member epoch 0 and every field: the member id (v1: a
  UUID this member generated, kept for its whole life), instance id, rack, rebalance
  timeout, the subscription (topic names; or a regex, v1, RE2 on the broker; wanting no
  partitions: types.NO_PARTITIONS_TOPIC, a name no topic can have, never an empty list,
  which Kafka 4.3.1 mis-assigns), the server assignor, and an empty list of owned
  partitions.
- Later heartbeats carry only what changed since the last one that was answered (member id
  and epoch always, the instance id when static); after a failed heartbeat, and while
  JOINING, every field again. The interval is the one the broker returns.
- An assignment in a response that differs from what the member owns: reconcile
  (reconcile.py: revoke, take, nothing to commit), then acknowledge at once with the owned
  partitions (ACKNOWLEDGING -> STABLE).
- Errors: one table in data (types.REACTIONS): FENCED_MEMBER_EPOCH / UNKNOWN_MEMBER_ID ->
  FENCED, release everything, rejoin with epoch 0; coordinator moved -> rediscover; loading
  -> back off; UNRELEASED_INSTANCE_ID, GROUP_MAX_SIZE_REACHED, UNSUPPORTED_ASSIGNOR,
  INVALID_REQUEST and the other fatal ones -> FATAL with a hint (types.FATAL_HINTS) and the
  broker's own message.
- Leave: epoch -1 (a static member -2: "temporarily left", its partitions wait for it);
  any answer ends UNSUBSCRIBED and done.
- Topic names: the protocol carries topic ids; the member asks Metadata (v12+, by topic
  id) for names it does not know, and reports its assignment by name once known.
- Routes: FindCoordinator and Metadata to any broker; heartbeats on the control route.
"""
from __future__ import annotations

import uuid

from ....events import EpochAssignmentChanged, EpochProbeAction, tp_list
from ....protocol import messages as M
from ....protocol.errors import ErrorCode
from ..base import BaseMember
from ..interface import ROUTE_ANY, ROUTE_CONTROL, Reaction, classify, kip800
from . import reconcile as rc
from .state import LEGAL_TRANSITIONS, ConsumerMemberState
from .types import (
    APIS, FATAL_HINTS, FIND_COORDINATOR, FIND_REACTIONS, HEARTBEAT, JOIN_EPOCH, LEAVE_EPOCH,
    LEAVE_GONE, METADATA, REACTIONS, RELEVANT, STATIC_LEAVE_EPOCH, check_settings, subscribed_topic_names,
)

S = ConsumerMemberState
NONE = ErrorCode.NONE
_FENCING = (Reaction.RESET_GENERATION, Reaction.RESET_MEMBER, Reaction.REJOIN)


class ConsumerMember(BaseMember):
    """A consumer-protocol group member as a sans-IO state machine. See the module doc."""

    UNJOINED, LEAVING, LEFT, FATAL = S.UNSUBSCRIBED, S.LEAVING, S.UNSUBSCRIBED, S.FATAL
    TRANSITIONS = LEGAL_TRANSITIONS
    RELEVANT = RELEVANT
    APIS = APIS
    REACTIONS = REACTIONS
    FIND_REACTIONS = FIND_REACTIONS
    FATAL_HINTS = FATAL_HINTS
    LEAVE_GONE = LEAVE_GONE
    group_type = "consumer"   # a label (reports, tests); behaviour is chosen by type, not by it

    def __init__(self, group_id: str, *, topics: list[str] | None = None,
                 topic_regex: str | None = None, server_assignor: str | None = None,
                 rack_id: str | None = None, group_instance_id: str | None = None,
                 rebalance_timeout_ms: int = 30_000, request_timeout_ms: int = 10_000,
                 heartbeat_interval_ms: int = 5000, member_id: str | None = None,
                 reason_prefix: str = "groupctl probe", retry_backoff_ms: int = 100,
                 retry_backoff_max_ms: int = 1000, keep_history: int = 1000):
        topics = sorted(set(topics or ()))
        check_settings(group_id, rebalance_timeout_ms, group_instance_id, server_assignor,
                       topics, topic_regex)
        self.member_epoch = JOIN_EPOCH
        super().__init__(group_id, session_timeout_ms=request_timeout_ms,
                         heartbeat_interval_ms=heartbeat_interval_ms,
                         reason_prefix=reason_prefix, retry_backoff_ms=retry_backoff_ms,
                         retry_backoff_max_ms=retry_backoff_max_ms, keep_history=keep_history)
        self.member_id = member_id or str(uuid.uuid4())
        self.topics = topics
        self.topic_regex = topic_regex
        self.server_assignor = server_assignor
        self.rack_id = rack_id
        self.group_instance_id = group_instance_id
        self.rebalance_timeout_ms = rebalance_timeout_ms
        self.request_timeout_ms = request_timeout_ms
        self.leader_id: str | None = None  # the broker assigns: no leader
        self.protocol_name = server_assignor
        self.owned: rc.Owned = {}
        self.topic_names: dict[str, str] = {}
        self.acknowledged_epoch: int | None = None   # member epoch of the last acknowledgement
        self._left = False
        self._sent: dict | None = None       # fields of the last answered heartbeat
        self._sending: dict | None = None    # fields of the heartbeat in flight
        self._next_heartbeat_ms = 0
        self._pending_event: tuple | None = None     # (epoch, owned before, owned after)
        self._names_wanted: set[str] = set()
        self._paused_until_ms = 0

    # ---- read side -------------------------------------------------------------------
    @property
    def generation(self) -> int:
        """The member epoch (the driver's "generation" of this protocol)."""
        return self.member_epoch

    @property
    def done(self) -> bool:
        return self._sm.state is S.FATAL or (self._sm.state is S.UNSUBSCRIBED and self._left)

    @property
    def stable(self) -> bool:
        """STABLE with the assignment's topic names known (what a one-shot join waits for)."""
        return self._sm.state is S.STABLE and self._pending_event is None

    @property
    def is_leader(self) -> bool:
        return False

    def implied_group_state(self) -> str | None:
        """None: a consumer group's state comes from ConsumerGroupDescribe, not from one
        member's reconciliation."""
        return None

    def assigned_partitions(self) -> dict[str, list[int]]:
        return {self.topic_names.get(t, t): sorted(p) for t, p in self.owned.items()}

    def as_dict(self) -> dict:
        c = self.coordinator
        return {"state": self.state.name, "member_id": self.member_id,
                "group_instance_id": self.group_instance_id, "member_epoch": self.member_epoch,
                "heartbeat_interval_ms": self.heartbeat_interval_ms,
                "coordinator": None if c is None else c.to_dict(),
                "assignment": tp_list(self.assigned_partitions())}

    def next_deadline_ms(self) -> int | None:
        s = self._sm.state
        if self.done:
            return None
        if s in (S.UNSUBSCRIBED, S.FENCED):
            return 0
        times = self._lookup_deadline()
        if self.coordinator is not None and s.in_group and HEARTBEAT not in self._inflight:
            times.append(max(self._heartbeat_at(), self._not_before_ms, self._paused_until_ms))
        return min(times) if times else None

    # ---- driver inputs -----------------------------------------------------------------
    def pause_heartbeats(self, until_ms: int) -> None:
        """Test hook: send no heartbeat before `until_ms` (a member that stalls past the
        broker's session timeout gets fenced)."""
        self._paused_until_ms = until_ms

    def next_requests(self, now_ms: int) -> list:
        if self.done:
            return []
        s = self._sm.state
        if s is S.UNSUBSCRIBED:
            self._start_join(now_ms, f"start: joining group {self.group_id}")
        elif s is S.FENCED:
            self._probe("rejoining", reason="fenced: rejoining with member epoch 0")
            self._start_join(now_ms, "fenced: rejoining with member epoch 0")
        out = self._metadata_request(now_ms)
        if self.coordinator is None:
            return out + self._find_coordinator(now_ms)
        if HEARTBEAT in self._inflight:
            return out
        if self._sm.state is S.LEAVING:
            return out + [self._send_heartbeat(self._leave_body(), now_ms)]
        if now_ms < max(self._heartbeat_at(), self._not_before_ms, self._paused_until_ms):
            return out
        return out + [self._send_heartbeat(self._heartbeat_body(), now_ms)]

    def on_response(self, api: str, body: dict, now_ms: int, *, tag: int | None = None) -> bool:
        fl = self._take(api, tag)
        if fl is None:
            return False
        if api == FIND_COORDINATOR:
            return self._coordinator_answered(body, now_ms)
        if api == METADATA:
            self._names_answered(body)
            return True
        sent, self._sending = self._sending, None
        if self._sm.state is S.LEAVING:
            return self._leave_answered(api, body, now_ms)
        return self._on_heartbeat(body, now_ms, sent)

    def on_failure(self, api: str, kind: str, now_ms: int, *, tag: int | None = None) -> bool:
        if self._take(api, tag) is None:
            return False
        if api == METADATA:   # report the assignment by topic id rather than not at all
            self._names_wanted.clear()
            self._flush_assignment_event(force=True)
            return True
        if self._failed_outside_membership(api, kind, now_ms):
            return True
        self._sending = self._sent = None   # the next heartbeat carries every field again
        self.coordinator = None
        self._next_heartbeat_ms = 0         # again after the back-off, not the interval
        delay = self._backoff(now_ms)
        self._probe("heartbeat_error", error=kind,
                    reason=f"ConsumerGroupHeartbeat failed ({kind}): rediscovering the "
                           f"coordinator, retrying in {delay} ms")
        return True

    # ---- requests -----------------------------------------------------------------------
    def _heartbeat_at(self) -> int:
        if self._sm.state is S.ACKNOWLEDGING or self.member_epoch == JOIN_EPOCH:
            return 0   # join, and acknowledge, at once
        assert self._next_heartbeat_ms is not None  # set when the membership began
        return self._next_heartbeat_ms

    def _send_heartbeat(self, body: dict, now_ms: int):
        self._next_heartbeat_ms = now_ms + self.heartbeat_interval_ms
        regex = self.topic_regex is not None
        return self._send(M.CONSUMER_GROUP_HEARTBEAT, body, now_ms, route=ROUTE_CONTROL,
                          min_version=1 if regex else 0, timeout_ms=self.request_timeout_ms)

    def _fields(self) -> dict:
        """Every optional field of a heartbeat, as this member would fill it in full."""
        return {
            "rack_id": self.rack_id, "rebalance_timeout_ms": self.rebalance_timeout_ms,
            "subscribed_topic_names": subscribed_topic_names(self.topics, self.topic_regex),
            "subscribed_topic_regex": self.topic_regex,
            "server_assignor": self.server_assignor,
            "topic_partitions": rc.to_request(self.owned),
        }

    def _heartbeat_body(self) -> dict:
        full = self._sent is None or self._sm.state is S.JOINING
        fields = self._fields()
        self._sending = fields
        body = {"group_id": self.group_id, "member_id": self.member_id,
                "member_epoch": self.member_epoch, "instance_id": self.group_instance_id,
                "rack_id": None, "rebalance_timeout_ms": -1, "subscribed_topic_names": None,
                "subscribed_topic_regex": None, "server_assignor": None,
                "topic_partitions": None}
        for name, value in fields.items():
            if full or (self._sent or {}).get(name) != value:
                body[name] = value
        if self._sm.state is S.ACKNOWLEDGING:   # the acknowledgement, even of no change
            body["topic_partitions"] = fields["topic_partitions"]
        return body

    def _leave_body(self) -> dict:
        static = self.group_instance_id is not None
        return {"group_id": self.group_id, "member_id": self.member_id,
                "member_epoch": STATIC_LEAVE_EPOCH if static else LEAVE_EPOCH,
                "instance_id": self.group_instance_id, "rack_id": None,
                "rebalance_timeout_ms": -1, "subscribed_topic_names": None,
                "subscribed_topic_regex": None, "server_assignor": None,
                "topic_partitions": None}

    def _metadata_request(self, now_ms: int) -> list:
        wanted = sorted(self._names_wanted - set(self.topic_names))
        if not wanted or METADATA in self._inflight or self._sm.state in (S.LEAVING, S.FATAL):
            return []
        return [self._send(M.METADATA, {
            "topics": [{"topic_id": t, "name": None} for t in wanted],
            "allow_auto_topic_creation": False, "include_topic_authorized_operations": False},
            now_ms, route=ROUTE_ANY, min_version=12)]

    # ---- answers ------------------------------------------------------------------------
    def _on_heartbeat(self, body: dict, now_ms: int, sent: dict | None) -> bool:
        if not self._sm.state.in_group:
            return False
        code = body.get("error_code", NONE)
        if code != NONE:
            self._heartbeat_error(code, body.get("error_message"), now_ms)
            return True
        self._progress()
        self._sent = sent
        interval = body.get("heartbeat_interval_ms") or 0
        if interval > 0:
            self.heartbeat_interval_ms = interval
            self._next_heartbeat_ms = now_ms + interval
        joining = self.member_epoch == JOIN_EPOCH
        self.member_id = body.get("member_id") or self.member_id
        self.member_epoch = body.get("member_epoch", self.member_epoch)
        if joining:
            self._probe("joined")
        target = rc.from_response(body.get("assignment"))
        s = self._sm.state
        if target is not None and (s is S.JOINING or target != self.owned):
            self._reconcile(target, now_ms)
        elif s is S.ACKNOWLEDGING:
            self.acknowledged_epoch = self.member_epoch
            self._move(S.STABLE, f"assignment acknowledged at member epoch {self.member_epoch}",
                       now_ms)
            self._probe("acknowledged")
        return True

    def _reconcile(self, target: rc.Owned, now_ms: int) -> None:
        step = rc.reconcile(self.owned, target)
        self._move(S.RECONCILING, f"new assignment at member epoch {self.member_epoch}: "
                                  f"{step.describe()}", now_ms)
        before, self.owned = self.owned, step.target
        self._note_assignment(before)
        self._move(S.ACKNOWLEDGING, "reconciled (nothing to commit): acknowledging "
                                    f"{sum(len(p) for p in self.owned.values())} partition(s)",
                   now_ms)

    def _heartbeat_error(self, code: int, message: str | None, now_ms: int) -> None:
        reaction = classify(code, self.REACTIONS)
        if reaction is Reaction.FATAL:
            self._error_event(HEARTBEAT, code)
            hint = self.FATAL_HINTS.get(code)
            detail = "; ".join(x for x in (hint, message and f"broker: {message}") if x)
            self._release(now_ms)
            self._fatal(HEARTBEAT, code, now_ms, detail or None)
            return
        name = self._error_event(HEARTBEAT, code)
        if reaction in _FENCING:   # the member id stays: it is this member's own UUID (v1)
            self._fenced(now_ms, f"{name} on ConsumerGroupHeartbeat", error=name)
            return
        self._sent = None
        self._next_heartbeat_ms = 0   # again after the back-off, not the interval
        if reaction is Reaction.REDISCOVER:
            self.coordinator = None
        delay = self._backoff(now_ms)
        what = "rediscovering the coordinator" if reaction is Reaction.REDISCOVER else "backing off"
        self._probe("heartbeat_error", error=name,
                    reason=f"{name} on ConsumerGroupHeartbeat: {what}, retrying in {delay} ms")

    def _fenced(self, now_ms: int, why: str, *, error: str) -> None:
        self._probe("fenced", error=error, reason=why)
        self._release(now_ms)
        self.member_epoch = JOIN_EPOCH
        self._sent = None
        self._move(S.FENCED, f"{why}: partitions released (lost), rejoining with member "
                             f"epoch 0", now_ms)

    def _names_answered(self, body: dict) -> None:
        for t in body.get("topics") or ():
            if t.get("error_code", NONE) == NONE and t.get("name") and t.get("topic_id"):
                self.topic_names[str(t["topic_id"])] = t["name"]
        self._names_wanted.clear()   # unknown ids stay ids (a deleted topic)
        self._flush_assignment_event(force=True)

    # ---- the own assignment, reported -----------------------------------------------------
    def _note_assignment(self, before: rc.Owned) -> None:
        if self._pending_event is not None:   # still waiting for names: merge the steps
            before = self._pending_event[1]
        self._pending_event = (self.member_epoch, before, dict(self.owned))
        self._names_wanted |= set(self.owned) | set(before)
        self._flush_assignment_event()

    def _flush_assignment_event(self, *, force: bool = False) -> None:
        if self._pending_event is None:
            return
        epoch, before, after = self._pending_event
        ids = set(before) | set(after)
        if not force and ids - set(self.topic_names):
            return
        step = rc.reconcile(before, after)
        named = self.topic_names.get
        self._events.append(EpochAssignmentChanged(
            self.member_id, epoch, tp_list({named(t, t): p for t, p in after.items()}),
            tp_list({named(t, t): p for t, p in step.added.items()}),
            tp_list({named(t, t): p for t, p in step.revoked.items()})))
        self._pending_event = None

    # ---- joining and leaving --------------------------------------------------------------
    def _start_join(self, now_ms: int, why: str) -> None:
        self.member_epoch = JOIN_EPOCH
        self._sent = None
        self._move(S.JOINING, why, now_ms)

    def _release(self, now_ms: int) -> None:
        """Give up every partition (revoked on leave, lost when fenced): nothing to commit."""
        if self.owned:
            before, self.owned = self.owned, {}
            self._note_assignment(before)

    def _start_leave(self, why: str, now_ms: int) -> None:
        self._leave_reason = kip800(f"{self.reason_prefix}: leaving: {why}")
        s = self._sm.state
        if s in (S.UNSUBSCRIBED, S.FENCED):
            what = "not a member yet" if s is S.UNSUBSCRIBED else "fenced, not a member"
            self._left = True
            self._move(S.UNSUBSCRIBED, f"leave ({why}): {what}, nothing to leave", now_ms)
            self._probe("left", reason=self._leave_reason)
            return
        self._move(S.PREPARE_LEAVING, f"leave: {why}", now_ms)
        self._release(now_ms)
        epoch = STATIC_LEAVE_EPOCH if self.group_instance_id is not None else LEAVE_EPOCH
        self._move(S.LEAVING, f"partitions released: leaving with member epoch {epoch}", now_ms)

    def _finish_leave(self, now_ms: int, *, error: str | None, why: str) -> None:
        self._left = True
        super()._finish_leave(now_ms, error=error, why=why)

    def _leave_api(self) -> str:
        return HEARTBEAT

    def _probe(self, action: str, *, error: str | None = None, reason: str | None = None) -> None:
        epoch = self.member_epoch
        self._events.append(EpochProbeAction(action, self.member_id or None,
                                             epoch if epoch >= 0 else None, error, reason))
