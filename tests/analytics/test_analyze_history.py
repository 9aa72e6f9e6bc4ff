"""Records joined with reasons (issue 20): `history -o ndjson` of a classic group on the lab
broker, read with `analyze --events`, with and without the broker's log.

The coordinator's records hold every generation but not why it began nor when (a classic
round's start is in the broker log). Given the log too, each records episode takes the
KIP-800 reason, the trigger member and the start from the broker's "Preparing to
rebalance" line of the same round. Ground truth: the broker's own Preparing / Stabilized
lines and the members' own ids (librdkafka consumers' callbacks), not groupctl's output.
"""
from __future__ import annotations

import json
import re
import uuid

import pytest
from analyze_support import csv_table, run, run_process
from waiting import wait_until

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]   # Spark twice, in its own process

PREPARING = re.compile(r"^\[(\S+ \S+)\] INFO \[GroupCoordinator [^\]]*\] Preparing to rebalance "
                       r"group (\S+) in state \w+ with old generation (\d+) \(reason: (.*)\)\.? "
                       r"\(org\.apache", re.M)
STABILIZED = re.compile(r"\] Stabilized group (\S+) generation (\d+) with (\d+) members")


def _history(kafka, group: str) -> list[dict]:
    code, out, err = run(["-b", kafka.bootstrap, "-o", "ndjson", "history", group])
    assert code == 0, err
    return [json.loads(line) for line in out.splitlines() if line.strip()]


@pytest.fixture(scope="module")
def history_run(kafka, tmp_path_factory):
    from groupctl.lab.consumer import LabConsumer, wait_balanced
    from groupctl.lab.workload import create_topic

    tag = uuid.uuid4().hex[:8]
    topic, group = f"an-hist-{tag}", f"an-hist-{tag}"
    create_topic(kafka.bootstrap, topic, 3)
    partitions = [(topic, p) for p in range(3)]
    made: list[LabConsumer] = []
    try:
        for i in range(3):   # generations 1, 2, 3: each a join
            made.append(LabConsumer(kafka.bootstrap, group, [topic], name=f"h{i}-{tag}").start())
            wait_balanced(made, partitions, timeout=60)
        leaver = made.pop(1)
        leaver.close(timeout=30)   # generation 4: a LeaveGroup
        wait_balanced(made, partitions, timeout=60)
        joiners = [c.member_id for c in made[:1]] + [leaver.member_id] + [made[1].member_id]
        records = wait_until(lambda: (lambda h: h if any(
            e["event"] == "rebalance" and e.get("to_generation") == 4 for e in h) else None)(
            _history(kafka, group)), 60, "generation 4 in the history")
    finally:
        for c in made:
            c.begin_close()
        for c in made:
            c.close(timeout=30)
    work = tmp_path_factory.mktemp("an-hist")
    events = work / "history.ndjson"
    events.write_text("".join(json.dumps(e) + "\n" for e in records))
    text = kafka.log_file.read_text(errors="replace")
    preparing = {int(m.group(3)) + 1: (m.group(1), m.group(4)) for m in PREPARING.finditer(text)
                 if m.group(2) == group}
    stabilized = sorted(int(m.group(2)) for m in STABILIZED.finditer(text) if m.group(1) == group)
    runs = {}
    for name, extra in (("records", []), ("joined", ["--broker-logs", str(kafka.log_file)])):
        out = work / name
        code, _, err = run_process(["-o", "json", "analyze", "--events", str(events), *extra,
                            "--group", f"^{group}$", "--out", str(out)])
        assert code == 0, err
        runs[name] = [e for e in csv_table(out, "episodes") if e["group"] == group]
    return group, records, preparing, stabilized, joiners, leaver.member_id, runs


def test_each_records_episode_has_the_brokers_reason_and_trigger(history_run):
    group, records, preparing, stabilized, joiners, leaver, runs = history_run
    told = sorted(e["to_generation"] for e in records if e["event"] == "rebalance")
    assert told == [1, 2, 3, 4] and set(told) <= set(stabilized)
    # every generation once: the records' four, then what the broker log alone saw after
    # the history was read (the last members leaving at the end: the group left empty)
    gens = [int(e["to_generation"]) for e in runs["joined"]]
    assert gens == sorted(set(gens)) and gens[:4] == told
    assert {int(e["to_generation"]) for e in runs["joined"] if e["outcome"] == "stable"} \
        <= set(stabilized)
    eps = runs["joined"][:4]
    by_gen = {r["to_generation"]: r for r in records if r["event"] == "rebalance"}
    for e in eps:
        gen = int(e["to_generation"])
        started, reason = preparing[gen]
        assert e["reason"] == reason, (gen, e)
        # the broker log's own "2026-11-24 09:17:39,962", as the episode's ISO UTC
        assert e["started"] == started.replace(" ", "T").replace(",", ".") + "Z"
        assert e["ended"] == by_gen[gen]["ended"]   # the records' end stays
        assert int(e["duration_ms"]) >= 0
        assert e["broker"] == "1"
    # KIP-800: a joining member's own words ("not provided": librdkafka gives none)
    assert all("client reason:" in e["reason"] for e in eps[:3])
    triggers = [e["trigger_member"] for e in eps]
    assert triggers == [*joiners, leaver]
    assert [e["reason_kind"] for e in eps] == ["join", "join", "join", "leave"]


def test_without_the_log_the_records_keep_their_own_words(history_run):
    """Nothing invented: with the records alone no episode has a KIP-800 reason or the
    broker's start (a classic round's start is not in the records)."""
    _, records, _, _, _, _, runs = history_run
    eps = runs["records"]
    told = sorted(e["to_generation"] for e in records if e["event"] == "rebalance")
    assert [int(e["to_generation"]) for e in eps] == told
    assert not any("client reason:" in (e["reason"] or "") for e in eps)
    assert all(e["broker"] == "" and e["started"] == e["ended"] for e in eps)
