"""Metrics at fleet size: which groups get per-group series (GroupSelection), and the
fleet-level series every scrape has whatever the selection (FleetCounts).

Per-group series for 100,000 groups are millions of series: a Prometheus that scrapes
them pays for each. The fleet-level families answer "how is the fleet" in a few dozen
series: groups by type and state, groups rebalancing now, rebalances by reason kind,
unowned partition-seconds. Per-group series are for the groups a selection names
(kminion's convention: allowed and ignored regexes, fully matched; exact names):

- `--metrics-groups NAME` / `--metrics-regex RE`: those groups, as many as match;
- `--metrics-ignore-regex RE`: never these (wins over the others);
- neither given: every group up to DEFAULT_LIMIT groups, in the order first seen (a
  group that has series keeps them; groups beyond the limit have fleet-level series only,
  and `groupctl_groups_without_series` counts them). Today's fleets of up to a thousand
  groups see every series as before; a fleet of 100,000 costs a thousand groups' series.
"""
from __future__ import annotations

import re
from collections.abc import Iterable

from .metrics_text import Family, labels_text, sample_line
from ..story.reasons import REASON_KINDS, kind as reason_kind

DEFAULT_LIMIT = 1000

# the states in which a group of each type is rebalancing (its members do not all hold
# their target assignment, or the coordinator is computing one)
REBALANCING = frozenset({"PreparingRebalance", "CompletingRebalance", "Assigning",
                         "Reconciling", "NotReady"})

GROUPS = Family("groupctl_fleet_groups", "gauge",
                "Groups seen, by type and state (every group, whatever --metrics-regex)")
REBALANCING_NOW = Family("groupctl_fleet_groups_rebalancing", "gauge",
                         "Groups in a rebalancing state now, by type")
REBALANCES = Family("groupctl_fleet_rebalances", "counter",
                    "Rebalances of all groups, by type and reason kind")
UNOWNED = Family("groupctl_fleet_unowned_partition_seconds", "counter",
                 "Partition-seconds without an owner in the rebalances of all groups, "
                 "by type and basis")
WITHOUT = Family("groupctl_groups_without_series", "gauge",
                 "Groups seen that have fleet-level series only (not selected by "
                 "--metrics-groups/--metrics-regex, ignored, or past the default limit)")


class GroupSelection:
    """Which groups have per-group series (see the module doc); decided once per group."""

    def __init__(self, names: Iterable[str] = (), allowed: Iterable[str] = (),
                 ignored: Iterable[str] = (), limit: int | None = DEFAULT_LIMIT):
        self.names = frozenset(names)
        self.allowed = [re.compile(r) for r in allowed]
        self.ignored = [re.compile(r) for r in ignored]
        self.explicit = bool(self.names or self.allowed)
        self.limit = None if self.explicit else limit
        self.everyone = not self.explicit and not self.ignored and self.limit is None
        self._decided: dict[str, bool] = {}
        self.chosen: list[str] = []   # the selected groups, in the order first seen

    @classmethod
    def every_group(cls) -> GroupSelection:
        return cls(limit=None)

    def __call__(self, group: str) -> bool:
        if self.everyone:
            return True
        chosen = self._decided.get(group)
        if chosen is None:
            chosen = self._decided[group] = self._decide(group)
            if chosen:
                self.chosen.append(group)
        return chosen

    def _decide(self, group: str) -> bool:
        if any(r.fullmatch(group) for r in self.ignored):
            return False
        if self.explicit:
            return group in self.names or any(r.fullmatch(group) for r in self.allowed)
        return self.limit is None or len(self.chosen) < self.limit

    @property
    def selected(self) -> int:
        return len(self.chosen)

    @property
    def decided(self) -> int:
        return len(self._decided)


class FleetCounts:
    """Counters of all groups together, counted as the events come (a scrape never sums
    100,000 groups' counters)."""

    def __init__(self) -> None:
        self.rebalances: dict[tuple[str, str], int] = {}
        self.unowned: dict[tuple[str, str], float] = {}

    def event(self, e: dict, kind: str) -> None:
        if kind != "unknown" and (kind, REASON_KINDS[0]) not in self.rebalances:
            for reason in REASON_KINDS:   # from 0, so increase() sees the first one
                self.rebalances[(kind, reason)] = 0
        if e.get("event") != "rebalance":
            return
        key = (kind, reason_kind(e.get("reason")))
        self.rebalances[key] = self.rebalances.get(key, 0) + 1
        if e.get("unowned_partition_ms") is not None:
            basis = (kind, str(e.get("unowned_basis")))
            self.unowned[basis] = self.unowned.get(basis, 0.0) + e["unowned_partition_ms"] / 1000


def fleet_text(statuses: Iterable, counts: FleetCounts, cluster: str | None,
               without_series: int) -> str:
    """The fleet-level families' text, from the reducer's statuses (one pass) and the
    fleet's counters."""
    base = (("cluster", cluster),) if cluster else ()
    by_state: dict[tuple[str, str], int] = {}
    for status in statuses:
        if status.state is None:
            continue   # followed, not yet seen
        key = (status.type or "unknown", status.state)
        by_state[key] = by_state.get(key, 0) + 1
    rebalancing: dict[str, int] = {}
    for (kind, state), n in by_state.items():
        rebalancing.setdefault(kind, 0)
        if state in REBALANCING:
            rebalancing[kind] += n
    out = [GROUPS.header()]
    out += [sample_line(GROUPS.name, labels_text(base + (("type", t), ("state", s))), n)
            for (t, s), n in sorted(by_state.items())]
    out.append(REBALANCING_NOW.header())
    out += [sample_line(REBALANCING_NOW.name, labels_text(base + (("type", t),)), n)
            for t, n in sorted(rebalancing.items())]
    out.append(REBALANCES.header())
    out += [sample_line(REBALANCES.name + "_total",
                        labels_text(base + (("type", t), ("reason", r))), n)
            for (t, r), n in sorted(counts.rebalances.items())]
    out.append(UNOWNED.header())
    out += [sample_line(UNOWNED.name + "_total", labels_text(base + (("type", t), ("basis", b))), v)
            for (t, b), v in sorted(counts.unowned.items())]
    out += [WITHOUT.header(), sample_line(WITHOUT.name, labels_text(base), without_series)]
    return "".join(out)
