"""The pipeline over the log fixtures, mixed in one run: real Kafka 4.3 broker lines, real
Java ConsoleConsumer and librdkafka (debug=cgrp) client lines and a real probe record from
a lab run (tests/integration/analyze_scenario.py drove it), Kafka 3.x lines written from
the 3.x GroupCoordinator.scala format strings, and damaged lines of every kind; and real
share-group (confluent-kafka ShareConsumers), streams-group (tests/java/StreamsGroupApp) and
Java KIP-848 consumer (ConsoleConsumer, group.protocol=consumer) lines from a 4.3.1 lab
broker (kafka4-groups-server.log, java848-consumer.log: see the issue-11 follow-up note)."""
from __future__ import annotations

import pytest

# the first test of a module pays for a whole Spark job over the fixtures: several
# minutes on a loaded 2-core machine, past the suite's 300 s default
pytestmark = pytest.mark.timeout(900)

CLASSIC = "harvest-classic-1795439393"
KIP848 = "harvest-848-1795439393"
V3 = "orders-v3"


def _episodes(result, group, outcome=None):
    return [e for e in result["episodes"] if e["group"] == group
            and (outcome is None or e["outcome"] == outcome)]


def _metrics(result, group):
    (row,) = [m for m in result["metrics"] if m["group"] == group]
    return row


def test_every_classic_generation_once_with_its_reason_and_trigger(fixture_result):
    eps = _episodes(fixture_result, CLASSIC)
    assert [(e["from_generation"], e["to_generation"], e["outcome"]) for e in eps] == [
        (g - 1, g, "stable") for g in range(1, 9)] + [(8, 9, "empty")]
    assert [(e["reason_kind"], e["trigger_client"]) for e in eps] == [
        ("join", "analyze-first"), ("join", "groupctl"), ("join", "console-consumer-killed"),
        ("join", "rdkafka-debug"), ("session timeout", "console-consumer-killed"),
        ("leave", "rdkafka-debug"), ("join", "static-1"), ("leave", "groupctl"),
        ("leave", "analyze-first")]
    assert "client reason: groupctl probe: joining" in eps[1]["reason"]
    assert [e["members_after"] for e in eps] == [1, 2, 3, 4, 3, 2, 3, 2, 0]
    assert [e["members_before"] for e in eps][1:] == [1, 2, 3, 4, 3, 2, 3, 2]


def test_classic_durations_run_from_preparing_to_the_leaders_assignment(fixture_result):
    gen2 = _episodes(fixture_result, CLASSIC)[1]
    # Preparing 13:09:56,655 -> Assignment received 13:09:57,489 (the real lines)
    assert (gen2["started"], gen2["ended"], gen2["duration_ms"]) == (
        "2026-11-23T13:09:56.655Z", "2026-11-23T13:09:57.489Z", 834)
    assert gen2["broker"] == 1


def test_moved_partitions_come_from_the_probe_record(fixture_result):
    moved = {e["to_generation"]: e["moved_partitions"] for e in _episodes(fixture_result, CLASSIC)}
    assert moved == {1: None, 2: 0, 3: 3, 4: 3, 5: 2, 6: 3, 7: 3, 8: None, 9: None}


def test_consumer_group_episodes_end_at_the_target_assignment(fixture_result):
    eps = _episodes(fixture_result, KIP848)
    assert [(e["from_generation"], e["to_generation"], e["outcome"]) for e in eps] == [
        (1, 2, "stable"), (2, 4, "stable"), (4, 6, "stable"), (6, 7, "empty")]
    assert [e["members_after"] for e in eps] == [1, 3, 1, 0]
    assert [e["reason_kind"] for e in eps] == ["join", "join", "leave", "leave"]
    assert eps[1]["trigger_member"] == "70+grR9rSjK9Z8qseE5MAA"
    # first member change 13:10:37,758 -> target for epoch 4 computed 13:10:38,700
    assert eps[1]["duration_ms"] == 942
    assert _metrics(fixture_result, KIP848)["group_epoch"] == 7
    assert _metrics(fixture_result, KIP848)["type"] == "consumer"


def test_kafka3_lines_in_the_same_run(fixture_result):
    eps = _episodes(fixture_result, V3)
    assert [(e["to_generation"], e["outcome"], e["reason_kind"], e["trigger_client"],
             e["duration_ms"]) for e in eps] == [
        (1, "stable", "join", "consumer-orders-1", 3020),
        (2, "stable", "join", "consumer-orders-2", 2520),
        (3, "stable", "session timeout", "consumer-orders-2", 119),
        (4, "stable", "join", "orders-static-1", 3020),
        (5, "stable", "leave", "consumer-orders-1", 200),   # its assignment line is cut short
        (6, "empty", "session timeout", "orders-static-1", 1)]
    m = _metrics(fixture_result, V3)
    # every round the broker counts: 1-5 stabilized, 6 emptied the group
    assert (m["type"], m["rebalances"], m["failed_members"], m["left_members"], m["storms"],
            m["max_generation"]) == ("classic", 6, 2, 1, 1, 6)
    left = [r for r in fixture_result["members"] if r["group"] == V3 and r["outcome"] == "left"]
    assert [(r["client"], r["reason"]) for r in left] == [
        ("consumer-orders-1", "the consumer is being closed")]


def test_group_metrics_follow_design_section_6(fixture_result):
    m = _metrics(fixture_result, CLASSIC)
    assert list(m)[:10] == ["group", "type", "rebalances", "failed_members", "left_members",
                            "duration_ms_p50", "duration_ms_p95", "duration_ms_max", "storms",
                            "top_reason"]
    # every round the broker counts: generations 1-8 stabilized, 9 "is now empty" (its
    # round, Preparing -> empty, 9.3 s, the longest)
    durations = sorted(e["duration_ms"] for e in _episodes(fixture_result, CLASSIC))
    assert [e["outcome"] for e in _episodes(fixture_result, CLASSIC)].count("empty") == 1
    assert (m["type"], m["rebalances"], m["duration_ms_max"], m["top_reason"]) == (
        "classic", 9, durations[-1], "join")
    assert m["duration_ms_p50"] in durations and m["duration_ms_p95"] in durations
    assert m["time_rebalancing_ms"] == sum(durations)
    # console-consumer-killed timed out; the static member timed out after its restart
    assert (m["failed_members"], m["left_members"]) == (2, 3)


def test_damaged_lines_are_counted_per_file_never_fatal(fixture_result):
    unparsed = {f["file"].rsplit("/", 1)[-1]: f["unparsed"] for f in fixture_result["files"]}
    # java848-consumer.log: its multi-line `Reconciling assignment` records are not cut short
    assert unparsed == {"kafka4-server.log": 0, "kafka3-server.log.gz": 3,
                        "java-consumer.log": 1, "rdkafka-consumer.log": 0,
                        "probe.ndjson": 0, "probe-damaged.ndjson": 2,
                        "kafka4-groups-server.log": 0, "java848-consumer.log": 0}


@pytest.mark.parametrize("client,kind,generations", [
    ("console-consumer-killed", "joined", [3, 4]),
    ("console-consumer-killed", "synced", [3, 4]),
    ("rdkafka-debug", "joined", [4, 5]),
])
def test_client_logs_give_each_members_own_view(fixture_result, client, kind, generations):
    got = sorted(e["generation"] for e in fixture_result["events"]
                 if e["source"] == "client-log" and e["client"] == client and e["kind"] == kind)
    assert got == generations
    groups = {e["group"] for e in fixture_result["events"]
              if e["source"] == "client-log" and e["client"] == client}
    assert groups == {CLASSIC}


def test_java_client_reasons_and_assignments(fixture_result):
    java = [e for e in fixture_result["events"] if e["client"] == "console-consumer-killed"
            and e["source"] == "client-log"]
    assert any(e["kind"] == "rejoin_requested" and e["reason"] == "group is already rebalancing"
               for e in java)
    assert [e["partitions"] for e in java if e["kind"] == "assigned"][0] == (
        "analyze-1795439393-3, analyze-1795439393-4, analyze-1795439393-5")


# ---- share (KIP-932), streams (KIP-1071) and the Java KIP-848 consumer -----------------------

def _shape(eps):
    return [(e["group_type"], e["from_generation"], e["to_generation"], e["outcome"],
             e["reason_kind"], e["members_before"], e["members_after"]) for e in eps]


def test_share_group_two_members_join_then_leave(fixture_result):
    eps = _episodes(fixture_result, "harvest-share")
    assert _shape(eps) == [
        ("share", 1, 2, "stable", "join", 0, 1),
        ("share", 2, 3, "stable", "join", 1, 2),
        # a share member's leave bumps the epoch without a line: the target's epoch tells
        ("share", 3, 4, "stable", "leave", 2, 1),
        # the last leave: no bump, no target; `Unloaded ... group epoch 5` confirms 4 -> 5
        ("share", 4, 5, "empty", "leave", 1, 0)]
    assert [e["trigger_member"] for e in eps] == [
        "P5zPa43wSwSxVQfJSR8s1w", "G4EukRQeQrWINWMzq5u1mA", "G4EukRQeQrWINWMzq5u1mA",
        "P5zPa43wSwSxVQfJSR8s1w"]
    # `left the share group` 14:47:25,466 -> target for epoch 4 at 14:47:26,487
    assert eps[2]["duration_ms"] == 1021
    m = _metrics(fixture_result, "harvest-share")
    assert (m["type"], m["rebalances"], m["left_members"], m["failed_members"],
            m["group_epoch"]) == ("share", 4, 2, 0, 5)   # epochs 2-5, the emptying one too


def test_streams_group_two_instances_then_one_stops(fixture_result):
    eps = _episodes(fixture_result, "harvest-streams")
    assert _shape(eps) == [
        # join -> bump 2 (internal topics missing) -> bump 3 (topology ready) -> target 3
        ("streams", 1, 3, "stable", "join", 0, 1),
        ("streams", 3, 4, "stable", "join", 1, 2),
        ("streams", 4, 5, "stable", "leave", 2, 1),
        ("streams", 5, 6, "empty", "leave", 1, 0)]
    assert eps[0]["duration_ms"] == 3040        # 14:47:36,870 -> 14:47:39,910
    assert eps[1]["trigger_member"] == "ibl79NusQSGz0LYpdz-akw"
    m = _metrics(fixture_result, "harvest-streams")
    assert (m["type"], m["rebalances"], m["left_members"], m["group_epoch"]) == (
        "streams", 4, 2, 6)   # the emptying round (to epoch 6) too


def test_share_and_streams_members_fenced_by_session_timeout(fixture_result):
    share = _episodes(fixture_result, "fence-share")
    streams = _episodes(fixture_result, "fence-streams")
    assert _shape(share)[-1] == ("share", 3, 4, "empty", "fenced", 1, 0)
    assert _shape(streams) == [("streams", 1, 3, "stable", "join", 0, 1),
                               ("streams", 3, 4, "empty", "fenced", 1, 0)]
    failed = {(r["group"], r["member"], r["reason"]) for r in fixture_result["members"]
              if r["outcome"] == "failed" and r["group"].startswith("fence-")}
    assert failed == {("fence-share", "IgxY+FU9SwW+q2aEAR2RGA", "the member session expired"),
                      ("fence-streams", "Hsb3IQ5BRGSVo1sZQsCNRQ", "the member session expired")}
    assert (_metrics(fixture_result, "fence-streams")["type"],
            _metrics(fixture_result, "fence-share")["type"]) == ("streams", "share")


def test_java_kip848_consumers_broker_side(fixture_result):
    eps = _episodes(fixture_result, "harvest-java848")
    assert _shape(eps) == [
        ("consumer", 1, 2, "stable", "join", 0, 1),
        ("consumer", 2, 3, "stable", "join", 1, 2),
        ("consumer", 3, 4, "stable", "leave", 2, 1),      # java848-2 stopped (SIGTERM)
        ("consumer", 4, 5, "empty", "fenced", 1, 0)]      # java848-1 SIGKILLed
    assert _metrics(fixture_result, "harvest-java848")["type"] == "consumer"


def test_java_kip848_consumer_client_lines(fixture_result):
    def states(client):   # (ts order; lines of the same millisecond in any order)
        rows = sorted((e["ts"], e["kind"], e["epoch"]) for e in fixture_result["events"]
                      if e["source"] == "client-log" and e["client"] == client
                      and e["kind"] in ("joining", "reconciling", "stable", "leaving", "left"))
        return [(kind, epoch) for _, kind, epoch in rows]

    assert states("java848-1") == [("joining", 0), ("reconciling", 2), ("stable", 2),
                                   ("reconciling", 2), ("stable", 2), ("reconciling", 4),
                                   ("stable", 4)]
    assert states("java848-leave") == [("joining", 0), ("reconciling", 2), ("stable", 2),
                                       ("leaving", 2), ("left", -1)]
    java = [e for e in fixture_result["events"] if e["client"] == "java848-1"]
    assert {e["group"] for e in java} == {"harvest-java848"}
    assert {e["member"] for e in java if e["member"]} == {"T4FZ4BQCRb-BMMKQJhxCpw"}
    assert [e["partitions"] for e in java if e["kind"] == "revoked"] == [
        "harvest-java-t-2, harvest-java-t-3"]


def test_the_events_tables_are_handed_over_before_the_episodes_are_built(fixture_result):
    # the CLI writes these while the episodes are built (load.TableWriter): each is handed
    # over once, after the extraction and before the episodes, as the very table (Once)
    # analyze returns, so it is planned once whichever thread asks first
    assert fixture_result["ready"] == [
        (name, True, ["plan extraction", "extract (checkpoint)"])
        for name in ("members", "flapping", "moves", "files")]
