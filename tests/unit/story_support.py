"""Feeding the one story in unit tests: what a describe poll hands it."""
from __future__ import annotations

from groupctl.observe.sources.observations import Seen


def look(story, desc, at=None):
    """One describe look at `desc` (at: the story's clock when not given)."""
    at = story._clock() if at is None else at
    return story.feed(Seen(desc.group, at, "describe", desc))
