"""The probe watching a group of real librdkafka consumers: one generation per rebalance, in
order, with the right members, matching the broker log and the consumers' own callbacks;
and the probe as leader running range / roundrobin / cooperative-sticky for them."""
from __future__ import annotations

import pytest
from probe_support import ProbeThread, stabilized, wait_until

from groupctl.coordinator.assignors import get_assignor
from groupctl.coordinator.probe.setup import decode_member
from groupctl.lab.consumer import wait_balanced

pytestmark = pytest.mark.broker


def _assigned(event_assignments: dict, member_id: str) -> frozenset:
    return frozenset((tp["topic"], p) for tp in event_assignments.get(member_id) or []
                     for p in tp["partitions"])


def test_probe_reports_each_generation_with_its_members(kafka, topic_factory, unique_group,
                                                         consumer_factory):
    topic = topic_factory(4)
    group = unique_group
    c1 = consumer_factory(group, topic)
    c1.wait_assigned(count=4)
    probe = ProbeThread(kafka, group).start()
    try:
        first = probe.wait_rebalance(2)
        me = probe.member_id
        assert set(first["members_after"]) == {me, c1.member_id}
        c2 = consumer_factory(group, topic)
        c2.wait_assigned()
        second = probe.wait_rebalance({me, c1.member_id, c2.member_id})
        wait_balanced([c1, c2], [(topic, p) for p in range(4)])
        c1.begin_close()
        c1.close()
        third = probe.wait_rebalance({me, c2.member_id})
        c2.wait_assigned(count=4)
        rebalances = [e for e in probe.of("rebalance") if e["members_after"] is not None]
    finally:
        probe.stop()
    gens = [e["to_generation"] for e in rebalances]
    assert gens == list(range(gens[0], gens[0] + len(gens))), gens
    assert [first["to_generation"], second["to_generation"], third["to_generation"]] == \
        [gens[0], gens[0] + 1, gens[0] + 2]
    assert second["from_generation"] == first["to_generation"]
    # the broker stabilized exactly these generations while the probe was in the group
    logged = wait_until(lambda: [g for g in stabilized(kafka, group) if g >= gens[0]][:3]
                        if len(stabilized(kafka, group)) >= gens[0] + 2 else None,
                        10, "Stabilized lines in the broker log")
    assert logged == gens[:3]
    # the generation events come in order and match
    gen_events = [e["generation"] for e in probe.of("generation")]
    assert gen_events[:3] == gens[:3]
    # the consumers' own callbacks agree with what the probe saw (range: eager, full sets)
    assert _assigned(second["assignments"], c2.member_id) == c2.assigns()[0].assignment
    assert _assigned(third["assignments"], c2.member_id) == frozenset((topic, p) for p in range(4))
    assert _assigned(first["assignments"], me) == frozenset()
    assert third["members_before"] == sorted({me, c1.member_id, c2.member_id})
    left = [e for e in probe.of("member_left")]
    assert [e["member_id"] for e in left] == [c1.member_id]
    assert left[0]["client_id"] == c1.name


def _check_leader_rounds(rounds, assignor_name: str, partitions: dict[str, int]) -> int:
    """Checks every round the probe led; returns how many rounds held partitions back
    (revoked from their owner, given to nobody: the first phase of a cooperative move)."""
    assignor = get_assignor(assignor_name)
    held_back = 0
    for pending, result in rounds:
        if len(pending.members) == 1:  # the probe alone: the broker picked its first choice
            assert pending.protocol_name == "range" and result == {pending.leader_id: {}}
            continue
        assert pending.protocol_name == assignor_name
        members = [decode_member(m.member_id, m.group_instance_id, m.metadata)
                   for m in pending.members]
        subscribed = [m for m in members if m.topics]
        expected = assignor.assign(partitions, subscribed) if subscribed else {}
        for m in members:
            assert result[m.member_id] == expected.get(m.member_id, {}), (m.member_id, result)
        owned = [(t, p) for a in result.values() for t, ps in a.items() for p in ps]
        if assignor_name != "cooperative-sticky":
            want = sorted((t, p) for t, n in partitions.items() for p in range(n)) if subscribed else []
            assert sorted(owned) == want  # every partition exactly once
        else:
            assert len(owned) == len(set(owned))
            # two-phase hand-over: a partition owned by A is never given to B in one round
            prev_owner = {(t, p): m.member_id for m in members
                          for t, ps in m.owned_partitions.items() for p in ps}
            for member, a in result.items():
                for t, ps in a.items():
                    for p in ps:
                        assert prev_owner.get((t, p), member) == member, (t, p, member)
            held_back += bool(set(prev_owner) - set(owned))
    return held_back


@pytest.mark.parametrize("assignor", ["range", "roundrobin", "cooperative-sticky"])
def test_probe_as_leader_assigns_like_java(kafka, topic_factory, unique_group, consumer_factory,
                                           assignor):
    t1, t2 = topic_factory(3), topic_factory(2)
    group = unique_group
    probe = ProbeThread(kafka, group).start()
    try:
        probe.wait_rebalance(1)
        me = probe.member_id
        c1 = consumer_factory(group, [t1, t2], assignor=assignor)
        c1.wait_assigned()
        probe.wait_rebalance({me, c1.member_id})
        c2 = consumer_factory(group, [t1, t2], assignor=assignor)
        c2.wait_for(lambda c: c.member_id is not None, 30, "a member id")
        every = [(t1, p) for p in range(3)] + [(t2, p) for p in range(2)]
        got = wait_balanced([c1, c2], every)
        final = probe.wait_event(
            lambda e: e["event"] == "rebalance" and e["members_after"] is not None
            and set(e["members_after"]) == {me, c1.member_id, c2.member_id}
            and sorted(tp for m in (c1.member_id, c2.member_id)
                       for tp in _assigned(e["assignments"], m)) == sorted(every),
            30, "the balanced generation")
        rounds = list(probe.probe.leader_rounds)
    finally:
        probe.stop()
    assert probe.error is None
    assert all(pending.leader_id == me for pending, _ in rounds)
    held_back = _check_leader_rounds(rounds, assignor, {t1: 3, t2: 2})
    if assignor == "cooperative-sticky":  # c2's partitions came from c1 in two phases
        assert held_back >= 1
    # the real consumers accepted what the probe assigned: their callbacks match it
    assert got[c1.name] == _assigned(final["assignments"], c1.member_id)
    assert got[c2.name] == _assigned(final["assignments"], c2.member_id)
    assert _assigned(final["assignments"], me) == frozenset()
    gens = [e["to_generation"] for e in probe.of("rebalance")]
    assert gens == sorted(set(gens))


def test_subscribed_probe_hands_partitions_on_cooperatively(kafka, topic_factory, unique_group,
                                                            consumer_factory):
    """--topics: the probe owns partitions; when a consumer joins, it revokes some in one
    generation and rejoins at once, so the consumer gets them in the next (KIP-429)."""
    topic = topic_factory(4)
    every = frozenset((topic, p) for p in range(4))
    probe = ProbeThread(kafka, unique_group, topics=[topic], assignor="cooperative-sticky").start()
    try:
        first = probe.wait_event(lambda e: e["event"] == "assignment" and e["assigned"]
                                 and e["member_id"] == probe.member_id, 20,
                                 "the probe's first assignment")
        assert frozenset((tp["topic"], p) for tp in first["assigned"]
                         for p in tp["partitions"]) == every
        c = consumer_factory(unique_group, topic, assignor="cooperative-sticky")
        c.wait_assigned(count=2, timeout=30)
        revoked = probe.wait_event(lambda e: e["event"] == "assignment" and e["revoked"]
                                   and e["member_id"] == probe.member_id, 20,
                                   "the probe's revocation")
        rejoin = probe.wait_event(lambda e: e["event"] == "probe" and e["action"] == "rejoining"
                                  and "cooperative" in (e.get("reason") or ""), 20,
                                  "the probe's rejoin after revoking")
        final = probe.wait_event(
            lambda e: e["event"] == "rebalance" and e["assignments"] is not None
            and len(e["assignments"]) == 2
            and all(e["assignments"].values()), 30, "both members holding partitions")
    finally:
        probe.stop()
    moved = frozenset((tp["topic"], p) for tp in revoked["revoked"] for p in tp["partitions"])
    assert len(moved) == 2 and moved == c.assignment
    assert rejoin["generation"] == revoked["generation"]
    assert final["to_generation"] == revoked["generation"] + 1
    mine = _assigned(final["assignments"], probe.probe.member.member_id)
    assert mine | c.assignment == every and not (mine & c.assignment)
