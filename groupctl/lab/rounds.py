"""The rounds a workload's own members went through, as `rebalance` event records (the
shape `watch --record` writes, docs/reference/events.md), so `analyze --events` counts a
`lab workload --record` file's rounds as it counts a watch's.

    rounds = WorkloadRounds("g")           # or WorkloadRounds("g", "consumer")
    rounds.joining(time.time())            # a member starts (or leaving(): stops)
    for record in rounds.take(event):      # each `assignment` event a member recorded
        write(record)                      # the rounds before its generation, now over
    for record in rounds.flush():          # at the end: the rounds still open
        write(record)

A classic round is one generation a member joined (its JoinGroup answer, joined()) or
was assigned in: it starts at the first revoke, loss or member start or stop since the
last round began (what set it off, as the members saw it; null when nothing did since)
and ends at the last join answer or assign of its generation a member got. A round is
told once a member is in a later generation, or at flush(). Only what the members saw
is known: an assign without a generation (a consumer that could not tell it) is no
round; `members_before` and `moved_partitions` are null unless the round before it was
seen (and, for the partitions, both rounds' assignments).

A consumer group's round (`WorkloadRounds(g, "consumer")`, KIP-848) is one group epoch
some member reached: a member's epoch is always one the coordinator computed a target
assignment for, and the members that target holds reach it at their next heartbeat,
unless a newer target comes first (then no member tells that round: a workload churning
every few seconds gives them time). It starts at the first member start, stop or loss
since the last round began (a revoke is a member catching up with a round already
begun: no start) and ends when the last member that reached the epoch reached it (its
first heartbeat answer at that epoch, joined()) or was assigned something at it (an
assign's `member_epoch`). A joining member's first answer at an epoch another member had
reached already is no part of that round (its target was computed before the join).
A round comes from the epoch of the round told before it (null for the first);
`moved_partitions` is null: a member whose partitions did not change gets no assign.
Sans-IO: the caller serialises calls (the members' callbacks run on their own threads).
"""
from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field


def _seconds(iso: str) -> float:
    return _dt.datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


def _iso(ts: float) -> str:
    return (_dt.datetime.fromtimestamp(ts, _dt.timezone.utc)
            .isoformat(timespec="milliseconds").replace("+00:00", "Z"))


@dataclass
class _Round:
    generation: int
    started: float | None
    ended: float
    owners: dict = field(default_factory=dict)   # (topic, partition) -> member id
    members: set = field(default_factory=set)


class WorkloadRounds:
    """See the module doc."""

    def __init__(self, group: str, protocol: str = "classic"):
        self.group = group
        self.type = "classic" if protocol == "classic" else "consumer"
        self._start: float | None = None      # what set off the next round, if anything yet
        self._open: dict[int, _Round] = {}
        self._last: _Round | None = None      # the last round told
        self._epochs: dict[str, int] = {}     # consumer: each member's last member epoch

    def joining(self, ts: float) -> None:
        """A member starts (at `ts`, epoch seconds): its join sets off a round."""
        self._set_off(ts)

    def leaving(self, ts: float) -> None:
        """A member is closed (at `ts`): its leave sets off a round."""
        self._set_off(ts)

    def _set_off(self, ts: float) -> None:
        if self._start is None or ts < self._start:
            self._start = ts

    def take(self, event: dict) -> list[dict]:
        """One `assignment` event; returns the rebalance records of the rounds it ends."""
        ts = _seconds(event["ts"])
        kip848 = self.type == "consumer"
        if event.get("callback") != "assign":
            if not kip848 or event.get("callback") == "lost":
                self._set_off(ts)
            return []
        if kip848 and not event.get("added"):
            return []   # librdkafka's empty assign after a revoke, before the epoch moved on
        member = event.get("member_id") or event.get("client_id")
        told, now = self._in(event.get("member_epoch" if kip848 else "generation"), ts, member)
        if now is not None and not kip848:
            for tp in event.get("assigned") or []:
                for p in tp["partitions"]:
                    now.owners[(tp["topic"], p)] = member
        return told

    def joined(self, ts: float, member: str | None, generation: int) -> list[dict]:
        """A member's JoinGroup answer named `generation` (at `ts`): a generation the next
        join may cut short before any member is assigned in it is a round all the same.
        Consumer protocol: a heartbeat answer's member epoch; only a member's first answer
        at an epoch counts (each heartbeat repeats it)."""
        if self.type == "consumer" and member is not None:
            known = self._epochs.get(member)
            self._epochs[member] = generation
            if known == generation:
                return []
            # a member's first answer at an epoch another member reached before it joined:
            # the coordinator had not yet computed a target with it (it joins the next round)
            if known is None and (generation in self._open or (
                    self._last is not None and generation <= self._last.generation)):
                return []
        return self._in(generation, ts, member)[0]

    def _in(self, generation: int | None, ts: float, member: str | None):
        """(the records of the rounds before `generation`, now over; its round, or None
        when it is no round or was told already)."""
        if generation is None or (self._last is not None
                                  and generation <= self._last.generation):
            return [], None
        told = [self._tell(self._open.pop(g)) for g in sorted(self._open) if g < generation]
        now = self._open.get(generation)
        if now is None:
            now = self._open[generation] = _Round(generation, self._start, ts)
            self._start = None
        now.ended = max(now.ended, ts)
        if member:
            now.members.add(member)
        return told, now

    def flush(self) -> list[dict]:
        """The rounds still open (the workload ends)."""
        told = [self._tell(self._open[g]) for g in sorted(self._open)]
        self._open.clear()
        return told

    def _tell(self, r: _Round) -> dict:
        # a consumer group's round may take several epoch bumps (two joins before one
        # target): it comes from the epoch of the round before (null before the first)
        kip848 = self.type == "consumer"
        before = self._last if self._last is not None and (
            kip848 or self._last.generation == r.generation - 1) else None
        came_from = (None if before is None else before.generation) if kip848 \
            else r.generation - 1
        moved = None
        if before is not None and before.owners and r.owners:   # both rounds' assignments
            tps = set(before.owners) | set(r.owners)
            moved = sum(1 for tp in tps if before.owners.get(tp) != r.owners.get(tp))
        self._last = r
        started, ended = None if r.started is None else _iso(r.started), _iso(r.ended)
        return {
            "v": 1, "ts": _iso(r.ended), "source": "workload", "group": self.group,
            "event": "rebalance", "type": self.type,   # a generation, or a group epoch
            "from_generation": came_from,
            "to_generation": r.generation,
            "started": started, "ended": ended,   # the duration: of the times as written
            "duration_ms": None if started is None else
            round((_seconds(ended) - _seconds(started)) * 1000),
            "members_before": None if before is None else sorted(before.members),
            "members_after": sorted(r.members), "moved_partitions": moved, "reason": None,
        }
