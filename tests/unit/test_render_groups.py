"""Table views of `list` and `describe` (groupctl.render.groups), drawn on a recording
console from small fixtures."""
from __future__ import annotations

import io

from rich.console import Console

from groupctl.observe.reads import model
from groupctl.render.groups import (
    describe_tables,
    list_table,
    partitions_text,
    ranges,
    short_id,
    user_data_text,
)


def draw(fn, data, wide=False) -> str:
    out = io.StringIO()
    fn(Console(file=out, force_terminal=False, no_color=True, width=80), data, wide)
    return out.getvalue()


def test_ranges_and_partitions_text():
    assert ranges([5, 0, 1, 2, 7, 8]) == "0-2,5,7-8"
    assert ranges([]) == ""
    assert partitions_text([{"topic": "a", "partitions": [0, 1]}, {"topic": "b", "partitions": [3]}]) == "a:0-1 b:3"
    assert partitions_text([]) == "(none)" and partitions_text(None) == "-"


def test_user_data_and_member_ids():
    assert user_data_text({"generation": 4}) == "generation=4"
    assert user_data_text({"version": 1, "generation": None,
                           "previous_assignment": [{"topic": "t", "partitions": [0, 1]}]}) == (
        "generation=- previous=t:0-1")
    assert user_data_text("beef") == "hex beef" and user_data_text(None) == "-"
    long = "consumer-1-0123456789abcdef0123456789abcdef"
    assert short_id("short") == "short"
    assert short_id(long) == long[:12] + "…" + long[-12:]


def test_list_table_is_not_wrapped_off_a_terminal():
    groups = [{"group": "g" * 70, "state": "Stable", "type": "classic",
               "protocol_type": "consumer", "coordinator_id": 3}]
    lines = draw(list_table, groups, wide=True).splitlines()
    assert lines[0].split() == ["GROUP", "STATE", "TYPE", "PROTOCOL", "TYPE", "COORDINATOR"]
    assert lines[1].split() == ["g" * 70, "Stable", "classic", "consumer", "3"]
    assert draw(list_table, []) == "no groups\n"


def _classic(state="Stable", members=None, offsets=None, protocol_type="consumer"):
    g = model.GroupDescription(group="orders", type="classic", state=state,
                               protocol_type=protocol_type, protocol="range", generation=3,
                               coordinator={"id": 2, "host": "b2", "port": 9092},
                               coordinator_partition=17)
    g.members = members or []
    g.offsets = offsets or []
    return g.to_dict()


def test_describe_stable_classic_group():
    member = model.Member("consumer-1-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", client_id="app", host="/10.0.0.1",
                          subscription={"version": 3, "topics": ["t"], "owned_partitions": [],
                                        "generation": 2, "rack": None, "user_data": None},
                          assignment=[model.TopicPartitions("t", [0, 1, 2])])
    rows = [model.OffsetRow("t", 0, 5, 9, member.member_id), model.OffsetRow("t", 1, None, 4, member.member_id)]
    text = draw(describe_tables, [_classic(members=[member], offsets=rows)])
    lines = text.splitlines()
    assert lines[0] == "GROUP orders  Stable"
    assert lines[1] == "type classic, protocol type consumer, protocol range, generation 3"
    assert lines[2] == "coordinator b2:9092 (id 2), __consumer_offsets partition 17"
    assert lines[3].split() == ["MEMBER", "CLIENT", "HOST", "#PARTS", "ASSIGNMENT"]
    assert lines[4].split() == [short_id(member.member_id), "app", "/10.0.0.1", "3", "t:0-2"]
    assert lines[6].split() == ["t", "0", "5", "9", "4", short_id(member.member_id)]
    assert lines[7].split() == ["t", "1", "-", "4", "-", short_id(member.member_id)]
    assert lines[-1] == "lag: total 4 (t 4)"
    wide = draw(describe_tables, [_classic(members=[member], offsets=rows)], wide=True)
    assert member.member_id in wide and "GENERATION" in wide and "SUBSCRIBED" in wide


def test_describe_rebalancing_and_empty_groups():
    text = draw(describe_tables, [_classic(state="PreparingRebalance", members=[model.Member("m1")])])
    assert "rebalancing:" in text and "PreparingRebalance" in text
    assert draw(describe_tables, [_classic(state="Empty")]).splitlines()[3] == "no active members"


def test_describe_raw_protocol_shows_hex():
    m = model.Member("m1", client_id="w", raw_metadata=b"\x00\x01hi", raw_assignment=b"\xff")
    text = draw(describe_tables, [_classic(members=[m], protocol_type="connect")])
    assert "METADATA (hex)" in text and "00016869" in text and "ff" in text


def test_describe_consumer_group_shows_epochs_and_targets():
    g = model.GroupDescription(group="k", type="consumer", state="Reconciling", protocol_type="consumer",
                               protocol="uniform", group_epoch=5, assignment_epoch=5,
                               coordinator={"id": 1, "host": "h", "port": 1}, coordinator_partition=0)
    g.members = [model.Member("A", client_id="c", member_epoch=4,
                              assignment=[model.TopicPartitions("t", [0])],
                              target_assignment=[model.TopicPartitions("t", [0, 1])])]
    lines = draw(describe_tables, [g.to_dict()]).splitlines()
    assert lines[1] == "type consumer, protocol type consumer, assignor uniform, group epoch 5, assignment epoch 5"
    assert "target assignments" in lines[3]
    # issue 19: A has not acknowledged epoch 5 (its epoch 4), nothing to revoke
    assert lines[4] == "waiting for: A (client c) at member epoch 4 of 5, holding t:0"
    assert lines[5].split() == ["MEMBER", "CLIENT", "HOST", "EPOCH", "#PARTS", "ASSIGNMENT", "TARGET"]
    assert lines[6].split() == ["A", "c", "-", "4", "1", "t:0", "t:0-1"]


def test_describe_waiting_for_names_members_revoking_not_those_waiting():
    g = model.GroupDescription(group="k", type="consumer", state="Reconciling", protocol_type="consumer",
                               protocol="uniform", group_epoch=6, assignment_epoch=6)
    tps = model.TopicPartitions
    g.members = [model.Member("A", client_id="a", member_epoch=5, assignment=[tps("t", [0, 1, 2])],
                              target_assignment=[tps("t", [0, 1])]),
                 model.Member("B", client_id="b", member_epoch=6, assignment=[],
                              target_assignment=[tps("t", [2])]),
                 model.Member("C", client_id="c", member_epoch=6, assignment=[tps("t", [3])],
                              target_assignment=[tps("t", [3])])]
    text = draw(describe_tables, [g.to_dict()])
    waiting = [line for line in text.splitlines() if line.startswith("waiting for:")]
    assert waiting == ["waiting for: A (client a) at member epoch 5 of 6, holding t:0-2, "
                       "revoking t:2"]


def test_several_groups_are_separated_by_a_blank_line():
    text = draw(describe_tables, [_classic(state="Empty"), _classic(state="Empty")])
    assert text.count("GROUP orders") == 2 and "\n\nGROUP orders" in text


def test_describe_waiting_for_a_share_member_behind_the_group_epoch():
    g = model.GroupDescription(group="s", type="share", state="Stable", protocol_type="share",
                               group_epoch=7, assignment_epoch=7)
    g.members = [model.Member("A", client_id="a", member_epoch=6,
                              assignment=[model.TopicPartitions("t", [0])]),
                 model.Member("B", client_id="b", member_epoch=7,
                              assignment=[model.TopicPartitions("t", [0])])]
    waiting = [line for line in draw(describe_tables, [g.to_dict()]).splitlines()
               if line.startswith("waiting for:")]
    assert waiting == ["waiting for: A (client a) at member epoch 6 of 7, holding t:0"]


def test_describe_waits_for_no_share_member_before_the_broker_computed_the_assignment():
    """A join moved the group epoch to 8; the assignment is still at 7 (seen for seconds on
    the lab broker): no member can reach a target not yet computed, so none is named."""
    g = model.GroupDescription(group="s", type="share", state="Stable", protocol_type="share",
                               group_epoch=8, assignment_epoch=7)
    g.members = [model.Member("A", client_id="a", member_epoch=7,
                              assignment=[model.TopicPartitions("t", [0])]),
                 model.Member("B", client_id="b", member_epoch=6, assignment=[])]
    waiting = [line for line in draw(describe_tables, [g.to_dict()]).splitlines()
               if line.startswith("waiting for:")]
    assert waiting == ["waiting for: B (client b) at member epoch 6 of 7, holding (none)"]
