"""`list`: every group of the cluster, from ListGroups sent to every broker (each broker
lists only the groups it coordinates), merged, deduplicated and sorted by name.

Filters: states and types are sent to the brokers that take them (ListGroups v4 states,
v5 types) and applied here as well, case-insensitively, so older brokers filter the same.
A group listed by a broker without v5 has type None (unknown); a types filter asks for v5
and is refused (exit 2, naming the broker) where a broker has no group types (Kafka 3.7),
never answered "no groups". Never writes to the cluster.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...client.interface import ClusterLike
from ...client.errors import UnsupportedVersionError, kafka_error
from ...errors import GroupctlError, UsageError
from ...protocol.messages import LIST_GROUPS
from .errors import PartialFailure

if TYPE_CHECKING:  # pragma: no cover - decoded bodies, for the type checker
    from ...protocol.bodies import ListGroupsResponse

TYPES_VERSION = 5  # ListGroups' first version with group types (Kafka 3.8, KIP-848)

# The states and types Kafka knows, in Kafka's spelling (filters are matched to these).
STATES = ("Empty", "Stable", "PreparingRebalance", "CompletingRebalance", "Assigning",
          "Reconciling", "Dead", "NotReady", "Unknown")
TYPES = ("classic", "consumer", "share", "streams")


@dataclass(frozen=True)
class GroupListing:
    group: str
    state: str | None
    type: str | None
    protocol_type: str | None
    coordinator_id: int | None = None

    def to_dict(self) -> dict:
        return {"group": self.group, "state": self.state, "type": self.type,
                "protocol_type": self.protocol_type}


@dataclass
class ListResult:
    groups: list[GroupListing]
    failures: dict[int, GroupctlError]  # broker id -> why it could not list its groups


def canonical(values, known: tuple[str, ...]) -> list[str]:
    """User filter values in Kafka's spelling where known (`stable` -> `Stable`)."""
    by_lower = {k.lower(): k for k in known}
    return [by_lower.get(v.strip().lower(), v.strip()) for v in values if v.strip()]


def _matches(listing: GroupListing, states: list[str], types: list[str],
             regex: re.Pattern | None) -> bool:
    if states and (listing.state or "").lower() not in {s.lower() for s in states}:
        return False
    if types and (listing.type or "").lower() not in {t.lower() for t in types}:
        return False
    return regex is None or regex.search(listing.group) is not None


def _listings(node_id: int, resp: ListGroupsResponse) -> list[GroupListing]:
    return [GroupListing(g["group_id"], g.get("group_state") or None,
                         g.get("group_type") or None, g.get("protocol_type") or None, node_id)
            for g in resp.get("groups") or []]


async def list_groups(cluster: ClusterLike, *, states=(), types=(), regex: re.Pattern | None = None,
                      deadline=None) -> ListResult:
    """Groups of every broker that answered, filtered and sorted; brokers that failed are
    in `failures`. Raises the error when no broker answered."""
    states, types = canonical(states, STATES), canonical(types, TYPES)
    body = {"states_filter": states, "types_filter": types}
    answers = await cluster.for_each_broker(LIST_GROUPS, body, deadline=deadline,
                                            min_version=TYPES_VERSION if types else 0)
    untyped = sorted(n for n, r in answers.items() if isinstance(r, UnsupportedVersionError))
    if types and untyped:
        raise UsageError(f"--type needs group types (ListGroups v{TYPES_VERSION}, Kafka 3.8 or "
                         f"later); broker {', '.join(map(str, untyped))} lists groups without "
                         "their type: leave out --type")
    found: dict[str, GroupListing] = {}
    failures: dict[int, GroupctlError] = {}
    for node_id, resp in sorted(answers.items()):
        if isinstance(resp, GroupctlError):
            failures[node_id] = resp
            continue
        if resp.get("error_code"):
            failures[node_id] = kafka_error("ListGroups", resp["error_code"], f"broker {node_id}")
            continue
        for listing in _listings(node_id, resp):
            if _matches(listing, states, types, regex):
                found.setdefault(listing.group, listing)
    if failures and len(failures) == len(answers):
        raise next(iter(failures.values()))
    return ListResult(sorted(found.values(), key=lambda g: g.group), failures)


def failures_error(failures: dict[int, GroupctlError]) -> PartialFailure | None:
    """One error (exit 7) naming the brokers whose groups are missing from the list."""
    if not failures:
        return None
    why = "; ".join(f"broker {n}: {e}" for n, e in sorted(failures.items()))
    return PartialFailure(f"the list is incomplete: {why}", failures)
