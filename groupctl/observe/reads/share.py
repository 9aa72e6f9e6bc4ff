"""Share groups (KIP-932) in the read model: ShareGroupDescribe and DescribeShareGroupOffsets
responses -> GroupDescription. Pure functions, no I/O (observe/describe.py asks).

In a share group several members may be assigned the same partition (records are handed
out one by one, not partition by partition), so a share partition has a list of members,
and the group lists every partition that more than one member holds (`shared_partitions`).
Share groups commit no offsets: their progress is each share partition's start offset
(the first record not yet done with) and the lag the broker computes from it (v1 of
DescribeShareGroupOffsets; null where the broker does not report one).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ...client.errors import kafka_error
from ...records import Record
from . import model

if TYPE_CHECKING:  # pragma: no cover - decoded bodies, for the type checker
    from ...protocol.bodies import ShareGroupDescribeResponseGroups

UNKNOWN = -1  # start offset, leader epoch and lag the broker does not know


def _known(value: int | None) -> int | None:
    return None if value is None or value < 0 else value


class ShareOffsetRow(Record):
    """One share partition of a share group: where the group is, and its lag."""

    _fields = ("topic", "partition", "start_offset", "leader_epoch", "lag", "member_ids",
               "error")

    def __init__(self, topic: str, partition: int, start_offset: int | None,
                 leader_epoch: int | None, lag: int | None, member_ids: list[str] | None = None,
                 error: str | None = None):
        self.topic = topic
        self.partition = partition
        self.start_offset = start_offset
        self.leader_epoch = leader_epoch
        self.lag = lag
        self.member_ids: list[str] = [] if member_ids is None else member_ids
        self.error = error

    def to_dict(self) -> dict:
        out = {"topic": self.topic, "partition": self.partition,
               "start_offset": self.start_offset, "leader_epoch": self.leader_epoch,
               "lag": self.lag, "member_ids": self.member_ids}
        return out | ({"error": self.error} if self.error is not None else {})


def share_group(raw: ShareGroupDescribeResponseGroups) -> model.GroupDescription:
    """One `groups[]` entry of a ShareGroupDescribe response (error already checked)."""
    members = [model.Member(
        member_id=m["member_id"], client_id=m["client_id"],
        host=model.none_if_empty(m["client_host"]), rack=m["rack_id"],
        member_epoch=m["member_epoch"],
        subscription={"version": None, "topics": sorted(m["subscribed_topic_names"] or []),
                      "owned_partitions": None, "generation": None, "rack": m["rack_id"],
                      "user_data": None},
        assignment=model.epoch_assignment(m["assignment"]),
        member_protocol=model.SHARE,
    ) for m in raw["members"]]
    desc = model.GroupDescription(
        group=raw["group_id"], type=model.SHARE, state=raw["group_state"],
        protocol_type=model.SHARE, protocol=model.none_if_empty(raw["assignor_name"]),
        group_epoch=raw["group_epoch"], assignment_epoch=raw["assignment_epoch"],
        members=members)
    desc.extra["shared_partitions"] = shared_partitions(members)
    return desc


def holders(members: list[model.Member]) -> dict[tuple[str, int], list[str]]:
    """{(topic, partition): ids of the members assigned it}, ids sorted."""
    out: dict[tuple[str, int], list[str]] = {}
    for m in members:
        for tp in m.owned():
            out.setdefault(tp, []).append(m.member_id)
    return {tp: sorted(ids) for tp, ids in sorted(out.items())}


def shared_partitions(members: list[model.Member]) -> list[dict]:
    """Partitions assigned to more than one member: [{topic, partition, member_ids}]."""
    return [{"topic": t, "partition": p, "member_ids": ids}
            for (t, p), ids in holders(members).items() if len(ids) > 1]


def share_offset_rows(entry: dict | None, members: list[model.Member]) -> list[ShareOffsetRow]:
    """Rows of one group of a DescribeShareGroupOffsets response (group error checked),
    plus a row for every assigned partition the broker has no state for yet; sorted."""
    held = holders(members)
    rows: dict[tuple[str, int], ShareOffsetRow] = {}
    for t in (entry or {}).get("topics") or ():
        for p in t["partitions"] or ():
            key = (t["topic_name"] or t["topic_id"], p["partition_index"])
            error = None
            if p["error_code"]:
                error = str(kafka_error("DescribeShareGroupOffsets", p["error_code"],
                                        f"{key[0]}-{key[1]}"))
            rows[key] = ShareOffsetRow(
                key[0], key[1], None if error else _known(p["start_offset"]),
                None if error else _known(p["leader_epoch"]),
                None if error else _known(p["lag"]), held.get(key, []), error)
    for key, ids in held.items():
        rows.setdefault(key, ShareOffsetRow(key[0], key[1], None, None, None, ids))
    return [rows[k] for k in sorted(rows)]
