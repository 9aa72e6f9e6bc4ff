"""`describe`: the whole truth about groups, batched per coordinator.

    result = await describe_groups(cluster, ["g1", "g2"], types={"g1": "classic"})
    result.groups      # [GroupDescription], in the order asked
    result.failures    # {group: GroupctlError}: not found, not authorized, ...

1. FindCoordinator for all groups (one batched request).
2. Per coordinator, at once on its connection: DescribeGroups for every group not known
   to be a consumer group, ConsumerGroupDescribe for every group not known to be classic
   (a KIP-848 group looks Dead to DescribeGroups, a classic one is GROUP_ID_NOT_FOUND to
   ConsumerGroupDescribe), and OffsetFetch for all of them (many groups per request).
   Groups whose coordinator moved (NOT_COORDINATOR, ...) go round again, until the deadline.
3. One Metadata for every topic seen plus __consumer_offsets (leaders, the partition
   count that places a group), then ListOffsets (latest) per partition leader.

Read-only: no request here changes a group or commits an offset.
"""
from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from ..client.coordinators import REDISCOVER, WAIT
from ..client.errors import kafka_error
from ..client.retry import TRANSIENT, Backoff, gave_up, sleep_within
from ..errors import GroupctlError, KafkaError, UnreachableError
from ..protocol.messages import CONSUMER_GROUP_DESCRIBE, DESCRIBE_GROUPS, OFFSET_FETCH
from . import model
from .errors import group_not_found, not_authorized
from .offsets import (
    log_end_offsets,
    offset_fetch_body,
    offset_fetch_version,
    parse_offset_fetch,
)

GROUP_ID_NOT_FOUND = 69
OFFSETS_TOPIC = "__consumer_offsets"
DEFAULT_OFFSETS_PARTITIONS = 50
BATCH = 200  # groups per DescribeGroups / ConsumerGroupDescribe / OffsetFetch request
RETRY_CODES = REDISCOVER | WAIT


@dataclass
class DescribeResult:
    """The groups described, and why the others could not be."""

    groups: list[model.GroupDescription] = field(default_factory=list)
    failures: dict[str, GroupctlError] = field(default_factory=dict)


@dataclass
class _Raw:
    """What the coordinator said about one group."""

    classic: dict | None = None
    consumer: dict | None = None
    offsets: dict | GroupctlError | None = None
    coordinator: object = None  # BrokerInfo


class _RetryGroup(Exception):
    """The group's coordinator moved or is loading: ask again."""

    def __init__(self, error: GroupctlError):
        self.error = error


async def describe_groups(cluster, groups: list[str], *, listings: dict | None = None,
                          deadline=None, progress=None) -> DescribeResult:
    """Describe `groups` (see the module doc). `listings`: {group: GroupListing} already
    known from ListGroups; their types save the request of the other kind, and share or
    streams groups are shown as listed. `progress(n)`: n more groups fetched."""
    d = cluster.deadline(deadline)
    listings = listings or {}
    types = {g: listing.type for g, listing in listings.items()}
    wanted = list(dict.fromkeys(groups))
    if not wanted:
        return DescribeResult()
    raws, failures = await _fetch_all(cluster, wanted, types, d, progress)
    described = {}
    for group, raw in raws.items():
        try:
            described[group] = _build(group, raw, listings.get(group))
        except GroupctlError as exc:
            failures[group] = exc
    metadata = await _metadata(cluster, described.values(), d)
    for desc in described.values():
        desc.coordinator_partition = _offsets_partition(desc.group, metadata)
    await _fill_log_ends(cluster, metadata, list(described.values()), d)
    result = DescribeResult()
    result.groups = [described[g] for g in wanted if g in described]
    result.failures = {g: failures[g] for g in wanted if g in failures}
    return result


# ---- fetching ---------------------------------------------------------------------------

async def _fetch_all(cluster, groups, types, d, progress):
    raws: dict[str, _Raw] = {}
    failures: dict[str, GroupctlError] = {}
    pending, backoff, attempts, last = list(groups), Backoff(), 0, None
    while pending:
        attempts += 1
        coordinators = await _find_coordinators(cluster, pending, d, failures)
        by_node: dict[int, list[str]] = {}
        for g, info in coordinators.items():
            by_node.setdefault(info.node_id, []).append(g)
        batches = [(node, members[i:i + BATCH]) for node, members in by_node.items()
                   for i in range(0, len(members), BATCH)]
        results = await asyncio.gather(*(_fetch_batch(cluster, node, batch, types, d)
                                         for node, batch in batches))
        retry = []
        for (node, batch), answer in zip(batches, results):
            for g in batch:
                item = answer[g]
                if isinstance(item, _RetryGroup):
                    cluster.invalidate_coordinator(g)
                    retry.append(g)
                    last = item.error
                elif isinstance(item, GroupctlError):
                    failures[g] = item
                else:
                    item.coordinator = coordinators[g]
                    raws[g] = item
            if progress is not None:
                progress(sum(1 for g in batch if not isinstance(answer[g], _RetryGroup)))
        pending = retry
        if pending and not await sleep_within(d, backoff.next()):
            for g in pending:
                failures[g] = gave_up(f"describe of group {g!r}", attempts, d, last)
            break
    return raws, failures


async def _find_coordinators(cluster, groups: list[str], d, failures: dict) -> dict:
    """{group: coordinator}; a group whose lookup fails for good (not authorized, an
    invalid id) goes to `failures`, and the others are looked up without it."""
    from ..client.errors import KafkaAuthError

    groups = list(groups)
    while groups:
        try:
            return await cluster.find_coordinators(groups, deadline=d)
        except (KafkaAuthError, KafkaError) as exc:
            group = getattr(exc, "group", None)
            if group not in groups:
                raise
            failures[group] = not_authorized(exc, "describe", group)
            groups.remove(group)
    return {}


async def _fetch_batch(cluster, node: int, groups: list[str], types: dict, d) -> dict:
    """{group: _Raw, a GroupctlError, or a _RetryGroup} for groups coordinated by `node`."""
    try:
        conn = await cluster.broker(node, deadline=d)
        version = offset_fetch_version(conn)
        classic = [g for g in groups if types.get(g) in (None, model.CLASSIC)]
        consumer = [g for g in groups if types.get(g) in (None, model.CONSUMER)
                    and conn.supports(CONSUMER_GROUP_DESCRIBE)]
        jobs = [_request(cluster, node, DESCRIBE_GROUPS, {"groups": classic}, d) if classic else _none(),
                _request(cluster, node, CONSUMER_GROUP_DESCRIBE,
                         {"group_ids": consumer, "include_authorized_operations": False}, d)
                if consumer else _none()]
        offset_batches = [groups] if version >= 8 else [[g] for g in groups]
        jobs += [_request(cluster, node, OFFSET_FETCH, offset_fetch_body(b, version), d,
                          version=version) for b in offset_batches]
        answers = await asyncio.gather(*jobs)
    except GroupctlError as exc:
        if getattr(exc, "permanent", False) or not _coordinator_trouble(exc):
            return {g: exc for g in groups}
        return {g: _RetryGroup(exc) for g in groups}
    described, consumer_described, *fetched = answers
    offsets: dict = {}
    for batch, resp in zip(offset_batches, fetched):
        offsets.update(parse_offset_fetch(resp, batch))
    by_group = {g: _Raw() for g in groups}
    for entry in (described or {}).get("groups") or ():
        if entry["group_id"] in by_group:
            by_group[entry["group_id"]].classic = entry
    for entry in (consumer_described or {}).get("groups") or ():
        if entry["group_id"] in by_group:
            by_group[entry["group_id"]].consumer = entry
    out = {}
    for g, raw in by_group.items():
        raw.offsets = offsets.get(g)
        out[g] = _check_retry(raw, g) or raw
    return out


async def _none():
    return None


async def _request(cluster, node, api, body, d, version=None):
    return await cluster.request(api, body, node_id=node, version=version, deadline=d)


def _coordinator_trouble(exc: GroupctlError) -> bool:
    """A failure that rediscovering the coordinator may cure (unreachable, timed out)."""
    return isinstance(exc, (*TRANSIENT, UnreachableError))


def _check_retry(raw: _Raw, group: str) -> _RetryGroup | None:
    for api, entry in (("DescribeGroups", raw.classic), ("ConsumerGroupDescribe", raw.consumer)):
        code = (entry or {}).get("error_code") or 0
        if code in RETRY_CODES:
            return _RetryGroup(kafka_error(api, code, f"group {group!r}"))
    if isinstance(raw.offsets, GroupctlError) and getattr(raw.offsets, "code", 0) in RETRY_CODES:
        return _RetryGroup(raw.offsets)
    return None


async def _metadata(cluster, groups, d):
    """Metadata for __consumer_offsets and every topic in the groups' offset rows (which
    hold every committed or owned partition)."""
    topics = {OFFSETS_TOPIC} | {row.topic for g in groups for row in g.offsets}
    return await cluster.metadata(sorted(topics), deadline=d)


def _offsets_partition(group: str, metadata) -> int:
    """The __consumer_offsets partition of `group`, from the topic's real partition count
    (50, Kafka's default, when Metadata does not show the topic)."""
    topic = metadata.topics.get(OFFSETS_TOPIC)
    count = topic.partition_count if topic is not None and not topic.error_code else 0
    return model.coordinator_partition(group, count or DEFAULT_OFFSETS_PARTITIONS)


# ---- building ---------------------------------------------------------------------------

def _build(group: str, raw: _Raw, listing) -> model.GroupDescription:
    desc = _group_kind(group, raw, listing)
    desc.members = sorted(desc.members, key=lambda m: (m.client_id or "", m.member_id))
    info = raw.coordinator
    desc.coordinator = {"id": info.node_id, "host": info.host, "port": info.port}
    if isinstance(raw.offsets, GroupctlError):
        raise not_authorized(raw.offsets, "describe", group)
    desc.offsets = model.offset_rows(raw.offsets or {}, {}, desc.members)
    return desc


def _group_kind(group: str, raw: _Raw, listing) -> model.GroupDescription:
    """The classic or consumer description, or the error that says why there is none."""
    consumer, classic = raw.consumer, raw.classic
    if consumer is not None and not consumer["error_code"]:
        return model.consumer_group(consumer)
    if classic is not None and not classic["error_code"] and classic["group_state"] != "Dead":
        return model.classic_group(classic)
    for api, entry in (("DescribeGroups", classic), ("ConsumerGroupDescribe", consumer)):
        code = (entry or {}).get("error_code") or 0
        if code and code != GROUP_ID_NOT_FOUND:
            raise not_authorized(kafka_error(api, code, f"group {group!r}" + _message(entry)),
                                 "describe", group)
    if listing is not None and listing.type not in (None, model.CLASSIC, model.CONSUMER):
        return model.GroupDescription(group=group, type=listing.type, state=listing.state,
                                      protocol_type=listing.protocol_type)  # share, streams
    raise group_not_found(group)


def _message(entry: dict) -> str:
    msg = entry.get("error_message")
    return f": {msg}" if msg else ""


async def _fill_log_ends(cluster, metadata, groups: list[model.GroupDescription], d) -> None:
    wanted = {(row.topic, row.partition) for g in groups for row in g.offsets}
    if not wanted:
        return
    log_end = await log_end_offsets(cluster, metadata, wanted, deadline=d)
    for g in groups:
        for row in g.offsets:
            row.log_end = log_end.get((row.topic, row.partition))
