"""How a story tells (observe/story/story.py): each event into its envelope (a `Tell`: the
Watcher's adds the cluster and what its source cannot say) and through the one fold of the
group's state (observe/state/reducer.py GroupStatus.apply), in the order told."""
from __future__ import annotations

from typing import Callable

from ...events import Event, envelope
from ..sources import observations as obs
from ..state.reducer import GroupStatus


class Was:
    """The group as told before a look, which the look's snapshot (if any) retells: what
    the look's state, type and epochs are told against."""
    __slots__ = ("state", "type", "epochs")

    def __init__(self, status: GroupStatus):
        self.state, self.type, self.epochs = status.state, status.type, status.epochs


Tell = Callable[[Event, obs.Observation, str], dict]


_NONE: list[dict] = []   # told nothing since `begin` (shared, never appended to)


class Telling:
    """One story's telling: `begin` at each observation, then each list of events it
    decides, through `__call__`, into envelopes folded into `status` in order."""
    __slots__ = ("group", "status", "told", "_tell", "_o", "_first")

    def __init__(self, group: str, status: GroupStatus, tell: Tell | None = None):
        self.group, self.status = group, status
        self._tell = tell or told_envelope
        self.told: list[dict] = _NONE   # the envelopes told since `begin`, until taken
        self._o: obs.Observation | None = None
        self._first: Callable[[], object] | None = None

    def begin(self, o: obs.Observation, before_first: Callable[[], object] | None = None) -> None:
        """`before_first`: called once before the observation's first event is folded (what
        the story reads of the group as it stood before the observation)."""
        self.told, self._o = _NONE, o   # no list per look: a fleet's looks mostly tell nothing
        self._first = before_first

    def end(self) -> None:
        self._o = self._first = None

    def take(self) -> list[dict]:
        """The envelopes told, forgotten here (a records watch's story may hear nothing
        more for hours: what it told last is not kept)."""
        told, self.told = self.told, _NONE
        return [] if told is _NONE else told   # the shared list never leaves

    def __call__(self, events: list[Event]) -> list[Event]:
        o = self._o
        assert o is not None
        if events and self._first is not None:
            first, self._first = self._first, None
            first()
        if events and self.told is _NONE:
            self.told = []
        for event in events:
            told = self._tell(event, o, self.group)
            self.status.apply(told)
            self.told.append(told)
        return events


def told_envelope(event: Event, o: obs.Observation, group: str) -> dict:
    return envelope(event, group=group, cluster=None, source=o.source, at=o.at)
