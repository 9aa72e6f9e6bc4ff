"""What groupctl says about each API it speaks, for tools/gen_codecs.py: the module and
constant names, where a request goes, and the module's docstring (what groupctl uses
the API for; its versions). The fields themselves come from the jar."""

# key -> (module, constant, route, docstring)
APIS = {
    1: ('m01_fetch', 'FETCH', 'leader', """Fetch (key 1): records of partitions from their leader. groupctl fetches
`__consumer_offsets` for `history` (and, later, `watch --source records`), as a plain
consumer (replica id -1), read uncommitted.

Kafka 4.0 dropped v0-v3, so v4 is the baseline (isolation level, last stable offset and
aborted transactions); v5 log start offset; v7 fetch sessions (KIP-227: session id 0 and
epoch -1 for a full fetch without a session); v9 current leader epoch (KIP-320); v11 rack
id and preferred read replica (KIP-392); v12 flexible, diverging epoch, current leader,
snapshot id; v13 topic ids instead of names (KIP-516); v15 replica state (KIP-903); v16
node endpoints (KIP-951); v17 replica directory id (KIP-853); v18 high watermark for
follower fetches (KIP-1166).
"""),
    2: ('m02_list_offsets', 'LIST_OFFSETS', 'leader', """ListOffsets (key 2): the offset of a partition at a timestamp, or at one of the special
timestamps (-1 latest / log end, -2 earliest, -3 max timestamp, -4 local log start,
-5 last tiered, -6 earliest pending upload). groupctl uses it for log-end offsets and lag.
It must go to each partition's leader.

Kafka 4.0 dropped v0, so v1 is the baseline: one offset per partition (v1 also returns the
timestamp of that offset); v2 the isolation level (request) and throttle time (response);
v3 same as v2; v4 the current leader epoch for fencing (request) and the leader epoch of
the offset (response); v5 adds OFFSET_NOT_AVAILABLE; v6 flexible; v7 max timestamp
(KIP-734); v8 local log start offset (KIP-405); v9 last tiered offset (KIP-1005); v10
async remote lookups with a timeout (KIP-1075); v11 earliest pending upload offset
(KIP-1023).
"""),
    3: ('m03_metadata', 'METADATA', 'any', """Metadata (key 3): brokers, the controller, topics with their partitions, leaders and
replicas. groupctl uses it to find brokers, partition counts and partition leaders.

v0 an empty topic list means all topics; from v1 null means all topics and empty means
none, and the response adds broker racks, the controller id and IsInternal; v2 the cluster
id; v3 throttle time; v4 AllowAutoTopicCreation; v5 offline replicas; v6 same as v5; v7
partition leader epochs; v8 authorized operations (cluster and topic); v9 flexible; v10
topic ids (and nullable topic names in the request, not served until v12); v11 drops the
cluster authorized operations (see DescribeCluster, KIP-700); v12 lookup by topic id
(nullable topic names in the response); v13 a top-level error code.
"""),
    9: ('m09_offset_fetch', 'OFFSET_FETCH', 'coordinator', """OffsetFetch (key 9): a group's committed offsets, for some partitions or (null topics)
for all. groupctl uses it for committed offsets and lag; it never commits.

Kafka 4.0 dropped v0, so v1 (offsets from __consumer_offsets) is the baseline; v2 null
topics = all topics, and a top-level error code; v3 throttle time; v4 same as v3; v5 the
committed leader epoch; v6 flexible; v7 RequireStable (UNSTABLE_OFFSET_COMMIT, KIP-447);
v8 several groups per request (KIP-709), everything moves under `groups`; v9 member id and
epoch for KIP-848 groups; v10 topic ids instead of topic names (KIP-848).
"""),
    10: ('m10_find_coordinator', 'FIND_COORDINATOR', 'any', """FindCoordinator (key 10): which broker coordinates a group (key type 0), a transaction
(1) or a share group (2). groupctl asks for group coordinators.

v1 the key type (request), throttle time and an error message (response); v2 same as v1;
v3 flexible; v4 batched lookups: CoordinatorKeys in, Coordinators out, replacing the single
key and the top-level result (KIP-699); v5 TRANSACTION_ABORTABLE (KIP-890); v6 share groups
(KIP-932, key "groupId:topicId:partition").
"""),
    11: ('m11_join_group', 'JOIN_GROUP', 'coordinator', """JoinGroup (key 11): a classic member asks to join, or rejoin, a group.

v1 adds the rebalance timeout; v4 makes a member without an id get MEMBER_ID_REQUIRED
(KIP-394); v5 static membership (KIP-345); v6 flexible; v7 protocol type in the response;
v8 the join reason (KIP-800); v9 SkipAssignment (KIP-814).
"""),
    12: ('m12_heartbeat', 'HEARTBEAT', 'coordinator', """Heartbeat (key 12): a classic member tells the coordinator it is alive. The answer's
error code is how a member learns of a rebalance (REBALANCE_IN_PROGRESS) or that it was
fenced (ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID).

v1 throttle time; v2 responses are sent before throttling; v3 the group instance id for
static members (KIP-345); v4 flexible.
"""),
    13: ('m13_leave_group', 'LEAVE_GROUP', 'coordinator', """LeaveGroup (key 13): a classic member leaves its group, or an admin removes members
(static ones by instance id) so the group rebalances without waiting for session timeouts.

v1 throttle time; v2 responses are sent before throttling; v3 batches: a list of member
identities (member id and/or group instance id, KIP-345) with a result per member; v4
flexible; v5 a reason per member (KIP-800), which the broker logs.
"""),
    14: ('m14_sync_group', 'SYNC_GROUP', 'coordinator', """SyncGroup (key 14): after JoinGroup, the leader sends every member's assignment and
every member (leader or follower) receives its own.

v1 throttle time; v2 responses are sent before throttling; v3 the group instance id
(KIP-345); v4 flexible; v5 protocol type and name in request and response, checked by the
broker against the group's (KIP-559).
"""),
    15: ('m15_describe_groups', 'DESCRIBE_GROUPS', 'coordinator', """DescribeGroups (key 15): state, protocol and members of classic groups, with each
member's metadata (the subscription) and assignment, both filled only when the group is
Stable. A KIP-848 consumer group described this way looks Dead: use ConsumerGroupDescribe.

v1 throttle time; v2 responses are sent before throttling; v3 authorized operations;
v4 members' group instance ids (KIP-345); v5 flexible; v6 an unknown group comes back as
GROUP_ID_NOT_FOUND with an error message instead of state Dead and error 0 (KIP-1043).
"""),
    16: ('m16_list_groups', 'LIST_GROUPS', 'any', """ListGroups (key 16): the groups a broker coordinates (ask every broker for the whole
cluster), with protocol type and, from v4, state, from v5, type (classic / consumer /
share / streams).

v1 throttle time; v2 responses are sent before throttling; v3 flexible; v4 a states
filter and the group state (KIP-518); v5 a types filter and the group type (KIP-848).
"""),
    17: ('m17_sasl_handshake', 'SASL_HANDSHAKE', 'any', """SaslHandshake (key 17): the client names the SASL mechanism it wants; the broker
answers with the mechanisms it enables. Never flexible (its version cannot easily be
bumped, KAFKA-9577).

v0 is followed by raw SASL tokens on the socket; v1 by SaslAuthenticate requests.
"""),
    18: ('m18_api_versions', 'API_VERSIONS', 'any', """ApiVersions (key 18): the API versions (and features) a broker supports; the first
request on every connection. Its response header is always v0, so a client that sent a
version the broker does not know can still read the error and the supported range (and
since KIP-511 the broker then fills ApiKeys with its ApiVersions range).

v1 throttle time; v2 responses are sent before throttling; v3 flexible, with the client
software name and version (KIP-511) and, as tagged fields, supported and finalized
features (KIP-584); v4 allows SupportedFeatures.MinVersion 0 (KAFKA-17011); v5 the
cluster and node id a client expects, checked by the broker (KIP-1242; groupctl sends none
and asks v4 first: client/connection.py).
"""),
    36: ('m36_sasl_authenticate', 'SASL_AUTHENTICATE', 'any', """SaslAuthenticate (key 36): one round of SASL tokens, after SaslHandshake v1.

v1 the session lifetime (KIP-368: the client must re-authenticate before it ends);
v2 flexible.
"""),
    68: ('m68_consumer_group_heartbeat', 'CONSUMER_GROUP_HEARTBEAT', 'coordinator', """ConsumerGroupHeartbeat (key 68): the KIP-848 consumer protocol. A member joins (epoch 0),
heartbeats, reports the partitions it owns and receives its assignment; the broker runs the
assignor. Member epoch -1 leaves, -2 leaves for a while as a static member. Most request
fields are null when unchanged since the last heartbeat; the assignment in the response is
null when it did not change.

Always flexible. v1 adds a subscription by regex (KIP-848) and makes the client generate
its own member id (a UUID kept for the process's life, KIP-1082).
"""),
    69: ('m69_consumer_group_describe', 'CONSUMER_GROUP_DESCRIBE', 'coordinator', """ConsumerGroupDescribe (key 69): KIP-848 consumer groups as the coordinator sees them:
group and assignment epochs, the server assignor, and per member its epoch, subscription,
current assignment and target assignment.

Always flexible. v1 adds each member's type (-1 unknown, 0 classic, 1 consumer; KIP-1099);
the request is the same as v0.
"""),
    77: ('m77_share_group_describe', 'SHARE_GROUP_DESCRIBE', 'coordinator', """ShareGroupDescribe (key 77): KIP-932 share groups as the coordinator sees them: group
and assignment epochs, the server assignor, and per member its epoch, subscribed topics
and current assignment (share groups have no target assignment in the response).

Always flexible. v0 was the early-access version of Kafka 4.0 and is gone: the jar's
validVersions is "1" while the fields say "0+" (they have not changed since v0).
"""),
    89: ('m89_streams_group_describe', 'STREAMS_GROUP_DESCRIBE', 'coordinator', """StreamsGroupDescribe (key 89): KIP-1071 streams groups as the coordinator sees them:
group and target-assignment epochs, the topology the group runs (its epoch and
subtopologies with source, repartition and changelog topics), and per member its epoch,
process id, client, user endpoint and tasks (active, standby, warm-up; current and target).

Always flexible. Topology and a member's user endpoint are nullable structs. v1 (Kafka 4.4)
adds the assignor the coordinator will use next and, when asked, the topology's full
description (processor nodes and global stores) with the status that says why there is none.
"""),
    90: ('m90_describe_share_group_offsets', 'DESCRIBE_SHARE_GROUP_OFFSETS', 'coordinator', """DescribeShareGroupOffsets (key 90): per share-partition of a share group, the start
offset (the first record not yet acknowledged as done) and leader epoch; v1 adds the lag
the broker computes (-1 where it cannot). Null topics ask for every topic-partition.

Always flexible. Errors come per group and per partition, each with a message.
"""),
}
