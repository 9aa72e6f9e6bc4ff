"""Who holds which partitions, over members' assignments: the one test of a member at its
target (story_data.at_target over a description; the reducer's MemberStatus over events;
metrics and the live view read the reducer's), and how many partitions a round moved."""
from __future__ import annotations


def holds_target(held, target) -> bool:
    """The one test of a member at its target (story_data.at_target; reducer, metrics, live
    view): it holds its target ({topic: partitions}, tp_list, streams task set; None: held)."""
    return target is None or _held_set(held) == _held_set(target)


def _held_set(items) -> frozenset:
    if isinstance(items, dict):
        return frozenset((t, p) for t, ps in items.items() for p in ps)
    return frozenset(items) if isinstance(items, (set, frozenset)) else frozenset(
        (i["topic"], p) for i in items or () for p in i.get("partitions") or ())


def moved_partitions(before: dict[str, dict[str, set[int]]],
                     after: dict[str, dict[str, set[int]]]) -> int:
    """How many partitions have other holders (or none) after than before: each member's
    {topic: partitions} before and after a rebalance. A partition normally has one holder;
    in a share group several members may hold it, and it counts as moved when that set of
    members changed."""
    def holders(assignments):
        out: dict[tuple[str, int], set[str]] = {}
        for m, a in assignments.items():
            for t, ps in a.items():
                for p in ps:
                    out.setdefault((t, p), set()).add(m)
        return out

    was, now = holders(before), holders(after)
    return sum(1 for tp in set(was) | set(now) if was.get(tp) != now.get(tp))
