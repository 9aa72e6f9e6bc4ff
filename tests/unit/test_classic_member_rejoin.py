"""ClassicMember.request_rejoin: the Java client's requestRejoin (a cooperative member that
revoked partitions rejoins so the leader can hand them on)."""
from __future__ import annotations

from test_classic_member import answer, bodies, join, join_body, make, one, sync, to_stable

from groupctl.coordinator.members.classic import ClassicMemberState as S


def test_request_rejoin_from_stable_keeps_member_id_and_generation():
    m = make()
    to_stable(m, member_id="m-1", generation=5)
    bodies(m)
    assert m.request_rejoin("revoked 2 partitions (cooperative)", 1000) is True
    assert m.state is S.JOINING and m.generation_id == 5 and m.member_id == "m-1"
    last = m.transitions[-1]
    assert (last.from_state, last.to_state) == (S.STABLE, S.JOINING)
    assert last.reason == "revoked 2 partitions (cooperative): rejoining"
    req = one(m, 1000, "JoinGroup")
    assert req.body == join_body("m-1", reason="groupctl probe: rejoining: revoked 2 partitions "
                                               "(cooperative)")
    assert bodies(m)[0] == {"event": "probe", "action": "rejoining", "member_id": "m-1",
                                  "generation": 5, "error": None,
                                  "reason": "revoked 2 partitions (cooperative)"}
    answer(m, req, join(member_id="m-1", generation=6, leader="other"), 1001)
    answer(m, one(m, 1001, "SyncGroup"), sync(assignment=b"t=1"), 1002)
    assert m.state is S.STABLE and m.generation_id == 6


def test_request_rejoin_outside_stable_does_nothing():
    m = make()
    assert m.request_rejoin("why", 0) is False
    assert m.state is S.UNJOINED
