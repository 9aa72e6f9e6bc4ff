"""The states of a classic (JoinGroup/SyncGroup) group member, and the legal moves between them.

In the style of the Java client's KIP-848 `MemberState`: an explicit enum whose members say
what the member does while in them, a table of legal transitions (data), and one place
(`StateTracker.move`, generic, in coordinator/members/interface.py) through which every transition
goes, is validated and is recorded as (from, to, reason, at_ms). An illegal transition is a
bug and raises.

The coordinator connection is not a state: whether the member knows its coordinator is
orthogonal (a STABLE member whose heartbeat got NOT_COORDINATOR is still a member of its
generation while it rediscovers the coordinator), as in the Java client.
"""
from __future__ import annotations

from ..interface import (  # noqa: F401 - re-exported
    DocumentedState, IllegalTransitionError, StateTracker, Transition,
)


class ClassicMemberState(DocumentedState):
    """A classic member's state. `ClassicMemberState.X.__doc__` says what it does there."""

    UNJOINED = ("unjoined", """
        Not a member and not trying to be one yet: the state of a new member. It sends
        nothing; the first call to `next_requests` starts the join (-> JOINING). Leaving from
        here needs no request (-> LEFT).""")

    JOINING = ("joining", """
        A join round is under way: a JoinGroup is queued or in flight, or waits for the
        coordinator to be (re)discovered or for a back-off to end. No heartbeats: the broker
        parks the JoinGroup until every member has rejoined or the rebalance timeout ends.
        Errors that only call for another JoinGroup (MEMBER_ID_REQUIRED, UNKNOWN_MEMBER_ID,
        REBALANCE_IN_PROGRESS, coordinator moved or loading, a lost connection) stay here
        (JOINING -> JOINING, recorded with the reason).""")

    ASSIGNING = ("assigning", """
        Joined a generation as its leader (and SkipAssignment was false): the member waits
        for the driver to run the group's assignor over the members' subscriptions
        (`pending_assignment` -> `provide_assignment`, or `assignment_failed`). The group is
        in CompletingRebalance; heartbeats continue, so a slow assignment does not cost the
        session.""")

    AWAITING_SYNC = ("awaiting_sync", """
        Joined a generation and has (as leader) the assignment or (as follower, or as a
        KIP-814 leader told to skip assignment) nothing to send: a SyncGroup is queued or in
        flight. No heartbeats until the SyncGroup is answered.""")

    STABLE = ("stable", """
        Member of the current generation with its assignment: it heartbeats every
        heartbeat interval and watches the session timeout. REBALANCE_IN_PROGRESS,
        ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID or an expired session send it back to
        JOINING.""")

    LEAVING = ("leaving", """
        Leaving the group: a LeaveGroup (naming the member id, and the instance id of a
        static member, with a KIP-800 reason) is queued or in flight, after a FindCoordinator
        if the coordinator is unknown. A JoinGroup may still be parked at the broker (the
        force-rebalance case); its answer is ignored. Whatever the LeaveGroup's outcome, the
        member ends LEFT (or FATAL when it leaves because of a fatal condition).""")

    LEFT = ("left", """
        Terminal: the member left the group (or never joined). It sends nothing more.""")

    FATAL = ("fatal", """
        Terminal: a fatal error ended membership (FENCED_INSTANCE_ID,
        INCONSISTENT_GROUP_PROTOCOL, INVALID_SESSION_TIMEOUT, GROUP_MAX_SIZE_REACHED,
        GROUP_AUTHORIZATION_FAILED, INVALID_GROUP_ID, an unexpected non-retriable error, or a
        leader that could not assign). `fatal_error` holds the exception the driver raises.
        It sends nothing more.""")

    @property
    def terminal(self) -> bool:
        return self in (ClassicMemberState.LEFT, ClassicMemberState.FATAL)

    @property
    def heartbeating(self) -> bool:
        """States in which the member sends heartbeats (no JoinGroup/SyncGroup in flight)."""
        return self in (ClassicMemberState.ASSIGNING, ClassicMemberState.STABLE)

    @property
    def group_state(self) -> str | None:
        """The group state this member state implies (None: not in a round)."""
        return _GROUP_STATE.get(self)

    def __str__(self) -> str:
        return self.name


S = ClassicMemberState

_GROUP_STATE = {S.JOINING: "PreparingRebalance", S.ASSIGNING: "CompletingRebalance",
                S.AWAITING_SYNC: "CompletingRebalance", S.STABLE: "Stable"}

LEGAL_TRANSITIONS: dict[ClassicMemberState, frozenset[ClassicMemberState]] = {
    S.UNJOINED: frozenset({S.JOINING, S.LEFT}),
    S.JOINING: frozenset({S.JOINING, S.ASSIGNING, S.AWAITING_SYNC, S.LEAVING, S.LEFT, S.FATAL}),
    S.ASSIGNING: frozenset({S.AWAITING_SYNC, S.JOINING, S.LEAVING, S.FATAL}),
    S.AWAITING_SYNC: frozenset({S.STABLE, S.JOINING, S.LEAVING, S.FATAL}),
    S.STABLE: frozenset({S.JOINING, S.LEAVING, S.FATAL}),
    S.LEAVING: frozenset({S.LEFT, S.FATAL}),
    S.LEFT: frozenset(),
    S.FATAL: frozenset(),
}


class ClassicStateTracker(StateTracker[ClassicMemberState]):
    """The tracker of a classic member: starts UNJOINED, validates against LEGAL_TRANSITIONS."""

    def __init__(self, initial: ClassicMemberState = S.UNJOINED, *, keep: int = 1000):
        super().__init__(initial, LEGAL_TRANSITIONS, keep=keep)
