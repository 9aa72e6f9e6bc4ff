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


def told_envelope(event: Event, o: obs.Observation, group: str) -> dict:
    return envelope(event, group=group, cluster=None, source=o.source, at=o.at)
