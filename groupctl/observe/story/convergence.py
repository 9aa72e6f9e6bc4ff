"""KIP-848 groups, member by member: each member's current assignment against its target as
they converge, and how long each member took to reconcile.

In a consumer group there is no global round: the broker sets every member's target at
once (a new assignment epoch) and each member reconciles on its own heartbeats (revoke what
it must, take what was freed, acknowledge). RebalanceStory.observe feeds every
ConsumerGroupDescribe snapshot here; this tells, as soon as a snapshot shows it:

- `member_joined` / `member_left` the first time a member is (no longer) in the group, so a
  member that joins a group which then never converges is still told;
- an `assignment` event for a member whenever its current assignment or its target
  changed, with two fields beyond the event's own (`Converging`): `target` (its target assignment) and
  `reconciled_ms` on the snapshot where it reached its target: the time from the first
  snapshot that showed it away from its target to the first that showed it there. Null when
  no snapshot caught it away (it reconciled within one poll interval) or the start was not
  seen (it was already reconciling when the watch began).

A member is away from its target when its current assignment differs from it, or when its
target changed and its member epoch has not caught up with the assignment epoch yet; it is
back when both hold (assignment equal, epoch caught up). The epoch matters because a member
that still holds partitions pending revocation keeps its old member epoch, and a broker may
list only the partitions it keeps as its current assignment (Kafka 4.3.1 lists them all,
measured). An epoch bump that leaves a member's partitions and target alone is not told.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, ClassVar, Mapping

from ...events import AssignmentChanged, Event, EventKind, partition_changes, tp_list, tp_map
from ..state.holdings import holds_target
from ..state.reducer import MemberStatus
from ..reads.model import SHARE, GroupDescription, Member, partition_map
from .story_data import at_target, identity_of, joins_and_leaves
from ..sources.contact import Gap

Partitions = dict[str, frozenset[int]]


@dataclass(frozen=True)
class Converging(AssignmentChanged):
    """A consumer-group member's assignment as a snapshot showed it (an `assignment` event, with
    `generation` the group epoch) plus its target and, once there, its reconciliation time."""
    KIND: ClassVar[str] = EventKind.ASSIGNMENT
    target: list[dict] | None = None
    reconciled_ms: int | None = None
    behind: bool | None = None   # behind its target (behind_target): holding the group up


@dataclass(frozen=True)
class _Told:
    """What was last told of a member, or what a look shows of it."""
    identity: dict
    assigned: Partitions | None
    target: Partitions | None
    behind: bool = False


def _partitions(tps: list[dict] | None) -> Partitions | None:
    return None if tps is None else {t: frozenset(ps) for t, ps in tp_map(tps).items()}


def _told_of(m: MemberStatus, behind: bool) -> _Told:
    """A member as the fold holds it."""
    return _Told({"member_id": m.member_id, "instance_id": m.instance_id,
                  "client_id": m.client_id, "host": m.host}, _partitions(m.assignment),
                 _partitions(m.target), behind)


def pending_revocation(m: Member) -> Partitions:
    """What the member still holds that its target no longer gives it (unknown target:
    nothing)."""
    target = partition_map(m.target_assignment)
    if target is None:
        return {}
    held = partition_map(m.assignment) or {}
    return {t: ps - target.get(t, frozenset()) for t, ps in held.items()
            if ps - target.get(t, frozenset())}


def share_target_epoch(desc: GroupDescription) -> int | None:
    """The epoch a share member must reach to hold its target: the assignment epoch (a
    share member has no target of its own in ShareGroupDescribe, but the group's target
    assignment has an epoch). Not the group epoch: seen on the lab broker, a join moves the
    group epoch and the assignment follows seconds later (4.8 s), while no member can do
    anything; the broker held the group up then, not they. The group epoch when the
    describe gives no assignment epoch."""
    return desc.assignment_epoch if desc.assignment_epoch is not None else desc.group_epoch


def behind_target(m: Member, desc: GroupDescription) -> bool:
    """The member holds the group up (issue 19): its member epoch is behind the assignment
    epoch (share groups too: share_target_epoch) -- it has not acknowledged its target --
    or it still holds partitions its target took away (pending revocation). A member only
    waiting for partitions others still hold is not behind: it waits on them."""
    epoch = share_target_epoch(desc) if desc.type == SHARE else desc.assignment_epoch
    if m.member_epoch is not None and epoch is not None and 0 <= m.member_epoch < epoch:
        return True
    return bool(pending_revocation(m))


class Behind:
    """Members behind their target, look by look, for one epoch group: since when (the
    first look that showed it behind), when it was told of its target and, once caught up,
    how long after each; `settle` names the round's slowest member.

    Told: a KIP-848 member hears of a new target only at its next heartbeat, so the time
    after its target includes that wait, which is no member's doing. Which look shows the
    moment it was told depends on the source (Kafka 4.3.1's code, checked):
    - the records: the member's current-assignment record turns UNREVOKED_PARTITIONS
      (streams: UNREVOKED_TASKS), at the broker's timestamp: exact;
    - describe, where the broker lists partitions pending revocation apart from the
      assignment (StreamsGroupDescribe lists only assignedTasks; ConsumerGroupDescribe did
      in earlier Kafka sources): what its target took away leaves its assignment while its
      member epoch still lags;
    - ConsumerGroupDescribe on Kafka 4.3.1 lists assigned and pending-revocation partitions
      as one assignment and keeps the old member epoch until the member acknowledges, so
      no look tells the moment apart: the time it held after being told is unknown (None).
    A member with nothing to give up is told and acknowledges in one heartbeat: it held
    nothing (0)."""

    def __init__(self):
        self.since: dict[str, float | None] = {}   # behind now: first seen (None: unseen)
        self.told: dict[str, float | None] = {}    # behind, told: first seen (None: unseen)
        self._pending: set[str] = set()            # behind, seen holding what it must revoke
        # caught up this round: (ms after its target, ms it held after being told)
        self._took: dict[str, tuple[int | None, int | None]] = {}

    def observe(self, desc: GroupDescription, at: float, gap: Gap = Gap.NONE) -> None:
        """A look and the gap before it (sources/contact.Gap): a member first seen behind
        (or told) at the first look, after lost contact or at a late look may have been
        so since any time before: since when is not known (None)."""
        seen = gap == Gap.NONE
        now = {m.member_id: m for m in desc.members}
        for mid in [mid for mid in self.since if mid not in now]:
            self._caught_up(mid, at)   # it left (or was fenced): no longer holding anyone up
        for mid, m in now.items():
            behind = behind_target(m, desc)
            if behind and mid not in self.since:
                self.since[mid] = at if seen else None
            elif not behind and mid in self.since:
                self._caught_up(mid, at)
            if behind and mid not in self.told:
                self._telling(mid, m, at if seen else None)

    def _telling(self, mid: str, m: Member, at: float | None) -> None:
        """Whether this look shows the member told of its target (class doc)."""
        state = str(m.extra.get("member_state") or "")
        if state.startswith("UNREVOKED"):
            told = True
        elif pending_revocation(m):
            self._pending.add(mid)
            told = False
        else:   # what its target took away has left its assignment: it was told
            told = mid in self._pending
        if told:
            self.told[mid] = at

    def _caught_up(self, mid: str, at: float) -> None:
        since = self.since.pop(mid)
        after = None if since is None else _ms(at - since)
        if mid in self.told:
            told = self.told.pop(mid)
            held = None if told is None else _ms(at - told)
        else:   # never seen told: nothing to give up (held nothing), or not seeable
            held = None if mid in self._pending else 0
        self._pending.discard(mid)
        was = self._took.get(mid)
        if was is None or (was[0] is not None and (after is None or after > was[0])):
            self._took[mid] = (after, held)

    def settle(self) -> tuple[str | None, int | None, int | None]:
        """(slowest member, how long after its target it got there, how long it held
        after it was told) of the round just settled, and a new round. Nones when no look
        caught a member behind."""
        took, self._took = self._took, {}
        if not took:
            return None, None, None
        mid = max(took, key=lambda k: (took[k][0] is not None, took[k][0] or 0, k))
        return (mid, *took[mid])


def _ms(seconds: float) -> int:
    return int(round(seconds * 1000))


@dataclass(frozen=True)
class Holding(AssignmentChanged):
    """A share or streams member that began or stopped holding its group up (an
    `assignment`, with `generation` the group epoch and the extra field `behind`): its
    assignment as the look showed it, added / revoked against the one last told."""
    KIND: ClassVar[str] = EventKind.ASSIGNMENT
    behind: bool | None = None


class HoldingUp:
    """Share and streams groups: each member as it begins or stops holding the group up
    (Behind: behind its target), so the live view marks it as it marks a consumer group's
    member (which Convergence tells with its target). What describe cannot say: a share
    member has no target (ShareGroupDescribe gives none; it is behind while its member
    epoch lags the assignment epoch, i.e. until its next heartbeat), and a streams member's
    tasks pending revocation are not listed once it was told (StreamsGroupDescribe gives
    assigned tasks only; it is behind while its member epoch lags the assignment epoch)."""

    def __init__(self):
        self.told: set[str] = set()   # members last told behind

    def observe(self, desc: GroupDescription, behind: Behind,
                known_by: Callable[[], dict | None]) -> list[Event]:
        """`behind` has seen this look; `known_by()`: the members the round is told from
        (MemberSnapshot by id; None: not known), what a diff is against."""
        now = {m.member_id: m for m in desc.members}
        self.told &= set(now)   # a member that left is told by member_left
        events: list[Event] = []
        for mid in sorted(now):
            flag = mid in behind.since
            if flag == (mid in self.told):
                continue
            (self.told.add if flag else self.told.discard)(mid)
            known = known_by()
            was = None if known is None or mid not in known else known[mid].assignment
            assigned = partition_map(now[mid].assignment)
            added, revoked = partition_changes(was, assigned, known_before=known is None
                                               or mid in known)
            events.append(Holding(mid, desc.group_epoch, tp_list(assigned), added, revoked,
                                  behind=flag))
        return events


class Convergence:
    """Follows the members of one KIP-848 group from snapshot to snapshot (module doc). What
    was told of each member is the group's fold (state/reducer.py MemberStatus, as told
    before the look); this keeps only each member's progress: since when it is away from its
    target, and whether it was last seen behind (a first look tells nothing, the fold has
    not heard it)."""

    def __init__(self):
        self.started = False   # a first look (or the members known before it) seen
        self.away_since: dict[str, float | None] = {}  # member -> first seen away (None: unseen)
        self.behind: set[str] = set()   # members last seen behind and short of their target

    def observe(self, desc: GroupDescription, at: float, told: Mapping[str, MemberStatus],
                known_by: Callable[[], dict | None]) -> list[Event]:
        """`told`: the group's members as told before this look (the fold's); `known_by()`:
        before the first look, the members known (MemberSnapshots, e.g. the group as
        described before the probe joined, assumed at their targets; None: none)."""
        now = {m.member_id: m for m in desc.members}
        was: dict[str, _Told]
        if not self.started:
            self.started, known = True, known_by()
            if known is None:   # the first look: remember, tell nothing
                self.behind = {mid for mid, m in now.items() if self._remember(m, desc).behind}
                self.away_since = {mid: None for mid, m in now.items()
                                   if not at_target(m, desc, acknowledged=True)}
                return []
            was = {mid: _Told(s.identity(), s.assignment, s.assignment)
                   for mid, s in known.items()}
        else:
            was = {mid: _told_of(m, mid in self.behind) for mid, m in told.items()}
        joined, events = joins_and_leaves(was, now)
        for mid in set(was) - set(now):
            self.away_since.pop(mid, None)
            self.behind.discard(mid)
        for mid in sorted(now):
            events += [joined[mid]] if mid in joined else []
            events += self._member(now[mid], desc, at, was.get(mid))
        return events

    def _member(self, m: Member, desc: GroupDescription, at: float, was: _Told | None
                ) -> list[Event]:
        mid = m.member_id
        events: list[Event] = []
        now = self._remember(m, desc)
        reconciled = None
        if mid in self.away_since:
            if at_target(m, desc, acknowledged=True):
                since = self.away_since.pop(mid)
                reconciled = None if since is None else int(round((at - since) * 1000))
        elif not holds_target(now.assigned, now.target) or (
                was is not None and now.target != was.target
                and not at_target(m, desc, acknowledged=True)):
            self.away_since[mid] = at   # a new target to reach (or one it is still short of)
        if was is None or (now.assigned, now.target, now.behind) != (
                was.assigned, was.target, was.behind) or reconciled is not None:
            events.append(self._assignment(mid, desc.group_epoch, was, now, reconciled))
        (self.behind.add if now.behind else self.behind.discard)(mid)
        return events

    @staticmethod
    def _remember(m: Member, desc: GroupDescription) -> _Told:
        assigned, target = partition_map(m.assignment), partition_map(m.target_assignment)
        # behind and short of its target: an epoch that lags with nothing to move is not
        # told (every epoch bump would be, once per member)
        behind = not holds_target(assigned, target) and behind_target(m, desc)
        return _Told(identity_of(m), assigned, target, behind)

    @staticmethod
    def _assignment(mid: str, epoch: int | None, was: _Told | None, now: _Told,
                    reconciled: int | None) -> Converging:
        added, revoked = partition_changes(None if was is None else was.assigned, now.assigned,
                                           known_before=was is not None)
        return Converging(mid, epoch, tp_list(now.assigned), added, revoked,
                          target=tp_list(now.target), reconciled_ms=reconciled,
                          behind=now.behind)
