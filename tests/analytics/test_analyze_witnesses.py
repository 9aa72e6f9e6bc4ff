"""Episodes from each witness alone and from any mix, each rebalance once (issue 23):
groupctl's own records (the probe's real `join --watch --record` file), client logs alone
(the real Java and librdkafka members' logs), and records + broker log + client logs
together, where the broker log's episode stands and the others add none."""
from __future__ import annotations

import json

import pytest

from groupctl.analytics.schema import CLIENT_COST_COLUMNS

pytestmark = pytest.mark.timeout(900)

CLASSIC = "harvest-classic-1795439393"


def _run(spark, inputs):
    from groupctl.analytics import load
    from groupctl.analytics.pipeline import analyze

    tables = analyze(spark, inputs)
    try:
        return {name: load.rows(df) for name, df in tables.named().items()}
    finally:
        tables.release()


def _records(fixture_dir, event="rebalance"):
    lines = (fixture_dir / "probe.ndjson").read_text().splitlines()
    return [json.loads(line) for line in lines if json.loads(line)["event"] == event]


def _write(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return str(path)


def test_records_alone_give_every_recorded_rebalance_once(spark, fixture_dir, tmp_path):
    from groupctl.analytics.pipeline import Inputs

    recorded = _records(fixture_dir)
    # a second watcher's record of the same group: the last two rounds again, and one
    # round of another group that only it saw (its generation unknown to the watcher)
    other = dict(recorded[0], group="only-recorded", to_generation=None, from_generation=None,
                 started=None, duration_ms=250, ended="2026-11-23T14:00:00.250Z",
                 ts="2026-11-23T14:00:00.251Z", reason="member m-1 (client c-1) joined")
    second = _write(tmp_path / "second.ndjson", recorded[-2:] + [other])
    result = _run(spark, Inputs(events=[str(fixture_dir / "probe.ndjson"), second]))
    eps = [e for e in result["episodes"] if e["group"] == CLASSIC]
    assert [(e["from_generation"], e["to_generation"], e["started"], e["ended"],
             e["members_before"], e["members_after"], e["moved_partitions"])
            for e in eps] == [
        (r["from_generation"], r["to_generation"], r["started"], r["ended"],
         len(r["members_before"]), len(r["members_after"]), r["moved_partitions"])
        for r in recorded]
    assert [e["to_generation"] for e in eps] == [2, 3, 4, 5, 6, 7]
    assert {e["group_type"] for e in eps} == {"classic"} and eps[0]["reason_kind"] == "join"
    # the round already under way: started unknown, so ended - duration (a lower bound)
    (only,) = [e for e in result["episodes"] if e["group"] == "only-recorded"]
    assert (only["started"], only["duration_ms"], only["trigger_member"], only["reason_kind"]) \
        == ("2026-11-23T14:00:00.000Z", 250, "m-1", "join")
    metrics = {m["group"]: m["rebalances"] for m in result["metrics"]}
    assert metrics == {CLASSIC: 6, "only-recorded": 1}


def test_client_logs_alone_give_the_members_rounds(spark, fixture_dir):
    from groupctl.analytics.pipeline import Inputs

    result = _run(spark, Inputs(client_logs=[str(fixture_dir / "java-consumer.log"),
                                             str(fixture_dir / "rdkafka-consumer.log"),
                                             str(fixture_dir / "java848-consumer.log")]))
    shape = [(e["group"], e["group_type"], e["to_generation"], e["started"], e["ended"])
             for e in result["episodes"]]
    assert shape == [
        # the Java member joined generations 3 and 4, the librdkafka one 4 and 5: from the
        # first member that began to rejoin to the last that got its assignment
        (CLASSIC, "classic", 3, "2026-11-23T13:09:58.522Z", "2026-11-23T13:10:00.521Z"),
        (CLASSIC, "classic", 4, "2026-11-23T13:10:00.704Z", "2026-11-23T13:10:03.527Z"),
        (CLASSIC, "classic", 5, "2026-11-23T13:10:09.534Z", "2026-11-23T13:10:09.542Z"),
        # the KIP-848 members: each member epoch reconciled to (RECONCILING -> STABLE)
        ("harvest-java848", "consumer", 2, "2026-11-23T14:48:15.803Z",
         "2026-11-23T14:48:15.833Z"),
        ("harvest-java848", "consumer", 3, "2026-11-23T14:48:27.132Z",
         "2026-11-23T14:48:27.210Z"),
        ("harvest-java848", "consumer", 4, "2026-11-23T14:48:37.965Z",
         "2026-11-23T14:48:38.911Z"),
        ("java848-leave", "consumer", 2, "2026-11-23T14:49:04.605Z",
         "2026-11-23T14:49:04.622Z")]
    gen4 = result["episodes"][1]
    assert gen4["reason"] == "Metadata for subscribed topic(s) has changed"


def test_broker_log_records_and_clients_together_count_each_rebalance_once(
        spark, fixture_dir, tmp_path):
    from groupctl.analytics.pipeline import Inputs

    # the records of a round the broker log also tells with no generation known: dropped
    recorded = _records(fixture_dir)
    unknown = dict(recorded[2], to_generation=None, from_generation=None)
    records = _write(tmp_path / "extra.ndjson", [unknown])
    broker = [str(fixture_dir / "kafka4-server.log")]
    alone = _run(spark, Inputs(broker_logs=broker))
    mixed = _run(spark, Inputs(
        broker_logs=broker, events=[str(fixture_dir / "probe.ndjson"), records],
        client_logs=[str(fixture_dir / "java-consumer.log"),
                     str(fixture_dir / "rdkafka-consumer.log")]))
    def classic(result):
        return [e for e in result["episodes"] if e["group"] == CLASSIC]
    # the broker log's episodes stand (its start, reason, trigger), with the records'
    # moved partitions and the clients' own figure (issue 19, test_analyze_handover.py);
    # nothing from the records or the clients comes twice
    added = {"moved_partitions", "moved_partitions_source", *CLIENT_COST_COLUMNS}
    assert [{k: v for k, v in e.items() if k not in added} for e in classic(mixed)] \
        == [{k: v for k, v in e.items() if k not in added} for e in classic(alone)]
    assert {e["moved_partitions_source"] for e in classic(mixed)
            if e["moved_partitions"] is not None} == {"records"}
    # the Java member handed partition 3 over in generation 4 (2005 ms; 4 and 5 went to the
    # librdkafka member, whose log names none); the librdkafka member's own revoke ->
    # assign in generation 5 (8 ms, for its 2 partitions); its leave gives up 3 that no
    # given log takes up again (generation 6)
    told = {e["to_generation"]: tuple(e[c] for c in CLIENT_COST_COLUMNS)
            for e in classic(mixed) if e["client_unowned_basis"]}
    assert told == {4: (2005, 2005, "client_logs", 1, 2),
                    5: (16, 8, "client_logs_per_member", 2, 0),
                    6: (0, None, "client_logs_per_member", 0, 3)}
    assert [e["to_generation"] for e in classic(mixed)] == list(range(1, 10))
    metrics = {m["group"]: m["rebalances"] for m in mixed["metrics"]}
    assert metrics[CLASSIC] == 9   # each generation once, the one that emptied the group too
