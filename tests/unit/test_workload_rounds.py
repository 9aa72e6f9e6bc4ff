"""`lab workload --record`: the rounds its members went through, told as `rebalance`
records, judged against the broker's own log of the same run
(tests/fixtures/analyze/workload.ndjson and workload-server.log: a real lab run of
`lab workload --consumers 3 --churn 5 --duration 40 --record`)."""
from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path

from groupctl.lab.rounds import WorkloadRounds

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "analyze"
GROUP = "workload-churn"


def _records(kind: str) -> list[dict]:
    lines = (FIXTURES / "workload.ndjson").read_text().splitlines()
    return [r for r in map(json.loads, lines) if r["event"] == kind]


def _broker_rounds() -> dict[int, tuple[float, float]]:
    """generation -> (Preparing, Stabilized) seconds, from the coordinator's lines."""
    prepared, rounds = {}, {}
    for line in (FIXTURES / "workload-server.log").read_text().splitlines():
        at = dt.datetime.strptime(line[1:24], "%Y-%m-%d %H:%M:%S,%f").replace(
            tzinfo=dt.timezone.utc).timestamp()
        if m := re.search(r"Preparing to rebalance group \S+ .* old generation (\d+)", line):
            prepared[int(m[1]) + 1] = at
        elif m := re.search(r"Stabilized group \S+ generation (\d+)", line):
            rounds[int(m[1])] = (prepared[int(m[1])], at)
    return rounds


def _seconds(iso: str) -> float:
    return dt.datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


def test_every_round_of_the_run_is_told_once_as_the_broker_ran_it():
    written = _records("rebalance")
    broker = _broker_rounds()
    assert [r["to_generation"] for r in written] == sorted(broker) == list(range(1, 10))
    assert [r["from_generation"] for r in written] == list(range(0, 9))
    for r in written:
        prepared, stabilized = broker[r["to_generation"]]
        # over once the members heard of it: a join answer or assign, after the broker
        # stabilized the generation (both clocks the host's, in whole milliseconds)
        assert _seconds(r["ended"]) >= stabilized, r
        if r["started"] is not None:   # set off by a member's start, revoke or loss
            assert _seconds(r["started"]) <= prepared, r
            assert r["duration_ms"] == round(
                (_seconds(r["ended"]) - _seconds(r["started"])) * 1000)
    # the members' three joins began one round, which the broker cut into two (the
    # second join came as the first generation was being assigned): the second round's
    # start is nothing the members did
    assert written[1]["started"] is None and all(r["started"] for r in written[2:])
    assert [len(r["members_after"]) for r in written[2:]] == [2, 3, 2, 3, 2, 3, 2]
    # partitions that changed owner, from the members' assigns (none known for the first
    # two: the first generation had no assign)
    assert [r["moved_partitions"] for r in written] == [None, None, 1, 1, 1, 1, 2, 2, 1]


def test_a_round_starts_at_what_set_it_off_and_ends_at_the_last_assign():
    rounds = WorkloadRounds("g")

    def event(ts, callback, member, generation=None, partitions=()):
        return {"ts": ts, "callback": callback, "member_id": member, "generation": generation,
                "assigned": [{"topic": "t", "partitions": list(partitions)}]}

    rounds.joining(_seconds("2026-01-01T00:00:00.000Z"))
    rounds.joining(_seconds("2026-01-01T00:00:00.100Z"))
    assert rounds.joined(_seconds("2026-01-01T00:00:00.200Z"), "a", 1) == []
    assert rounds.take(event("2026-01-01T00:00:01.000Z", "assign", "a", 1, [0])) == []
    assert rounds.take(event("2026-01-01T00:00:01.200Z", "assign", "b", 1, [1])) == []
    assert rounds.take(event("2026-01-01T00:00:05.000Z", "revoke", "b")) == []
    assert rounds.take(event("2026-01-01T00:00:05.010Z", "revoke", "a")) == []
    (first,) = rounds.take(event("2026-01-01T00:00:05.300Z", "assign", "a", 2, [0, 1]))
    assert (first["from_generation"], first["to_generation"], first["started"], first["ended"],
            first["duration_ms"], first["members_before"], first["members_after"]) == (
        0, 1, "2026-01-01T00:00:00.000Z", "2026-01-01T00:00:01.200Z", 1200, None, ["a", "b"])
    # an assign of a generation already told (late, or repeated) tells nothing again
    assert rounds.take(event("2026-01-01T00:00:05.400Z", "assign", "b", 1, [1])) == []
    (second,) = rounds.flush()
    assert (second["to_generation"], second["started"], second["duration_ms"],
            second["members_before"], second["members_after"], second["moved_partitions"]) == (
        2, "2026-01-01T00:00:05.000Z", 300, ["a", "b"], ["a"], 1)
    # a generation cut short before any assign: a round of its own, its partitions unknown
    assert rounds.joined(_seconds("2026-01-01T00:00:10.000Z"), "a", 3) == []
    assert rounds.joined(_seconds("2026-01-01T00:00:10.050Z"), "b", 3) == []
    (third,) = rounds.joined(_seconds("2026-01-01T00:00:10.100Z"), "a", 4)
    rounds.take(event("2026-01-01T00:00:10.150Z", "assign", "a", 4, [0, 1]))
    (fourth,) = rounds.flush()
    assert (third["to_generation"], third["started"], third["ended"],
            third["members_after"], third["moved_partitions"]) == (
        3, None, "2026-01-01T00:00:10.050Z", ["a", "b"], None)
    assert (fourth["to_generation"], fourth["started"], fourth["ended"],
            fourth["members_before"], fourth["moved_partitions"]) == (
        4, None, "2026-01-01T00:00:10.150Z", ["a", "b"], None)
    # an assign with no generation (KIP-848, or not known) is no round
    assert rounds.take(event("2026-01-01T00:00:09.000Z", "assign", "a", None, [0])) == []
    assert rounds.flush() == []
