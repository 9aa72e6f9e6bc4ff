"""StreamsGroupDescribe (key 89): KIP-1071 streams groups as the coordinator sees them:
group and target-assignment epochs, the topology the group runs (its epoch and
subtopologies with source, repartition and changelog topics), and per member its epoch,
process id, client, user endpoint and tasks (active, standby, warm-up; current and target).

Always flexible; v0 only. Topology and a member's user endpoint are nullable structs.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..spec import (
    COORDINATOR, Api, Array, Bool, Field, Int16, Int32, Int64, String, Struct, Uint16,
)

if TYPE_CHECKING:  # pragma: no cover - the bodies are for the type checker only
    from ..bodies import StreamsGroupDescribeResponse

# commonStructs of the response.
ENDPOINT = Struct(
    Field("host", String),
    Field("port", Uint16),
)
TASK_OFFSET = Struct(
    Field("subtopology_id", String),
    Field("partition", Int32),
    Field("offset", Int64),
)
TASK_IDS = Struct(
    Field("subtopology_id", String),
    Field("partitions", Array(Int32)),
)
ASSIGNMENT = Struct(
    Field("active_tasks", Array(TASK_IDS)),
    Field("standby_tasks", Array(TASK_IDS)),
    Field("warmup_tasks", Array(TASK_IDS)),
)
KEY_VALUE = Struct(
    Field("key", String),
    Field("value", String),
)
TOPIC_INFO = Struct(
    Field("name", String),
    Field("partitions", Int32, about="0: not enforced; always 0 for changelog topics"),
    Field("replication_factor", Int16),
    Field("topic_configs", Array(KEY_VALUE)),
)

TOPOLOGY = Struct(
    Field("epoch", Int32),
    Field("subtopologies", Array(
        Field("subtopology_id", String),
        Field("source_topics", Array(String)),
        Field("repartition_sink_topics", Array(String)),
        Field("state_changelog_topics", Array(TOPIC_INFO)),
        Field("repartition_source_topics", Array(TOPIC_INFO)),
    ), nullable=True, default=None,
        about="null while uninitialized or when source topics are missing"),
)

STREAMS_GROUP_DESCRIBE: Api[StreamsGroupDescribeResponse] = Api(
    89, "StreamsGroupDescribe", versions=(0, 0), flexible_from=0,
    route=COORDINATOR,
    request=Struct(
        Field("group_ids", Array(String)),
        Field("include_authorized_operations", Bool),
    ),
    response=Struct(
        Field("throttle_time_ms", Int32),
        Field("groups", Array(
            Field("error_code", Int16),
            Field("error_message", String, nullable=True, default=None),
            Field("group_id", String),
            Field("group_state", String),
            Field("group_epoch", Int32),
            Field("assignment_epoch", Int32),
            Field("topology", TOPOLOGY, nullable=True, default=None),
            Field("members", Array(
                Field("member_id", String),
                Field("member_epoch", Int32),
                Field("instance_id", String, nullable=True, default=None),
                Field("rack_id", String, nullable=True, default=None),
                Field("client_id", String),
                Field("client_host", String),
                Field("topology_epoch", Int32),
                Field("process_id", String),
                Field("user_endpoint", ENDPOINT, nullable=True, default=None),
                Field("client_tags", Array(KEY_VALUE)),
                Field("task_offsets", Array(TASK_OFFSET)),
                Field("task_end_offsets", Array(TASK_OFFSET)),
                Field("assignment", ASSIGNMENT),
                Field("target_assignment", ASSIGNMENT),
                Field("is_classic", Bool),
            )),
            Field("authorized_operations", Int32, default=-2147483648),
        )),
    ),
)
