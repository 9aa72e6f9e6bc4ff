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
    assert (m["unowned_partition_ms_total"], m["unowned_min_ms_total"],
            m["unowned_max_ms_total"]) == (1250, 1250, 1250)   # every round measured


def _rebalance(source: str, group: str, gen: int, second: int, ms=None, basis=None) -> dict:
    ended = f"2026-11-24T10:0{gen}:{second:02d}.000Z"
    return {"v": 1, "source": source, "group": group, "event": "rebalance", "ts": ended,
            "from_generation": gen - 1, "to_generation": gen, "started": None,
            "ended": ended, "duration_ms": None, "members_before": ["a"],
            "members_after": ["a", "b"], "unowned_partition_ms": ms,
            "unowned_partitions_max_ms": ms, "unowned_basis": basis}


def test_a_groups_unowned_total_sums_each_end_of_its_rounds_intervals(spark, tmp_path):
    """`history -o ndjson` (the coordinator's records: lower bounds) and a describe watch
    (upper bounds) of the same rounds, given to `--events`: each episode holds both ends,
    and the group's totals sum each end apart, never a bound as a measured total: at most
    is null while a round is not bounded above, a contradicted round proves neither end."""
    from groupctl.analytics import load
    from groupctl.analytics.pipeline import Inputs, analyze

    history = [_rebalance("records", "bounds-g", 2, 10, 120, "lower_bound"),
               _rebalance("records", "bounds-g", 3, 10, 200, "lower_bound"),
               _rebalance("records", "clash-g", 2, 10, 1000, "lower_bound"),
               _rebalance("records", "clash-g", 3, 10, 100, "measured"),
               _rebalance("records", "half-g", 2, 10, 300, "lower_bound"),
               _rebalance("records", "half-g", 3, 10)]
    watch = [_rebalance("describe", "bounds-g", 2, 11, 900, "upper_bound"),
             _rebalance("describe", "bounds-g", 3, 11, 700, "upper_bound"),
             _rebalance("describe", "clash-g", 2, 11, 900, "upper_bound")]
    paths = []
    for name, records in (("history", history), ("watch", watch)):
        paths.append(tmp_path / f"{name}.ndjson")
        paths[-1].write_text("".join(json.dumps(r) + "\n" for r in records))
    tables = analyze(spark, Inputs(events=[str(p) for p in paths]))
    try:
        result = {name: load.rows(tables.named()[name]) for name in ("episodes", "metrics")}
    finally:
        tables.release()
    interval = {(e["group"], e["to_generation"]): (e["unowned_min_ms"], e["unowned_max_ms"])
                for e in result["episodes"]}
    assert interval == {("bounds-g", 2): (120, 900), ("bounds-g", 3): (200, 700),
                        ("clash-g", 2): (1000, 900), ("clash-g", 3): (100, 100),
                        ("half-g", 2): (300, None), ("half-g", 3): (None, None)}
    totals = {m["group"]: (m["unowned_min_ms_total"], m["unowned_max_ms_total"],
                           m["unowned_partition_ms_total"]) for m in result["metrics"]}
    assert totals == {"bounds-g": (320, 1600, None), "clash-g": (100, None, None),
                      "half-g": (300, None, None)}
