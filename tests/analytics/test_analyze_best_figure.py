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
