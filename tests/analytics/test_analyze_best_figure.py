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
