"""The classic probe's live view (`join --watch`) tells the same per-member story as the
passive watch: every other member's `assignment` diff, from the describe the probe takes in
each generation, equal to the real consumers' callbacks; its own assignment once, from its
member; the routine REBALANCE_IN_PROGRESS on its heartbeat (how a classic member learns of
a rebalance) is in the event stream but not shown as an error."""
from __future__ import annotations

import pytest
from probe_support import ProbeThread

from groupctl.render.watch import WatchModel, render_model

pytestmark = pytest.mark.broker


def _tps(items) -> frozenset:
    return frozenset((i["topic"], p) for i in items or () for p in i["partitions"])


def test_the_probe_tells_every_members_assignment(kafka, topic_factory, consumer_factory,
                                                  unique_group):
    g = unique_group
    topic = topic_factory(4)
    a = consumer_factory(g, topic, name=f"{g}-a")
    a.wait_assigned(count=4)
    probe = ProbeThread(kafka, g).start()
    try:
        probe.wait_rebalance(2)
        me = probe.member_id
        b = consumer_factory(g, topic, name=f"{g}-b")
        b.wait_assigned(count=2)
        r = probe.wait_rebalance({a.member_id, b.member_id, me})
        a.wait_for(lambda x: len(x.assignment) == 2, 20, "a down to 2 partitions")
        holds = {a.member_id: a.assignment, b.member_id: b.assignment}
    finally:
        probe.stop()
    gen = r["to_generation"]
    told = [e for e in probe.events if e["event"] == "assignment" and e["generation"] == gen]
    by_member = {}
    for e in told:
        assert e["member_id"] not in by_member, f"told twice: {e}"
        by_member[e["member_id"]] = e
    assert set(by_member) == {a.member_id, b.member_id, me}
    for mid, held in holds.items():   # the others, from the story, equal their callbacks
        assert _tps(by_member[mid]["assigned"]) == held
        assert r["assignments"][mid] == by_member[mid]["assigned"]
    assert _tps(by_member[b.member_id]["added"]) == holds[b.member_id]
    assert _tps(by_member[a.member_id]["revoked"]) == holds[b.member_id]
    assert _tps(by_member[a.member_id]["added"]) == frozenset()
    assert by_member[me]["assigned"] == [] and by_member[me]["revoked"] == []  # its member's

    # the probe learned of b's rebalance on its heartbeat: in the stream, not an error
    routine = [e for e in probe.events if e["event"] == "error"
               and e["name"] == "REBALANCE_IN_PROGRESS" and e["api"] == "Heartbeat"]
    assert routine
    assert probe.probe is not None
    model = WatchModel(probe.probe.view.status)   # the probe's one fold of the group
    for e in probe.events:
        model.note(e)   # join --watch's view keeps only the probe's diffs and errors
    assert list(model.errors) == []
    assert model.members == {a.member_id: r["assignments"][a.member_id],
                             b.member_id: r["assignments"][b.member_id], me: []}
    assert model.gains[b.member_id] == (by_member[b.member_id]["added"], [])
    assert [d["member_id"] for d in model.diffs] == [me] * len(model.diffs) and model.diffs

    from rich.console import Console

    console = Console(width=200, record=True, color_system=None)
    console.print(render_model(model))
    text = console.export_text()
    assert "(no errors)" in text and f"{b.member_id}" in text
