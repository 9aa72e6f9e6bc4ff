"""Issue 30 in `analyze`: every round once across witnesses, unknown never 0.

One run over a broker log and groupctl's records (real line shapes of a Kafka 4.3 lab
broker: tests/fixtures/analyze/kafka4-server.log, and of this lab's refused KIP-848 join):
- a classic group's rounds read from the coordinator's records alone have no start: their
  durations are null in the episodes, and null (not 0) in the metrics' percentiles and
  total, with the count of rounds the total leaves out;
- describe sightings of a librdkafka group (no generation) 100-150 ms after the broker's
  rounds are those rounds, not rows of their own (48 rows where the broker log gave 43);
- a KIP-848 join the broker refused (INVALID_REGULAR_EXPRESSION: a join line and no epoch
  bump) is no round and triggers none: the next real round starts at its own member's
  leave (it was a 16 s "rebalance" blamed on the refused member);
- a join and a leave within one millisecond are two rounds (they were two episodes both
  ending at the second epoch);
- a round that left the group empty is `empty` from every witness (the records' one was
  counted as a rebalance, the broker log's "is now empty" not);
- members seen going: as the broker log says, else `left_or_failed`, each once;
- rebalances_per_hour is a rate over the window the inputs observed the group.
"""
from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.timeout(900)

PREFIX = "INFO [GroupCoordinator id=1 topic=__consumer_offsets partition=6] "
LOGGER = " (org.apache.kafka.coordinator.group.GroupMetadataManager)"


def _line(ts: str, msg: str) -> str:
    return f"[2026-11-24 {ts}] {PREFIX}{msg}{LOGGER}\n"


def _classic_round(group: str, gen: int, start: str, end: str) -> list[str]:
    return [_line(start, f"Preparing to rebalance group {group} in state PreparingRebalance "
                         f"with old generation {gen - 1} (reason: Adding new member m-{gen} "
                         f"with group instance id null; client reason: not provided)."),
            _line(end, f"Stabilized group {group} generation {gen} with 2 members.")]


def _record(group: str, ended: str, **fields) -> dict:
    return {"v": 1, "ts": ended, "source": "describe", "cluster": None, "group": group,
            "event": "rebalance", "ended": ended, "members_before": None,
            "members_after": ["a", "b"], "reason": None, **fields}


def test_rounds_once_across_witnesses_and_unknown_never_0(spark, tmp_path):
    from groupctl.analytics import load
    from groupctl.analytics.pipeline import Inputs, analyze

    log = []
    for gen, (start, end) in enumerate([("10:00:00,000", "10:00:00,400"),
                                        ("10:05:00,000", "10:05:00,700"),
                                        ("10:12:00,000", "10:12:00,300")], start=2):
        log += _classic_round("cls-g", gen, start, end)
    k = "[GroupId k-g] "
    log += [_line("10:00:00,000", k + "Member m1 joins the consumer group using the consumer protocol."),
            _line("10:00:00,001", k + "Bumped group epoch to 1 with metadata hash 1."),
            _line("10:00:00,010", k + "Computed a new target assignment for epoch 1 with 'uniform' assignor in 1ms."),
            _line("10:00:01,000", k + "Member m2 joins the consumer group using the consumer protocol."),
            _line("10:00:01,001", k + "Bumped group epoch to 2 with metadata hash 1."),
            _line("10:00:01,010", k + "Computed a new target assignment for epoch 2 with 'uniform' assignor in 1ms."),
            # the probe's join with an invalid regex: refused, no bump
            _line("10:00:10,000", k + "Member probe joins the consumer group using the consumer protocol."),
            _line("10:00:26,046", k + "Member m2 left the consumer group."),
            _line("10:00:26,047", k + "Bumped group epoch to 3 with metadata hash 1."),
            _line("10:00:26,090", k + "Computed a new target assignment for epoch 3 with 'uniform' assignor in 1ms."),
            # a join and a leave within a millisecond: two rounds, to epochs 4 and 5 (epoch
            # 4's target is computed in the heartbeat that bumped it, before the leave's)
            _line("10:00:30,000", k + "Member p2 joins the consumer group using the consumer protocol."),
            _line("10:00:30,000", k + "Bumped group epoch to 4 with metadata hash 1."),
            _line("10:00:30,001", k + "Computed a new target assignment for epoch 4 with 'uniform' assignor in 1ms."),
            _line("10:00:30,001", k + "Member p2 left the consumer group."),
            _line("10:00:30,001", k + "Bumped group epoch to 5 with metadata hash 1."),
            _line("10:00:30,002", k + "Computed a new target assignment for epoch 5 with 'uniform' assignor in 1ms.")]
    broker_log = tmp_path / "server.log"
    broker_log.write_text("".join(log))
    records = [
        # describe sightings of cls-g's rounds, 100-150 ms after each (no generation:
        # librdkafka's members report none); as written before the basis was told (0 ms)
        _record("cls-g", "2026-11-24T10:00:00.520Z", started="2026-11-24T10:00:00.520Z",
                duration_ms=0, from_generation=None, to_generation=None),
        _record("cls-g", "2026-11-24T10:05:00.800Z", started=None, duration_ms=500,
                duration_min_ms=0, duration_max_ms=1000, duration_basis="interval",
                from_generation=None, to_generation=None),
        _record("cls-g", "2026-11-24T10:12:00.450Z", started="2026-11-24T10:12:00.450Z",
                duration_ms=0, from_generation=None, to_generation=None),
        # the coordinator's records of a classic group: no start, duration unknown
        *[_record("rec-g", f"2026-11-24T10:0{i}:00.000Z", source="records", started=None,
                  duration_ms=None, duration_basis="unknown", from_generation=i,
                  to_generation=i + 1) for i in range(1, 4)],
        # ... and the generation that left it with no member ("is now empty"): a round the
        # broker counts as one too (a generation), outcome `empty`
        _record("rec-g", "2026-11-24T10:04:00.000Z", source="records", started=None,
                duration_ms=None, duration_basis="unknown", from_generation=4,
                to_generation=5, members_after=[]),
        # members seen going: two only the records saw, one the broker log names too
        *[{"v": 1, "ts": "2026-11-24T10:03:00.000Z", "source": "records", "cluster": None,
           "group": "rec-g", "event": "member_left", "member_id": m, "client_id": m}
          for m in ("x1", "x2")],
        {"v": 1, "ts": "2026-11-24T10:00:26.100Z", "source": "describe", "cluster": None,
         "group": "k-g", "event": "member_left", "member_id": "m2", "client_id": "c2"},
    ]
    events = tmp_path / "watch.ndjson"
    events.write_text("".join(json.dumps(r) + "\n" for r in records))
    tables = analyze(spark, Inputs(broker_logs=[str(broker_log)], events=[str(events)]))
    try:
        result = {name: load.rows(df) for name, df in tables.named().items()}
    finally:
        tables.release()
    episodes = {}
    for e in result["episodes"]:
        episodes.setdefault(e["group"], []).append(e)
    metrics = {m["group"]: m for m in result["metrics"]}

    # the broker's three rounds, once each, with the broker's figures
    assert [(e["to_generation"], e["duration_ms"]) for e in episodes["cls-g"]] == [
        (2, 400), (3, 700), (4, 300)]
    # 3 rounds observed over 12 min 0.45 s: a rate per hour, not the count
    assert metrics["cls-g"]["rebalances_per_hour"] == pytest.approx(3 / (720.45 / 3600), abs=1e-3)

    # no start, no duration: null everywhere, never 0
    assert [(e["to_generation"], e["duration_ms"], e["outcome"]) for e in episodes["rec-g"]] == [
        (2, None, "stable"), (3, None, "stable"), (4, None, "stable"), (5, None, "empty")]
    rec = metrics["rec-g"]
    assert (rec["rebalances"], rec["duration_ms_p50"], rec["duration_ms_p95"],
            rec["duration_ms_max"], rec["time_rebalancing_ms"], rec["rebalances_untimed"]) == (
        4, None, None, None, None, 4)
    assert {(h["rebalances"], h["time_rebalancing_ms"], h["rebalances_untimed"])
            for h in result["hourly"] if h["group"] == "rec-g"} == {(4, None, 4)}

    # the refused join is no round: epoch 3's round starts at m2's leave
    assert [e["to_generation"] for e in episodes["k-g"]] == [1, 2, 3, 4, 5]
    last = episodes["k-g"][2]
    assert (last["to_generation"], last["started"], last["duration_ms"], last["trigger_member"],
            last["members_before"], last["members_after"]) == (
        3, "2026-11-24T10:00:26.046Z", 44, "m2", 2, 1)
    assert [(e["started"], e["ended"], e["trigger_member"]) for e in episodes["k-g"][3:]] == [
        ("2026-11-24T10:00:30.000Z", "2026-11-24T10:00:30.001Z", "p2"),
        ("2026-11-24T10:00:30.001Z", "2026-11-24T10:00:30.002Z", "p2")]
    assert metrics["k-g"]["duration_ms_max"] == 44

    # members that went: as the broker log tells, else "left or failed", each once
    assert [(m["group"], m["member"], m["outcome"]) for m in result["members"]] == [
        ("k-g", "m2", "left"), ("k-g", "p2", "left"), ("rec-g", "x1", "left_or_failed"),
        ("rec-g", "x2", "left_or_failed")]
    assert [(metrics[g]["left_members"], metrics[g]["left_or_failed_members"])
            for g in ("k-g", "rec-g")] == [(2, 0), (0, 2)]
