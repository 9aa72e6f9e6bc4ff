"""Share, streams and mixed groups in the read model (observe.reads.share, observe.reads.streams,
observe.reads.model) and their tables (render.group_types), from response dicts shaped as the
lab broker (Kafka 4.3.1) answered ShareGroupDescribe, DescribeShareGroupOffsets and
StreamsGroupDescribe. Nothing here talks to a broker."""
from __future__ import annotations

import asyncio
import io

from rich.console import Console

from groupctl.errors import NotFoundError
from groupctl.observe.reads import model, share, streams
from groupctl.observe.reads.describe import describe_groups
from groupctl.observe.reads.listing import GroupListing
from groupctl.protocol.messages import CONSUMER_GROUP_DESCRIBE, DESCRIBE_GROUPS, OFFSET_FETCH
from groupctl.render.groups import describe_tables

from describe_fakes import ScriptedCoordinator


def draw(groups: list[dict], wide: bool = False) -> str:
    out = io.StringIO()
    describe_tables(Console(file=out, force_terminal=False, no_color=True, width=80),
                    groups, wide)
    return out.getvalue()


def _tps(*items):
    return {"topic_partitions": [{"topic_id": "id-" + t, "topic_name": t, "partitions": list(p)}
                                 for t, p in items]}


# ---- share groups ----------------------------------------------------------------------------

def _share_member(mid, client, *assigned, epoch=3):
    return {"member_id": mid, "rack_id": None, "member_epoch": epoch, "client_id": client,
            "client_host": "/127.0.0.1", "subscribed_topic_names": ["t"],
            "assignment": _tps(*assigned)}


SHARE_RAW = {"error_code": 0, "group_id": "s", "group_state": "Stable", "group_epoch": 3,
             "assignment_epoch": 3, "assignor_name": "simple", "members": [
                 _share_member("B", "c2", ("t", [0, 1])),
                 _share_member("A", "c1", ("t", [0]), ("u", [2]))]}

OFFSETS_ENTRY = {"group_id": "s", "error_code": 0, "error_message": None, "topics": [
    {"topic_name": "t", "topic_id": "id-t", "partitions": [
        {"partition_index": 1, "start_offset": 25, "leader_epoch": 0, "lag": 4,
         "error_code": 0, "error_message": None},
        {"partition_index": 0, "start_offset": -1, "leader_epoch": -1, "lag": -1,
         "error_code": 0, "error_message": None}]}]}


def test_share_group_members_and_shared_partitions():
    g = share.share_group(SHARE_RAW)
    d = g.to_dict()
    assert (d["type"], d["protocol_type"], d["protocol"], d["group_epoch"],
            d["assignment_epoch"], d["generation"], d["classic_members"]) == (
        "share", "share", "simple", 3, 3, None, None)
    a = next(m for m in d["members"] if m["member_id"] == "A")
    assert (a["member_protocol"], a["member_epoch"], a["subscription"]["topics"]) == ("share", 3, ["t"])
    assert a["assignment"] == [{"topic": "t", "partitions": [0]}, {"topic": "u", "partitions": [2]}]
    assert d["shared_partitions"] == [{"topic": "t", "partition": 0, "member_ids": ["A", "B"]}]


def test_share_offsets_unknown_values_are_null_and_assigned_partitions_get_rows():
    g = share.share_group(SHARE_RAW)
    g.share_offsets = share.share_offset_rows(OFFSETS_ENTRY, g.members)
    d = g.to_dict()
    assert d["share_offsets"] == [
        {"topic": "t", "partition": 0, "start_offset": None, "leader_epoch": None, "lag": None,
         "member_ids": ["A", "B"]},
        {"topic": "t", "partition": 1, "start_offset": 25, "leader_epoch": 0, "lag": 4,
         "member_ids": ["B"]},
        # assigned, but the broker has no share-partition state for it yet
        {"topic": "u", "partition": 2, "start_offset": None, "leader_epoch": None, "lag": None,
         "member_ids": ["A"]}]
    assert (d["lag_total"], d["lag_by_topic"]) == (4, {"t": 4, "u": None})


def test_share_offsets_partition_error_is_kept_on_its_row():
    entry = {"topics": [{"topic_name": "t", "topic_id": "x", "partitions": [
        {"partition_index": 0, "start_offset": 5, "leader_epoch": 0, "lag": 1,
         "error_code": 29, "error_message": "nope"}]}]}
    (row,) = share.share_offset_rows(entry, [])
    assert (row.start_offset, row.lag) == (None, None)
    assert "TOPIC_AUTHORIZATION_FAILED" in row.to_dict()["error"]


def test_share_group_table():
    g = share.share_group(SHARE_RAW)
    g.share_offsets = share.share_offset_rows(OFFSETS_ENTRY, g.members)
    text = draw([g.to_dict()])
    assert "type share, protocol type share, assignor simple, group epoch 3, assignment epoch 3" in text
    assert "t:0 is shared by 2 members: A, B" in text
    assert "START-OFFSET" in text and "2 members" in text
    assert "lag: total 4 (t 4, u -)" in text
    assert "COMMITTED" not in text  # a share group commits no offsets


# ---- streams groups --------------------------------------------------------------------------

def _tasks(active=(), standby=(), warmup=()):
    def ids(items):
        return [{"subtopology_id": s, "partitions": list(p)} for s, p in items]
    return {"active_tasks": ids(active), "standby_tasks": ids(standby), "warmup_tasks": ids(warmup)}


def _streams_member(mid, process, active, target=None, standby=(), classic=False):
    return {"member_id": mid, "member_epoch": 10, "instance_id": None, "rack_id": None,
            "client_id": f"app-{process}-StreamThread-1-consumer", "client_host": "/127.0.0.1",
            "topology_epoch": 0, "process_id": process,
            "user_endpoint": {"host": "localhost", "port": 7001},
            "client_tags": [{"key": "zone", "value": "a"}], "task_offsets": [
                {"subtopology_id": "1", "partition": 0, "offset": 12}], "task_end_offsets": [],
            "assignment": _tasks(active, standby), "target_assignment": _tasks(target or active),
            "is_classic": classic}


def _info(name, partitions, configs=()):
    return {"name": name, "partitions": partitions, "replication_factor": -1,
            "topic_configs": [{"key": k, "value": v} for k, v in configs]}


STREAMS_RAW = {"error_code": 0, "group_id": "app", "group_state": "Reconciling",
               "group_epoch": 11, "assignment_epoch": 11, "topology": {"epoch": 0, "subtopologies": [
                   {"subtopology_id": "1", "source_topics": [], "repartition_sink_topics": [],
                    "repartition_source_topics": [_info("app-rep", 4, [("cleanup.policy", "delete")])],
                    "state_changelog_topics": [_info("app-log", 0)]},
                   {"subtopology_id": "0", "source_topics": ["in"],
                    "repartition_sink_topics": ["app-rep"], "repartition_source_topics": [],
                    "state_changelog_topics": []}]},
               "members": [
                   _streams_member("M1", "p1", [("0", [0, 2]), ("1", [0, 2])],
                                   target=[("0", [0]), ("1", [0])], standby=[("1", [1])]),
                   _streams_member("M2", "p2", [("0", [1, 3]), ("1", [1, 3])], classic=True)]}


def test_streams_group_topology():
    d = streams.streams_group(STREAMS_RAW).to_dict()
    assert (d["type"], d["protocol_type"], d["protocol"], d["group_epoch"],
            d["assignment_epoch"], d["rebalancing"]) == ("streams", "streams", None, 11, 11, True)
    topo = d["topology"]
    assert topo["epoch"] == 0 and [s["subtopology_id"] for s in topo["subtopologies"]] == ["0", "1"]
    sub1 = topo["subtopologies"][1]
    assert sub1["repartition_source_topics"] == [
        {"name": "app-rep", "partitions": 4, "replication_factor": None,
         "configs": {"cleanup.policy": "delete"}}]
    assert sub1["state_changelog_topics"][0]["partitions"] is None  # 0: not enforced


def test_streams_members_tasks_and_input_partitions():
    d = streams.streams_group(STREAMS_RAW).to_dict()
    m1, m2 = d["members"]
    assert (m1["process_id"], m1["user_endpoint"], m1["topology_epoch"], m1["client_tags"]) == (
        "p1", {"host": "localhost", "port": 7001}, 0, {"zone": "a"})
    assert m1["tasks"] == {"active": [{"subtopology_id": "0", "partitions": [0, 2]},
                                      {"subtopology_id": "1", "partitions": [0, 2]}],
                           "standby": [{"subtopology_id": "1", "partitions": [1]}], "warmup": []}
    assert m1["target_tasks"]["active"] == [{"subtopology_id": "0", "partitions": [0]},
                                            {"subtopology_id": "1", "partitions": [0]}]
    # active tasks read their subtopology's source and repartition-source topics
    assert m1["assignment"] == [{"topic": "app-rep", "partitions": [0, 2]},
                                {"topic": "in", "partitions": [0, 2]}]
    assert m1["target_assignment"] == [{"topic": "app-rep", "partitions": [0]},
                                       {"topic": "in", "partitions": [0]}]
    assert m1["task_offsets"] == [{"subtopology_id": "1", "partition": 0, "offset": 12}]
    assert (m1["member_protocol"], m1["is_classic"]) == ("streams", False)
    assert (m2["member_protocol"], m2["is_classic"], d["classic_members"]) == ("classic", True, 1)


def test_streams_group_without_topology():
    raw = dict(STREAMS_RAW, topology=None, members=[])
    d = streams.streams_group(raw).to_dict()
    assert d["topology"] is None
    assert "topology: not initialized" in draw([d])


def test_streams_group_table():
    d = streams.streams_group(STREAMS_RAW).to_dict()
    text = draw([d])
    assert "group epoch 11, target assignment epoch 11, topology epoch 0" in text
    assert "app-rep" in text and "app-log" in text
    for column in ("PROCESS", "ACTIVE", "TARGET-ACTIVE", "STANDBY", "TARGET-STANDBY", "PROTOCOL"):
        assert column in text
    assert "WARMUP" not in text  # no member has warm-up tasks
    assert "0:0,2 1:0,2" in text and "0:0 1:0" in text and "1:1" in text
    assert "mixed group: 1 of 2 members still uses the classic protocol" in text
    wide = draw([d], wide=True)
    assert "WARMUP" in wide and "localhost:7001" in wide and "TOPOLOGY EPOCH" in wide


# ---- mixed consumer groups -------------------------------------------------------------------

def _consumer_member(mid, member_type):
    return {"member_id": mid, "instance_id": None, "rack_id": None, "member_epoch": 2,
            "client_id": "c-" + mid, "client_host": "/h", "subscribed_topic_names": ["t"],
            "subscribed_topic_regex": None, "member_type": member_type,
            "assignment": _tps(("t", [0])), "target_assignment": _tps(("t", [0]))}


def _consumer_group(*types):
    return model.consumer_group({
        "error_code": 0, "group_id": "k", "group_state": "Stable", "group_epoch": 2,
        "assignment_epoch": 2, "assignor_name": "uniform",
        "members": [_consumer_member(f"m{i}", t) for i, t in enumerate(types)]})


def test_member_type_is_member_protocol():
    d = _consumer_group(0, 1, -1).to_dict()
    assert [m["member_protocol"] for m in d["members"]] == ["classic", "consumer", None]
    assert d["classic_members"] == 1


def test_protocol_column_only_in_a_mixed_group():
    mixed = draw([_consumer_group(0, 1).to_dict()])
    assert "PROTOCOL" in mixed and "classic" in mixed
    assert "mixed group: 1 of 2 members still uses the classic protocol" in mixed
    pure = draw([_consumer_group(1, 1).to_dict()])
    assert "PROTOCOL" not in pure and "mixed" not in pure


def test_classic_group_members_speak_classic():
    g = model.classic_group({"error_code": 0, "group_id": "g", "group_state": "Stable",
                             "protocol_type": "consumer", "protocol_data": "range",
                             "members": [{"member_id": "m", "client_id": "c", "client_host": "/h",
                                          "group_instance_id": None, "member_metadata": b"",
                                          "member_assignment": b""}]})
    d = g.to_dict()
    assert d["members"][0]["member_protocol"] == "classic" and d["classic_members"] is None


# ---- type detection in describe_groups (scripted coordinator, no broker) ----------------------

def _not_this(group, kind):
    return {"error_code": 69, "error_message": f"Group {group} is not a {kind} group.",
            "group_id": group, "group_state": "", "members": []}


CONSUMER_ENTRY = {"error_code": 0, "error_message": None, "group_id": "g", "group_state": "Stable",
                  "group_epoch": 2, "assignment_epoch": 2, "assignor_name": "uniform",
                  "members": [_consumer_member("m", 0)]}
DEAD = {"error_code": 69, "error_message": "Group g is not a classic group.", "group_id": "g",
        "group_state": "Dead", "protocol_type": "", "protocol_data": "", "members": []}


def _describe(coordinator, groups, listings=None):
    async def go():
        return await describe_groups(coordinator, groups, listings=listings)
    return asyncio.run(go())


def test_unknown_type_asks_every_describe_api_once():
    share_entry = dict(SHARE_RAW, group_id="g")
    c = ScriptedCoordinator({
        "ConsumerGroupDescribe": [{"g": _not_this("g", "consumer")}],
        "ShareGroupDescribe": [{"g": share_entry}],
        "StreamsGroupDescribe": [{"g": _not_this("g", "streams")}],
        "DescribeGroups": [{"g": dict(DEAD, error_message="Group g is not a classic group.")}]})
    result = _describe(c, ["g"])
    assert [g.type for g in result.groups] == ["share"] and not result.failures
    assert sorted(api for api, _ in c.sent) == [
        "ConsumerGroupDescribe", "DescribeGroups", "DescribeShareGroupOffsets",
        "OffsetFetch", "ShareGroupDescribe", "StreamsGroupDescribe"]


def test_a_listed_type_asks_only_its_own_api():
    c = ScriptedCoordinator({"StreamsGroupDescribe": [{"g": dict(STREAMS_RAW, group_id="g")}]})
    listing = GroupListing("g", "Stable", "streams", "streams", 1)
    result = _describe(c, ["g"], {"g": listing})
    assert [g.type for g in result.groups] == ["streams"]
    assert sorted(api for api, _ in c.sent) == ["OffsetFetch", "StreamsGroupDescribe"]


def _converting(first_consumer_answer):
    return ScriptedCoordinator({
        "ConsumerGroupDescribe": [*first_consumer_answer, {"g": CONSUMER_ENTRY}],
        "ShareGroupDescribe": [{"g": _not_this("g", "share")}],
        "StreamsGroupDescribe": [{"g": _not_this("g", "streams")}],
        "DescribeGroups": [{"g": DEAD}]})


def test_a_group_converting_under_our_requests_is_asked_again():
    """ConsumerGroupDescribe answered before the conversion ("not a consumer group"),
    DescribeGroups after it ("not a classic group"): the group is live, ask again."""
    c = _converting([{"g": _not_this("g", "consumer")}])
    result = _describe(c, ["g"])
    assert [(g.type, g.classic_members) for g in result.groups] == [("consumer", 1)]
    assert [api for api, _ in c.sent].count("ConsumerGroupDescribe") == 2


def test_a_stale_listed_type_is_dropped():
    c = _converting([])
    listing = GroupListing("g", "Stable", "classic", "consumer", 1)  # it was classic
    result = _describe(c, ["g"], {"g": listing})
    assert [g.type for g in result.groups] == ["consumer"] and not result.failures
    assert [api for api, _ in c.sent][:2] == ["DescribeGroups", "OffsetFetch"]


def test_a_missing_group_is_not_found_without_retrying():
    missing = {"error_code": 69, "error_message": "Group g not found.", "group_id": "g",
               "group_state": "", "members": []}
    c = ScriptedCoordinator({api: [{"g": missing}] for api in (
        "ConsumerGroupDescribe", "ShareGroupDescribe", "StreamsGroupDescribe")} |
        {"DescribeGroups": [{"g": dict(DEAD, error_message="Group g not found.")}]})
    result = _describe(c, ["g"])
    assert isinstance(result.failures["g"], NotFoundError) and not result.groups
    assert [api for api, _ in c.sent].count("DescribeGroups") == 1


def _node(name, kind, successors=(), topics=(), sink=None, stores=()):
    return {"name": name, "node_type": kind, "source_topics": list(topics), "sink_topic": sink,
            "stores": list(stores), "successors": list(successors)}


def test_streams_describe_v1_assignor_and_topology_description():
    # Kafka 4.4's StreamsGroupDescribe v1: the assignor, and the recorded description laid
    # out as Kafka Streams' Topology#describe (predecessors from the successors)
    raw = dict(STREAMS_RAW, assignor_name="sticky", topology_description_status=3,
               topology_description={"subtopologies": [{"subtopology_id": "0", "nodes": [
                   _node("SRC", 1, ["MAP"], topics=["in"]),
                   _node("MAP", 2, ["SINK"], stores=["counts"]),
                   _node("SINK", 3, sink="out")]}], "global_stores": []})
    d = streams.streams_group(raw).to_dict()
    assert d["protocol"] == "sticky" and d["topology_description"]["status"] == "available"
    text = draw([d])
    assert "assignor sticky, group epoch 11" in text
    assert ("Topologies:\n   Sub-topology: 0\n    Source: SRC (topics: [in])\n      --> MAP\n"
            "    Processor: MAP (stores: [counts])\n      --> SINK\n      <-- SRC\n"
            "    Sink: SINK (topic: out)\n      <-- MAP") in text
    stored = dict(raw, topology_description_status=1, topology_description=None)
    d = streams.streams_group(stored).to_dict()
    assert d["topology_description"] == {"status": "not_stored", "subtopologies": None,
                                         "global_stores": None}
    assert "no topology description is stored for streams group 'app'" in draw([d])
    # v0 (before 4.4) or not asked: neither is shown
    d = streams.streams_group(dict(STREAMS_RAW)).to_dict()
    assert d["protocol"] is None and "topology_description" not in d


# ---- what a broker lacks ---------------------------------------------------------------------

def _unsupported(group):
    # Kafka 3.8/3.9 with KIP-848 off: ConsumerGroupDescribe is advertised, and answers so
    return {"error_code": 35, "error_message": None, "group_id": group, "group_state": "",
            "members": []}


def test_consumer_group_describe_unsupported_version_means_no_consumer_group():
    c = ScriptedCoordinator({"ConsumerGroupDescribe": [{"g": _unsupported("g")}],
                             "DescribeGroups": [{"g": dict(DEAD, error_code=0)}]},
                            apis={CONSUMER_GROUP_DESCRIBE, DESCRIBE_GROUPS, OFFSET_FETCH})
    result = _describe(c, ["g"])
    assert not result.groups and isinstance(result.failures["g"], NotFoundError)
    assert ("ConsumerGroupDescribe", ["g"]) in c.sent


class _EarlyShareBroker(ScriptedCoordinator):
    """Kafka 4.0 with share groups on (early access): ShareGroupDescribe v0 only, which
    groupctl does not speak; ListGroups tells the group's type."""

    broker_versions = {77: (0, 0)}

    def __init__(self, script, listed):
        super().__init__(script, apis={CONSUMER_GROUP_DESCRIBE, DESCRIBE_GROUPS, OFFSET_FETCH})
        self.listed = listed

    async def for_each_broker(self, api, body, **kw):
        assert api.name == "ListGroups" and body["types_filter"] == ["share"]
        return {1: {"error_code": 0, "groups": [
            {"group_id": g, "group_state": "Empty", "group_type": "share",
             "protocol_type": "share"} for g in self.listed]}}


def test_a_share_group_an_early_broker_cannot_describe_is_one_line():
    c = _EarlyShareBroker({"ConsumerGroupDescribe": [{"g": _not_this("g", "consumer"),
                                                      "x": _not_this("x", "consumer")}],
                           "DescribeGroups": [{"g": DEAD, "x": dict(DEAD, group_id="x")}]},
                          listed=["g"])
    result = _describe(c, ["g", "x"])
    assert str(result.failures["g"]) == (
        "ShareGroupDescribe failed: UNSUPPORTED_VERSION (35): group 'g' is a share group: "
        "share groups need Kafka 4.1 or later; this broker offers ShareGroupDescribe v0")
    assert isinstance(result.failures["x"], NotFoundError)   # not listed: not found
