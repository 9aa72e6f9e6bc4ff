"""`lab workload --record`: the rounds its members went through, told as `rebalance`
records, judged against the broker's own log of the same run
(tests/fixtures/analyze/workload.ndjson and workload-server.log: a real lab run of
`lab workload --consumers 3 --churn 5 --duration 40 --record`)."""
from __future__ import annotations

import datetime as dt
import json
import logging
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


# --- KIP-848: `lab workload --protocol consumer --consumers 3 --churn 5 --duration 40
# --record` on the lab (tests/fixtures/analyze/workload848.ndjson and
# workload848-server.log, the coordinator's lines of the same run)
GROUP_848 = "workload-consumer-churn2"


def _broker_targets() -> list[tuple[int, float, float]]:
    """(epoch, first bump since the target before, target computed) seconds, for each
    target assignment the coordinator computed: the rounds it ran to an end."""
    bumped, rounds = None, []
    for line in (FIXTURES / "workload848-server.log").read_text().splitlines():
        at = dt.datetime.strptime(line[1:24], "%Y-%m-%d %H:%M:%S,%f").replace(
            tzinfo=dt.timezone.utc).timestamp()
        if re.search(rf"\[GroupId {GROUP_848}\] Bumped group epoch to \d+", line):
            bumped = bumped or at
        elif m := re.search(rf"\[GroupId {GROUP_848}\] Computed a new target assignment "
                            r"for epoch (\d+)", line):
            rounds.append((int(m[1]), bumped, at))
            bumped = None
    return rounds


def test_every_consumer_group_round_of_the_run_is_told_once_as_the_broker_ran_it():
    lines = (FIXTURES / "workload848.ndjson").read_text().splitlines()
    written = [r for r in map(json.loads, lines) if r["event"] == "rebalance"]
    broker = _broker_targets()
    # each epoch the coordinator computed a target for, once, in order; the two joins that
    # bumped 3 and 4 before one target are one round, as the broker ran them
    assert [r["to_generation"] for r in written] == [e for e, _, _ in broker]
    assert len(written) == 9 and {r["type"] for r in written} == {"consumer"}
    assert [r["from_generation"] for r in written] == [None] + [e for e, _, _ in broker[:-1]]
    for r, (_, bumped, targeted) in zip(written, broker):
        # over once the members reached it, after the coordinator computed its target
        assert _seconds(r["ended"]) >= targeted, r
        if r["started"] is not None:   # a member's start or stop set it off
            assert _seconds(r["started"]) <= bumped, r
            assert r["duration_ms"] == round(
                (_seconds(r["ended"]) - _seconds(r["started"])) * 1000)
        assert r["moved_partitions"] is None   # not seen: unchanged members get no assign
    # the three starts began the first round; the second (the other two joins) was set
    # off by nothing the members did since
    assert written[1]["started"] is None and all(r["started"] for r in written[2:])
    assert [len(r["members_after"]) for r in written] == [1, 3, 2, 3, 2, 3, 2, 3, 2]
    # each member's epochs, as its assigns carried them, are epochs of these rounds
    assigns = [r for r in map(json.loads, lines)
               if r["event"] == "assignment" and r["callback"] == "assign" and r["added"]]
    assert assigns and {a["member_epoch"] for a in assigns} <= {e for e, _, _ in broker}


def test_a_consumer_group_round_is_an_epoch_the_members_reached():
    rounds = WorkloadRounds("g", "consumer")

    def at(iso):
        return _seconds(f"2026-01-01T00:00:{iso}Z")

    def assign(ts, member, epoch, added=(0,)):
        return {"ts": f"2026-01-01T00:00:{ts}Z", "callback": "assign", "member_id": member,
                "member_epoch": epoch, "added": [{"topic": "t", "partitions": list(added)}]
                if added else [], "assigned": []}

    rounds.joining(at("00.000"))
    assert rounds.joined(at("00.100"), "a", 2) == []
    assert rounds.take(assign("00.150", "a", 2)) == []
    # c joins at epoch 2 after a reached it: the target of epoch 2 did not hold c
    assert rounds.joined(at("00.900"), "c", 2) == []
    # every heartbeat answer repeats the epoch: only the first one counts
    assert rounds.joined(at("01.100"), "a", 2) == []
    # a revoke is a member catching up with a round begun, and an empty assign is nothing
    assert rounds.take({"ts": "2026-01-01T00:00:04.000Z", "callback": "revoke",
                        "member_id": "a"}) == []
    assert rounds.take(assign("04.010", "a", 2, added=())) == []
    rounds.leaving(at("05.000"))
    (first,) = rounds.joined(at("05.200"), "b", 4)   # two bumps, one target: epoch 4
    assert (first["type"], first["from_generation"], first["to_generation"], first["started"],
            first["ended"], first["duration_ms"], first["members_after"]) == (
        "consumer", None, 2, "2026-01-01T00:00:00.000Z", "2026-01-01T00:00:00.150Z", 150,
        ["a"])
    assert rounds.joined(at("05.900"), "a", 4) == []
    assert rounds.joined(at("05.950"), "c", 4) == []
    assert rounds.take(assign("06.300", "a", 4, added=(1,))) == []
    assert rounds.joined(at("06.400"), "a", 2) == []   # an epoch told already: no round
    (second,) = rounds.flush()
    assert (second["from_generation"], second["to_generation"], second["started"],
            second["ended"], second["duration_ms"], second["members_before"],
            second["members_after"], second["moved_partitions"]) == (
        2, 4, "2026-01-01T00:00:05.000Z", "2026-01-01T00:00:06.300Z", 1300, ["a"],
        ["a", "b", "c"], None)
    # a loss sets off a round (the member rejoins)
    rounds.take({"ts": "2026-01-01T00:00:09.000Z", "callback": "lost", "member_id": "b"})
    rounds.joined(at("09.500"), "b", 5)
    assert rounds.flush()[0]["started"] == "2026-01-01T00:00:09.000Z"


def test_a_kip848_members_heartbeat_answers_give_its_epochs():
    from groupctl.lab.consumer import LabConsumer
    from groupctl.lab.librdkafka import JoinAnswers

    seen = []
    consumer = LabConsumer("127.0.0.1:1", "g", ["t"], protocol="consumer",
                           on_generation=lambda *told: seen.append(told))
    handler = JoinAnswers(consumer)
    for text in ('ConsumerGroupHeartbeat response received for member id '
                 '"TXEcyoV4R62jio1Pag3PyA" with epoch 3',   # librdkafka 2.16, debug=cgrp
                 'ConsumerGroupHeartbeat response received for member id '
                 '"TXEcyoV4R62jio1Pag3PyA" with epoch -1',  # its leave: no epoch
                 'JoinGroup response: GenerationId 7, Protocol range, LeaderId x, '
                 'my MemberId x, member metadata count 1: (null)'):
        handler.emit(logging.LogRecord("x", logging.DEBUG, "", 0, text, None, None))
    assert [(m, e) for _, m, e in seen] == [("TXEcyoV4R62jio1Pag3PyA", 3)]
    assert consumer.consumer_config()["debug"] == "cgrp"
