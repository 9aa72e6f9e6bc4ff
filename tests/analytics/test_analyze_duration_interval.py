"""A round's duration as the interval every witness of it together proves (issue 30): the
broker log's exact figure, a describe watch's interval, the records' lower bound of a
round whose start no look saw; `duration_ms` stays the best witness's one figure, and the
group's total is summed end by end, never an unknown as 0."""
from __future__ import annotations

import json
import re
from datetime import datetime, timezone

import pytest

pytestmark = pytest.mark.timeout(900)

INTERVAL = ("duration_min_ms", "duration_max_ms", "duration_min_source", "duration_max_source")
COORD, LOG, WATCH = "coordinator-records", "broker-log", "records"


def _at(s: float):
    return datetime.fromtimestamp(1_800_000_000 + s, timezone.utc).replace(tzinfo=None)


def _event(**fields):
    from groupctl.analytics.schema import EVENT_SCHEMA
    names = [f.name for f in EVENT_SCHEMA.fields]
    row = dict.fromkeys(names)
    row.update({"group": "g", "group_type": "classic", **fields})
    return tuple(row[n] for n in names)


def _rebalance(source, gen, end, **fields):
    fields.setdefault("members", 2)
    fields.setdefault("from_generation", gen - 1)
    return _event(source=source, kind="rebalance", generation=gen, ts=_at(end), **fields)


def _looks(low, high, end):
    """A describe watch's round: its start seen between two looks, its end at a look."""
    return dict(started=_at(end - high / 1000), duration_ms=(low + high + 1) // 2,
                duration_min_ms=low, duration_max_ms=high, duration_basis="interval")


def _log_round(gen, start, end, group="g"):
    return [_event(group=group, source="broker-log", kind="prepare", generation=gen - 1,
                   ts=_at(start), broker=1, reason="Adding new member c-1"),
            _event(group=group, source="broker-log", kind="stabilized", generation=gen,
                   ts=_at(end), broker=1, members=2)]


def _consumer_round(group):
    """The broker log's KIP-848 round: a join, its epoch bump, the target 4 ms later."""
    def line(kind, s, epoch, **more):
        return _event(group=group, group_type="consumer", source="broker-log", kind=kind,
                      ts=_at(s), epoch=epoch, broker=1, **more)
    return [line("member_joined", 100.0, None, member="m2"), line("epoch_bumped", 100.0, 5),
            line("target_computed", 100.004, 5)]


def _rounds(spark, rows):
    from groupctl.analytics.observed import once, witnessed
    from groupctl.analytics.schema import EVENT_SCHEMA
    events = spark.createDataFrame(rows, EVENT_SCHEMA)
    return {(r["group"], r["to_generation"]): r.asDict()
            for r in once(witnessed(events, client_logs_given=False)).collect()}


def test_a_rounds_duration_is_the_interval_every_witness_proves(spark):
    """The broker log (exact), the coordinator's records (a lower bound, unknown) and
    describe watches (intervals) of the same rounds: at least the largest lower end, at
    most the smallest upper end, each end's witness named; an exact figure within a
    watch's interval is both ends; a contradiction keeps both as told; unknown is null."""
    rows = _rounds(spark, [
        # 2: the log's exact 600 ms inside a watch's 300-800: exactly 600, the log's
        *_log_round(2, 10.0, 10.6), _rebalance("describe", 2, 10.9, **_looks(300, 800, 10.9)),
        # 3: the records know no start; a watch's interval
        _rebalance("records", 3, 20.0), _rebalance("describe", 3, 20.3, **_looks(300, 800, 20.3)),
        # 4: two watches: the tighter of their ends; the records' lower bound under both
        _rebalance("records", 4, 30.0, duration_ms=120, duration_min_ms=120,
                   duration_basis="lower_bound"),
        _rebalance("describe", 4, 30.2, **_looks(300, 900, 30.2)),
        _rebalance("describe", 4, 30.4, **_looks(350, 800, 30.4)),
        # 5: the log's 900 ms, a watch's at most 800: the witnesses disagree, both kept
        *_log_round(5, 40.0, 40.9), _rebalance("describe", 5, 41.0, **_looks(300, 800, 41.0)),
        # 6: a start no look saw: at least, no upper end (null, not 0); 7: no witness knows
        _rebalance("describe", 6, 50.0, started=None, duration_ms=1500,
                   duration_min_ms=1500, duration_basis="lower_bound"),
        _rebalance("records", 7, 60.0),
        # 8: a classic describe watch knows no generation: it bounds the one round it
        # overlaps in time
        _rebalance("records", 8, 70.0),
        _event(source="describe", kind="rebalance", ts=_at(70.3), members=2,
               **_looks(200, 700, 70.3)),
        # 9: the probe's own exact figure is no bound of the log's exact one: the log's
        *_log_round(9, 80.0, 80.4), _rebalance("probe", 9, 80.5, started=_at(80.1),
                                               duration_ms=450, duration_basis="exact"),
        # 10: a watch's round under way at one look and over at the next: at most the
        # time between them; its lower end 0 proves nothing (null, not 0)
        _rebalance("describe", 10, 90.0, **_looks(0, 500, 90.0)),
        # 11: the log lacks its Preparing line (it began before the log does): neither the
        # log nor the records (no start) know its duration; not the time since Stabilized
        _event(source="broker-log", kind="stabilized", generation=11, ts=_at(100.0),
               broker=1, members=2),
        _rebalance("records", 11, 100.3),
        # 12, 13: a watch that saw three rounds as one (9 -> 12 in 1000-3000 ms) holds
        # this round and the ones before: its upper end bounds it, its lower end does not
        _rebalance("records", 12, 110.0, started=_at(109.986), duration_ms=14,
                   duration_basis="exact"),
        _rebalance("describe", 12, 110.2, from_generation=9, **_looks(1000, 3000, 110.2)),
        _rebalance("records", 13, 120.0),
        _rebalance("describe", 13, 120.2, from_generation=10, **_looks(1000, 3000, 120.2)),
        # 14: a watch's first round tells its generation, not where it began from: it may
        # hold the round before too (the lab, cooperative: 1001-2828 ms over generations 2
        # and 3, the records' exact 973 ms for 3)
        _rebalance("records", 14, 130.0, started=_at(129.027), duration_ms=973,
                   duration_basis="exact"),
        _rebalance("describe", 14, 130.9, from_generation=None, **_looks(1001, 2828, 130.9)),
        # 15: the broker restarted 0.4 s into the round and loaded the group again; the
        # members rebalanced from the first Preparing line (9.5 s), a watch saw the round
        # begun again (at most 2001 ms): its upper end bounds what it saw, not the round
        *_log_round(15, 140.0, 149.5),
        _event(source="broker-log", kind="loaded", ts=_at(140.4), broker=1, members=2),
        _rebalance("describe", 15, 149.6, **_looks(0, 2001, 149.6)),
        # consumer groups: the log's round (its member change line to the target's
        # computation) is another span than the watches' and records' (the bump to the
        # members at the target): it bounds none of theirs (c2), and alone its figure is
        # the best one but proves no end (c1)
        *_consumer_round("c1"), *_consumer_round("c2"),
        _event(group="c2", group_type="consumer", source="describe", kind="rebalance",
               generation=5, from_generation=4, ts=_at(100.9), members=2,
               **_looks(300, 800, 100.9)),
    ])
    assert {(grp, g): tuple(rows[(grp, g)][c] for c in INTERVAL) for grp, g in rows} == {
        ("g", 2): (600, 600, LOG, LOG), ("g", 3): (300, 800, WATCH, WATCH),
        ("g", 4): (350, 800, WATCH, WATCH), ("g", 5): (900, 800, LOG, WATCH),
        ("g", 6): (1500, None, WATCH, None), ("g", 7): (None, None, None, None),
        ("g", 8): (200, 700, WATCH, WATCH), ("g", 9): (400, 400, LOG, LOG),
        ("g", 10): (None, 500, None, WATCH), ("g", 11): (None, None, None, None),
        ("g", 12): (14, 14, COORD, COORD),
        ("g", 13): (None, 3000, None, WATCH), ("g", 14): (973, 973, COORD, COORD), ("g", 15): (9500, 9500, LOG, LOG),
        ("c1", 5): (None, None, None, None), ("c2", 5): (300, 800, WATCH, WATCH)}
    assert (rows[("c1", 5)]["duration_ms"], rows[("c1", 5)]["duration_source"]) == (4, LOG)
    # where a watch saw the round, its figure (of the span its interval bounds), not the
    # log's 4 ms of another span outside that interval
    assert (rows[("c2", 5)]["duration_ms"], rows[("c2", 5)]["duration_source"]) == (550, WATCH)
    # the one best figure of each round stays as it was (the log's, else the watch's)
    assert [(rows[("g", g)]["duration_ms"], rows[("g", g)]["duration_source"])
            for g in (2, 3, 5, 7, 11)] == [(600, LOG), (550, WATCH), (900, LOG), (None, None),
                                           (None, None)]


PREPARING = re.compile(r"^\[(\S+ \S+)\] .*Preparing to rebalance group \S+ in state \w+ "
                       r"with old generation (\d+)", re.M)
ASSIGNED = re.compile(r"^\[(\S+ \S+)\] .*Assignment received from leader \S+ for group \S+ "
                      r"for generation (\d+)", re.M)


def _log_ms(stamp: str) -> int:   # log4j's local time; the lab ran on UTC
    return int(datetime.fromisoformat(stamp.replace(",", ".") + "+00:00").timestamp() * 1000)


def test_a_records_rounds_interval_holds_the_broker_logs_own_duration(spark, fixture_dir):
    """A real lab run (`watch --source auto` of a librdkafka classic group: each round from
    the coordinator's records, its start bounded by describe's looks): without the log, the
    episode's interval holds the broker's own round (its Preparing line to the leader's
    assignment, read here from the log); with it, the round is exact, from the log's start
    to the records' end."""
    from groupctl.analytics import load
    from groupctl.analytics.pipeline import Inputs, analyze

    log, watch = fixture_dir / "auto-server.log", fixture_dir / "auto-watch.ndjson"
    text = log.read_text()
    began = {int(old) + 1: _log_ms(s) for s, old in reversed(PREPARING.findall(text))}
    assigned = {int(gen): _log_ms(s) for s, gen in reversed(ASSIGNED.findall(text))}
    broker = {g: assigned[g] - began[g] for g in began if g in assigned}
    assert sorted(broker) == [1, 2, 3, 4] and broker[2] == 926   # the fixture's
    runs = {}
    for inputs in (Inputs(events=[str(watch)]), Inputs(events=[str(watch)], broker_logs=[str(log)])):
        tables = analyze(spark, inputs)
        try:
            runs[bool(inputs.broker_logs)] = {
                e["to_generation"]: e for e in load.rows(tables.named()["episodes"])}
        finally:
            tables.release()
    alone = runs[False]
    # generation 1: begun and over between two looks (0-79 ms): at most 79, no lower end
    assert (alone[1]["duration_min_ms"], alone[1]["duration_max_ms"]) == (None, 79)
    for g, ms in broker.items():
        e = alone[g]
        assert (e["duration_min_ms"] is None or e["duration_min_ms"] <= ms) \
            and ms <= e["duration_max_ms"], (g, ms, e)
        assert e["duration_max_source"] == COORD
    assert [alone[g]["duration_min_source"] for g in (2, 3, 4)] == [COORD] * 3
    for e in runs[True].values():
        assert e["duration_min_ms"] == e["duration_max_ms"] == e["duration_ms"], e
        assert e["duration_min_source"] == "broker-log+coordinator-records"


def _record(group, gen, minute, **duration) -> dict:
    ended = f"2026-11-24T10:0{minute}:00.000Z"
    return {"v": 1, "source": "describe", "group": group, "event": "rebalance", "ts": ended,
            "from_generation": gen - 1, "to_generation": gen, "started": None,
            "ended": ended, "members_before": ["a"], "members_after": ["a", "b"],
            "duration_basis": "unknown", **duration}


def test_a_groups_time_rebalancing_sums_each_end_and_unknown_stays_null(spark, tmp_path):
    """Per group: at least the sum of the rounds' lower ends, at most the sum of their
    upper ends only when every round has one; a contradicted round in neither end; the
    best figures' percentiles and total as before (unknown left out, never 0)."""
    from groupctl.analytics import load
    from groupctl.analytics.pipeline import Inputs, analyze

    def interval(low, high):
        return dict(duration_ms=(low + high + 1) // 2, duration_min_ms=low,
                    duration_max_ms=high, duration_basis="interval")
    watch = [_record("both-g", 2, 1, **interval(300, 800)),
             _record("both-g", 3, 2, duration_ms=100, duration_min_ms=100,
                     duration_max_ms=100, duration_basis="exact"),
             _record("half-g", 2, 1, **interval(300, 800)),
             _record("half-g", 3, 2, duration_ms=1000, duration_min_ms=1000,
                     duration_basis="lower_bound"),
             _record("none-g", 2, 1), _record("none-g", 3, 2)]
    history = [dict(_record("both-g", 4, 3), source="records"),
               dict(_record("both-g", 4, 3), duration_ms=500, duration_min_ms=400,
                    duration_max_ms=600, duration_basis="interval")]
    paths = []
    for name, records in (("watch", watch), ("history", history)):
        paths.append(tmp_path / f"{name}.ndjson")
        paths[-1].write_text("".join(json.dumps(r) + "\n" for r in records))
    tables = analyze(spark, Inputs(events=[str(p) for p in paths]))
    try:
        result = {name: load.rows(tables.named()[name]) for name in ("metrics", "hourly")}
    finally:
        tables.release()
    totals = {m["group"]: (m["time_rebalancing_min_ms"], m["time_rebalancing_max_ms"],
                           m["time_rebalancing_ms"], m["rebalances_untimed"])
              for m in result["metrics"]}
    assert totals == {"both-g": (800, 1500, 1150, 0), "half-g": (1300, None, 1550, 0),
                      "none-g": (None, None, None, 2)}
    hourly = {h["group"]: (h["time_rebalancing_min_ms"], h["time_rebalancing_max_ms"])
              for h in result["hourly"]}
    assert hourly == {"both-g": (800, 1500), "half-g": (1300, None), "none-g": (None, None)}
