"""One snapshot of one group, as observe.model describes it: what the probe takes after each
generation (and the passive watcher at each poll) to feed the RebalanceStory (story.py).

Cheap on purpose: one DescribeGroups to the coordinator, no offsets, no lag."""
from __future__ import annotations

from ..protocol.errors import ErrorCode
from . import model


async def describe_group(cluster, group: str) -> model.GroupDescription:
    """The group as DescribeGroups shows it. A group that does not exist comes back Dead
    (v<6) or with GROUP_ID_NOT_FOUND (v6): both are a Dead description, no error. (A
    KIP-848 group shows Dead here too; its ConsumerGroupDescribe snapshot comes with the
    passive watcher.)"""
    from ..protocol.messages import DESCRIBE_GROUPS

    resp = await cluster.send_to_coordinator(group, DESCRIBE_GROUPS, {
        "groups": [group], "include_authorized_operations": False})
    for entry in resp.get("groups") or ():
        if entry.get("group_id") != group:
            continue
        if entry.get("error_code", ErrorCode.NONE) != ErrorCode.NONE:
            break
        return model.classic_group(entry)
    return model.GroupDescription(group=group, type=model.CLASSIC, state="Dead")
