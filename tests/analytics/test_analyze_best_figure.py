"""analyze given two witnesses of the same rounds keeps each round once and, for its
duration, the best figure either has: exact over an interval over a bound over unknown.

Fixtures of one real lab run (a librdkafka classic group: three joins, a leave, the last
two leaving): `watch --source auto` (auto-watch.ndjson: each round from the coordinator's
records, its start bounded by describe's looks, so an interval) and the broker's own lines
of the same run (auto-server.log). Ground truth: the broker's Preparing lines."""
from __future__ import annotations

import json
import re
from datetime import datetime

import pytest

pytestmark = pytest.mark.timeout(900)

PREPARING = re.compile(r"^\[(\S+ \S+)\] .*Preparing to rebalance group \S+ in state \w+ "
                       r"with old generation (\d+)", re.M)


def _ms(stamp: str) -> int:
    if stamp[4] == "-" and "," in stamp:   # log4j's local time; the lab ran on UTC
        stamp = stamp.replace(",", ".") + "+00:00"
    return int(round(datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() * 1000))


def test_the_broker_logs_exact_start_beats_a_records_rounds_interval(spark, fixture_dir):
    from groupctl.analytics import load
    from groupctl.analytics.pipeline import Inputs, analyze

    log = fixture_dir / "auto-server.log"
    watch = fixture_dir / "auto-watch.ndjson"
    preparing: dict[int, int] = {}
    for stamp, old in PREPARING.findall(log.read_text()):
        preparing.setdefault(int(old) + 1, _ms(stamp))
    told = {e["to_generation"]: e for e in map(json.loads, watch.read_text().splitlines())
            if e["event"] == "rebalance"}
    assert {e["duration_basis"] for e in told.values()} == {"interval"}   # the fixture's
    runs = {}
    for inputs in (Inputs(events=[str(watch)], broker_logs=[str(log)]),
                   Inputs(events=[str(watch)])):
        tables = analyze(spark, inputs)
        try:
            runs[bool(inputs.broker_logs)] = load.rows(tables.named()["episodes"])
        finally:
            tables.release()
    for episodes in runs.values():   # each round once, whichever witnesses were given
        assert [e["to_generation"] for e in episodes] == sorted(preparing) == [1, 2, 3, 4, 5]
    # with the log: from its Preparing line (exact) to the generation's record
    assert [e["duration_ms"] for e in runs[True]] == [
        _ms(told[g]["ended"]) - preparing[g] for g in sorted(told)]
    # the records' figure alone: the middle of the interval the looks gave, not unknown
    assert [e["duration_ms"] for e in runs[False]] == [
        told[g]["duration_ms"] for g in sorted(told)]


def test_a_duration_the_records_lack_is_the_describe_watchs_of_the_same_round(spark):
    """history (the coordinator's records: a classic round with no start, duration unknown)
    and a describe watch that saw the same generation to an interval: the round once, with
    the watch's figure and start, not unknown; a round only the records saw stays unknown."""
    from datetime import datetime, timezone

    from groupctl.analytics.observed import once, witnessed
    from groupctl.analytics.schema import EVENT_SCHEMA

    def at(s: float):
        return datetime.fromtimestamp(1_800_000_000 + s, timezone.utc).replace(tzinfo=None)

    names = [f.name for f in EVENT_SCHEMA.fields]

    def rebalance(source, gen, end, **fields):
        row = dict.fromkeys(names)
        row.update(group="g", source=source, kind="rebalance", group_type="classic",
                   generation=gen, from_generation=gen - 1, ts=at(end), members=1, **fields)
        return tuple(row[n] for n in names)

    events = spark.createDataFrame([
        rebalance("records", 2, 10.0),
        rebalance("describe", 2, 10.4, started=at(9.1), duration_ms=950,
                  duration_max_ms=1300, duration_basis="interval"),
        rebalance("records", 3, 20.0),
    ], EVENT_SCHEMA)
    rows = [r.asDict() for r in once(witnessed(events, client_logs_given=False)).collect()]
    assert [(r["to_generation"], r["duration_ms"]) for r in rows] == [(2, 950), (3, None)]
    assert rows[0]["started"] == at(9.1) and rows[0]["ended"] == at(10.0)   # the records' end


def _at(s: float):
    from datetime import datetime, timezone
    return datetime.fromtimestamp(1_800_000_000 + s, timezone.utc).replace(tzinfo=None)


def _event(**fields):
    from groupctl.analytics.schema import EVENT_SCHEMA
    names = [f.name for f in EVENT_SCHEMA.fields]
    row = dict.fromkeys(names)
    row.update(group="g", group_type="classic", **fields)
    return tuple(row[n] for n in names)


def _rebalance(source, gen, end, **fields):
    fields.setdefault("members", 2)
    fields.setdefault("from_generation", gen - 1)
    return _event(source=source, kind="rebalance", generation=gen, ts=_at(end), **fields)


def _rounds(spark, rows, client_logs=False):
    from groupctl.analytics.observed import once, witnessed
    from groupctl.analytics.schema import EVENT_SCHEMA
    events = spark.createDataFrame(rows, EVENT_SCHEMA)
    return {r["to_generation"]: r.asDict()
            for r in once(witnessed(events, client_logs_given=client_logs)).collect()}


def test_each_figure_of_a_round_is_its_best_witnesss_never_a_sum(spark):
    """history (the coordinator's records) and a describe watch of the same classic rounds:
    per field the best figure either has, whole (figure and basis from one witness), and
    the witness named; a null from every witness stays null."""
    unowned = ("unowned_partition_ms", "unowned_partitions_max_ms", "unowned_basis")
    rows = _rounds(spark, [
        # 2: the records' sync phase (a lower bound) vs the watch's measured figure
        _rebalance("records", 2, 10.0, unowned_partition_ms=300,
                   unowned_partitions_max_ms=100, unowned_basis="lower_bound"),
        _rebalance("describe", 2, 10.4, unowned_partition_ms=1200,
                   unowned_partitions_max_ms=400, unowned_basis="measured",
                   members_before=1, moved_partitions=3),
        # 3: the records know nothing of it; the watch, an upper bound
        _rebalance("records", 3, 20.0),
        _rebalance("describe", 3, 20.3, unowned_partition_ms=3000,
                   unowned_partitions_max_ms=1000, unowned_basis="upper_bound"),
        # 4: two bounds: the better witness's (the records' lower bound), not both summed
        _rebalance("records", 4, 30.0, unowned_partition_ms=500,
                   unowned_partitions_max_ms=250, unowned_basis="lower_bound"),
        _rebalance("describe", 4, 30.2, unowned_partition_ms=2500,
                   unowned_partitions_max_ms=900, unowned_basis="upper_bound"),
        # 5: no witness knows: null, never 0
        _rebalance("records", 5, 40.0),
        _rebalance("describe", 5, 40.2),
    ])
    assert sorted(rows) == [2, 3, 4, 5]   # each round once
    assert {g: tuple(rows[g][c] for c in unowned) for g in rows} == {
        2: (1200, 400, "measured"), 3: (3000, 1000, "upper_bound"),
        4: (500, 250, "lower_bound"), 5: (None, None, None)}
    assert {g: rows[g]["unowned_source"] for g in rows} == {
        2: "records", 3: "records", 4: "coordinator-records", 5: None}
    # the records' first round holds no members before it; the watch's does
    assert (rows[2]["members_before"], rows[2]["members_before_source"]) == (1, "records")
    assert (rows[2]["moved_partitions"], rows[2]["moved_partitions_source"]) == (3, "records")
    assert (rows[2]["members_after"], rows[2]["members_after_source"]) == (
        2, "coordinator-records")
    assert rows[5]["duration_ms"] is None and rows[5]["duration_source"] is None


def test_the_broker_logs_round_keeps_what_a_watch_measured_of_it(spark):
    """The broker log (its Preparing / Stabilized lines: start, end, members, reason) and a
    describe watch of the same generation: the log's round with the log's figures and the
    watch's unowned time and moved partitions, which the log cannot see."""
    rows = _rounds(spark, [
        _event(source="broker-log", kind="prepare", generation=6, ts=_at(50.0), broker=1,
               reason="Adding new member c-1 with group instance id null"),
        _event(source="broker-log", kind="stabilized", generation=7, ts=_at(50.6), broker=1,
               members=3),
        _rebalance("describe", 7, 51.0, started=_at(49.8), duration_ms=1000,
                   duration_max_ms=1200, duration_basis="interval", members=2,
                   members_before=2, unowned_partition_ms=1800,
                   unowned_partitions_max_ms=600, unowned_basis="upper_bound",
                   moved_partitions=4, reason="member joined"),
    ])
    r = rows[7]
    assert (r["unowned_partition_ms"], r["unowned_basis"], r["members_before"]) == (
        1800, "upper_bound", 2)
    assert (r["duration_ms"], r["started"], r["duration_source"]) == (600, _at(50.0),
                                                                       "broker-log")
    assert (r["members_after"], r["members_after_source"]) == (3, "broker-log")
    assert r["reason"].startswith("Adding new member") and r["reason_source"] == "broker-log"
    assert (r["unowned_source"], r["members_before_source"]) == ("records", "records")
    assert (r["moved_partitions"], r["moved_partitions_source"]) == (4, "records")


def test_unowned_time_is_the_interval_every_witness_of_the_round_proves(spark):
    """history (the coordinator's records: a lower bound) and describe watches (upper bounds,
    a measured figure) of the same classic rounds: the round's unowned time at least the
    largest lower bound and at most the smallest upper bound, each end's witness named; a
    measured figure is both ends (another witness's measured figure bounds nothing); where
    the witnesses contradict each other both ends stay as told; null stays null; a watch
    that could not tell the generation bounds the one round it overlaps in time."""
    def cost(ms, basis):
        return dict(unowned_partition_ms=ms, unowned_partitions_max_ms=ms // 2,
                    unowned_basis=basis)
    rows = _rounds(spark, [
        # 2: the records' lower bound and a watch's upper bound: both kept
        _rebalance("records", 2, 10.0, **cost(120, "lower_bound")),
        _rebalance("describe", 2, 10.4, **cost(900, "upper_bound")),
        # 3: two watches' upper bounds: the smaller; the records' lower bound
        _rebalance("records", 3, 20.0, **cost(500, "lower_bound")),
        _rebalance("describe", 3, 20.3, **cost(3000, "upper_bound")),
        _rebalance("describe", 3, 20.5, **cost(2500, "upper_bound")),
        # 4: a watch's measured figure within the records' lower bound: both ends
        _rebalance("records", 4, 30.0, **cost(300, "lower_bound")),
        _rebalance("describe", 4, 30.2, **cost(1200, "measured")),
        # 5: the records' measured figure, a watch's too: the better witness's
        _rebalance("records", 5, 40.0, **cost(500, "measured")),
        _rebalance("describe", 5, 40.2, **cost(520, "measured")),
        # 6: the witnesses contradict each other: both figures, neither picked
        _rebalance("records", 6, 50.0, **cost(1000, "lower_bound")),
        _rebalance("describe", 6, 50.2, **cost(900, "upper_bound")),
        # 7: only an upper bound: no lower end (null, not 0); 8: no witness knows
        _rebalance("records", 7, 60.0),
        _rebalance("describe", 7, 60.2, **cost(800, "upper_bound")),
        _rebalance("records", 8, 70.0),
        # 9: a describe watch of a classic group tells no generation: its round is the
        # records' round it overlaps in time; 10 and 11: a window of looks over two rounds
        # bounds neither (which one it saw is not known)
        _rebalance("records", 9, 80.0, **cost(40, "lower_bound")),
        _event(source="describe", kind="rebalance", ts=_at(80.3), started=_at(79.5),
               members=2, **cost(700, "upper_bound")),
        _rebalance("records", 10, 90.0, **cost(10, "lower_bound")),
        _rebalance("records", 11, 90.1, **cost(20, "lower_bound")),
        _event(source="describe", kind="rebalance", ts=_at(90.4), started=_at(89.8),
               members=2, **cost(100, "upper_bound")),
        # 13: a watch that saw rounds 11 -> 13 as one: its measured figure holds this round
        # and the one before, so it bounds this round from above only
        _rebalance("records", 13, 100.0, **cost(30, "lower_bound")),
        _rebalance("describe", 13, 100.3, from_generation=11, **cost(1500, "measured")),
    ])
    interval = ("unowned_min_ms", "unowned_max_ms", "unowned_min_source", "unowned_max_source")
    coord, watch = "coordinator-records", "records"
    assert {g: tuple(rows[g][c] for c in interval) for g in rows} == {
        2: (120, 900, coord, watch), 3: (500, 2500, coord, watch),
        4: (1200, 1200, watch, watch), 5: (500, 500, coord, coord),
        6: (1000, 900, coord, watch), 7: (None, 800, None, watch),
        8: (None, None, None, None), 9: (40, 700, coord, watch), 10: (10, None, coord, None),
        11: (20, None, coord, None), 13: (30, 1500, coord, watch)}
    # the one best figure of the round stays as it was, whole from one witness
    assert [(rows[g]["unowned_partition_ms"], rows[g]["unowned_basis"]) for g in (2, 4, 8)] \
        == [(120, "lower_bound"), (1200, "measured"), (None, None)]


def test_each_field_of_the_rule_names_its_source_column():
    from groupctl.analytics.observed import BEST_FIGURE
    from groupctl.analytics.schema import FIGURE_SOURCE_COLUMNS
    assert tuple(f"{field}_source" for field in BEST_FIGURE) == FIGURE_SOURCE_COLUMNS


def test_a_generation_the_records_jumped_over_keeps_the_broker_logs_own_end(spark, fixture_dir):
    """A real lab run (librdkafka range group): generation 1 Stabilized 3 ms after its
    Preparing line and was superseded 1 ms later, before any SyncGroup; the records hold
    generation 2 only, so history told generation 1 as a round it did not see (`seen`
    false, `ended` the record of generation 2). With the broker log, analyze gave
    generation 1 the log's start and that record's time: 1931 ms for a round of 3 ms."""
    from groupctl.analytics import load
    from groupctl.analytics.pipeline import Inputs, analyze

    tables = analyze(spark, Inputs(events=[str(fixture_dir / "superseded-history.ndjson")],
                                   broker_logs=[str(fixture_dir / "superseded-server.log")]))
    try:
        eps = {e["to_generation"]: e for e in load.rows(tables.named()["episodes"])}
    finally:
        tables.release()
    assert sorted(eps) == [1, 2, 3]
    # the broker's own: Preparing .529 -> Stabilized .532 (no leader's assignment)
    assert (eps[1]["started"], eps[1]["ended"], eps[1]["duration_ms"]) == (
        "2026-11-27T05:41:04.529Z", "2026-11-27T05:41:04.532Z", 3)
    assert eps[1]["duration_source"] == "broker-log"
    # generation 2: from its Preparing line to its record (the leader's assignment)
    assert (eps[2]["started"], eps[2]["ended"], eps[2]["duration_ms"]) == (
        "2026-11-27T05:41:04.533Z", "2026-11-27T05:41:06.460Z", 1927)
