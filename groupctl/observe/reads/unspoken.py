"""Groups of a type the coordinator can describe only in versions groupctl does not speak
(Kafka 4.0's early-access share groups: ShareGroupDescribe v0; groupctl speaks v1, Kafka
4.1's): describe_groups finds no such group, and ListGroups says whether it is one. Such
a group is one line naming what is missing (exit 7), never "not found"."""
from __future__ import annotations

from ...client.errors import UnsupportedVersionError
from ...client.interface import ClusterLike
from ...errors import GroupctlError
from . import model

# The first release whose describe API of a group type groupctl speaks.
FIRST_RELEASE = {model.SHARE: "Kafka 4.1", model.STREAMS: "Kafka 4.1"}


async def of_unspoken_types(cluster: ClusterLike, groups: dict[str, dict],
                            failures: dict, d) -> None:
    """Groups no describe API found, on a coordinator that offers another type's describe
    API only in versions groupctl does not speak: ListGroups says whether they are of that
    type. Such a group is one line naming what is missing, never "not found"."""
    from .listing import list_groups

    types = sorted({t for unspoken in groups.values() for t in unspoken})
    try:
        listed = await list_groups(cluster, types=types, deadline=d)
    except GroupctlError:
        return   # no group types (or no answer): "not found" stands
    kinds = {x.group: x.type for x in listed.groups}
    for g, unspoken in groups.items():
        kind = kinds.get(g)
        if kind is not None and kind in unspoken:
            api, (lo, hi) = unspoken[kind]
            offers = f"v{lo}" if lo == hi else f"v{lo}-v{hi}"
            failures[g] = UnsupportedVersionError(api.name, (
                f"group {g!r} is a {kind} group: {kind} groups need "
                f"{FIRST_RELEASE.get(kind, 'a newer Kafka')} or later; this broker offers "
                f"{api.name} {offers}"))
