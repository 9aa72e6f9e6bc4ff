"""What each group type's describe API answered about one group (RawGroup, filled by
describe.py), and the GroupDescription built from it: from the API of the group's own type,
or the error that says why there is none; a snapshot's description kept while its entries
are the same objects (client/memo.py decodes equal answers once).
"""
from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

from ...client.errors import kafka_error
from ...client.metadata import BrokerInfo
from ...errors import GroupctlError
from ...records import Frozen
from ...protocol.errors import ErrorCode
from ...protocol.messages import (
    CONSUMER_GROUP_DESCRIBE,
    DESCRIBE_GROUPS,
    DESCRIBE_SHARE_GROUP_OFFSETS,
    SHARE_GROUP_DESCRIBE,
    STREAMS_GROUP_DESCRIBE,
)
from ...protocol.spec import Api
from . import model, share, streams
from .errors import group_not_found, not_authorized

NOT_THIS_TYPE = ErrorCode.GROUP_ID_NOT_FOUND  # what each type's API says of other types
# What a describe API says when it is advertised but its group type is not enabled
# (Kafka 3.8 and 3.9 answer ConsumerGroupDescribe so without KIP-848 turned on): no group
# of that type, so the group is the other APIs' to describe.
NOT_ENABLED = ErrorCode.UNSUPPORTED_VERSION


class Describer(Frozen):
    """A group type's describe API and how to ask it about some groups."""

    type: str
    api: Api
    _fields = ("type", "api")

    def __init__(self, type: str, api: Api):  # noqa: A002 - the group type's field name
        self._init(type=type, api=api)

    def body(self, groups: list[str], full: bool = True) -> dict:
        """`full` (describe, not a poller's snapshot): a streams group's topology
        description too (v1: the broker's description plugin is asked)."""
        if self.api is DESCRIBE_GROUPS:
            return {"groups": groups}
        return {"group_ids": groups, "include_authorized_operations": False,
                "include_topology_description": full and self.api is STREAMS_GROUP_DESCRIBE}


# In the order a described group is recognised: the KIP-848 APIs answer only for their own
# type; DescribeGroups answers Dead (not an error before v6) for groups of the other types.
DESCRIBERS = (Describer(model.CONSUMER, CONSUMER_GROUP_DESCRIBE),
              Describer(model.SHARE, SHARE_GROUP_DESCRIBE),
              Describer(model.STREAMS, STREAMS_GROUP_DESCRIBE),
              Describer(model.CLASSIC, DESCRIBE_GROUPS))


class RawGroup:
    """What the coordinator said about one group (a plain class: one per group of a
    fleet, and a dataclass's __init__ with a default factory costs twice as much)."""

    __slots__ = ("described", "offsets", "share_offsets", "coordinator", "unspoken")

    def __init__(self) -> None:
        self.described: dict = {}  # {type: groups[] entry of its API}
        # {type: (API, the broker's version range)}: a describe API the coordinator offers
        # only in versions groupctl does not speak (Kafka 4.0's early-access share groups)
        self.unspoken: dict = {}
        self.offsets: dict | GroupctlError | None = None
        self.share_offsets: dict | None = None  # its groups[] entry of DescribeShareGroupOffsets
        self.coordinator: BrokerInfo | None = None


BUILDERS: dict[str, Callable[[Any], model.GroupDescription]] = {
    model.CONSUMER: model.consumer_group, model.SHARE: share.share_group,
    model.STREAMS: streams.streams_group, model.CLASSIC: model.classic_group}


def build(group: str, raw: RawGroup, listing, offsets: bool = True) -> model.GroupDescription:
    desc = _group_kind(group, raw, listing)
    desc.members = sorted(desc.members, key=lambda m: (m.client_id or "", m.member_id))
    info = raw.coordinator
    assert info is not None  # set with raws[g] in _fetch_all
    desc.coordinator = {"id": info.node_id, "host": info.host, "port": info.port}
    if not offsets:
        return desc
    if isinstance(raw.offsets, GroupctlError):
        raise not_authorized(raw.offsets, "describe", group)
    # a share group commits no offsets: its progress is in share_offsets, not here
    owners = [] if desc.type == model.SHARE else desc.members
    desc.offsets = model.offset_rows(raw.offsets or {}, {}, owners)
    if desc.type == model.SHARE:
        desc.share_offsets = _share_offsets(group, raw.share_offsets, desc.members)
    return desc


def rebuild(group: str, raw: RawGroup, listing, last: tuple | None
             ) -> tuple[model.GroupDescription, tuple]:
    """A snapshot's description, the last one when built from the same entries (objects)
    at the same coordinator with the same listing; and what to remember of it."""
    entries = tuple(raw.described.values())
    if (last is not None and len(last[0]) == len(entries)
            and all(map(operator.is_, last[0], entries))
            and (last[1] is raw.coordinator or last[1] == raw.coordinator)
            and (last[2] is listing or last[2] == listing)):
        return last[3], last
    desc = build(group, raw, listing, False)
    return desc, (entries, raw.coordinator, listing, desc)


def _share_offsets(group: str, entry: dict | None, members) -> list:
    code = (entry or {}).get("error_code") or 0
    if code:
        raise kafka_error(DESCRIBE_SHARE_GROUP_OFFSETS.name, code,
                          f"group {group!r}" + error_message(entry))
    return share.share_offset_rows(entry, members)


def _group_kind(group: str, raw: RawGroup, listing) -> model.GroupDescription:
    """The description from the API of the group's own type, or the error that says why
    there is none (a live group of any type is never "not found")."""
    for dsc in DESCRIBERS:
        entry = raw.described.get(dsc.type)
        if entry is None or entry["error_code"]:
            continue
        if dsc.type == model.CLASSIC and entry["group_state"] == "Dead":
            continue  # before v6: an unknown group, or a group of another type
        return BUILDERS[dsc.type](entry)
    for dsc in DESCRIBERS:
        entry = raw.described.get(dsc.type) or {}
        code = entry.get("error_code") or 0
        if code == NOT_ENABLED and dsc.type != model.CLASSIC:
            continue
        if code and code != NOT_THIS_TYPE:
            raise not_authorized(kafka_error(dsc.api.name, code, f"group {group!r}" + error_message(entry)),
                                 "describe", group)
    if listing is not None and listing.type is not None and listing.type not in raw.described:
        # listed, but its type's describe API was not asked (unknown to groupctl, or not
        # supported by this broker): shown as listed, never as missing
        return model.GroupDescription(group=group, type=listing.type, state=listing.state,
                                      protocol_type=listing.protocol_type)
    raise group_not_found(group)


def error_message(entry: dict | None) -> str:
    msg = (entry or {}).get("error_message")
    return f": {msg}" if msg else ""
