"""Issue 19, the clients' own figure (analytics/handover.py) on a small hand-made fixture
(tests/fixtures/analyze/handover/: librdkafka debug=cgrp lines and Java consumer lines in
their real formats, times chosen so every figure is known):

- ho-eager (librdkafka, range, lists named): generation 2, a gives up 0-5 at 110.000 and
  takes 0-2 at 110.520, b takes 3-5 at 110.530: 3 x 520 + 3 x 530 = 3150 ms, longest 530;
  generation 3, b leaves (gives up 3-5 at 120.000), a gives up 0-2 at 120.100 and takes
  0-5 at 120.350: 3 x 250 + 3 x 350 = 1800 ms; at last a gives up all 6 and nobody takes
  them: 6 unassigned in generation 4, nothing summed;
- ho-coop (librdkafka, incremental): x gives p1 up at 200.010 (generation 2), y takes it at
  201.020 (generation 3): 1010 ms; x's last incremental revoke empties its assignment
  without a `clearing` line: 1 unassigned in generation 4;
- ho-unnamed (no lists: a log filtered by facility): u's own revoke of 4 at 310.000 to its
  assign at 310.750: 4 x 750 = 3000 ms, basis client_logs_per_member;
- ho-java (Java classic consumer): j1 gives up jt-0 and jt-1 at 50.000, takes jt-0 back at
  50.500, j2 takes jt-1 at 50.600: 500 + 600 = 1100 ms."""
from __future__ import annotations

import pytest

pytestmark = pytest.mark.timeout(900)

FIGURES = ("client_unowned_partition_ms", "client_unowned_partitions_max_ms",
           "client_unowned_basis", "client_unowned_partitions", "client_unassigned_partitions")
EXPECTED = {
    ("ho-eager", 2): (3150, 530, "client_logs", 6, 0),
    ("ho-eager", 3): (1800, 350, "client_logs", 6, 0),
    ("ho-eager", 4): (0, None, "client_logs", 0, 6),
    ("ho-coop", 3): (1010, 1010, "client_logs", 1, 0),
    ("ho-coop", 4): (0, None, "client_logs", 0, 1),
    ("ho-unnamed", 2): (3000, 750, "client_logs_per_member", 4, 0),
    ("ho-java", 2): (1100, 600, "client_logs", 2, 0),
}


@pytest.fixture(scope="module")
def handover_logs(fixture_dir):
    return sorted(str(p) for p in (fixture_dir / "handover").glob("*.log"))


def test_round_cost_from_the_clients_lines(spark, handover_logs):
    from groupctl.analytics import extract, handover

    lines = extract.read_lines(spark, handover_logs)
    events = extract.client_events(lines)
    cost = handover.client_cost(events, lines, keep=lambda df: df)
    got = {(r["group"], r["to_generation"]): tuple(r[c] for c in FIGURES)
           for r in cost.collect()}
    assert got == EXPECTED
    assert {r["group_type"] for r in cost.collect()} == {"classic"}


def test_handovers_name_each_partition_once(spark, handover_logs):
    from groupctl.analytics import extract, handover

    lines = extract.read_lines(spark, handover_logs)
    edges = handover.rdkafka_edges(handover.rdkafka_lines(lines)).unionByName(
        handover.java_edges(extract.client_events(lines)))
    gaps = sorted((r["group"], r["gen"], r["tp"], r["gap_ms"])
                  for r in handover.handovers(edges).collect() if r["group"] == "ho-eager")
    assert gaps == sorted(
        [("ho-eager", 2, f"t-{p}", 520) for p in (0, 1, 2)]
        + [("ho-eager", 2, f"t-{p}", 530) for p in (3, 4, 5)]
        + [("ho-eager", 3, f"t-{p}", 250) for p in (0, 1, 2)]
        + [("ho-eager", 3, f"t-{p}", 350) for p in (3, 4, 5)]
        + [("ho-eager", 4, f"t-{p}", None) for p in range(6)])


def test_episodes_and_metrics_carry_the_clients_figure(spark, handover_logs):
    from groupctl.analytics import load
    from groupctl.analytics.pipeline import Inputs, analyze
    from groupctl.analytics.schema import CLIENT_COST_COLUMNS, EPISODE_TABLE_COLUMNS

    tables = analyze(spark, Inputs(client_logs=handover_logs))
    try:
        result = {name: load.rows(df) for name, df in tables.named().items()}
    finally:
        tables.release()
    eps = result["episodes"]
    assert eps and tuple(eps[0])[:len(EPISODE_TABLE_COLUMNS)] == EPISODE_TABLE_COLUMNS
    told = {(e["group"], e["to_generation"]): tuple(e[c] for c in FIGURES) for e in eps
            if e["client_unowned_basis"] is not None}
    # the client logs alone witness these rounds (their joined lines): each gets its figure
    assert told == {k: v for k, v in EXPECTED.items()
                    if k in {("ho-eager", 2), ("ho-eager", 3), ("ho-java", 2),
                             ("ho-unnamed", 2), ("ho-coop", 3)}}
    quiet = [e for e in eps if (e["group"], e["to_generation"]) not in told]
    assert quiet and all(e[c] is None for e in quiet for c in CLIENT_COST_COLUMNS)
    totals = {m["group"]: m["client_unowned_partition_ms_total"] for m in result["metrics"]}
    assert totals == {"ho-eager": 4950, "ho-coop": 1010, "ho-unnamed": 3000, "ho-java": 1100}


def test_no_client_logs_no_figures(spark, fixture_dir):
    from groupctl.analytics import load
    from groupctl.analytics.pipeline import Inputs, analyze

    tables = analyze(spark, Inputs(broker_logs=[str(fixture_dir / "kafka4-server.log")]))
    try:
        eps, metrics = load.rows(tables.episodes), load.rows(tables.metrics)
    finally:
        tables.release()
    assert eps and all(e["client_unowned_partition_ms"] is None
                       and e["client_unowned_basis"] is None for e in eps)
    assert all(m["client_unowned_partition_ms_total"] is None for m in metrics)


def test_real_java_consumer_lines(spark, fixture_dir):
    """Kafka 4.3's own Java consumer (tests/fixtures/analyze/java-consumer.log): at
    generation 4 it gave up partitions 3-5 at 13:10:01.522 and took 2-3 at 13:10:03.527;
    4 and 5 went to a member whose log is not given: counted apart."""
    from groupctl.analytics import extract, handover

    lines = extract.read_lines(spark, [str(fixture_dir / "java-consumer.log")])
    cost = handover.client_cost(extract.client_events(lines), lines, keep=lambda df: df)
    assert {(r["group"], r["to_generation"]): tuple(r[c] for c in FIGURES)
            for r in cost.collect()} == {
        ("harvest-classic-1795439393", 4): (2005, 2005, "client_logs", 1, 2)}


def test_group_and_time_filters_apply_to_the_clients_lines(spark, handover_logs):
    """--group and --until cut the clients' lines like every other event: ho-eager before
    10:01:55 keeps generation 2 alone (3150 ms); generation 3's lines come after."""
    from datetime import datetime

    from groupctl.analytics import extract, handover
    from groupctl.analytics import transforms as X

    lines = extract.read_lines(spark, handover_logs)
    until = datetime(2026, 11, 24, 10, 1, 55)

    def keep(df):
        return X.filter_events(df, None, until, "^ho-eager$")

    cost = handover.client_cost(extract.client_events(lines), lines, keep)
    assert {(r["group"], r["to_generation"]): tuple(r[c] for c in FIGURES)
            for r in cost.collect()} == {("ho-eager", 2): EXPECTED[("ho-eager", 2)]}
