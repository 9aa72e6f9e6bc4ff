"""Which groups this principal may describe, before their records are shown.

Read on `__consumer_offsets` lets a principal fetch every group's records (members, client
ids, hosts, assignments), whatever the group ACLs say. `history` and the records watch show
a group only when the broker would describe it to this principal: FindCoordinator for a
group needs DESCRIBE on it (Kafka's KafkaApis checks it, as DescribeGroups,
ConsumerGroupDescribe and ListGroups do), so one batched FindCoordinator answers for
every group at once; a refused group answers GROUP_AUTHORIZATION_FAILED.
"""
from __future__ import annotations

from ...errors import AuthError


def refused_message(groups, why: AuthError | None = None) -> str:
    """One line naming the groups refused and the ACL that would show them."""
    names = ", ".join(repr(g) for g in groups)
    return (f"not authorized to describe group{'s' if len(groups) != 1 else ''} {names}"
            + (f" ({why})" if why is not None else "")
            + ": their records in __consumer_offsets are shown only to a principal that "
              "may describe them (DESCRIBE on the group)")


async def describable(cluster, groups, *, deadline=None) -> tuple[list[str], dict[str, AuthError]]:
    """(the groups this principal may describe, {refused group: the broker's error}).
    Other errors (no coordinator in time, the broker unreachable) are raised."""
    remaining = list(dict.fromkeys(groups))
    refused: dict[str, AuthError] = {}
    while remaining:
        try:   # the groups found are cached: asking again costs nothing
            await cluster.find_coordinators(remaining, deadline=deadline)
        except AuthError as exc:
            group = getattr(exc, "group", None)
            if not isinstance(group, str) or group not in remaining:   # not about one group (e.g. SASL): the caller's
                raise
            refused[group] = exc
            remaining.remove(group)
        else:
            break
    allowed = [g for g in dict.fromkeys(groups) if g not in refused]
    return allowed, refused
