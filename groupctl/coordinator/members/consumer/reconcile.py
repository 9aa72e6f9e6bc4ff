"""Reconciliation, as its own small step: the assignment a heartbeat response carries vs
what the member owns -> what to revoke, what to take, and what it owns afterwards.

The probe consumes nothing and commits nothing, so revoking is immediate and nothing waits
on callbacks: the member owns its target as soon as it reconciles, and acknowledges it (its
owned partitions) in the next heartbeat. Partitions are keyed by topic id, as the protocol
carries them.
"""
from __future__ import annotations

from dataclasses import dataclass

Owned = dict[str, frozenset[int]]   # topic id -> partitions


@dataclass(frozen=True)
class Reconciliation:
    target: Owned
    revoked: Owned
    added: Owned

    @property
    def changed(self) -> bool:
        return bool(self.revoked or self.added)

    def describe(self) -> str:
        return (f"revoke {_count(self.revoked)} partition(s), take {_count(self.added)}, "
                f"own {_count(self.target)}")


def from_response(assignment: dict | None) -> Owned | None:
    """A response's `assignment` (None: unchanged since the last one)."""
    if assignment is None:
        return None
    out: dict[str, set[int]] = {}
    for tp in assignment.get("topic_partitions") or ():
        out.setdefault(str(tp["topic_id"]), set()).update(tp.get("partitions") or ())
    return {t: frozenset(p) for t, p in out.items() if p}


def reconcile(owned: Owned, target: Owned) -> Reconciliation:
    revoked = {t: owned[t] - target.get(t, frozenset()) for t in owned}
    added = {t: target[t] - owned.get(t, frozenset()) for t in target}
    return Reconciliation(dict(target), {t: p for t, p in revoked.items() if p},
                          {t: p for t, p in added.items() if p})


def to_request(owned: Owned) -> list[dict]:
    """Owned partitions as the heartbeat's `topic_partitions`."""
    return [{"topic_id": t, "partitions": sorted(p)} for t, p in sorted(owned.items())]


def _count(parts: Owned) -> int:
    return sum(len(p) for p in parts.values())
