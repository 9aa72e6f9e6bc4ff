"""wait's pure condition evaluator (groupctl.observe.wait) on hand-made snapshots."""
from __future__ import annotations

import pytest

from groupctl.errors import UsageError
from groupctl.observe.reads import model
from groupctl.observe.wait import ALL_STATES, Condition, Look, Tracker, check, parse_state


def classic(state="Stable", members=3, generation=None, lag=None):
    desc = model.GroupDescription(group="g", type="classic", state=state,
                                  generation=generation,
                                  members=[model.Member(member_id=f"m{i}") for i in range(members)])
    if lag is not None:
        desc.offsets = [model.OffsetRow("t", 0, 10, 10 + lag, None)]
    return Look.of(desc)   # the group as the one story and reducer fold it


def consumer(state="Stable", members=2, group_epoch=5, assignment_epoch=5):
    return Look.of(model.GroupDescription(
        group="g", type="consumer", state=state, group_epoch=group_epoch,
        assignment_epoch=assignment_epoch,
        members=[model.Member(member_id=f"c{i}") for i in range(members)]))


@pytest.mark.parametrize("text,state", [("stable", "Stable"), ("STABLE", "Stable"),
                                        ("preparingrebalance", "PreparingRebalance"),
                                        ("dead", "Dead"), (" Reconciling ", "Reconciling")])
def test_states_any_case(text, state):
    assert parse_state(text) == state


def test_a_typo_names_the_valid_states():
    with pytest.raises(UsageError) as err:
        parse_state("Stabel")
    for state in ("Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead",
                  "Assigning", "Reconciling"):
        assert state in str(err.value)
    assert "Stabel" in str(err.value)
    assert len(ALL_STATES) == len(set(ALL_STATES))


def test_state_and_members():
    cond = Condition(state="Stable", members=3)
    assert check(cond, classic()) == []
    assert check(cond, classic(state="PreparingRebalance")) == [
        "state: want Stable, is PreparingRebalance"]
    assert check(cond, classic(members=2)) == ["members: want 3, has 2"]


def test_dead_matches_a_missing_group_only():
    assert check(Condition(state="Dead"), None) == []
    assert check(Condition(state="Dead"), classic()) == ["state: want Dead, is Stable"]
    assert check(Condition(state="Stable"), None) == ["state: want Stable, is missing (Dead)"]
    assert check(Condition(members=0), None) == ["state: the group does not exist"]


def test_generation_is_the_epoch_for_consumer_groups():
    cond = Condition(generation_gt=4)
    assert check(cond, classic(generation=5)) == []
    assert check(cond, classic(generation=4)) == ["generation: want > 4, is 4"]
    assert "unknown" in check(cond, classic(generation=None))[0]
    assert check(cond, consumer(group_epoch=5)) == []
    assert check(cond, consumer(group_epoch=3)) == ["group epoch: want > 4, is 3"]


def test_max_lag():
    cond = Condition(max_lag=100)
    assert check(cond, classic(lag=100)) == []
    assert check(cond, classic(lag=101)) == ["lag: want <= 100, is 101"]
    assert "unknown" in check(cond, classic())[0]
    assert cond.needs_offsets and not Condition(state="Stable").needs_offsets


def test_settled_holds_back_until_nothing_changed_for_s_seconds():
    t = Tracker(Condition(state="Stable", settled_s=30))
    assert not t.observe(classic(), 0).holds
    assert not t.observe(classic(), 29.9).holds
    assert t.observe(classic(), 30).holds


def test_settled_restarts_on_a_rebalance_or_a_member_change():
    t = Tracker(Condition(state="Stable", settled_s=10))
    t.observe(classic(), 0)
    v = t.observe(classic(state="PreparingRebalance"), 5)  # a rebalance: the clock restarts
    assert not v.holds and v.failing[0].startswith("state:")
    t.observe(classic(), 6)
    assert not t.observe(classic(), 15.9).holds
    assert t.observe(classic(), 16).holds
    t.observe(classic(members=4, generation=None), 17)  # a new member, still Stable
    v = t.observe(classic(members=4), 26)
    assert not v.holds and v.failing[0].startswith("settled:")
    assert t.observe(classic(members=4), 27).holds


def test_settled_restarts_on_an_epoch_bump():
    t = Tracker(Condition(state="Stable", settled_s=10))
    t.observe(consumer(group_epoch=5), 0)
    t.observe(consumer(group_epoch=6, assignment_epoch=6), 8)
    assert not t.observe(consumer(group_epoch=6, assignment_epoch=6), 17).holds
    assert t.observe(consumer(group_epoch=6, assignment_epoch=6), 18).holds


def test_wake_in_is_cut_short_by_the_settle_time():
    t = Tracker(Condition(state="Stable", settled_s=2.5))
    t.observe(classic(), 0)
    assert t.wake_in(0, 1.0) == 1.0
    assert t.wake_in(2.0, 1.0) == pytest.approx(0.5)
