"""One module per API, named by key; APIS maps key -> Api.

The modules are imported on first use of their Api (PEP 562): a command speaks a few of
these APIs, and importing the other specs would add to every command's start-up.
"""
from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # what the lazy __getattr__ below returns, for the type checker
    from ..spec import Api
    from .m01_fetch import FETCH as FETCH
    from .m02_list_offsets import LIST_OFFSETS as LIST_OFFSETS
    from .m03_metadata import METADATA as METADATA
    from .m09_offset_fetch import OFFSET_FETCH as OFFSET_FETCH
    from .m10_find_coordinator import FIND_COORDINATOR as FIND_COORDINATOR
    from .m11_join_group import JOIN_GROUP as JOIN_GROUP
    from .m12_heartbeat import HEARTBEAT as HEARTBEAT
    from .m13_leave_group import LEAVE_GROUP as LEAVE_GROUP
    from .m14_sync_group import SYNC_GROUP as SYNC_GROUP
    from .m15_describe_groups import DESCRIBE_GROUPS as DESCRIBE_GROUPS
    from .m16_list_groups import LIST_GROUPS as LIST_GROUPS
    from .m17_sasl_handshake import SASL_HANDSHAKE as SASL_HANDSHAKE
    from .m18_api_versions import API_VERSIONS as API_VERSIONS
    from .m36_sasl_authenticate import SASL_AUTHENTICATE as SASL_AUTHENTICATE
    from .m68_consumer_group_heartbeat import CONSUMER_GROUP_HEARTBEAT as CONSUMER_GROUP_HEARTBEAT
    from .m69_consumer_group_describe import CONSUMER_GROUP_DESCRIBE as CONSUMER_GROUP_DESCRIBE
    from .m77_share_group_describe import SHARE_GROUP_DESCRIBE as SHARE_GROUP_DESCRIBE
    from .m89_streams_group_describe import STREAMS_GROUP_DESCRIBE as STREAMS_GROUP_DESCRIBE
    from .m90_describe_share_group_offsets import (
        DESCRIBE_SHARE_GROUP_OFFSETS as DESCRIBE_SHARE_GROUP_OFFSETS,
    )

    APIS: dict[int, Api]

# name -> module, in key order (APIS follows it)
_MODULES = {
    "FETCH": "m01_fetch",
    "LIST_OFFSETS": "m02_list_offsets",
    "METADATA": "m03_metadata",
    "OFFSET_FETCH": "m09_offset_fetch",
    "FIND_COORDINATOR": "m10_find_coordinator",
    "JOIN_GROUP": "m11_join_group",
    "HEARTBEAT": "m12_heartbeat",
    "LEAVE_GROUP": "m13_leave_group",
    "SYNC_GROUP": "m14_sync_group",
    "DESCRIBE_GROUPS": "m15_describe_groups",
    "LIST_GROUPS": "m16_list_groups",
    "SASL_HANDSHAKE": "m17_sasl_handshake",
    "API_VERSIONS": "m18_api_versions",
    "SASL_AUTHENTICATE": "m36_sasl_authenticate",
    "CONSUMER_GROUP_HEARTBEAT": "m68_consumer_group_heartbeat",
    "CONSUMER_GROUP_DESCRIBE": "m69_consumer_group_describe",
    "SHARE_GROUP_DESCRIBE": "m77_share_group_describe",
    "STREAMS_GROUP_DESCRIBE": "m89_streams_group_describe",
    "DESCRIBE_SHARE_GROUP_OFFSETS": "m90_describe_share_group_offsets",
}

__all__ = ["APIS", *_MODULES]  # noqa: PLE0604 - _MODULES's keys are the names


def __getattr__(name: str):
    if name == "APIS":
        value = {api.key: api for api in (__getattr__(n) for n in _MODULES)}
    elif name in _MODULES:
        value = getattr(import_module(f"{__name__}.{_MODULES[name]}"), name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
