"""Vocabulary of the sans-IO consumer-protocol member (member.py): API names, the member
epochs with a meaning, what it does about each error code (a table, in data), and the
checks of its settings."""
from __future__ import annotations

from ....errors import UsageError
from ....protocol.errors import ErrorCode
from ..interface import Reaction, find_reactions
from .state import ConsumerMemberState

S = ConsumerMemberState

FIND_COORDINATOR = "FindCoordinator"
HEARTBEAT = "ConsumerGroupHeartbeat"
METADATA = "Metadata"
APIS = (FIND_COORDINATOR, HEARTBEAT, METADATA)

JOIN_EPOCH = 0            # the first heartbeat: "I am joining"
LEAVE_EPOCH = -1          # leaving for good
STATIC_LEAVE_EPOCH = -2   # a static member leaving for a while (KIP-848: its partitions wait)

SERVER_ASSIGNORS = ("uniform", "range")   # the broker's built-in group.consumer.assignors

# What a member that wants no partitions (the probe without --topics/--topic-regex)
# subscribes to: one name no topic can ever have (':' is not legal in a topic name), so the
# assignor never gives it anything. Not an empty list: Kafka's coordinator (4.3.1) treats a
# join with [] as "no subscription change" (a new member starts at []), so it neither bumps
# the group epoch nor recounts the group's subscription type; if a target assignment is
# pending at that moment (a leave just bumped the epoch), it computes it with the member in
# and the stale HOMOGENEOUS type, and the uniform assignor then spreads the FIRST member's
# topics over everyone: real members lose partitions to the probe, or all of them.
# The Java client never sends [] (subscribe([]) is unsubscribe()); a non-empty list is what
# it sends for a topic that does not exist, and the broker handles that right.
# docs/concepts/probe.md, "The KIP-848 probe's subscription".
NO_PARTITIONS_TOPIC = "groupctl:no-partitions"

# What the member does about an error code in a ConsumerGroupHeartbeat answer (the Java
# client's ConsumerHeartbeatRequestManager, as one table). Codes not named here: RETRY when
# Kafka calls them retriable, else FATAL (member.classify).
#   RESET_GENERATION: fenced; release the partitions, rejoin with epoch 0, same member id.
#   RESET_MEMBER: the broker does not know the member; as above (v0: the broker's member id
#   is dropped, it gives a new one; v1: the client's UUID is kept for the process life).
REACTIONS: dict[int, Reaction] = {
    ErrorCode.FENCED_MEMBER_EPOCH: Reaction.RESET_GENERATION,
    ErrorCode.STALE_MEMBER_EPOCH: Reaction.RESET_GENERATION,
    ErrorCode.UNKNOWN_MEMBER_ID: Reaction.RESET_MEMBER,
    ErrorCode.COORDINATOR_NOT_AVAILABLE: Reaction.REDISCOVER,
    ErrorCode.NOT_COORDINATOR: Reaction.REDISCOVER,
    ErrorCode.COORDINATOR_LOAD_IN_PROGRESS: Reaction.RETRY,
    ErrorCode.UNRELEASED_INSTANCE_ID: Reaction.FATAL,
    ErrorCode.GROUP_MAX_SIZE_REACHED: Reaction.FATAL,
    ErrorCode.UNSUPPORTED_ASSIGNOR: Reaction.FATAL,
    ErrorCode.INVALID_REQUEST: Reaction.FATAL,
    ErrorCode.INVALID_REGULAR_EXPRESSION: Reaction.FATAL,
    ErrorCode.FENCED_INSTANCE_ID: Reaction.FATAL,
    ErrorCode.GROUP_AUTHORIZATION_FAILED: Reaction.FATAL,
    ErrorCode.TOPIC_AUTHORIZATION_FAILED: Reaction.FATAL,
    ErrorCode.UNSUPPORTED_VERSION: Reaction.FATAL,
    ErrorCode.INVALID_GROUP_ID: Reaction.FATAL,
    # Kafka 4.4: a heartbeat to a group that no longer exists (deleted under its members)
    ErrorCode.GROUP_ID_NOT_FOUND: Reaction.FATAL,
}

# A leave (epoch -1) answered GROUP_ID_NOT_FOUND: the group is gone, so is the member; the
# Java client (4.4, AbstractHeartbeatRequestManager) logs it and carries on.
LEAVE_GONE = frozenset({ErrorCode.GROUP_ID_NOT_FOUND})

FIND_REACTIONS = find_reactions(REACTIONS)   # a FindCoordinator error: retry or give up

FATAL_HINTS: dict[int, str] = {
    ErrorCode.UNRELEASED_INSTANCE_ID: "another member still holds this group.instance.id "
                                      "(--instance-id); try again once it has left or its "
                                      "session has expired",
    ErrorCode.GROUP_MAX_SIZE_REACHED: "the group is at the broker's group.consumer.max.size",
    ErrorCode.UNSUPPORTED_ASSIGNOR: "the broker has no such server assignor "
                                    "(group.consumer.assignors; built in: uniform, range)",
    ErrorCode.INVALID_REQUEST: "the broker rejected the heartbeat as invalid",
    ErrorCode.INVALID_REGULAR_EXPRESSION: "the broker cannot compile --topic-regex "
                                          "(RE2/J syntax)",
    ErrorCode.FENCED_INSTANCE_ID: "another member joined with the same group.instance.id",
    ErrorCode.UNSUPPORTED_VERSION: "the coordinator does not serve the consumer group "
                                   "protocol (KIP-848) for this group; join with "
                                   "--protocol classic",
    ErrorCode.INVALID_GROUP_ID: "the group id is not valid",
    ErrorCode.GROUP_ID_NOT_FOUND: "the group no longer exists (deleted while the probe was "
                                  "in it); join again to create it anew",
    ErrorCode.TOPIC_AUTHORIZATION_FAILED: "the principal may not DESCRIBE every subscribed "
                                          "topic; without --topics the probe subscribes to "
                                          f"{NO_PARTITIONS_TOPIC!r} (a name no topic can "
                                          "have), which needs a DESCRIBE ACL too (literal, "
                                          "or prefixed 'groupctl:')",
}

# Which state(s) an in-flight request still matters in; leaving them forgets the request
# (a late answer is then ignored).
RELEVANT = {
    HEARTBEAT: lambda s: s.in_group or s is S.LEAVING,
    METADATA: lambda s: s is not S.FATAL,
    FIND_COORDINATOR: lambda s: s is not S.FATAL,
}


def check_settings(group_id: str, rebalance_timeout_ms: int, instance_id: str | None,
                   server_assignor: str | None, topics: list[str],
                   topic_regex: str | None) -> None:
    """UsageError for settings no broker would accept from a consumer member."""
    if not group_id:
        raise UsageError("the group id must not be empty")
    if rebalance_timeout_ms <= 0:
        raise UsageError("the rebalance timeout must be > 0")
    if instance_id == "":
        raise UsageError("the group instance id must not be empty")
    if server_assignor is not None and server_assignor not in SERVER_ASSIGNORS:
        raise UsageError(f"server assignor {server_assignor!r}: the broker's built-in "
                         f"assignors are {', '.join(SERVER_ASSIGNORS)}")
    if topics and topic_regex:
        raise UsageError("subscribe to topic names or to a regex, not both")
    if topic_regex == "":
        raise UsageError("the topic regex must not be empty")


def subscribed_topic_names(topics: list[str], topic_regex: str | None) -> list[str] | None:
    """The SubscribedTopicNames a member sends in full: None with a regex, the topics, or,
    wanting no partitions, [NO_PARTITIONS_TOPIC] (never [], see NO_PARTITIONS_TOPIC)."""
    if topic_regex is not None:
        return None
    return list(topics) or [NO_PARTITIONS_TOPIC]
