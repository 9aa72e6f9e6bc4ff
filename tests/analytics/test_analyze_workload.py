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
