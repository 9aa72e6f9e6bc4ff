"""`remove-member`: LeaveGroup on behalf of static members (KIP-345), as Kafka's Admin
`removeMembersFromConsumerGroup` does: LeaveGroup v3+ naming each member by its group
instance id (member id left empty), with a KIP-800 reason (v5+) per member, and a result
per member in the answer.

Classic groups: the coordinator removes each named static member and rebalances the rest
at once (no waiting for session timeouts). Consumer (KIP-848) groups: Kafka 4.x takes the
same LeaveGroup for them (GroupMetadataManager.classicGroupLeaveToConsumerGroup): a static
member named by instance id is removed whichever protocol it speaks, and the group epoch
is bumped; the member, if still running, is fenced at its next heartbeat and rejoins as a
new member. Checked on the lab's 4.3.1 broker (tests/integration/test_remove_member.py).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ...client.interface import ClusterLike
from ...protocol.errors import ErrorCode, error_for

if TYPE_CHECKING:  # pragma: no cover - decoded bodies, for the type checker
    from ...protocol.bodies import LeaveGroupResponse

REASON_MAX = 255


@dataclass
class MemberResult:
    instance_id: str
    member_id: str | None
    error_code: int

    def to_dict(self) -> dict:
        error = error_for(self.error_code) if self.error_code else None
        return {"instance_id": self.instance_id, "member_id": self.member_id or None,
                "removed": not self.error_code, "error_code": self.error_code,
                "error": error.name if error else None}


@dataclass
class RemoveResult:
    group: str
    reason: str
    results: list[MemberResult] = field(default_factory=list)
    error_code: int = ErrorCode.NONE

    @property
    def failed(self) -> list[MemberResult]:
        return [r for r in self.results if r.error_code]

    def to_dict(self) -> dict:
        return {"group": self.group, "reason": self.reason,
                "removed": [r.instance_id for r in self.results if not r.error_code],
                "failed": [r.instance_id for r in self.failed],
                "members": [r.to_dict() for r in self.results]}


def leave_body(group: str, instance_ids: list[str], reason: str) -> dict:
    return {"group_id": group, "member_id": "",
            "members": [{"member_id": "", "group_instance_id": i, "reason": reason[:REASON_MAX]}
                        for i in instance_ids]}


def parse_leave(group: str, instance_ids: list[str], reason: str,
                resp: LeaveGroupResponse) -> RemoveResult:
    result = RemoveResult(group, reason[:REASON_MAX], error_code=resp.get("error_code") or 0)
    by_instance = {m.get("group_instance_id"): m for m in resp.get("members") or ()}
    for iid in instance_ids:
        entry = by_instance.get(iid)
        code = (entry["error_code"] if entry else 0) or result.error_code
        result.results.append(MemberResult(iid, entry["member_id"] if entry else None, code))
    return result


async def remove_static_members(cluster: ClusterLike, group: str, instance_ids: list[str],
                                reason: str,
                                *, deadline=None) -> RemoveResult:
    """One LeaveGroup (v3+) for all `instance_ids`; the per-member outcome in the result
    (a top-level error code applies to every member)."""
    from ...protocol.messages import LEAVE_GROUP

    resp = await cluster.send_to_coordinator(group, LEAVE_GROUP,
                                             leave_body(group, instance_ids, reason),
                                             min_version=3, deadline=deadline)
    return parse_leave(group, instance_ids, reason, resp)
