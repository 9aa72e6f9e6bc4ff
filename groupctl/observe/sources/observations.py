"""What a source tells the story: typed observations, each with the time it was made.

Every source (the describe poller in source.py; a replay of the coordinator's records; the
probe's own member) yields these, and `RebalanceStory.feed(observation)` turns them into
events (docs/reference/events.md). `source` is the label that goes into the events' envelope ("describe",
"records", "probe"); `at` is wall-clock seconds (a describe's answer, a record's broker
timestamp, the probe's clock).

Of a group, by any source:
    Seen(group, at, source, desc)        the group as it is (observe.model.GroupDescription)
    Missing(group, at, source)           no such group (told as `state` Dead)
    Appeared(group, at, source)          listed now, not at the last listing (`--all`): it
                                         had no members before; its first generation is a
                                         rebalance from nothing
Faults (group None: every group the source follows):
    ContactLost(None, at, source, error) a round failed as a whole; the stories are blind
                                         until the next Seen, which is told as a `snapshot`
    ContactRegained(None, at, source, lost_at)   the first good round after ContactLost
    ContactLate(None, at, source, asked)   a round asked at `asked` answered late (after
                                         the poll interval): each group may have changed
                                         at any time since its last look (sources/contact.py)
Of a group, by a second witness beside the one whose looks the story follows (auto.py):
    StateSeen(group, at, source, state)  a state that witness saw and the story's own looks
                                         cannot show (a classic round's PreparingRebalance
                                         and CompletingRebalance: the records never write
                                         them); told as `state`, the rounds left to the looks
The probe's own member (source "probe"):
    BeforeJoin(group, at, source, desc)  the group as described before the probe joined
    MemberState(group_state, member_state)   the group state the member's state implies
    RebalanceNoticed(reason)             how the member noticed a rebalance
    MemberSynced(generation, member_id, leader_view)   the member synced a generation
    GenerationDescribed(generation, desc)    the group as described for that generation
                                         (None: the describe failed or raced the next one)
"""
from __future__ import annotations

from dataclasses import dataclass

from ..reads.model import GroupDescription


@dataclass(frozen=True)
class Observation:
    group: str | None
    at: float
    source: str


@dataclass(frozen=True)
class Seen(Observation):
    desc: GroupDescription


@dataclass(frozen=True)
class Missing(Observation):
    pass


@dataclass(frozen=True)
class Appeared(Observation):
    pass


@dataclass(frozen=True)
class ContactLost(Observation):
    error: Exception

    def text(self) -> str:
        if self.source == "records":
            return f"lost contact with the records' partition leader ({self.error}); retrying"
        if self.source == "auto":   # sources/auto.py: the records out, describe goes on
            return (f"source auto: the records failed ({self.error}): describe alone from "
                    f"now on, each group told again in full")
        return f"lost contact with the groups' coordinators ({self.error}); retrying"


@dataclass(frozen=True)
class ContactRegained(Observation):
    lost_at: float

    def text(self) -> str:
        if self.source == "records":
            return "reconnected; resuming at the first record not read yet"
        return "reconnected; carrying on from the last snapshot"


@dataclass(frozen=True)
class StateSeen(Observation):
    state: str


@dataclass(frozen=True)
class ContactLate(Observation):
    asked: float

    def text(self) -> str | None:
        return None   # a slow round is no lost contact: nothing to say (sources/contact.py)


@dataclass(frozen=True)
class BeforeJoin(Observation):
    desc: GroupDescription | None


@dataclass(frozen=True)
class MemberState(Observation):
    group_state: str | None
    member_state: str | None = None


@dataclass(frozen=True)
class RebalanceNoticed(Observation):
    reason: str | None


@dataclass(frozen=True)
class MemberSynced(Observation):
    """`leader_view`: the group as the leader assigned it (exact assignments), else None.
    `reason_if_unnoticed`: the reason told when no RebalanceNoticed came this round."""
    generation: int
    member_id: str | None
    leader_view: GroupDescription | None = None
    reason_if_unnoticed: str | None = None


@dataclass(frozen=True)
class GenerationDescribed(Observation):
    generation: int
    desc: GroupDescription | None


FAULTS = (ContactLost, ContactRegained, ContactLate)
