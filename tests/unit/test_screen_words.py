"""The words the views print, where they used to say something untrue or odd: wait's one
line, a classic generation nobody reports, describe during a classic rebalance, and the
force-rebalance report of a consumer (KIP-848) group."""
from __future__ import annotations

import io

from rich.console import Console

from groupctl.observe.reads import model
from groupctl.render.groups import describe_tables
from groupctl.render.steer import force_rebalance_table, wait_line
from groupctl.render.watch_lines import plain_line

from test_force_consumer import Run, group, run, snapshots


def draw(fn, data, wide=False) -> str:
    out = io.StringIO()
    fn(Console(file=out, force_terminal=False, no_color=True, width=200), data, wide)
    return out.getvalue()


def outcome(**fields) -> dict:
    base = {"group": "g1", "met": True, "exists": True, "type": "classic", "state": "Empty",
            "members": 0, "generation": None, "group_epoch": None, "lag_total": None,
            "waited_s": 0.1, "failing": []}
    return {**base, **fields}


def test_wait_line_says_no_dash_for_what_it_does_not_know():
    assert draw(wait_line, outcome()) == "g1: Empty, 0 members; condition met after 0.1 s\n"
    assert draw(wait_line, outcome(state="Stable", members=2, generation=7)) == (
        "g1: Stable, 2 members, generation 7; condition met after 0.1 s\n")
    assert draw(wait_line, outcome(type="consumer", group_epoch=5)) == (
        "g1: Empty, 0 members, epoch 5; condition met after 0.1 s\n")
    assert draw(wait_line, outcome(exists=False, state="Dead")) == (
        "g1: Dead (no such group); condition met after 0.1 s\n")


def test_an_unknown_classic_generation_blames_no_client():
    line = plain_line({"event": "generation", "ts": "t", "group": "c4", "source": "describe",
                       "generation": None, "protocol": "cooperative-sticky", "leader": None,
                       "members": ["a", "b"]})
    assert "generation unknown (not in describe's answer, nor yet in the members' " \
           "subscriptions)" in line
    assert "eager" not in line


def test_describe_during_a_classic_rebalance_shows_no_assignment_or_owner_columns():
    g = model.GroupDescription(group="orders", type="classic", state="PreparingRebalance",
                               protocol_type="consumer", protocol="range", generation=3,
                               coordinator={"id": 2, "host": "b2", "port": 9092},
                               coordinator_partition=17)
    g.members = [model.Member("m1", client_id="app", host="/10.0.0.1")]
    g.offsets = [model.OffsetRow("t", 0, 5, 9, None)]
    text = draw(describe_tables, [g.to_dict()])
    assert "assignments (and partition owners) are known again once the group is Stable" in text
    assert "ASSIGNMENT" not in text and "#PARTS" not in text and "OWNER" not in text
    lines = text.splitlines()
    assert lines[lines.index(next(x for x in lines if x.startswith("MEMBER"))) + 1].split() == [
        "m1", "app", "/10.0.0.1"]


def test_a_consumer_groups_force_rebalance_report_has_no_reason_and_says_assignor():
    r = Run()
    report = run(r(snapshots(group(4), group(5)))).to_dict()
    assert report["reason"] is None   # its heartbeat has no reason field
    assert any("no reason field" in n and r.member.member_id in n for n in report["notes"])
    rows = [line.split(None, 1) for line in draw(force_rebalance_table, report).splitlines()]
    labels = [r[0] for r in rows if r]
    assert ["assignor", "uniform"] in rows and "reason" not in labels
    assert "protocol" not in labels
    changed = run(Run()(snapshots(group(4), group(5, members=["x"])))).to_dict()
    notes = [n for n in changed["notes"] if n.startswith("the members changed: ")]
    assert notes and not any(n.isupper() or "CHANGED" in n for n in changed["notes"])
