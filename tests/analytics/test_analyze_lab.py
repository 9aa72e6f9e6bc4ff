"""The proof on the real lab broker: drive every kind of rebalance
(tests/integration/analyze_scenario.py), then analyze the broker's own log, the Java
consumer's and librdkafka's client logs and the probe's `join --watch --record` file.

- every generation the probe recorded appears once, with the right reason and trigger;
  its end within 100 ms of the probe's own (the probe's `ended` is its SyncGroup answer,
  the episode's the broker's "Assignment received from leader"); the duration too where
  the probe saw the whole rebalance (its own join: it started the round itself; for other
  rounds the probe only learns of the rebalance at its next heartbeat);
- the KIP-848 group's epoch matches Kafka's own ConsumerGroupCommand (--state --verbose).
"""
from __future__ import annotations

import json
from datetime import datetime

import analyze_scenario as S
import pytest

pytestmark = pytest.mark.slow


def _ms(iso: str) -> float:
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000


def _group_epoch(kafka, group: str) -> int:
    proc = kafka.consumer_group_command("--describe", "--group", group, "--state", "--verbose")
    assert proc.returncode == 0, proc.stderr[-1000:]
    header, row = [line.split() for line in proc.stdout.strip().splitlines()[-2:]]
    # COORDINATOR (ID) spans two words in the row
    row = row[:1] + [" ".join(row[1:3])] + row[3:]
    return int(dict(zip(header, row))["GROUP-EPOCH"])


@pytest.fixture(scope="module")
def lab_run(kafka, spark, tmp_path_factory):
    from groupctl.analytics import load
    from groupctl.analytics.pipeline import Inputs, Options, analyze
    from groupctl.lab.workload import create_topic

    from groupctl.lab.consumer import LabConsumer

    made: list[LabConsumer] = []

    def make(group, topic, **options):
        c = LabConsumer(kafka.bootstrap, group, [topic], **options).start()
        made.append(c)
        return c

    work = tmp_path_factory.mktemp("analyze-lab")
    stamp = work.name.rsplit("-", 1)[-1]
    topic = f"analyze-lab-{stamp}-{id(work) % 100000}"
    create_topic(kafka.bootstrap, topic, 6)
    classic_group, kip848_group = f"an-classic-{topic}", f"an-848-{topic}"
    try:
        run = S.run_classic(kafka, topic, classic_group, work, make)
        S.run_consumer_protocol(kafka, topic, kip848_group, make)
        epoch = _group_epoch(kafka, kip848_group)
        tables = analyze(spark, Inputs(broker_logs=[str(p) for p in kafka.log_files],
                                       client_logs=[str(run.java_log), str(run.rdkafka_log)],
                                       events=[str(run.record)]),
                         Options(group_regex=f"^an-(classic|848)-{topic}$"))
        result = {name: load.rows(df) for name, df in tables.named().items()}
        result["events"] = load.rows(tables.events)
        tables.release()
    finally:
        for c in made:
            c.begin_close()
        for c in made:
            c.close(timeout=30)
    records = [json.loads(line) for line in run.record.read_text().splitlines()]
    return run, classic_group, kip848_group, epoch, result, records


def test_every_recorded_generation_once_with_reason_and_trigger(lab_run):
    run, group, _, _, result, records = lab_run
    eps = [e for e in result["episodes"] if e["group"] == group]
    assert [e["to_generation"] for e in eps] == list(range(1, run.generations + 1))
    assert all(e["outcome"] == "stable" for e in eps)
    assert [(e["reason_kind"], e["trigger_client"]) for e in eps] == [
        ("join", "analyze-first"), ("join", "groupctl"), ("join", "console-consumer-killed"),
        ("join", "rdkafka-debug"), ("session timeout", "console-consumer-killed"),
        ("leave", "rdkafka-debug"), ("join", "static-1"), ("leave", "groupctl")]
    assert "groupctl probe: joining" in eps[1]["reason"]
    recorded = [r["to_generation"] for r in records if r["event"] == "rebalance"]
    assert recorded == list(range(2, run.generations))  # the probe saw 2..7
    by_gen = {e["to_generation"]: e for e in eps}
    # the story says why (issue 10): the probe's own join reads "member <its id> (...) joined"
    probe_ids = {r["member_id"] for r in records if r["event"] == "probe" and r["action"] == "joined"}

    def probe_joined(r) -> bool:
        return any((r["reason"] or "").startswith(f"member {p} (") and r["reason"].endswith(" joined")
                   for p in probe_ids)

    for r in records:
        if r["event"] != "rebalance":
            continue
        ep = by_gen[r["to_generation"]]
        assert abs(_ms(ep["ended"]) - _ms(r["ended"])) <= 100, (ep, r)
        assert ep["moved_partitions"] == r["moved_partitions"]
        if probe_joined(r):  # the probe saw this rebalance from its start
            assert abs(ep["duration_ms"] - r["duration_ms"]) <= 100, (ep, r)
    assert sum(probe_joined(r) for r in records if r["event"] == "rebalance") == 1


def test_members_failed_vs_left(lab_run):
    _, group, _, _, result, _ = lab_run
    outcomes = {(r["client"], r["outcome"]) for r in result["members"] if r["group"] == group}
    assert ("console-consumer-killed", "failed") in outcomes
    assert {("rdkafka-debug", "left"), ("groupctl", "left")} <= outcomes
    (m,) = [m for m in result["metrics"] if m["group"] == group]
    assert (m["type"], m["rebalances"], m["failed_members"], m["left_members"]) == (
        "classic", 8, 1, 2)


def test_client_logs_agree_with_the_broker(lab_run):
    _, group, _, _, result, _ = lab_run
    joined = {(e["client"], e["generation"]) for e in result["events"]
              if e["source"] == "client-log" and e["kind"] == "joined" and e["group"] == group}
    # the Java consumer was in generations 3 and 4, the librdkafka one in 4 and 5
    assert {("console-consumer-killed", 3), ("console-consumer-killed", 4),
            ("rdkafka-debug", 4), ("rdkafka-debug", 5)} <= joined


def test_consumer_group_epochs_match_describe(lab_run):
    _, _, group, epoch, result, _ = lab_run
    (m,) = [m for m in result["metrics"] if m["group"] == group]
    assert (m["type"], m["group_epoch"]) == ("consumer", epoch)
    eps = [e for e in result["episodes"] if e["group"] == group]
    assert eps and all(e["outcome"] == "stable" for e in eps)
    assert eps[-1]["to_generation"] == epoch
    assert [e["members_after"] for e in eps][-1] == 1
