"""One module per API, named by key; APIS maps key -> Api."""
from .m02_list_offsets import LIST_OFFSETS
from .m03_metadata import METADATA
from .m09_offset_fetch import OFFSET_FETCH
from .m10_find_coordinator import FIND_COORDINATOR
from .m11_join_group import JOIN_GROUP
from .m12_heartbeat import HEARTBEAT
from .m13_leave_group import LEAVE_GROUP
from .m14_sync_group import SYNC_GROUP
from .m15_describe_groups import DESCRIBE_GROUPS
from .m16_list_groups import LIST_GROUPS
from .m17_sasl_handshake import SASL_HANDSHAKE
from .m18_api_versions import API_VERSIONS
from .m36_sasl_authenticate import SASL_AUTHENTICATE
from .m68_consumer_group_heartbeat import CONSUMER_GROUP_HEARTBEAT
from .m69_consumer_group_describe import CONSUMER_GROUP_DESCRIBE

__all__ = [
    "APIS", "LIST_OFFSETS", "METADATA", "OFFSET_FETCH", "FIND_COORDINATOR", "JOIN_GROUP",
    "HEARTBEAT", "LEAVE_GROUP", "SYNC_GROUP", "DESCRIBE_GROUPS", "LIST_GROUPS",
    "SASL_HANDSHAKE", "API_VERSIONS", "SASL_AUTHENTICATE", "CONSUMER_GROUP_HEARTBEAT",
    "CONSUMER_GROUP_DESCRIBE",
]

APIS = {api.key: api for api in (
    LIST_OFFSETS,
    METADATA,
    OFFSET_FETCH,
    FIND_COORDINATOR,
    JOIN_GROUP,
    HEARTBEAT,
    LEAVE_GROUP,
    SYNC_GROUP,
    DESCRIBE_GROUPS,
    LIST_GROUPS,
    SASL_HANDSHAKE,
    API_VERSIONS,
    SASL_AUTHENTICATE,
    CONSUMER_GROUP_HEARTBEAT,
    CONSUMER_GROUP_DESCRIBE,
)}
