"""`watch --source auto` (the default): the coordinator's records and describe, two
witnesses of the same groups told as one story per group.

    source = AutoSource(cluster, ["orders"], interval=1.0)
    async for o in source.observations(until=t):   # the records' looks, describe's states
        ...
    source.mode        # "records+describe" or "describe" (None until the records answered)

Which witness: the records tail (records_tail.py) starts first. Its first Fetch answered
proves READ on `__consumer_offsets`: both witnesses then (`records+describe`), the
describe poller (poller.py) started beside the tail. TopicAuthorizationError before that
(Metadata, ListOffsets or Fetch of the topic refused), or any other failure of the
records' start (a broker that cannot serve them): describe alone, exactly as `--source
describe` (its own errors, exit codes and retries). Either is said once on stderr
(`notice`), describe alone with why and what it cannot see. The records failing later
(the ACL removed, a record they cannot read) leave describe alone from then on: said once
(ContactLost of source "auto"), every group told again in full at describe's next look.

Both witnesses: the records decide which rounds exist and when each ended (the broker's
timestamps: every generation and epoch, nothing between two looks); the story follows
their looks only. Describe adds what the records cannot say, for classic groups (a
KIP-848 group's records say its states and its rounds' starts themselves):
- the states of a round under way (PreparingRebalance, CompletingRebalance: never
  written), each told once as a `state` event of source "describe" (StateSeen), when the
  look was made after the records' last change of the group (an older look says nothing
  new); a settled state told back by describe only after describe told a round under way
  that the records have not ended (a round that came to nothing: a coordinator moved);
- a classic round's start, to the looks (DescribeLooks.round): the round ending at the record's
  time `ended` began after the last look before it that showed the group settled (or
  missing) and at or before the first look after that one that showed it under way, so
  its duration lies in [ended - that look's answer, ended - the settled look's request];
  never seen under way: [0, ended - the settled look's request]; no settled look: at
  least ended - the first look under way; neither: unknown, as the records alone. Such a
  rebalance says `duration_source: "records+describe"`. A round the records jumped over
  (a generation never synced) is told with its figures unknown, as by the records alone.
The records' timestamps and describe's looks are compared as one clock: the broker's and
this host's clocks must agree (a skew shifts the interval by as much).
"""
from __future__ import annotations

import asyncio
import time
from collections import deque
from dataclasses import dataclass
from typing import AsyncIterator, Callable, Iterable

from ...client.partition_reader import TopicAuthorizationError
from ...errors import AuthError, GroupctlError
from ...events import iso_ts
from ..reads.model import CLASSIC, REBALANCING_STATES, SETTLED_STATES, GroupDescription
from ..story.round import UNKNOWN_DURATION, Duration
from .observations import FAULTS, ContactLost, Missing, Observation, Seen, StateSeen
from .poller import DescribePoller
from .records_tail import RecordsTail

AUTO = "auto"                 # watch --source auto
BOTH = "records+describe"
DESCRIBE_ALONE = "describe"
KEEP = 4096   # looks kept per group at most (a round longer than that many intervals)


@dataclass(frozen=True)
class Look:
    """One describe look at a group: asked at `sent`, answered at `at` (the state was read
    between the two); `state` None: no such group."""
    sent: float
    at: float
    state: str | None


def _ms(seconds: float) -> int:
    return int(round(seconds * 1000))


class DescribeLooks:
    """One classic group's describe looks beside its records (sans-IO: times are given)."""

    def __init__(self) -> None:
        self.looks: deque[Look] = deque(maxlen=KEEP)
        self.changed_at: float | None = None   # the records' last change of the group
        self.changed_before: float | None = None   # the change before it
        self.generation: int | None = None     # the records' generation as of that change
        self.generation_before: int | None = None
        self._under_way = False   # describe told a round under way the records did not end

    def record(self, at: float, generation: int | None) -> None:
        """The records changed the group at `at` (their look: told before describe's)."""
        self.changed_before, self.changed_at = self.changed_at, at
        self.generation_before, self.generation = self.generation, generation
        self._under_way = False

    def look(self, look: Look) -> str | None:
        """A describe look; the state to tell of it (None: nothing the records do not)."""
        settled = look.state is None or look.state in SETTLED_STATES
        if settled:   # the looks before the settled one before this one: no round's bound
            marks = [i for i, old in enumerate(self.looks)
                     if old.state is None or old.state in SETTLED_STATES]
            for _ in range(marks[-1] if marks else 0):
                self.looks.popleft()
        self.looks.append(look)
        if look.state is None or self.changed_at is not None and look.sent <= self.changed_at:
            return None   # no group (the records say so), or read before their last change
        if look.state in REBALANCING_STATES:
            self._under_way = True
            return look.state
        if self._under_way and settled:
            self._under_way = False
            return look.state
        return None

    def round(self, from_generation: int | None, to_generation: int | None
              ) -> tuple[float | None, Duration] | None:
        """(the look that saw the round under way first, the round's duration) of the
        round the records' last change ended; None when it is not the round from their
        change before (rounds jumped over)."""
        ended = self.changed_at
        if ended is None or from_generation != self.generation_before \
                or to_generation != self.generation:
            return None
        before = [look for look in self.looks if look.at < ended]
        settled = [i for i, look in enumerate(before)
                   if look.state is None or look.state in SETTLED_STATES]
        quiet = before[settled[-1]] if settled else None
        after = before[settled[-1] + 1:] if settled else before
        since = self.changed_before
        under_way = next((look for look in after if look.state in REBALANCING_STATES
                          and (since is None or look.sent > since)), None)
        if quiet is not None and under_way is not None:
            return under_way.at, Duration.between(_ms(ended - under_way.at),
                                                  _ms(ended - quiet.sent))
        if quiet is not None:
            return None, Duration.between(0, _ms(ended - quiet.sent))
        if under_way is not None:
            return under_way.at, Duration.at_least(_ms(ended - under_way.at))
        return None, UNKNOWN_DURATION


class AutoSource:
    """The records and describe as one GroupSource (interface.py); see the module doc."""
    label = AUTO

    def __init__(self, cluster, groups: Iterable[str] = (), *, all_groups: bool = False,
                 regex=None, interval: float = 1.0, list_every: float = 5.0,
                 clock: Callable[[], float] = time.time, poll_deadline: float = 10.0,
                 notice: Callable[[str], None] | None = None):
        groups = list(groups)
        self.interval = interval
        self.notice = notice or (lambda text: None)
        self.records = RecordsTail(cluster, groups, all_groups=all_groups, regex=regex,
                                   clock=clock, timeout=poll_deadline)
        self.records.notice = lambda text: self.notice(text)
        self.describe = DescribePoller(cluster, groups, all_groups=all_groups, regex=regex,
                                       interval=interval, list_every=list_every, clock=clock,
                                       poll_deadline=poll_deadline)
        self.describe.on_round = self._described
        self.on_round: Callable[[float, bool], None] | None = None   # describe's rounds
        self.mode: str | None = None
        self.looks: dict[str, DescribeLooks] = {}
        self._round_seconds = 0.0   # the last describe round's: its looks were asked then

    # ---- GroupSource ------------------------------------------------------------------
    @property
    def resumes_exactly(self) -> bool:
        return self.mode != DESCRIBE_ALONE   # the story follows the records' looks

    @property
    def first_round(self) -> asyncio.Event:
        return self.describe.first_round

    @property
    def _told(self):
        return self.describe if self.mode == DESCRIBE_ALONE else self.records

    @property
    def groups(self):
        return self._told.groups

    def follows(self, group: str) -> bool:
        return self._told.follows(group)

    def coordinator(self, group: str):
        return self.describe.coordinator(group)

    def amend(self, event: dict, desc: GroupDescription) -> dict:
        if self.mode == DESCRIBE_ALONE:
            return self.describe.amend(event, desc)
        event = self.records.amend(event, desc)
        looks = self.looks.get(event["group"])
        if event["event"] != "rebalance" or desc.type != CLASSIC or looks is None \
                or event.get("seen") is False or event.get("duration_basis") != "unknown":
            return event
        # told of the records' look the story was just fed: the group's latest change
        found = looks.round(event.get("from_generation"), event.get("to_generation"))
        if found is None or found[1] is UNKNOWN_DURATION:
            return event
        started, duration = found
        event["started"] = None if started is None else iso_ts(started)
        event.update(duration.fields())
        event["duration_source"] = BOTH
        return event

    # ---- the observations -------------------------------------------------------------
    async def observations(self, *, until: float | None = None) -> AsyncIterator[Observation]:
        queue: asyncio.Queue = asyncio.Queue()
        read = asyncio.Event()   # a Fetch of the records answered: READ proven
        self.records.on_round = lambda seconds, failed: None if failed else read.set()
        pumps = [asyncio.ensure_future(_pump("records", self.records.observations(until=until),
                                             queue, read))]
        try:
            first = asyncio.ensure_future(read.wait())
            await asyncio.wait([pumps[0], first], return_when=asyncio.FIRST_COMPLETED)
            first.cancel()
            if not read.is_set():
                try:
                    pumps[0].result()
                except GroupctlError as exc:   # refused, or not readable: as describe would
                    self._alone(exc)
                    async for o in self.describe.observations(until=until):
                        yield o
                return   # (--duration ended the start)
            self.mode = BOTH
            self.notice(f"source auto: the coordinator's records (__consumer_offsets) with "
                        f"describe every {self.interval:g} s: the rounds and their ends from "
                        f"the records, a classic round's start and states from describe")
            pumps.append(asyncio.ensure_future(
                _pump("describe", self.describe.observations(until=until), queue, None)))
            running = len(pumps)
            while running:
                witness, o = await queue.get()
                if o is None:
                    running -= 1
                elif isinstance(o, BaseException):
                    if not (isinstance(o, GroupctlError) and self._records_out(witness, o)):
                        raise o
                    running -= 1   # describe alone from now on; the stories told again
                    yield ContactLost(None, self.describe.clock(), AUTO, o)
                else:
                    for told in self._merge(witness, o):
                        yield told
        finally:
            for pump in pumps:
                pump.cancel()
            await asyncio.gather(*pumps, return_exceptions=True)

    def _alone(self, why: Exception) -> None:
        self.mode = DESCRIBE_ALONE
        may = "may not" if isinstance(why, TopicAuthorizationError) else "could not"
        self.notice(
            f"source auto: describe alone every {self.interval:g} s, the records {may} be "
            f"read ({why}): describe cannot see a round shorter than the interval that "
            f"changes nothing a look shows, nor time the rounds a classic group completes "
            f"between two looks (counted only when the members' subscriptions carry their "
            f"generation)")

    def _records_out(self, witness: str, error: GroupctlError) -> bool:
        """The records failed during the watch: whether describe goes on alone (any
        failure of theirs but a group the principal may not describe, which describe
        would refuse as well)."""
        if witness != "records" or \
                isinstance(error, AuthError) and not isinstance(error, TopicAuthorizationError):
            return False
        self.mode = DESCRIBE_ALONE
        return True

    def _described(self, seconds: float, failed: bool) -> None:
        self._round_seconds = seconds
        if self.on_round is not None:
            self.on_round(seconds, failed)

    def _merge(self, witness: str, o: Observation) -> list[Observation]:
        """One witness's observation into the story's: the records' as they are (each
        change of a classic group noted), describe's faults said, its looks kept
        (classic groups) and the states the records cannot tell passed on."""
        if self.mode == DESCRIBE_ALONE and witness == "describe":
            return [o]   # the records went out during the watch
        if witness == "records" or isinstance(o, FAULTS):
            if isinstance(o, Missing) or isinstance(o, Seen) and o.desc.type == CLASSIC:
                assert o.group is not None
                generation = o.desc.generation if isinstance(o, Seen) else None
                self.looks.setdefault(o.group, DescribeLooks()).record(o.at, generation)
            return [o]
        if isinstance(o, Seen) and o.desc.type == CLASSIC or isinstance(o, Missing):
            assert o.group is not None
            state = o.desc.state if isinstance(o, Seen) else None
            looks = self.looks.setdefault(o.group, DescribeLooks())
            told = looks.look(Look(o.at - self._round_seconds, o.at, state))
            if told is not None and self.records.follows(o.group):
                return [StateSeen(o.group, o.at, o.source, told)]
        return []


async def _pump(witness: str, source: AsyncIterator[Observation], queue: asyncio.Queue,
                first: asyncio.Event | None) -> None:
    """A witness's observations onto `queue` as (witness, o); (witness, None) at its end,
    (witness, the exception) when it failed."""
    try:
        async for o in source:
            if first is not None:
                first.set()
            queue.put_nowait((witness, o))
    except asyncio.CancelledError:
        raise
    except BaseException as exc:   # noqa: BLE001 - handed to the merge, raised there
        if first is not None and not first.is_set():
            raise
        queue.put_nowait((witness, exc))
        return
    queue.put_nowait((witness, None))
