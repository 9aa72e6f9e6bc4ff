"""The live view and plain lines of the one story as both observers tell it: KIP-848
members converging (current vs target, reconciliation time), the classic probe's view of
the other members, and routine answers that are not errors. Also observe.story.convergence's
edge cases."""
from __future__ import annotations

from rich.console import Console

from groupctl.events import envelope
from groupctl.observe.story.convergence import Converging
from groupctl.observe.reads.model import GroupDescription, Member, TopicPartitions
from groupctl.protocol.errors import ErrorCode
from groupctl.render.watch import WatchModel, plain_line, render_model

T0 = [{"topic": "t", "partitions": [0]}]
T01 = [{"topic": "t", "partitions": [0, 1]}]
T1 = [{"topic": "t", "partitions": [1]}]


def wrap(event, source="describe"):
    return envelope(event, group="g", cluster=None, source=source, at=0.0)


def text(model) -> str:
    console = Console(width=220, record=True, color_system=None)
    console.print(render_model(model))
    return console.export_text()


def test_plain_line_of_a_converging_member():
    e = wrap(Converging("a", 6, T0, [], T1, target=T0, reconciled_ms=1500))
    line = plain_line(e)
    assert line.endswith("g assignment gen 6 a: t:0 added=(none) revoked=t:1 target=t:0 "
                         "reconciled in 1500 ms")
    assert "reconciled" not in plain_line(wrap(Converging("a", 6, T01, [], [], target=T0)))


def test_the_live_view_shows_target_and_reconciliation():
    m = WatchModel()
    m.apply(wrap({"event": "epoch", "group_epoch": 6, "assignment_epoch": 6}))
    m.apply(wrap(Converging("a", 6, T01, [], [], target=T0)))
    m.apply(wrap(Converging("b", 6, [], [], [], target=T1)))
    assert (m.reconciliation("a"), m.reconciliation("b")) == ("reconciling", "reconciling")
    out = text(m)
    assert "target" in out and "reconciled in" in out and "reconciling" in out
    m.apply(wrap(Converging("a", 6, T0, [], T1, target=T0, reconciled_ms=2000)))
    m.apply(wrap(Converging("b", 6, T1, T1, [], target=T1, reconciled_ms=None)))
    assert (m.reconciliation("a"), m.reconciliation("b")) == ("2000 ms", "-")
    assert m.members == {"a": T0, "b": T1} and m.gains["a"] == ([], T1)
    m.apply(wrap({"event": "member_left", "member_id": "a"}))
    assert "a" not in m.targets and "a" not in m.reconciled


def test_the_probe_view_fills_the_members_table_and_hides_routine_errors():
    m = WatchModel()
    m.apply(wrap({"event": "probe", "action": "joined", "member_id": "me", "generation": 1},
                 "probe"))
    m.apply(wrap({"event": "assignment", "member_id": "c1", "generation": 2, "assigned": T0,
                  "added": T0, "revoked": []}, "probe"))
    m.apply(wrap({"event": "assignment", "member_id": "me", "generation": 2, "assigned": [],
                  "added": [], "revoked": []}, "probe"))
    m.apply(wrap({"event": "error", "api": "Heartbeat", "code": ErrorCode.REBALANCE_IN_PROGRESS,
                  "name": "REBALANCE_IN_PROGRESS", "retriable": False}, "probe"))
    m.apply(wrap({"event": "probe", "action": "rejoining", "member_id": "me", "generation": 2,
                  "error": "REBALANCE_IN_PROGRESS"}, "probe"))
    assert m.members == {"c1": T0} and m.gains["c1"] == (T0, [])
    assert [d["member_id"] for d in m.diffs] == ["me"] and list(m.errors) == []
    assert "target" not in text(m)    # a classic group: no target column
    m.apply(wrap({"event": "error", "api": "Heartbeat", "code": ErrorCode.NOT_COORDINATOR,
                  "name": "NOT_COORDINATOR",
                  "retriable": True}, "probe"))
    assert len(m.errors) == 1 and "NOT_COORDINATOR" in text(m)


def cg(epoch, *members):
    return GroupDescription("g", type="consumer", state="Reconciling", group_epoch=epoch,
                            assignment_epoch=epoch, members=list(members))


def mem(mid, current, target, epoch):
    return Member(mid, client_id=mid, member_epoch=epoch,
                  assignment=[TopicPartitions("t", current)],
                  target_assignment=[TopicPartitions("t", target)])


def test_a_member_behind_its_target_is_marked_until_it_catches_up():
    """Issue 19: the reducer exposes who holds the group up (since when); the live view
    marks them; a rebalance of an epoch group clears every mark."""
    m = WatchModel()
    m.apply(wrap({"event": "epoch", "group_epoch": 6, "assignment_epoch": 6}))
    m.apply(envelope(Converging("a", 6, T01, [], [], target=T0, behind=True), group="g",
                     cluster=None, source="describe", at=10.0))
    m.apply(wrap(Converging("b", 6, [], [], [], target=T1, behind=False)))
    assert m.status.behind == {"a": 10.0}
    assert (m.reconciliation("a"), m.reconciliation("b")) == (
        "reconciling, holding up", "reconciling")
    assert "holding up" in text(m)
    m.apply(envelope(Converging("a", 6, T01, [], [], target=T0, behind=True), group="g",
                     cluster=None, source="describe", at=11.0))
    assert m.status.behind == {"a": 10.0}   # since the first event that showed it
    m.apply(wrap(Converging("a", 6, T0, [], T1, target=T0, reconciled_ms=1000, behind=False)))
    assert m.status.behind == {} and m.reconciliation("a") == "1000 ms"
    m.apply(wrap(Converging("b", 6, [], [], [], target=T1, behind=True)))
    m.apply(wrap({"event": "rebalance", "from_generation": 5, "to_generation": 6,
                  "ended": "1970-01-01T00:00:01.000Z", "duration_ms": 1,
                  "members_after": ["a", "b"], "slowest_member": "a",
                  "slowest_member_ms": 1000}))
    assert m.status.behind == {}


def test_plain_rebalance_line_tells_its_cost_and_slowest_member():
    e = wrap({"event": "rebalance", "from_generation": 5, "to_generation": 6,
              "ended": "1970-01-01T00:00:01.000Z", "duration_ms": 4600, "members_after": ["a"],
              "moved_partitions": 2, "reason": "r", "unowned_partition_ms": 1000,
              "unowned_partitions_max_ms": 500, "unowned_basis": "measured",
              "unowned_longest": [{"topic": "t", "partition": 1, "ms": 500}],
              "unowned_unsubscribed": [{"topic": "u", "partitions": [0, 1]}],
              "slowest_member": "a", "slowest_member_ms": 4500})
    assert plain_line(e).endswith(
        "reason: r; partitions unowned 1000 ms in all (measured), longest t:1 500 ms; "
        "unowned, not subscribed: u:0-1; slowest a 4500 ms after its target")
    told = plain_line({**e, "slowest_member_held_ms": 4010})
    assert told.endswith("slowest a 4500 ms after its target, held 4010 ms after told")
    quiet = wrap({"event": "rebalance", "from_generation": 5, "to_generation": 6,
                  "duration_ms": 1, "reason": "r", "unowned_partition_ms": 0,
                  "unowned_basis": "measured"})
    assert plain_line(quiet).endswith("reason: r")
    assert plain_line(wrap(Converging("a", 6, T01, [], [], target=T0, behind=True))).endswith(
        "target=t:0 (holding the group up)")
