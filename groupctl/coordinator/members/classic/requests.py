"""The request bodies of the classic member, built from what it holds (pure functions).

Each body carries the fields of every version of its API (snake_case, as in Kafka's JSON
specs); the codec writes those the negotiated version has."""
from __future__ import annotations


def join_group(group_id: str, *, session_timeout_ms: int, rebalance_timeout_ms: int,
               member_id: str, group_instance_id: str | None, protocol_type: str,
               protocols: list[tuple[str, bytes]], reason: str) -> dict:
    return {"group_id": group_id, "session_timeout_ms": session_timeout_ms,
            "rebalance_timeout_ms": rebalance_timeout_ms, "member_id": member_id,
            "group_instance_id": group_instance_id, "protocol_type": protocol_type,
            "protocols": [{"name": n, "metadata": m} for n, m in protocols], "reason": reason}


def member_ids(group_id: str, generation_id: int, member_id: str,
               group_instance_id: str | None) -> dict:
    """The identity fields SyncGroup and Heartbeat share (the whole Heartbeat body)."""
    return {"group_id": group_id, "generation_id": generation_id, "member_id": member_id,
            "group_instance_id": group_instance_id}


def sync_group(ids: dict, *, protocol_type: str, protocol_name: str | None,
               assignments: list[dict]) -> dict:
    return {**ids, "protocol_type": protocol_type, "protocol_name": protocol_name,
            "assignments": [dict(a) for a in assignments]}


def leave_group(group_id: str, member_id: str, group_instance_id: str | None,
                reason: str | None, former: list[str] | tuple[str, ...] = ()) -> dict:
    """LeaveGroup (v3+: a batch): this member, and the member ids it held before (which a
    coordinator reloading the group may have brought back)."""
    members = [{"member_id": member_id, "group_instance_id": group_instance_id,
                "reason": reason}] if member_id or group_instance_id else []
    members += [{"member_id": m, "group_instance_id": None, "reason": reason}
                for m in former if m != member_id]
    return {"group_id": group_id, "members": members}


def assignment_change(prev: dict[str, list[int]] | None, assigned: dict[str, list[int]] | None
                      ) -> tuple[dict | None, dict | None]:
    """({topic: added partitions}, {topic: revoked partitions}) from one own assignment to
    the next; (None, None) when either is unknown."""
    if assigned is None or prev is None:
        return None, None
    added = {t: set(p) - set(prev.get(t, ())) for t, p in assigned.items()}
    revoked = {t: set(p) - set(assigned.get(t, ())) for t, p in prev.items()}
    return added, revoked
