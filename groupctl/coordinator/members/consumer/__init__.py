"""The KIP-848 consumer-protocol member (ConsumerGroupHeartbeat): member.py (the sans-IO
state machine), state.py (its states and legal transitions), types.py (its error table),
reconcile.py (the reconciliation step)."""
from .member import ConsumerMember
from .reconcile import Reconciliation, reconcile
from .state import LEGAL_TRANSITIONS, ConsumerMemberState, ConsumerStateTracker
from .types import (
    FATAL_HINTS, JOIN_EPOCH, LEAVE_EPOCH, NO_PARTITIONS_TOPIC, REACTIONS, SERVER_ASSIGNORS,
    STATIC_LEAVE_EPOCH,
)

__all__ = ["ConsumerMember", "ConsumerMemberState", "ConsumerStateTracker",
           "LEGAL_TRANSITIONS", "REACTIONS", "FATAL_HINTS", "SERVER_ASSIGNORS", "JOIN_EPOCH",
           "LEAVE_EPOCH", "STATIC_LEAVE_EPOCH", "NO_PARTITIONS_TOPIC", "Reconciliation", "reconcile"]
