"""What both halves of `force-rebalance` share (classic: force_rebalance.py; consumer
groups: force_consumer.py): the snapshot and phase callbacks, what was seen of the group,
and the budgets (the clock is groupctl.clock's, the driver's). Its own module so the two
halves do not import each other."""
from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, AsyncIterator, Awaitable, Callable

if TYPE_CHECKING:  # pragma: no cover
    from ...observe.reads.model import GroupDescription

STABLE_POLL_S = 0.02     # snapshots until Stable again
LEAVE_BUDGET_S = 5.0     # the LeaveGroup on the way out, also after the deadline

Snapshot = AsyncIterator["GroupDescription | None"]   # the group's looks (observe.sources.poller.looks); None: gone
Phase = Callable[[str, dict], "Awaitable[None] | None"]


@dataclass
class Seen:
    """What the driver saw, for the report and for a timeout's message."""

    states: list[str | None] = field(default_factory=list)
    last: GroupDescription | None = None

    def note(self, desc) -> None:
        self.last = desc
        state = getattr(desc, "state", None) if desc is not None else "missing"
        if not self.states or self.states[-1] != state:
            self.states.append(state)


async def announce(phase: Phase, name: str, info: dict) -> None:
    """Tell the caller which phase starts (it may wait: a test pause, a progress line)."""
    result = phase(name, info)
    if asyncio.iscoroutine(result):
        await result


def last_seen(seen: Seen) -> str:
    last = seen.last
    if last is None:
        return "the group is gone" if seen.states[-1:] == ["missing"] else "nothing"
    members = ", ".join(m.member_id for m in getattr(last, "members", [])) or "none"
    return (f"state {last.state}, {len(last.members)} members ({members}); states seen: "
            f"{', '.join(s for s in dedup(seen.states) if s)}")


def dedup(states: list) -> list:
    out: list = []
    for s in states:
        if not out or out[-1] != s:
            out.append(s)
    return [str(s) for s in out]
