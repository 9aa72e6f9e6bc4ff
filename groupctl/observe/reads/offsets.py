"""Committed offsets (OffsetFetch, many groups per request from v8) and log-end offsets
(ListOffsets at the latest timestamp, one request per partition leader).

Read-only: OffsetFetch without require_stable, ListOffsets as a plain consumer (replica
id -1, read uncommitted, as ConsumerGroupCommand does).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ...client.interface import ClusterLike
from ...client.errors import kafka_error
from ...client.sharded import Retry, leader_route, request_sharded
from ...errors import GroupctlError
from ...protocol.errors import ErrorCode
from ...protocol.messages import LIST_OFFSETS, OFFSET_FETCH

if TYPE_CHECKING:  # pragma: no cover - decoded bodies, for the type checker
    from ...protocol.bodies import OffsetFetchResponse

TP = tuple  # (topic, partition)
BATCHED_FROM = 8     # OffsetFetch v8: several groups per request
NAMES_UNTIL = 9      # OffsetFetch v10 answers with topic ids; v9 still with names
LATEST = -1          # ListOffsets timestamp: the log-end offset
READ_UNCOMMITTED = 0


def offset_fetch_version(conn) -> int:
    """The OffsetFetch version to send on `conn`: the highest one that still names topics."""
    return min(NAMES_UNTIL, conn.version_for(OFFSET_FETCH))


def offset_fetch_body(groups: list[str], version: int) -> dict:
    """All committed offsets (null topics) of `groups` (one group below v8)."""
    if version >= BATCHED_FROM:
        return {"groups": [{"group_id": g, "topics": None} for g in groups]}
    (group,) = groups
    return {"group_id": group, "topics": None}


def _partitions(topics) -> dict[TP, int | None]:
    out: dict[TP, int | None] = {}
    for t in topics or ():
        name = t["name"]
        for p in t["partitions"] or ():
            if p["error_code"]:
                continue  # e.g. UNSTABLE_OFFSET_COMMIT: nothing settled to show
            offset = p["committed_offset"]
            out[(name, p["partition_index"])] = offset if offset >= 0 else None
    return out


def parse_offset_fetch(resp: OffsetFetchResponse, groups: list[str]
                       ) -> dict[str, dict[TP, int | None] | GroupctlError]:
    """{group: {(topic, partition): committed offset, or None}, or the group's error}."""
    if resp.get("groups"):
        out: dict = {}
        for g in resp["groups"]:
            code = g.get("error_code") or resp.get("error_code") or 0
            out[g["group_id"]] = (kafka_error("OffsetFetch", code, f"group {g['group_id']!r}")
                                  if code else _partitions(g["topics"]))
        return out
    (group,) = groups
    code = resp.get("error_code") or 0
    return {group: kafka_error("OffsetFetch", code, f"group {group!r}") if code
            else _partitions(resp.get("topics"))}


# The leader moved or is being elected: ask again after fresh metadata.
RETRY_LEADER = frozenset({ErrorCode.LEADER_NOT_AVAILABLE, ErrorCode.NOT_LEADER_OR_FOLLOWER,
                          ErrorCode.FENCED_LEADER_EPOCH, ErrorCode.UNKNOWN_LEADER_EPOCH})


async def log_end_offsets(cluster: ClusterLike, metadata, partitions, *, deadline
                          ) -> dict[TP, int | None]:
    """{(topic, partition): log-end offset, or None when unknown (no such topic, no leader,
    an error from the leader)}; one ListOffsets per leader, all at once. Partitions whose
    leader moved (or could not be asked) are asked once more, after fresh metadata."""
    async def ask(leader: int, partitions: list[TP]) -> dict:
        topics: dict[str, list[int]] = {}
        for t, p in sorted(partitions):
            topics.setdefault(t, []).append(p)
        body = {"replica_id": -1, "isolation_level": READ_UNCOMMITTED, "timeout_ms": 0,
                "topics": [{"name": t, "partitions": [
                    {"partition_index": p, "timestamp": LATEST} for p in ps]}
                    for t, ps in topics.items()]}
        resp = await cluster.request(LIST_OFFSETS, body, node_id=leader, deadline=deadline)
        out: dict = {}
        for t in resp["topics"]:
            for p in t["partitions"]:
                tp, code = (t["name"], p["partition_index"]), p["error_code"]
                if not code and p["offset"] >= 0:
                    out[tp] = p["offset"]
                elif code in RETRY_LEADER:
                    out[tp] = Retry(kafka_error("ListOffsets", code, f"{tp[0]}-{tp[1]}"))
                else:
                    out[tp] = None
        return out

    got = await request_sharded(partitions, route=leader_route(cluster, metadata, deadline),
                                send=ask, deadline=deadline, what="ListOffsets for", attempts=2)
    return {tp: got.results.get(tp) for tp in partitions}
