"""Feeding the one story in unit tests: what a describe poll hands it."""
from __future__ import annotations

from groupctl.observe.reads.model import GroupDescription
from groupctl.observe.sources.observations import Seen


def look(story, desc, at=None):
    """One describe look at `desc` (at: the story's clock when not given)."""
    at = story._clock() if at is None else at
    return story.feed(Seen(desc.group, at, "describe", desc))


def classic(state, gen, *members):
    return GroupDescription("g", type="classic", state=state, protocol="range",
                            generation=gen, members=list(members))


def consumer(state, epoch, assignment_epoch, *members):
    return GroupDescription("g", type="consumer", state=state, protocol="uniform",
                            group_epoch=epoch, assignment_epoch=assignment_epoch,
                            members=list(members))


class ListedSource:
    """A source of the test's own: the Watcher asks it only what sources/interface.py says
    (group "g", the given observations in order)."""
    label = "describe"   # a source events may name
    first_round = None

    def __init__(self, observations, resumes_exactly=False):
        self._observations, self.resumes_exactly = observations, resumes_exactly
        self.groups = {"g": None}

    async def observations(self, *, until=None):
        for o in self._observations:
            yield o

    def follows(self, group):
        return group in self.groups

    def amend(self, event, desc):
        return event
