"""The states of a KIP-848 consumer-protocol member (ConsumerGroupHeartbeat), and the legal
moves between them: the Java client's `MemberState`, as an explicit enum whose members say
what the member does there, a table of legal transitions (data), and one place
(`StateTracker.move`, coordinator/members/interface.py) through which every transition goes, is
validated and is recorded as (from, to, reason, at_ms). An illegal transition is a bug and
raises.

As in the Java client, UNSUBSCRIBED is both where a member starts and where it ends after
leaving; `ConsumerMember.done` tells the two apart (a member that left sends nothing more).
"""
from __future__ import annotations

from ..interface import DocumentedState, StateTracker


class ConsumerMemberState(DocumentedState):
    """A consumer-protocol member's state. `ConsumerMemberState.X.__doc__` says what it does
    there."""

    UNSUBSCRIBED = ("unsubscribed", """
        Not in the group: the state of a new member, and of one that has left. A new member
        sends nothing; the first call to `next_requests` starts the join (-> JOINING). A
        member that left (`done`) stays here and sends nothing more.""")

    JOINING = ("joining", """
        Joining: a ConsumerGroupHeartbeat with member epoch 0 and every field (rebalance
        timeout, subscription, an empty list of owned partitions, server assignor, rack,
        instance id) is queued or in flight, or waits for the coordinator or a back-off.
        Once the broker answered with a member epoch the member stays here, heartbeating at
        the broker's interval, until a response carries its first assignment
        (-> RECONCILING).""")

    RECONCILING = ("reconciling", """
        A response carried an assignment that differs from what the member owns: it
        revokes what is no longer its own (nothing to commit: the probe consumes nothing)
        and takes the new partitions, then -> ACKNOWLEDGING. The step is synchronous, but
        the state is recorded so the log shows every reconciliation and its reason.""")

    ACKNOWLEDGING = ("acknowledging", """
        Reconciled: the next heartbeat, sent at once rather than at the interval, carries
        the partitions the member now owns, so the broker learns it reached its target. Its
        answer -> STABLE (or RECONCILING again when it carries yet another assignment).""")

    STABLE = ("stable", """
        Owns its target assignment and the broker knows it: heartbeats every interval the
        broker gave, sending only what changed since the last heartbeat (member id and epoch
        always). A new assignment -> RECONCILING; FENCED_MEMBER_EPOCH / UNKNOWN_MEMBER_ID ->
        FENCED.""")

    FENCED = ("fenced", """
        The broker fenced the member (FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID, or a stale
        epoch): it has already lost its partitions, so it releases them without revoking,
        and the next `next_requests` rejoins with member epoch 0 and the same member id
        (-> JOINING).""")

    PREPARE_LEAVING = ("prepare_leaving", """
        Leaving was asked for: the member releases its partitions (nothing to commit), then
        -> LEAVING at once.""")

    LEAVING = ("leaving", """
        The leave heartbeat (member epoch -1, or -2 for a static member: "temporarily left",
        KIP-848, so its partitions wait for it) is queued or in flight, after a
        FindCoordinator if the coordinator is unknown. Whatever the answer, the member ends
        UNSUBSCRIBED and done (or FATAL when it leaves because of a fatal condition).""")

    FATAL = ("fatal", """
        Terminal: a fatal error ended membership (UNRELEASED_INSTANCE_ID,
        GROUP_MAX_SIZE_REACHED, UNSUPPORTED_ASSIGNOR, INVALID_REQUEST, INVALID_REGULAR_EXPRESSION,
        FENCED_INSTANCE_ID, GROUP_AUTHORIZATION_FAILED, UNSUPPORTED_VERSION or another
        non-retriable error). `fatal_error` holds the exception the driver raises.""")

    @property
    def in_group(self) -> bool:
        """States in which the member holds an epoch and heartbeats."""
        return self in _IN_GROUP

    @property
    def group_state(self) -> str | None:
        """The consumer-group state this member state implies (None: not in a round)."""
        return _GROUP_STATE.get(self)

    def __str__(self) -> str:
        return self.name


S = ConsumerMemberState
_IN_GROUP = frozenset({S.JOINING, S.RECONCILING, S.ACKNOWLEDGING, S.STABLE})
_GROUP_STATE = {S.RECONCILING: "Reconciling", S.ACKNOWLEDGING: "Reconciling",
                S.STABLE: "Stable"}

LEGAL_TRANSITIONS: dict[ConsumerMemberState, frozenset[ConsumerMemberState]] = {
    S.UNSUBSCRIBED: frozenset({S.JOINING, S.UNSUBSCRIBED}),
    S.JOINING: frozenset({S.JOINING, S.RECONCILING, S.FENCED, S.PREPARE_LEAVING,
                          S.UNSUBSCRIBED, S.FATAL}),
    S.RECONCILING: frozenset({S.ACKNOWLEDGING, S.FENCED, S.PREPARE_LEAVING, S.FATAL}),
    S.ACKNOWLEDGING: frozenset({S.STABLE, S.RECONCILING, S.ACKNOWLEDGING, S.FENCED,
                                S.PREPARE_LEAVING, S.FATAL}),
    S.STABLE: frozenset({S.RECONCILING, S.FENCED, S.PREPARE_LEAVING, S.FATAL}),
    S.FENCED: frozenset({S.JOINING, S.PREPARE_LEAVING, S.UNSUBSCRIBED, S.FATAL}),
    S.PREPARE_LEAVING: frozenset({S.LEAVING, S.UNSUBSCRIBED}),
    S.LEAVING: frozenset({S.UNSUBSCRIBED, S.FATAL}),
    S.FATAL: frozenset(),
}


class ConsumerStateTracker(StateTracker[ConsumerMemberState]):
    """The tracker of a consumer member: starts UNSUBSCRIBED, validates against
    LEGAL_TRANSITIONS."""

    def __init__(self, initial: ConsumerMemberState = S.UNSUBSCRIBED, *, keep: int = 1000):
        super().__init__(initial, LEGAL_TRANSITIONS, keep=keep)
