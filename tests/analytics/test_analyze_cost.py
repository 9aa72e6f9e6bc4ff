"""Issue 19 in `analyze`: a recorded `rebalance`'s cost (unowned partition time, its basis)
and who held it up (slowest member) reach its episode, and the group's metrics sum the
unowned time; episodes from other witnesses carry nulls."""
from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.timeout(900)


def test_recorded_cost_reaches_episodes_and_metrics(spark, tmp_path):
    from groupctl.analytics import load
    from groupctl.analytics.pipeline import Inputs, analyze

    base = {"v": 1, "source": "describe", "cluster": None, "group": "cost-g",
            "event": "rebalance", "members_before": ["a", "c"], "reason": "member b joined",
            "moved_partitions": 2, "unowned_basis": "measured"}
    rounds = [dict(base, ts="2026-11-24T10:00:05.000Z", from_generation=3, to_generation=4,
                   started="2026-11-24T10:00:00.000Z", ended="2026-11-24T10:00:05.000Z",
                   duration_ms=5000, members_after=["a", "b", "c"],
                   unowned_partition_ms=1000, unowned_partitions_max_ms=500,
                   slowest_member="a", slowest_member_ms=4500),
              dict(base, ts="2026-11-24T10:01:01.000Z", from_generation=4, to_generation=5,
                   started="2026-11-24T10:01:00.000Z", ended="2026-11-24T10:01:01.000Z",
                   duration_ms=1000, members_after=["a", "b"], unowned_partition_ms=250,
                   unowned_partitions_max_ms=250, slowest_member=None,
                   slowest_member_ms=None)]
    path = tmp_path / "cost.ndjson"
    path.write_text("".join(json.dumps(r) + "\n" for r in rounds))
    tables = analyze(spark, Inputs(events=[str(path)]))
    try:
        result = {name: load.rows(df) for name, df in tables.named().items()}
    finally:
        tables.release()
    eps = [e for e in result["episodes"] if e["group"] == "cost-g"]
    assert [(e["to_generation"], e["unowned_partition_ms"], e["unowned_partitions_max_ms"],
             e["unowned_basis"], e["slowest_member"], e["slowest_member_ms"]) for e in eps] == [
        (4, 1000, 500, "measured", "a", 4500), (5, 250, 250, "measured", None, None)]
    (m,) = [m for m in result["metrics"] if m["group"] == "cost-g"]
    assert m["unowned_partition_ms_total"] == 1250
