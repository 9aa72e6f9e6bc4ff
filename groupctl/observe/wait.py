"""`wait`: block until a group condition holds. Observation only: its observations come from
the one describe source (observe/sources/poller.py: the describe APIs, plus OffsetFetch/ListOffsets
only for --max-lag) through the one story into the one reducer; it never joins,
heartbeats, leaves or commits.

The condition is evaluated by pure code on a Look: the group as the reducer folded it
(observe.state.reducer.GroupStatus, None for a group that does not exist) and its lag, so it is
unit-tested without a broker:

    cond = Condition(state=parse_state("stable"), members=3, settled_s=30)
    tracker = Tracker(cond)
    verdict = tracker.observe(Look.of(description), now)    # Verdict(holds, failing=[...])

Generic over group types: the states a type has come from GROUP_STATES, and the number
that moves when the group rebalances from `rebalance_number()` (classic: the generation;
consumer, share, streams: the group epoch). A new type needs an entry in each, nothing else.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..client.interface import ClusterLike
from ..errors import NotFoundError, UsageError
from .state.reducer import GroupStatus


# The coordinator's states per group type (Kafka's ClassicGroupState, ConsumerGroupState,
# ShareGroupState, StreamsGroupState); `Dead` also stands for a group that does not exist.
GROUP_STATES: dict[str, tuple[str, ...]] = {
    "classic": ("Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead"),
    "consumer": ("Empty", "Assigning", "Reconciling", "Stable", "Dead"),
    "share": ("Empty", "Stable", "Dead"),
    "streams": ("Empty", "NotReady", "Assigning", "Reconciling", "Stable", "Dead"),
}
ALL_STATES: tuple[str, ...] = tuple(dict.fromkeys(s for states in GROUP_STATES.values()
                                                   for s in states))
DEAD = "Dead"


def parse_state(text: str) -> str:
    """The canonical spelling of a state name given in any case; UsageError naming the
    valid states otherwise."""
    wanted = text.strip().lower()
    for state in ALL_STATES:
        if state.lower() == wanted:
            return state
    raise UsageError(f"--state {text!r} is not a group state; valid states: "
                     f"{', '.join(ALL_STATES)} (any case)")


def check_state_of_type(state: str | None, group_type: str | None, group: str) -> None:
    """UsageError (exit 2) when a group of `group_type` never has `state` (a consumer
    group is never PreparingRebalance): a wait for it could only time out."""
    states = GROUP_STATES.get(group_type or "")
    if state is not None and states is not None and state not in states:
        raise UsageError(f"--state {state}: group {group!r} is a {group_type} group, which "
                         f"has no such state; its states: {', '.join(states)}")


@dataclass(frozen=True)
class Look:
    """What the conditions read: the group as the reducer folded it (None: no such group)
    and, with --max-lag, its total lag."""

    group: GroupStatus | None
    lag_total: int | None = None

    @classmethod
    def of(cls, desc, at: float = 0.0) -> "Look":
        """One description (None: missing) folded on its own, as a first look."""
        from .sources.observations import Missing, Seen
        from .story.story import RebalanceStory

        name = getattr(desc, "group", "?")
        o = Missing(name, at, "describe") if desc is None else Seen(name, at, "describe", desc)
        story = RebalanceStory(name, clock=lambda: at)
        story.feed(o)
        status = story.status   # what the story told, folded
        return cls(status if status.exists else None,
                   None if desc is None else desc.lag_total)


def _look(look) -> Look:
    return Look(None) if look is None else look


def rebalance_number(desc) -> int | None:
    """The number that moves when the group rebalances: the classic generation (None when
    the members' subscriptions do not show it), else the group epoch."""
    if desc is None:
        return None
    return desc.generation if desc.type == "classic" else desc.group_epoch


@dataclass(frozen=True)
class Condition:
    """What `wait` waits for; None parts are not checked."""

    state: str | None = None
    members: int | None = None
    generation_gt: int | None = None
    max_lag: int | None = None
    settled_s: float | None = None
    must_exist: bool = False

    @property
    def needs_offsets(self) -> bool:
        return self.max_lag is not None

    def describe(self) -> str:
        parts = [f"state {self.state}" if self.state else None,
                 f"{self.members} members" if self.members is not None else None,
                 f"generation/epoch > {self.generation_gt}" if self.generation_gt is not None else None,
                 f"lag <= {self.max_lag}" if self.max_lag is not None else None,
                 f"settled for {self.settled_s:g} s" if self.settled_s else None]
        return ", ".join(p for p in parts if p) or "the group exists"


def check(cond: Condition, look: Look | None) -> list[str]:
    """The parts of `cond` that `look` (a group None: no such group) fails, each naming
    what was seen; [] when the condition holds (--settled aside)."""
    look = _look(look)
    desc = look.group
    failing = []
    state = (desc.state or DEAD) if desc is not None else DEAD
    if cond.state is not None and state.lower() != cond.state.lower():
        failing.append(f"state: want {cond.state}, is {state if desc is not None else 'missing (Dead)'}")
    elif cond.state is None and desc is None:
        failing.append("state: the group does not exist")
    if cond.members is not None:
        count = len(desc.members) if desc is not None else 0
        if count != cond.members:
            failing.append(f"members: want {cond.members}, has {count}")
    if cond.generation_gt is not None:
        number = rebalance_number(desc)
        what = "generation" if desc is None or desc.type == "classic" else "group epoch"
        if number is None:
            failing.append(f"{what}: want > {cond.generation_gt}, unknown"
                           + (" (the members' subscriptions carry no generation)"
                              if desc is not None else ""))
        elif number <= cond.generation_gt:
            failing.append(f"{what}: want > {cond.generation_gt}, is {number}")
    if cond.max_lag is not None:
        lag = look.lag_total if desc is not None else None
        if lag is None:
            failing.append(f"lag: want <= {cond.max_lag}, unknown (no committed offsets)")
        elif lag > cond.max_lag:
            failing.append(f"lag: want <= {cond.max_lag}, is {lag}")
    return failing


def change_key(look: Look) -> tuple:
    """What must stay the same for the group to count as settled: state, members and the
    generation or epochs (a rebalance moves at least one of them)."""
    return (None,) if look.group is None else look.group.change_key()


@dataclass
class Verdict:
    holds: bool
    failing: list[str] = field(default_factory=list)
    held_for_s: float | None = None


class Tracker:
    """Evaluates `cond` on successive snapshots; --settled needs the history."""

    def __init__(self, cond: Condition):
        self.cond = cond
        self.held_since: float | None = None
        self._key: tuple | None = None
        self.last: Look | None = None
        self.last_verdict: Verdict | None = None

    def observe(self, look: Look | None, now: float) -> Verdict:
        look = _look(look)
        self.last = look
        failing = check(self.cond, look)
        key = change_key(look)
        if failing or key != self._key:
            self.held_since = None if failing else now
        self._key = key
        held = None if self.held_since is None else now - self.held_since
        if not failing and self.cond.settled_s and held is not None and held < self.cond.settled_s:
            failing = [f"settled: want {self.cond.settled_s:g} s without a rebalance, "
                       f"held {held:.1f} s"]
        self.last_verdict = Verdict(not failing, failing, held)
        return self.last_verdict

    def wake_in(self, now: float, interval: float) -> float:
        """Seconds until the next poll: the interval, or sooner when --settled ends first."""
        if self.held_since is not None and self.cond.settled_s:
            left = self.held_since + self.cond.settled_s - now
            if left > 0:
                return min(interval, left)
        return interval


@dataclass
class Outcome:
    """How a wait ended: `met`, the last look and verdict, seconds waited."""

    group: str
    cond: Condition
    met: bool
    look: Look | None
    verdict: Verdict
    waited_s: float

    def to_dict(self) -> dict:
        look = _look(self.look)
        d = look.group
        return {
            "group": self.group, "met": self.met, "condition": self.cond.describe(),
            "exists": d is not None, "type": getattr(d, "type", None),
            "state": d.state if d is not None else DEAD,
            "members": len(d.members) if d is not None else 0,
            "generation": getattr(d, "generation", None),
            "group_epoch": getattr(d, "group_epoch", None),
            "assignment_epoch": getattr(d, "assignment_epoch", None),
            "lag_total": look.lag_total if d is not None and self.cond.needs_offsets else None,
            "held_for_s": None if self.verdict.held_for_s is None else round(self.verdict.held_for_s, 3),
            "waited_s": round(self.waited_s, 3), "failing": self.verdict.failing,
        }


async def wait_for(cluster: ClusterLike, group: str, cond: Condition, *, interval: float,
                   deadline, clock) -> Outcome:
    """Follow the group (the one source -> story -> reducer) every `interval` s until
    `cond` holds or `deadline` (a client Deadline) passes; NotFoundError at once for a
    missing group under --must-exist."""
    from .sources.observations import ContactLost, Missing, Seen
    from .sources.poller import DescribePoller
    from .story.story import RebalanceStory

    tracker = Tracker(cond)
    started = clock()
    source = DescribePoller(cluster, [group], interval=interval, offsets=cond.needs_offsets,
                            deadline=deadline)
    story, lag = RebalanceStory(group), None
    status = story.status   # the group as the story told it (its one fold)
    async for o in source.observations():
        if isinstance(o, ContactLost):
            # a poll cut short by the deadline (while still connecting, it surfaces as
            # unreachable) ends the wait as a timeout with the last state seen
            if tracker.last_verdict is None or not deadline.expired:
                raise o.error
            break
        if o.group != group:
            continue
        if isinstance(o, Missing) and cond.must_exist:
            raise NotFoundError(f"group {group!r} does not exist (--must-exist)")
        if isinstance(o, Seen):
            check_state_of_type(cond.state, o.desc.type, group)
        story.feed(o)
        lag = o.desc.lag_total if isinstance(o, Seen) else None
        now = clock()
        verdict = tracker.observe(Look(status if status.exists else None, lag), now)
        if verdict.holds:
            return Outcome(group, cond, True, tracker.last, verdict, now - started)
        if deadline.expired:
            break
        source.hurry(tracker.wake_in(now, interval))
    if tracker.last_verdict is None:
        from ..errors import DeadlineError

        raise DeadlineError(f"group {group!r}: no answer within the timeout")
    return Outcome(group, cond, False, tracker.last, tracker.last_verdict, clock() - started)
