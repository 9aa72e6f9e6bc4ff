"""One group's current state in the read model (model.GroupDescription), cheaply, for
commands that poll: `wait`, and `force-rebalance` while it watches the group settle; and
(`describe_group`) the classic snapshot the probe takes before it joins and after each
generation, to feed the RebalanceStory (story.py).

    desc = await group_snapshot(cluster, "g")                  # None: the group does not exist
    desc = await group_snapshot(cluster, "g", offsets=True)    # + committed / log-end / lag

Without `offsets` it asks the group's coordinator only what the group's type's describe
API says (DescribeGroups, ConsumerGroupDescribe: one request each, at once); with
`offsets` it is observe.describe.describe_groups (OffsetFetch, Metadata, ListOffsets too).
Read-only.

Group types plug in through DESCRIBERS: (type, Api, body for a group id, builder of a
GroupDescription from the response's entry). A type whose describe API says "not mine"
(GROUP_ID_NOT_FOUND, or Dead) gives way to the next; when none claims the group it is
missing (None). An entry with any other error code raises it (e.g. not authorized).
"""
from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Callable

from ..errors import GroupctlError, NotFoundError
from ..protocol.errors import ErrorCode
from . import model


@dataclass(frozen=True)
class Describer:
    """How to describe one group type: `api` (a protocol.messages name), `body(group)`,
    and `build(entry)` -> GroupDescription, or None when the entry means "not this type"."""

    type: str
    api: str
    body: Callable[[str], dict]
    build: Callable[[dict], "model.GroupDescription | None"]


def _classic(entry: dict):
    if entry.get("group_state") == "Dead":  # unknown group (v<6), or a consumer group
        return None
    return model.classic_group(entry)


DESCRIBERS: list[Describer] = [
    Describer(model.CONSUMER, "CONSUMER_GROUP_DESCRIBE",
              lambda g: {"group_ids": [g], "include_authorized_operations": False},
              model.consumer_group),
    Describer(model.CLASSIC, "DESCRIBE_GROUPS",
              lambda g: {"groups": [g], "include_authorized_operations": False}, _classic),
]
NOT_MINE = frozenset({ErrorCode.GROUP_ID_NOT_FOUND})


async def group_snapshot(cluster, group: str, *, offsets: bool = False,
                         deadline=None) -> model.GroupDescription | None:
    """`group` as describe shows it (see the module doc); None when it does not exist."""
    d = cluster.deadline(deadline)
    if offsets:
        return await _full(cluster, group, d)
    info = await cluster.find_coordinator(group, deadline=d)
    conn = await cluster.broker(info.node_id, deadline=d)
    usable = [x for x in DESCRIBERS if conn.supports(_api(x.api))]
    answers = await asyncio.gather(*(cluster.send_to_coordinator(
        group, _api(x.api), x.body(group), deadline=d) for x in usable))
    for describer, resp in zip(usable, answers):
        entry = next((e for e in resp.get("groups") or () if e.get("group_id") == group), None)
        if entry is None:
            continue
        code = entry.get("error_code") or 0
        if code in NOT_MINE:
            continue
        if code:
            from ..client.errors import kafka_error

            message = entry.get("error_message")
            raise kafka_error(_api(describer.api).name, code,
                              f"group {group!r}" + (f": {message}" if message else ""))
        desc = describer.build(entry)
        if desc is not None:
            info = cluster.cached_coordinator(group) or info
            desc.coordinator = {"id": info.node_id, "host": info.host, "port": info.port}
            return desc
    return None


async def _full(cluster, group: str, d) -> model.GroupDescription | None:
    from .describe import describe_groups

    result = await describe_groups(cluster, [group], deadline=d)
    if result.groups:
        return result.groups[0]
    error: GroupctlError | None = result.failures.get(group)
    if isinstance(error, NotFoundError):
        return None
    if error is not None:
        raise error
    return None


def _api(name: str):
    from ..protocol import messages

    return getattr(messages, name)


async def describe_group(cluster, group: str) -> model.GroupDescription:
    """The group as DescribeGroups shows it: one request, no offsets. A group that does
    not exist comes back Dead (v<6) or with GROUP_ID_NOT_FOUND (v6); both, and any other
    error code, are a Dead description (the probe then joins blind, as it always did)."""
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
