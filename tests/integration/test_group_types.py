"""Every group type of Kafka 4.x described on the lab broker, against peers groupctl did
not write: confluent-kafka ShareConsumers and Kafka's ShareGroupCommand (share groups), a
Kafka Streams application and StreamsGroupCommand (streams groups), librdkafka consumers of
both protocols and ConsumerGroupCommand (mixed consumer groups); and `describe --all` over
one live group of each type.
"""
from __future__ import annotations

import json
import uuid

import pytest

from groupctl.lab.workload import create_topic

from describe_support import cgc_rows, cli, describe_json, produce, tool_rows, wait_until
from group_types_support import ShareMembers, StreamsApp, streams_tasks, tasks_by_kind

SHARE_RECORDS = {0: 7}       # one partition: both share members hold it
STREAMS_PARTITIONS = 4
STREAMS_RECORDS = {0: 5, 1: 6, 2: 7, 3: 8}


def _name(kind: str) -> str:
    return f"{kind}-{uuid.uuid4().hex[:8]}"


# ---- fixtures: one live group of each new type per module -------------------------------------

@pytest.fixture(scope="module")
def share_group(kafka):
    group, topic = _name("share-g"), _name("share-t")
    create_topic(kafka.bootstrap, topic, 1, 1, None)
    members = ShareMembers(kafka.bootstrap, group, topic, n=2)
    try:
        def both_assigned():
            code, out, _ = cli(kafka, "-o", "json", "describe", group)
            if code:
                return False
            (g,) = json.loads(out)
            ok = len(g["members"]) == 2 and all(m["assignment"] for m in g["members"])
            return g if ok and g["state"] == "Stable" else False

        wait_until(both_assigned, 60, "two share members with assignments")
        # records produced now are past the share-partition start (share.auto.offset.reset
        # is latest): the members acquire and acknowledge them, moving the start offset
        produce(kafka.bootstrap, topic, SHARE_RECORDS)
        wait_until(lambda: sum(members.received) >= sum(SHARE_RECORDS.values()), 60,
                   "the share members to receive every record")
        yield group, topic, members
    finally:
        members.close()


@pytest.fixture(scope="module")
def streams_group(kafka, tmp_path_factory):
    app_id, source, sink = _name("streams-app"), _name("streams-in"), _name("streams-out")
    create_topic(kafka.bootstrap, source, STREAMS_PARTITIONS, 1, None)
    create_topic(kafka.bootstrap, sink, STREAMS_PARTITIONS, 1, None)
    root = tmp_path_factory.mktemp("streams")
    apps = [StreamsApp(kafka.bootstrap, app_id, source, sink, root / f"state-{i}",
                       f"localhost:{7100 + i}") for i in (1, 2)]
    try:
        for app in apps:
            app.wait_running()

        def settled():
            code, out, _ = cli(kafka, "-o", "json", "describe", app_id)
            if code:
                return False
            (g,) = json.loads(out)
            ok = (g["state"] == "Stable" and len(g["members"]) == 2
                  and all(m["tasks"]["active"] and m["tasks"] == m["target_tasks"]
                          for m in g["members"]))
            return g if ok else False

        wait_until(settled, 90, "two streams members at their target tasks")
        produce(kafka.bootstrap, source, STREAMS_RECORDS)

        def committed():
            (g,) = describe_json(kafka, app_id)
            got = {r["partition"]: r["committed"] for r in g["offsets"] if r["topic"] == source}
            return got == STREAMS_RECORDS or False

        wait_until(committed, 60, "the app to commit every input record")
        yield app_id, source, apps
    finally:
        for app in apps:
            app.close()


# ---- share groups ------------------------------------------------------------------------------

def _tool(command, *args: str, last_free: bool = False):
    """A function running one of Kafka's group tools and parsing its table."""
    def run():
        proc = command(*args)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return tool_rows(proc.stdout, last_free)

    return run


def _stable_describe(kafka, group, tool):
    """groupctl's describe and the tool's rows, taken when groupctl saw the same group
    before and after the tool ran (the two views are of one epoch)."""
    def same():
        (before,) = describe_json(kafka, group)
        rows = tool()
        (after,) = describe_json(kafka, group)
        return (before, rows) if before == after else False

    return wait_until(same, 30, "a describe that holds still")


def test_share_group_members_equal_share_group_command(kafka, share_group):
    group, topic, members = share_group
    tool = _tool(kafka.share_group_command, "--describe", "--group", group, "--members",
                 "--verbose")
    g, rows = _stable_describe(kafka, group, tool)
    assert (g["type"], g["protocol_type"], g["state"], g["protocol"]) == (
        "share", "share", "Stable", "simple")
    assert g["group_epoch"] >= 2 and g["assignment_epoch"] == g["group_epoch"]
    ours = {m["member_id"]: (m["client_id"], m["host"], m["member_epoch"],
                             [(tp["topic"], p) for tp in m["assignment"] for p in tp["partitions"]])
            for m in g["members"]}
    theirs = {r["CONSUMER-ID"]: (r["CLIENT-ID"], r["HOST"], int(r["MEMBER-EPOCH"]),
                                 [(t, int(p)) for t, _, p in [r["ASSIGNMENT"].rpartition(":")]])
              for r in rows}
    assert ours == theirs
    assert sorted(m["client_id"] for m in g["members"]) == sorted(members.client_ids)
    assert all(m["member_protocol"] == "share" and m["subscription"]["topics"] == [topic]
               for m in g["members"])
    # one partition, two members: both hold it, and describe says so
    assert g["shared_partitions"] == [{"topic": topic, "partition": 0,
                                       "member_ids": sorted(ours)}]
    code, out, _ = cli(kafka, "describe", group)
    assert code == 0 and f"{topic}:0 is shared by 2 members" in out


def test_share_group_offsets_equal_share_group_command(kafka, share_group):
    group, topic, _ = share_group
    tool = _tool(kafka.share_group_command, "--describe", "--group", group, "--offsets",
                 "--verbose")
    # the start offset is the share coordinator's persisted state, which trails the
    # acknowledgements: compare with what Kafka's tool reads at the same moment
    g, rows = _stable_describe(kafka, group, tool)
    ours = [(r["topic"], r["partition"], r["start_offset"], r["leader_epoch"], r["lag"])
            for r in g["share_offsets"]]

    def num(text):
        return None if text == "-" else int(text)

    theirs = [(r["TOPIC"], int(r["PARTITION"]), num(r["START-OFFSET"]),
               num(r["LEADER-EPOCH"]), num(r["LAG"])) for r in rows]
    assert ours == sorted(theirs)
    ((_, _, start, epoch, lag),) = ours
    assert 0 <= start <= SHARE_RECORDS[0] and (epoch, lag) == (0, 0)
    assert g["share_offsets"][0]["member_ids"] == sorted(m["member_id"] for m in g["members"])
    assert g["lag_total"] == 0 and g["offsets"] == []  # a share group commits nothing


# ---- streams groups ----------------------------------------------------------------------------

def test_streams_group_members_equal_streams_group_command(kafka, streams_group):
    app_id, source, apps = streams_group
    tool = _tool(kafka.streams_group_command, "--describe", "--group", app_id, "--members",
                 "--verbose", last_free=True)
    g, rows = _stable_describe(kafka, app_id, tool)
    assert (g["type"], g["protocol_type"], g["state"]) == ("streams", "streams", "Stable")
    assert {int(r["TARGET-ASSIGNMENT-EPOCH"]) for r in rows} == {g["assignment_epoch"]}
    assert {int(r["TOPOLOGY-EPOCH"]) for r in rows} == {g["topology"]["epoch"]}
    ours = {m["member_id"]: (m["member_protocol"], m["member_epoch"], m["process_id"],
                             m["client_id"], tasks_by_kind(m)) for m in g["members"]}
    theirs = {r["MEMBER"]: (r["MEMBER-PROTOCOL"], int(r["MEMBER-EPOCH"]), r["PROCESS"],
                            r["CLIENT-ID"], streams_tasks(r["ASSIGNMENTS"])) for r in rows}
    assert ours == theirs
    # every input partition is one active task of each subtopology, on exactly one member
    for sub in ("0", "1"):
        owned = sorted(p for m in g["members"] for t in m["tasks"]["active"]
                       if t["subtopology_id"] == sub for p in t["partitions"])
        assert owned == list(range(STREAMS_PARTITIONS))
    assert sorted(m["user_endpoint"]["port"] for m in g["members"]) == [7101, 7102]
    assert all(m["is_classic"] is False and m["topology_epoch"] == g["topology"]["epoch"]
               for m in g["members"])


def test_streams_group_topology_and_input_offsets(kafka, streams_group):
    app_id, source, _ = streams_group
    (g,) = describe_json(kafka, app_id)
    subs = g["topology"]["subtopologies"]
    repartition = f"{app_id}-counts-repartition"
    assert [s["subtopology_id"] for s in subs] == ["0", "1"]
    assert (subs[0]["source_topics"], subs[0]["repartition_sink_topics"]) == ([source], [repartition])
    assert [t["name"] for t in subs[1]["repartition_source_topics"]] == [repartition]
    assert [t["name"] for t in subs[1]["state_changelog_topics"]] == [f"{app_id}-counts-changelog"]
    inputs = {r["partition"]: r for r in g["offsets"] if r["topic"] == source}
    assert {p: (r["committed"], r["log_end"], r["lag"]) for p, r in inputs.items()} == {
        p: (n, n, 0) for p, n in STREAMS_RECORDS.items()}
    # the owner of an input partition is the member whose active task reads it
    for p, row in inputs.items():
        (owner,) = [m["member_id"] for m in g["members"]
                    if any(t["subtopology_id"] == "0" and p in t["partitions"]
                           for t in m["tasks"]["active"])]
        assert row["member_id"] == owner
    rows = _tool(kafka.streams_group_command, "--describe", "--group", app_id, "--offsets",
                 "--verbose")()
    theirs = {int(r["PARTITION"]): (int(r["CURRENT-OFFSET"]), int(r["LOG-END-OFFSET"]),
                                    int(r["OFFSET-LAG"])) for r in rows if r["TOPIC"] == source}
    assert theirs == {p: (n, n, 0) for p, n in STREAMS_RECORDS.items()}


def test_streams_group_assignor_and_topology_description_as_streams_group_command(
        kafka, streams_group):
    # StreamsGroupDescribe v1 (Kafka 4.4): the assignor, and the recorded description
    app_id, _, _ = streams_group
    (row,) = _tool(kafka.streams_group_command, "--describe", "--group", app_id, "--state")()
    (g,) = describe_json(kafka, app_id)
    assert g["protocol"] and g["protocol"] == row["ASSIGNOR"], (g["protocol"], row)
    proc = kafka.streams_group_command("--describe", "--group", app_id, "--topology")
    # the lab broker has no topology description plugin: nothing is stored, both say
    assert "No topology description is stored" in proc.stdout + proc.stderr, proc.stdout
    assert g["topology_description"] == {"status": "not_stored", "subtopologies": None,
                                         "global_stores": None}
    code, out, err = cli(kafka, "describe", app_id)
    assert code == 0, err
    assert f"assignor {row['ASSIGNOR']}, group epoch" in out
    assert "no topology description is stored for streams group" in out


# ---- mixed consumer groups --------------------------------------------------------------------

def test_mixed_group_marks_each_members_protocol(kafka, topic_factory, unique_group,
                                                 consumer_factory):
    topic = topic_factory(4)
    classic = consumer_factory(unique_group, topic, protocol="classic")
    classic.wait_assigned(timeout=30)
    modern = consumer_factory(unique_group, topic, protocol="consumer")

    def settled():
        (g,) = describe_json(kafka, unique_group)
        ok = (g["state"] == "Stable" and len(g["members"]) == 2
              and all(m["assignment"] for m in g["members"]))
        return g if ok else False

    g = wait_until(settled, 60, "a Stable mixed group with both members assigned")
    assert (g["type"], g["classic_members"]) == ("consumer", 1)
    protocols = {m["client_id"]: m["member_protocol"] for m in g["members"]}
    assert protocols == {classic.name: "classic", modern.name: "consumer"}
    upgraded = {r["CLIENT-ID"]: r["UPGRADED"] for r in cgc_rows(
        kafka, "--describe", "--group", unique_group, "--members", "--verbose")}
    assert upgraded == {classic.name: "false", modern.name: "true"}
    code, out, _ = cli(kafka, "describe", unique_group)
    assert code == 0 and "mixed group: 1 of 2 members still uses the classic protocol" in out
    assert "PROTOCOL" in out.splitlines()[4]


def test_a_consumer_group_without_classic_members_has_no_protocol_column(
        kafka, topic_factory, unique_group, consumer_factory):
    topic = topic_factory(2)
    consumer_factory(unique_group, topic, protocol="consumer").wait_assigned(timeout=30)
    (g,) = describe_json(kafka, unique_group)
    assert g["classic_members"] == 0 and g["members"][0]["member_protocol"] == "consumer"
    code, out, _ = cli(kafka, "describe", unique_group)
    assert code == 0 and "PROTOCOL" not in out and "mixed" not in out


# ---- every type at once ------------------------------------------------------------------------

def test_describe_all_shows_every_live_group_of_every_type(
        kafka, share_group, streams_group, topic_factory, unique_group, consumer_factory):
    classic_group, consumer_group = f"{unique_group}-classic", f"{unique_group}-consumer"
    topic = topic_factory(2)
    consumer_factory(classic_group, topic, protocol="classic").wait_assigned(timeout=30)
    consumer_factory(consumer_group, topic, protocol="consumer").wait_assigned(timeout=30)
    want = {classic_group: "classic", consumer_group: "consumer",
            share_group[0]: "share", streams_group[0]: "streams"}
    code, out, err = cli(kafka, "-o", "json", "describe", "--all")
    assert code == 0, err
    seen = {g["group"]: g for g in json.loads(out)}
    for group, kind in want.items():
        assert group in seen, f"{kind} group {group} missing from describe --all"
        g = seen[group]
        assert (g["type"], g["state"] != "Dead", len(g["members"]) > 0) == (kind, True, True), g
    # the type filter, and each group described by name
    for kind in ("share", "streams"):
        code, out, err = cli(kafka, "-o", "json", "describe", "--all", "--type", kind)
        assert code == 0, err
        types = {g["group"]: g["type"] for g in json.loads(out)}
        assert set(types.values()) == {kind} and want_of(want, kind) <= set(types)
    code, out, err = cli(kafka, "-o", "json", "describe", *want)
    assert code == 0, err
    assert [(g["group"], g["type"]) for g in json.loads(out)] == list(want.items())
    code, out, err = cli(kafka, "-o", "json", "list", "--type", "share,streams")
    assert code == 0, err
    assert want_of(want, "share", "streams") <= {g["group"] for g in json.loads(out)}


def want_of(want: dict, *kinds: str) -> set:
    return {g for g, k in want.items() if k in kinds}


def test_describe_trace_shows_only_read_apis(kafka, share_group, streams_group):
    code, _, err = cli(kafka, "--debug", "-o", "json", "describe", share_group[0],
                       streams_group[0])
    assert code == 0, err
    apis = {line.split()[2] for line in err.splitlines()
            if line.startswith("groupctl: trace: ") and " v" in line and "#" in line}
    assert apis == {"ApiVersions", "Metadata", "FindCoordinator", "ConsumerGroupDescribe",
                    "ShareGroupDescribe", "StreamsGroupDescribe", "DescribeGroups",
                    "OffsetFetch", "DescribeShareGroupOffsets", "ListOffsets"}, apis


def test_wait_sees_a_live_share_group(kafka, share_group):
    """`wait` reads snapshots through describe's per-type machinery, so a share group is
    Stable with its 2 members (before issue 10, wait asked only the classic and consumer
    APIs and reported a live share group as missing)."""
    group, _, members = share_group
    code, out, err = cli(kafka, "-o", "json", "wait", group, "--state", "stable",
                         "--members", "2", "--timeout", "30")
    assert code == 0, err
    data = json.loads(out)
    assert data["met"] and data["type"] == "share" and data["state"] == "Stable"
    assert data["members"] == 2
