"""The Kafka error table: every code Kafka defines (Errors.java), with our name, whether a
retry can succeed, and a one-line meaning. `action` says what groupctl does on it today where
that is more than "report it" (never what a future member will do: a row changes with the
code that comes to handle it).

`retriable` is Kafka's own verdict: True exactly where the client exception extends
RetriableException (REBALANCE_IN_PROGRESS, for one, is not: the member must rejoin, not
resend). Codes and names follow kafka-clients 4.3.1; tests/unit/test_errors_table.py checks
the table against the Errors enum in the jar. Meanings are ours, written for operators.
"""
from __future__ import annotations


# Every code by its name (ErrorCode.REBALANCE_IN_PROGRESS == 27). This module is the only
# place a Kafka error code is written as a number; all other code names it through this enum,
# generated from _TABLE as a class mypy can check (python -m groupctl.protocol.typegen).
from ..records import Frozen
from .error_codes import ErrorCode as ErrorCode


class KafkaErrorInfo(Frozen):
    """One row of the error table (see the module doc)."""

    code: int
    name: str
    retriable: bool
    meaning: str
    action: str
    _fields = ("code", "name", "retriable", "meaning", "action")

    def __init__(self, code: int, name: str, retriable: bool, meaning: str, action: str = ""):
        self._init(code=code, name=name, retriable=retriable, meaning=meaning, action=action)

    def to_dict(self) -> dict:
        return {"code": self.code, "name": self.name, "retriable": self.retriable,
                "meaning": self.meaning, "action": self.action or None}


# Actions shared by several codes.
_REDISCOVER = "rediscover the coordinator (FindCoordinator) and retry there"
_AUTH = "exit 4 (authentication or authorization failed)"
_SASL = "exit 4: check sasl.mechanism and credentials in --command-config"
_METADATA = "refresh metadata and retry the offset lookup; lag stays null if it keeps failing"
_RETRY = "retry with back-off until --timeout"
_NO_LOG_END = "describe shows the partition with a null log-end offset (lag null)"
_848_FENCED = ("KIP-848 probe: gives up its partitions and rejoins with member epoch 0 "
               "(same member id)")
_848_FATAL = "KIP-848 probe: fatal, exit 7 with the broker's message"

_E = KafkaErrorInfo
_TABLE = [
    _E(-1, "UNKNOWN_SERVER_ERROR", False,
       "The broker failed in a way it could not classify; its log has the details.",
       "exit 7 with the broker's message"),
    _E(0, "NONE", False, "No error: the request succeeded."),
    _E(1, "OFFSET_OUT_OF_RANGE", False,
       "The offset asked for lies outside the range the partition still holds."),
    _E(2, "CORRUPT_MESSAGE", True,
       "A record failed its checksum, is too large, or is otherwise malformed."),
    _E(3, "UNKNOWN_TOPIC_OR_PARTITION", True,
       "This broker does not host the topic or partition (it may not exist).",
       "describe shows the partition with a null log-end offset"),
    _E(4, "INVALID_FETCH_SIZE", False, "The fetch size in the request is not acceptable."),
    _E(5, "LEADER_NOT_AVAILABLE", True,
       "The partition has no leader right now, typically during a leader election.", _METADATA),
    _E(6, "NOT_LEADER_OR_FOLLOWER", True,
       "This broker is not the leader (or not a replica) of the partition.", _METADATA),
    _E(7, "REQUEST_TIMED_OUT", True, "The broker did not finish the request in time.", _RETRY),
    _E(8, "BROKER_NOT_AVAILABLE", False, "The broker addressed is not available."),
    _E(9, "REPLICA_NOT_AVAILABLE", True,
       "A replica of the partition is not available on the broker asked."),
    _E(10, "MESSAGE_TOO_LARGE", False,
       "A record is larger than the broker or topic accepts."),
    _E(11, "STALE_CONTROLLER_EPOCH", False,
       "The request came from a controller that has since been replaced."),
    _E(12, "OFFSET_METADATA_TOO_LARGE", False,
       "The metadata string of an offset commit exceeds the broker's limit."),
    _E(13, "NETWORK_EXCEPTION", True,
       "The connection closed before a response arrived.",
       "reconnect and retry until --timeout"),
    _E(14, "COORDINATOR_LOAD_IN_PROGRESS", True,
       "The group coordinator is still loading its state from __consumer_offsets.",
       "back off and retry the same coordinator"),
    _E(15, "COORDINATOR_NOT_AVAILABLE", True,
       "No group coordinator is available for the group right now.", _REDISCOVER),
    _E(16, "NOT_COORDINATOR", True,
       "The broker asked is not (or no longer) the group's coordinator.", _REDISCOVER),
    _E(17, "INVALID_TOPIC_EXCEPTION", False,
       "The topic name is not legal, or the operation is not allowed on that topic."),
    _E(18, "RECORD_LIST_TOO_LARGE", False,
       "A record batch is larger than the broker's segment size."),
    _E(19, "NOT_ENOUGH_REPLICAS", True,
       "Too few in-sync replicas to accept the write; nothing was written."),
    _E(20, "NOT_ENOUGH_REPLICAS_AFTER_APPEND", True,
       "The write landed, but on fewer in-sync replicas than required."),
    _E(21, "INVALID_REQUIRED_ACKS", False, "The produce request asked for an unsupported acks value."),
    _E(22, "ILLEGAL_GENERATION", False,
       "The member's generation is not the group's current one; a rebalance passed it by.",
       "the probe resets its generation and rejoins"),
    _E(23, "INCONSISTENT_GROUP_PROTOCOL", False,
       "The member's protocol type or assignors share nothing with the group's.",
       "fatal for the probe: exit 7 naming the group's protocol type when the broker gives it"),
    _E(24, "INVALID_GROUP_ID", False, "The group id is empty or otherwise not acceptable.",
       "fatal: exit 7"),
    _E(25, "UNKNOWN_MEMBER_ID", False,
       "The coordinator does not know this member id (it expired or was removed).",
       "the classic probe drops its member id and generation and rejoins as a new member; "
       "the KIP-848 probe gives up its partitions and rejoins with member epoch 0"),
    _E(26, "INVALID_SESSION_TIMEOUT", False,
       "The session timeout lies outside the broker's group.min/max.session.timeout.ms.",
       "fatal for the probe: exit 7; choose a --session-timeout inside the broker's range"),
    _E(27, "REBALANCE_IN_PROGRESS", False,
       "The group is rebalancing, so the member has to join again.",
       "the probe rejoins, keeping its member id"),
    _E(28, "INVALID_COMMIT_OFFSET_SIZE", False, "The offset commit data has an invalid size."),
    _E(29, "TOPIC_AUTHORIZATION_FAILED", False,
       "The principal lacks permission on one or more topics.", _AUTH),
    _E(30, "GROUP_AUTHORIZATION_FAILED", False,
       "The principal lacks permission on the group.", "fatal: " + _AUTH),
    _E(31, "CLUSTER_AUTHORIZATION_FAILED", False,
       "The principal lacks permission on the cluster resource.", _AUTH),
    _E(32, "INVALID_TIMESTAMP", False, "A record timestamp is outside the accepted range."),
    _E(33, "UNSUPPORTED_SASL_MECHANISM", False,
       "The broker does not offer the SASL mechanism the client asked for.", _SASL),
    _E(34, "ILLEGAL_SASL_STATE", False,
       "The request does not fit the current step of the SASL exchange.", _SASL),
    _E(35, "UNSUPPORTED_VERSION", False,
       "The broker does not support this API or this version of it.",
       "ApiVersions is asked again at v0; elsewhere exit 7 (no version in common)"),
    _E(36, "TOPIC_ALREADY_EXISTS", False, "A topic with this name exists already."),
    _E(37, "INVALID_PARTITIONS", False, "The requested partition count is not valid."),
    _E(38, "INVALID_REPLICATION_FACTOR", False,
       "The replication factor is below 1 or above the number of brokers."),
    _E(39, "INVALID_REPLICA_ASSIGNMENT", False, "The explicit replica assignment is not valid."),
    _E(40, "INVALID_CONFIG", False, "A configuration value in the request is not valid."),
    _E(41, "NOT_CONTROLLER", True, "The broker asked is not the active controller."),
    _E(42, "INVALID_REQUEST", False,
       "The broker found the request malformed or not applicable (see its log).",
       "fatal: exit 7; run with --debug and report it, it is likely a groupctl bug"),
    _E(43, "UNSUPPORTED_FOR_MESSAGE_FORMAT", False,
       "The topic's message format version cannot serve this request."),
    _E(44, "POLICY_VIOLATION", False, "The request breaks a policy configured on the broker."),
    _E(45, "OUT_OF_ORDER_SEQUENCE_NUMBER", False,
       "An idempotent producer's sequence number arrived out of order."),
    _E(46, "DUPLICATE_SEQUENCE_NUMBER", False,
       "An idempotent producer's sequence number was seen before."),
    _E(47, "INVALID_PRODUCER_EPOCH", False, "The producer's epoch is older than the current one."),
    _E(48, "INVALID_TXN_STATE", False,
       "The transactional operation is not allowed in the transaction's current state."),
    _E(49, "INVALID_PRODUCER_ID_MAPPING", False,
       "The producer id is not the one currently tied to its transactional id."),
    _E(50, "INVALID_TRANSACTION_TIMEOUT", False,
       "The transaction timeout exceeds the broker's transaction.max.timeout.ms."),
    _E(51, "CONCURRENT_TRANSACTIONS", True,
       "Another operation on the same transaction is still in progress."),
    _E(52, "TRANSACTION_COORDINATOR_FENCED", False,
       "A transaction marker came from a coordinator that is no longer current."),
    _E(53, "TRANSACTIONAL_ID_AUTHORIZATION_FAILED", False,
       "The principal lacks permission on the transactional id.", _AUTH),
    _E(54, "SECURITY_DISABLED", False, "The security feature asked for is turned off."),
    _E(55, "OPERATION_NOT_ATTEMPTED", False,
       "The broker skipped this part of a batched request after another part failed."),
    _E(56, "KAFKA_STORAGE_ERROR", True, "The broker hit a disk error on the log directory."),
    _E(57, "LOG_DIR_NOT_FOUND", False, "The log directory named is not configured on the broker."),
    _E(58, "SASL_AUTHENTICATION_FAILED", False,
       "SASL authentication failed (wrong credentials or mechanism).", _SASL),
    _E(59, "UNKNOWN_PRODUCER_ID", False,
       "The broker has no state for this producer id, e.g. after its records expired."),
    _E(60, "REASSIGNMENT_IN_PROGRESS", False, "A partition reassignment is already running."),
    _E(61, "DELEGATION_TOKEN_AUTH_DISABLED", False, "Delegation tokens are not enabled."),
    _E(62, "DELEGATION_TOKEN_NOT_FOUND", False, "No such delegation token on the broker."),
    _E(63, "DELEGATION_TOKEN_OWNER_MISMATCH", False,
       "The principal is neither owner nor renewer of the token."),
    _E(64, "DELEGATION_TOKEN_REQUEST_NOT_ALLOWED", False,
       "Token requests are refused on this kind of connection or authentication."),
    _E(65, "DELEGATION_TOKEN_AUTHORIZATION_FAILED", False,
       "The principal lacks permission for the delegation token operation.", _AUTH),
    _E(66, "DELEGATION_TOKEN_EXPIRED", False, "The delegation token has expired.", _AUTH),
    _E(67, "INVALID_PRINCIPAL_TYPE", False, "The principal type is not supported."),
    _E(68, "NON_EMPTY_GROUP", False,
       "The operation needs an empty group, but the group still has members.",
       "exit 7; the group still has members"),
    _E(69, "GROUP_ID_NOT_FOUND", False, "No group with this id exists.",
       "exit 5 (group not found); a KIP-848 member's heartbeat (Kafka 4.4): fatal, exit 7 "
       "(the group was deleted), its leave: done"),
    _E(70, "FETCH_SESSION_ID_NOT_FOUND", True, "The incremental fetch session is unknown."),
    _E(71, "INVALID_FETCH_SESSION_EPOCH", True, "The incremental fetch session epoch is wrong."),
    _E(72, "LISTENER_NOT_FOUND", True,
       "The partition leader has no listener matching the one this request came in on.",
       _NO_LOG_END),
    _E(73, "TOPIC_DELETION_DISABLED", False, "Deleting topics is turned off on this cluster."),
    _E(74, "FENCED_LEADER_EPOCH", True,
       "The request names a leader epoch older than the broker's.", _METADATA),
    _E(75, "UNKNOWN_LEADER_EPOCH", True,
       "The request names a leader epoch newer than the broker knows.", _METADATA),
    _E(76, "UNSUPPORTED_COMPRESSION_TYPE", False,
       "The client cannot handle the partition's compression type."),
    _E(77, "STALE_BROKER_EPOCH", False, "The broker's epoch changed since the request was made."),
    _E(78, "OFFSET_NOT_AVAILABLE", True,
       "The new leader's high watermark has not caught up yet, so offsets are withheld.",
       _NO_LOG_END),
    _E(79, "MEMBER_ID_REQUIRED", False,
       "The coordinator assigned a member id and wants the member to join again with it (KIP-394).",
       "rejoin at once with the given member id"),
    _E(80, "PREFERRED_LEADER_NOT_AVAILABLE", True, "The preferred leader replica is not available."),
    _E(81, "GROUP_MAX_SIZE_REACHED", False,
       "The group already has group.max.size members.",
       "fatal: the group is full, the probe cannot join"),
    _E(82, "FENCED_INSTANCE_ID", False,
       "Another member registered with the same group.instance.id and replaced this one.",
       "fatal: another member took this instance id"),
    _E(83, "ELIGIBLE_LEADERS_NOT_AVAILABLE", True,
       "No eligible replica is available to become leader."),
    _E(84, "ELECTION_NOT_NEEDED", True, "The partition already has the leader the election wanted."),
    _E(85, "NO_REASSIGNMENT_IN_PROGRESS", False, "There is no partition reassignment to cancel."),
    _E(86, "GROUP_SUBSCRIBED_TO_TOPIC", False,
       "The group's offsets for a topic cannot be deleted while it is subscribed to it."),
    _E(87, "INVALID_RECORD", False, "The broker rejected a record that failed validation."),
    _E(88, "UNSTABLE_OFFSET_COMMIT", True,
       "A transaction holding offsets for the partition is still open.",
       "describe shows no committed offset for the partition (lag null)"),
    _E(89, "THROTTLING_QUOTA_EXCEEDED", True,
       "The request would exceed a mutation rate quota.", _RETRY),
    _E(90, "PRODUCER_FENCED", False,
       "A newer producer with the same transactional id fenced this one."),
    _E(91, "RESOURCE_NOT_FOUND", False, "The request refers to a resource that does not exist."),
    _E(92, "DUPLICATE_RESOURCE", False, "The request names the same resource more than once."),
    _E(93, "UNACCEPTABLE_CREDENTIAL", False, "The credential does not meet the broker's criteria."),
    _E(94, "INCONSISTENT_VOTER_SET", False,
       "A KRaft voter request came from, or went to, a replica outside the voter set."),
    _E(95, "INVALID_UPDATE_VERSION", False, "The feature update names an invalid version."),
    _E(96, "FEATURE_UPDATE_FAILED", False,
       "The finalized features could not be updated due to a server-side error."),
    _E(97, "PRINCIPAL_DESERIALIZATION_FAILURE", False,
       "A forwarded request's principal could not be read back; a cluster security set-up problem."),
    _E(98, "SNAPSHOT_NOT_FOUND", False, "The KRaft snapshot asked for does not exist."),
    _E(99, "POSITION_OUT_OF_RANGE", False, "The position lies outside the snapshot."),
    _E(100, "UNKNOWN_TOPIC_ID", True, "This broker does not host a topic with this id.",
       _NO_LOG_END),
    _E(101, "DUPLICATE_BROKER_REGISTRATION", False, "This broker id is already registered."),
    _E(102, "BROKER_ID_NOT_REGISTERED", False, "This broker id was never registered."),
    _E(103, "INCONSISTENT_TOPIC_ID", True,
       "The topic id in the request does not match the one in the log."),
    _E(104, "INCONSISTENT_CLUSTER_ID", False,
       "The request's cluster id does not match this cluster's."),
    _E(105, "TRANSACTIONAL_ID_NOT_FOUND", False, "No transaction with this transactional id."),
    _E(106, "FETCH_SESSION_TOPIC_ID_ERROR", True,
       "The fetch session mixed topic ids and names inconsistently."),
    _E(107, "INELIGIBLE_REPLICA", False, "A proposed ISR contains a replica not allowed in it."),
    _E(108, "NEW_LEADER_ELECTED", False,
       "The partition state was updated, but meanwhile a new leader took over."),
    _E(109, "OFFSET_MOVED_TO_TIERED_STORAGE", False,
       "The offset now lives only in tiered (remote) storage."),
    _E(110, "FENCED_MEMBER_EPOCH", False,
       "KIP-848: the member's epoch was fenced; it must give up its partitions and rejoin.",
       _848_FENCED),
    _E(111, "UNRELEASED_INSTANCE_ID", False,
       "KIP-848: another member still holds this instance id and must leave first.",
       _848_FATAL + " (retry once the other member has left)"),
    _E(112, "UNSUPPORTED_ASSIGNOR", False,
       "KIP-848: the group coordinator has no server assignor by that name.",
       _848_FATAL + " (join checks --assignor uniform|range before sending)"),
    _E(113, "STALE_MEMBER_EPOCH", False,
       "KIP-848: the member epoch is behind; the next heartbeat brings the current one.",
       _848_FENCED),
    _E(114, "MISMATCHED_ENDPOINT_TYPE", False,
       "The request reached the wrong kind of endpoint (broker vs. controller)."),
    _E(115, "UNSUPPORTED_ENDPOINT_TYPE", False, "That kind of endpoint is not supported yet."),
    _E(116, "UNKNOWN_CONTROLLER_ID", False, "No controller with this id is known."),
    _E(117, "UNKNOWN_SUBSCRIPTION_ID", False,
       "A client-telemetry push used an unknown or outdated subscription id."),
    _E(118, "TELEMETRY_TOO_LARGE", False,
       "A client-telemetry push is larger than the broker accepts."),
    _E(119, "INVALID_REGISTRATION", False,
       "The controller judged the broker's registration invalid."),
    _E(120, "TRANSACTION_ABORTABLE", False,
       "The transaction hit an error; aborting it lets the transactional id be used again."),
    _E(121, "INVALID_RECORD_STATE", False,
       "Share groups: the record is not in a state that allows this acknowledgement."),
    _E(122, "SHARE_SESSION_NOT_FOUND", True, "Share groups: the share session is unknown."),
    _E(123, "INVALID_SHARE_SESSION_EPOCH", True, "Share groups: the share session epoch is wrong."),
    _E(124, "FENCED_STATE_EPOCH", False,
       "Share groups: the share-group state epoch did not match the share coordinator's."),
    _E(125, "INVALID_VOTER_KEY", False, "The KRaft voter key does not match the replica's."),
    _E(126, "DUPLICATE_VOTER", False, "The replica is a KRaft voter already."),
    _E(127, "VOTER_NOT_FOUND", False, "The replica is not among the KRaft voters."),
    _E(128, "INVALID_REGULAR_EXPRESSION", False,
       "KIP-848: the subscription regular expression is not valid for the broker (RE2/J).",
       _848_FATAL + " (fix --topic-regex)"),
    _E(129, "REBOOTSTRAP_REQUIRED", False,
       "The client's cluster metadata is stale; it must start over from the bootstrap servers.",
       "exit 7 (groupctl does not rebootstrap)"),
    _E(130, "STREAMS_INVALID_TOPOLOGY", False, "Streams groups: the topology sent is not valid."),
    _E(131, "STREAMS_INVALID_TOPOLOGY_EPOCH", False,
       "Streams groups: the topology epoch sent is not valid."),
    _E(132, "STREAMS_TOPOLOGY_FENCED", False,
       "Streams groups: the topology epoch is older than the group's."),
    _E(133, "SHARE_SESSION_LIMIT_REACHED", True,
       "Share groups: the broker has reached its limit of share sessions."),
    _E(134, "GROUP_DELETION_FAILED", False,
       "The group could not be deleted; the reason is in the error message."),
    _E(135, "STREAMS_TOPOLOGY_DESCRIPTION_UPDATE_FAILED", False,
       "Streams groups: the broker could not process an update of the topology description."),
    _E(136, "CONTROLLER_ID_NOT_REGISTERED", False,
       "The controller id is not among the registered controllers."),
]
del _E

ERRORS: dict[int, KafkaErrorInfo] = {e.code: e for e in _TABLE}
_BY_NAME = {e.name: e for e in _TABLE}


def error_for(code: int) -> KafkaErrorInfo:
    """The entry for a code; codes newer than this table still get a usable entry."""
    return ERRORS.get(code) or KafkaErrorInfo(code, f"UNKNOWN_ERROR_{code}", False,
                                              "An error code this groupctl does not know.")


def error_by_name(name: str) -> KafkaErrorInfo | None:
    """The entry for a name, case-insensitive; `rebalance-in-progress` works too."""
    return _BY_NAME.get(name.strip().upper().replace("-", "_"))
