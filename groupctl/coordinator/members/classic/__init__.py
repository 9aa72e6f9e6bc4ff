"""The classic (JoinGroup/SyncGroup) member protocol: its sans-IO member (member.py), its
states and their legal transitions (state.py), and its vocabulary with the error table
(types.py). Everything shared with other member protocols is in members/interface.py and base.py."""
from .member import ClassicMember
from .state import LEGAL_TRANSITIONS, ClassicMemberState, ClassicStateTracker
from .types import (
    APIS, FIND_COORDINATOR, HEARTBEAT, JOIN_GROUP, LEAVE_GROUP, REACTIONS, SYNC_GROUP,
    Coordinator, GenerationRecord, JoinedMember, Outgoing, PendingAssignment,
)
from ..interface import IllegalTransitionError, Transition

__all__ = [
    "ClassicMember", "ClassicMemberState", "ClassicStateTracker", "LEGAL_TRANSITIONS",
    "Outgoing", "Coordinator", "JoinedMember", "PendingAssignment", "GenerationRecord",
    "Transition", "IllegalTransitionError", "REACTIONS", "APIS",
    "FIND_COORDINATOR", "JOIN_GROUP", "SYNC_GROUP", "HEARTBEAT", "LEAVE_GROUP",
]
