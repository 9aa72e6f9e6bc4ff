"""`describe`: the whole truth about groups of every type, batched per coordinator.

    result = await describe_groups(cluster, ["g1", "g2"], listings={"g1": listing})
    result.groups      # [GroupDescription], in the order asked
    result.failures    # {group: GroupctlError}: not found, not authorized, ...
    snap = await describe_groups(cluster, groups, offsets=False)   # snapshots: step 2's
                       # describe requests only (wait, force-rebalance, watch, the probe)

1. FindCoordinator for all groups (one batched request).
2. Per coordinator, at once on its connection: each group type's own describe API for
   every group that may be of that type (DescribeGroups: classic, ConsumerGroupDescribe:
   consumer, ShareGroupDescribe: share, StreamsGroupDescribe: streams; a group's type from
   ListGroups narrows this to one; a group of another type is GROUP_ID_NOT_FOUND to each
   API but its own, and Dead to DescribeGroups), OffsetFetch for all of them (many groups
   per request), and DescribeShareGroupOffsets for those that may be share groups.
   Groups whose coordinator moved (NOT_COORDINATOR, ...) go round again, until the deadline.
3. One Metadata for every topic seen plus __consumer_offsets (leaders, the partition
   count that places a group), then ListOffsets (latest) per partition leader.

Each group's answers are gathered in a RawGroup and built into its GroupDescription by
described.py. Read-only: no request here changes a group or commits an offset.
"""
from __future__ import annotations

import asyncio

from ...client.interface import ClusterLike
from ...client.coordinators import REDISCOVER, WAIT, coordinators_each
from ...client.errors import kafka_error
from ...records import Record
from ...client.metadata import BrokerInfo
from ...client.retry import TRANSIENT
from ...client.sharded import Retry, request_sharded
from ...errors import GroupctlError, NotFoundError, OutOfDescriptors, UnreachableError
from ...protocol.messages import (
    DESCRIBE_SHARE_GROUP_OFFSETS,
    OFFSET_FETCH,
)
from . import model
from .described import (
    DESCRIBERS, NOT_THIS_TYPE, RawGroup, build, error_message, rebuild,
)
from .errors import group_not_found, not_authorized
from .offsets import (
    log_end_offsets,
    offset_fetch_body,
    offset_fetch_version,
    parse_offset_fetch,
)

OFFSETS_TOPIC = "__consumer_offsets"
DEFAULT_OFFSETS_PARTITIONS = 50
BATCH = 200  # groups per describe / OffsetFetch / DescribeShareGroupOffsets request
RETRY_CODES = REDISCOVER | WAIT
MAX_RETYPES = 3  # rounds for a group that keeps changing type under our requests


class DescribeResult(Record):
    """The groups described, and why the others could not be."""

    _fields = ("groups", "failures")

    def __init__(self, groups: list[model.GroupDescription] | None = None,
                 failures: dict[str, GroupctlError] | None = None):
        self.groups: list[model.GroupDescription] = [] if groups is None else groups
        self.failures: dict[str, GroupctlError] = {} if failures is None else failures


class _RetryGroup(Exception):
    """The group's coordinator moved or is loading, or the group changed type while its
    describe requests were in flight (`retype`): ask again."""

    def __init__(self, error: GroupctlError, retype: bool = False, unspoken=None):
        self.error = error
        self.retype = retype
        self.unspoken = unspoken   # RawGroup.unspoken of the answers that asked again


async def describe_groups(cluster: ClusterLike, groups: list[str], *, listings: dict | None = None,
                          deadline=None, progress=None, offsets: bool = True,
                          built: dict | None = None) -> DescribeResult:
    """Describe `groups` (see the module doc). `listings`: {group: GroupListing} already
    known from ListGroups; their types save the request of the other kind, and share or
    streams groups are shown as listed. `progress(n)`: n more groups fetched.
    `offsets=False`: a snapshot, each type's describe API only (no OffsetFetch,
    DescribeShareGroupOffsets, Metadata or ListOffsets); offsets and share_offsets stay
    empty and coordinator_partition null. `built` (snapshots; a poller's, kept between its
    rounds): the descriptions of the last call by group, with what they were built from;
    a group whose entries are the very ones of the last call (equal response bytes:
    client/memo.py) gets the same GroupDescription again, not a new one."""
    d = cluster.deadline(deadline)
    listings = listings or {}
    types = {g: listing.type for g, listing in listings.items()}
    wanted = list(dict.fromkeys(groups))
    if not wanted:
        return DescribeResult()
    raws, failures = await _fetch_all(cluster, wanted, types, d, progress, offsets)
    described = {}
    reuse = built if not offsets else None
    fresh: dict[str, tuple] = {}
    for group, raw in raws.items():
        try:
            if reuse is None:
                described[group] = build(group, raw, listings.get(group), offsets)
            else:
                described[group], fresh[group] = rebuild(group, raw, listings.get(group),
                                                          reuse.get(group))
        except GroupctlError as exc:
            failures[group] = exc
    if reuse is not None:
        reuse.clear()
        reuse.update(fresh)
    unsure: dict[str, dict] = {}
    for g, failure in failures.items():
        types = getattr(failure, "unspoken", None) or (raws[g].unspoken if g in raws else {})
        if types and isinstance(failure, NotFoundError):
            unsure[g] = types
    if unsure:
        from .unspoken import of_unspoken_types

        await of_unspoken_types(cluster, unsure, failures, d)
    if not offsets:
        return _ordered(wanted, described, failures)
    partitions = {(row.topic, row.partition) for g in described.values() for row in g.offsets}
    metadata = await _metadata(cluster, partitions, d)
    for desc in described.values():
        desc.coordinator_partition = _offsets_partition(desc.group, metadata)
    await _fill_log_ends(cluster, metadata, partitions, list(described.values()), d)
    return _ordered(wanted, described, failures)


def _ordered(wanted: list[str], described: dict, failures: dict) -> DescribeResult:
    return DescribeResult([described[g] for g in wanted if g in described],
                          {g: failures[g] for g in wanted if g in failures})


# ---- fetching ---------------------------------------------------------------------------

async def _fetch_all(cluster: ClusterLike, groups, types, d, progress, offsets=True):
    types = dict(types)
    retyped: dict[str, int] = {}
    coordinators: dict[str, BrokerInfo] = {}

    def refused(group: str, exc: GroupctlError) -> GroupctlError:
        return not_authorized(exc, "describe", group)

    async def route(pending: list, attempt: int):
        found, bad = {}, {}

        def refuse(group, exc):
            bad[group] = refused(group, exc)
        for g, info in (await coordinators_each(cluster, pending, d, refuse)).items():
            coordinators[g] = info
            found[g] = info.node_id
        return found, bad

    async def send(node: int, batch: list[str]) -> dict:
        answer = await _fetch_batch(cluster, node, batch, types, d, offsets)
        out: dict = {}
        for g, item in answer.items():
            if isinstance(item, _RetryGroup) and item.retype:
                retyped[g] = retyped.get(g, 0) + 1
                if retyped[g] > MAX_RETYPES:
                    missing = out[g] = group_not_found(g)  # of a type no API here describes
                    missing.unspoken = item.unspoken  # type: ignore[attr-defined]
                    continue
                types.pop(g, None)  # the listed type is stale: ask every API
                out[g] = Retry(item.error, reroute=False)
            elif isinstance(item, _RetryGroup):
                out[g] = Retry(item.error)
            elif isinstance(item, RawGroup):
                item.coordinator = coordinators[g]
                out[g] = item
            else:
                out[g] = item
        return out

    def told(batch: list, answer) -> None:
        progress(sum(1 for g in batch if not isinstance(answer[g], Retry)))

    got = await request_sharded(groups, route=route, send=send, deadline=d,
                                what="describe of group", batch=BATCH,
                                forget=cluster.invalidate_coordinator,
                                on_batch=told if progress is not None else None)
    return got.results, got.errors


def _may_be(types: dict, group: str, kind: str) -> bool:
    return types.get(group) in (None, kind)


async def _fetch_batch(cluster: ClusterLike, node: int, groups: list[str], types: dict, d,
                       with_offsets: bool = True) -> dict:
    """{group: RawGroup, a GroupctlError, or a _RetryGroup} for groups coordinated by `node`."""
    try:
        conn = await cluster.broker(node, deadline=d)
        version = offset_fetch_version(conn)
        typed = [(g, types.get(g)) for g in groups]
        asked = [(dsc, [g for g, t in typed if t is None or t == dsc.type])
                 for dsc in DESCRIBERS if conn.supports(dsc.api)]
        asked = [(dsc, batch) for dsc, batch in asked if batch]
        jobs = [_request(cluster, node, dsc.api, dsc.body(batch, with_offsets), d)
                for dsc, batch in asked]
        offset_batches = [] if not with_offsets else [groups] if version >= 8 else [[g] for g in groups]
        jobs += [_request(cluster, node, OFFSET_FETCH, offset_fetch_body(b, version), d,
                          version=version) for b in offset_batches]
        share = [g for g in groups if _may_be(types, g, model.SHARE)]
        if share and with_offsets and conn.supports(DESCRIBE_SHARE_GROUP_OFFSETS):
            jobs.append(_request(cluster, node, DESCRIBE_SHARE_GROUP_OFFSETS, {
                "groups": [{"group_id": g, "topics": None} for g in share]}, d))
        answers = await asyncio.gather(*jobs)
    except OutOfDescriptors:
        raise   # the machine's limit, not each group's failure (said once, exit 2)
    except GroupctlError as exc:
        if getattr(exc, "permanent", False) or not _coordinator_trouble(exc):
            return {g: exc for g in groups}
        return {g: _RetryGroup(exc) for g in groups}
    by_group = {g: RawGroup() for g in groups}
    offered = getattr(conn, "broker_versions", None) or {}
    unspoken = {dsc.type: (dsc.api, offered[dsc.api.key]) for dsc in DESCRIBERS
                if dsc.api.key in offered and not conn.supports(dsc.api)}
    if unspoken:
        for raw in by_group.values():
            raw.unspoken = unspoken
    for (dsc, _), resp in zip(asked, answers):
        for entry in resp.get("groups") or ():
            if entry["group_id"] in by_group:
                by_group[entry["group_id"]].described[dsc.type] = entry
    fetched = answers[len(asked):len(asked) + len(offset_batches)]
    offsets: dict = {}
    for batch, resp in zip(offset_batches, fetched):
        offsets.update(parse_offset_fetch(resp, batch))
    for resp in answers[len(asked) + len(offset_batches):]:  # DescribeShareGroupOffsets
        for entry in resp.get("groups") or ():
            if entry["group_id"] in by_group:
                by_group[entry["group_id"]].share_offsets = entry
    out = {}
    for g, raw in by_group.items():
        raw.offsets = offsets.get(g)
        out[g] = _check_retry(raw, g) or raw
    return out


async def _none():
    return None


async def _request(cluster: ClusterLike, node, api, body, d, version=None):
    return await cluster.request(api, body, node_id=node, version=version, deadline=d)


def _coordinator_trouble(exc: GroupctlError) -> bool:
    """A failure that rediscovering the coordinator may cure (unreachable, timed out)."""
    return isinstance(exc, (*TRANSIENT, UnreachableError))


def _check_retry(raw: RawGroup, group: str) -> _RetryGroup | None:
    if (not any(e["error_code"] for e in raw.described.values())
            and not (raw.share_offsets or {}).get("error_code")
            and not isinstance(raw.offsets, GroupctlError)):
        return None   # no error anywhere (most groups, most rounds): nothing to ask again
    entries = [(dsc.api.name, raw.described.get(dsc.type)) for dsc in DESCRIBERS]
    entries.append((DESCRIBE_SHARE_GROUP_OFFSETS.name, raw.share_offsets))
    for api, entry in entries:
        code = (entry or {}).get("error_code") or 0
        if code in RETRY_CODES:
            return _RetryGroup(kafka_error(api, code, f"group {group!r}"))
    if isinstance(raw.offsets, GroupctlError) and getattr(raw.offsets, "code", 0) in RETRY_CODES:
        return _RetryGroup(raw.offsets)
    return _type_changed(raw, group)


def _type_changed(raw: RawGroup, group: str) -> _RetryGroup | None:
    """No API described the group, yet one said it exists as another type ("Group g is
    not a consumer group.", where a missing group is "Group g not found."): it converted
    between our requests (a classic group whose first KIP-848 member just joined, or
    back). Never report such a live group as missing: ask again."""
    if any(not e["error_code"] and not (t == model.CLASSIC and e["group_state"] == "Dead")
           for t, e in raw.described.items()):
        return None
    for dsc in DESCRIBERS:
        entry = raw.described.get(dsc.type) or {}
        if entry.get("error_code") == NOT_THIS_TYPE and " is not a " in (entry.get("error_message") or ""):
            return _RetryGroup(kafka_error(dsc.api.name, NOT_THIS_TYPE, f"group {group!r}"
                                           + error_message(entry)), retype=True,
                               unspoken=raw.unspoken)
    return None


async def _metadata(cluster: ClusterLike, partitions: set, d):
    """Metadata for __consumer_offsets and every topic of `partitions`, the groups' offset
    rows' (topic, partition) (which hold every committed or owned partition)."""
    topics = {OFFSETS_TOPIC} | {topic for topic, _ in partitions}
    return await cluster.metadata(sorted(topics), deadline=d)


def _offsets_partition(group: str, metadata) -> int:
    """The __consumer_offsets partition of `group`, from the topic's real partition count
    (50, Kafka's default, when Metadata does not show the topic)."""
    topic = metadata.topics.get(OFFSETS_TOPIC)
    count = topic.partition_count if topic is not None and not topic.error_code else 0
    return model.coordinator_partition(group, count or DEFAULT_OFFSETS_PARTITIONS)


async def _fill_log_ends(cluster: ClusterLike, metadata, wanted: set,
                         groups: list[model.GroupDescription], d) -> None:
    """Each offset row's log-end offset; `wanted`: every row's (topic, partition)."""
    if not wanted:
        return
    log_end = await log_end_offsets(cluster, metadata, wanted, deadline=d)
    end_of = log_end.get
    for g in groups:
        for row in g.offsets:
            row.log_end = end_of((row.topic, row.partition))
