"""One group's current state in the read model (model.GroupDescription), cheaply, in one
look: the group before a steering command changes it, and (`describe_group`) the classic
snapshot the probe takes before it joins and after each generation, to feed the
RebalanceStory (story.py). Commands that follow a group over time take their looks from
the one describe source instead (source.py: watch, wait, force-rebalance's waits, the
KIP-848 probe).

    desc = await group_snapshot(cluster, "g")                  # None: the group does not exist
    desc = await group_snapshot(cluster, "g", offsets=True)    # + committed / log-end / lag

Both are observe.describe.describe_groups, the one describe path: its per-type DESCRIBERS
(classic, consumer, share, streams) batched per coordinator, retried when the coordinator
moves. Without `offsets` only the describe APIs are asked (`offsets=False`). Read-only.
"""
from __future__ import annotations

from ...client.interface import ClusterLike
from ...errors import GroupctlError, NotFoundError
from . import model


async def group_snapshot(cluster: ClusterLike, group: str, *, offsets: bool = False, deadline=None,
                         listing=None) -> model.GroupDescription | None:
    """`group` as describe shows it (see the module doc); None when it does not exist.
    Any other failure (not authorized, the deadline) is raised."""
    from .describe import describe_groups

    result = await describe_groups(cluster, [group], deadline=deadline, offsets=offsets,
                                   listings={group: listing} if listing is not None else None)
    if result.groups:
        return result.groups[0]
    error: GroupctlError | None = result.failures.get(group)
    if error is None or isinstance(error, NotFoundError):
        return None
    raise error


async def describe_group(cluster: ClusterLike, group: str) -> model.GroupDescription:
    """The group as DescribeGroups shows it (the probe is a classic member: only the classic
    describe API is asked), no offsets. A group that does not exist, or any failure, is a
    Dead description (the probe then joins blind, as it always did)."""
    from .listing import GroupListing

    try:
        desc = await group_snapshot(cluster, group, listing=GroupListing(
            group, None, model.CLASSIC, None))
    except GroupctlError:
        desc = None
    if desc is None or desc.type != model.CLASSIC:
        return model.GroupDescription(group=group, type=model.CLASSIC, state="Dead")
    return desc


# Where KIP-848 consumer groups are: on by default from Kafka 4.0; in 3.8 and 3.9 a
# preview a broker turns on; 3.7's early access is not a protocol a client can rely on.
KIP848_NEEDS = ("Kafka 4.0 or later, or 3.8/3.9 with "
                "group.coordinator.rebalance.protocols=classic,consumer")


async def kip848_refusal(cluster: ClusterLike, deadline=None) -> str | None:
    """None when the cluster serves KIP-848 consumer groups; else why not, in one line.
    Asks ConsumerGroupDescribe of a group nobody has: a broker that advertises the API but
    has the protocol off (3.8, 3.9) answers UNSUPPORTED_VERSION before looking for a
    coordinator, so any broker's answer tells."""
    from ...client.errors import UnsupportedVersionError
    from ...protocol.errors import ErrorCode
    from ...protocol.messages import CONSUMER_GROUP_DESCRIBE

    try:
        resp = await cluster.request(CONSUMER_GROUP_DESCRIBE, {
            "group_ids": ["groupctl-kip848-check"], "include_authorized_operations": False},
            deadline=cluster.deadline(deadline))
    except UnsupportedVersionError:
        return f"the broker has no consumer groups: KIP-848 needs {KIP848_NEEDS}"
    codes = {g["error_code"] for g in resp.get("groups") or ()}
    if ErrorCode.UNSUPPORTED_VERSION in codes:
        return f"consumer groups are not enabled on this broker: KIP-848 needs {KIP848_NEEDS}"
    return None
