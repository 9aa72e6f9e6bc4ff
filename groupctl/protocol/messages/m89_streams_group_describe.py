"""StreamsGroupDescribe (key 89): KIP-1071 streams groups as the coordinator sees them:
group and target-assignment epochs, the topology the group runs (its epoch and
subtopologies with source, repartition and changelog topics), and per member its epoch,
process id, client, user endpoint and tasks (active, standby, warm-up; current and target).

Always flexible. Topology and a member's user endpoint are nullable structs. v1 (Kafka 4.4)
adds the assignor the coordinator will use next and, when asked, the topology's full
description (processor nodes and global stores) with the status that says why there is none.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..spec import (
    COORDINATOR, Api, Array, Bool, Field, Int8, Int16, Int32, Int64, String, Struct, Uint16,
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

DESCRIPTION_NODE = Struct(
    Field("name", String, since=1),
    Field("node_type", Int8, since=1, about="1 SOURCE, 2 PROCESSOR, 3 SINK"),
    Field("source_topics", Array(String), since=1),
    Field("sink_topic", String, since=1, nullable=True, default=None),
    Field("stores", Array(String), since=1),
    Field("successors", Array(String), since=1),
)
TOPOLOGY_DESCRIPTION = Struct(
    Field("subtopologies", Array(
        Field("subtopology_id", String, since=1),
        Field("nodes", Array(DESCRIPTION_NODE), since=1),
    ), since=1),
    Field("global_stores", Array(
        Field("source", DESCRIPTION_NODE, since=1),
        Field("processor", DESCRIPTION_NODE, since=1),
    ), since=1),
)

STREAMS_GROUP_DESCRIBE: Api[StreamsGroupDescribeResponse] = Api(
    89, "StreamsGroupDescribe", versions=(0, 1), flexible_from=0,
    route=COORDINATOR,
    request=Struct(
        Field("group_ids", Array(String)),
        Field("include_authorized_operations", Bool),
        Field("include_topology_description", Bool, since=1, default=False),
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
            Field("topology_description", TOPOLOGY_DESCRIPTION, since=1, nullable=True,
                  default=None, about="non-null iff topology_description_status is 3"),
            Field("topology_description_status", Int8, since=1, default=0,
                  about="0 NOT_REQUESTED, 1 NOT_STORED, 2 ERROR, 3 AVAILABLE"),
            Field("assignor_name", String, since=1, nullable=True, default=None),
        )),
    ),
)
