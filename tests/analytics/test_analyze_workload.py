"""`analyze --events` over a `lab workload --record` file counts the workload's rounds (it
counted none: the file held only assignment events), judged against the broker log of
the same real lab run (tests/fixtures/analyze/workload-server.log)."""
from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.timeout(900)


def test_a_workload_record_file_gives_the_rounds_the_broker_ran(spark, fixture_dir):
    from groupctl.analytics import load
    from groupctl.analytics.pipeline import Inputs, analyze

    text = (fixture_dir / "workload-server.log").read_text()
    stabilized = [int(g) for g in re.findall(r"Stabilized group \S+ generation (\d+)", text)]
    tables = analyze(spark, Inputs(events=[str(fixture_dir / "workload.ndjson")]))
    try:
        episodes = load.rows(tables.named()["episodes"])
        metrics = load.rows(tables.named()["metrics"])
    finally:
        tables.release()
    assert [(e["group"], e["group_type"], e["to_generation"]) for e in episodes] == [
        ("workload-churn", "classic", g) for g in stabilized]
    assert stabilized == list(range(1, 10))
    assert [(m["group"], m["rebalances"]) for m in metrics] == [("workload-churn", 9)]


def test_a_kip848_workload_record_file_gives_the_epochs_the_broker_targeted(spark, fixture_dir):
    """`lab workload --protocol consumer --record` (workload848.ndjson; the coordinator's
    lines of the same run in workload848-server.log): the consumer group's rounds, each
    once, as analyze reads them from the broker log."""
    from groupctl.analytics import load
    from groupctl.analytics.pipeline import Inputs, analyze

    text = (fixture_dir / "workload848-server.log").read_text()
    targeted = [int(e) for e in re.findall(r"Computed a new target assignment for epoch (\d+)",
                                           text)]
    runs = {}
    for inputs in (Inputs(events=[str(fixture_dir / "workload848.ndjson")]),
                   Inputs(broker_logs=[str(fixture_dir / "workload848-server.log")])):
        tables = analyze(spark, inputs)
        try:
            runs[bool(inputs.events)] = (load.rows(tables.named()["episodes"]),
                                         load.rows(tables.named()["metrics"]))
        finally:
            tables.release()
    (episodes, metrics), (broker_episodes, broker_metrics) = runs[True], runs[False]
    # a consumer group's rounds (not "classic", not 0): the epochs targets were computed for
    assert [(e["group_type"], e["to_generation"]) for e in episodes] == [
        ("consumer", g) for g in targeted]
    assert [(e["to_generation"]) for e in broker_episodes if e["outcome"] == "stable"] == targeted
    # the broker log adds the round its last member's leave made (outcome `empty`, a
    # round the broker counts): no member reached it, so the record file cannot hold it
    assert [e["outcome"] for e in broker_episodes][len(targeted):] == ["empty"]
    assert [(m["group"], m["type"], m["rebalances"]) for m in metrics] == [
        ("workload-consumer-churn2", "consumer", len(targeted))]
    assert [(m["group"], m["type"], m["rebalances"]) for m in broker_metrics] == [
        ("workload-consumer-churn2", "consumer", len(targeted) + 1)]
