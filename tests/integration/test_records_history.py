"""`groupctl history` against what groupctl did not write: the broker's own log lines and
the consumers' rebalance callbacks.

On the session lab broker a workload of classic eager (range), cooperative-sticky,
consumer (KIP-848) and share groups runs (two members join, one leaves, the other
leaves); then `history -o ndjson` of each group must give
- classic: generations with members = the broker log's "Stabilized group G generation N"
  lines, and the empty ones its "Group G with generation N is now empty" lines;
- consumer: group epochs = its "[GroupId G] Bumped group epoch to N" lines;
- assignments: per member (by client id), the successive non-empty assignments equal the
  librdkafka consumer's own, as its assign/revoke callbacks left them;
- source "records", timestamps in order, no invented classic round durations.
Without READ/DESCRIBE on __consumer_offsets (the secure lab's guest): exit 4, one line
naming the ACL to add.
"""
from __future__ import annotations

import io
import json
import re
import time
import uuid
from datetime import datetime, timezone

import pytest

from groupctl.cli.app import invoke
from groupctl.cli.env import Env
from groupctl.exitcodes import ExitCode
from groupctl.observe.reads.model import coordinator_partition

from records_support import workload


def history(lab, *args: str) -> tuple[int, list[dict], str]:
    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    code = invoke(["-b", lab.bootstrap, "--timeout", "30", "-o", "ndjson", "history", *args], env)
    return code, [json.loads(line) for line in env.stdout.getvalue().splitlines()], env.stderr.getvalue()


def log_numbers(lab, pattern: str) -> list[int]:
    text = "".join(p.read_text() for p in lab.log_files)
    return sorted(int(m) for m in re.findall(pattern, text))


def member_sequences(events: list[dict]) -> dict[str, list[frozenset]]:
    """client id -> its successive non-empty assignments in the history."""
    client = {e["member_id"]: e["client_id"] for e in events if e["event"] == "member_joined"}
    out: dict[str, list[frozenset]] = {}
    for e in events:
        if e["event"] != "assignment":
            continue
        tps = frozenset((t["topic"], p) for t in e["assigned"] or () for p in t["partitions"])
        seq = out.setdefault(client[e["member_id"]], [])
        if tps and (not seq or seq[-1] != tps):
            seq.append(tps)
    return out


def callback_sequences(consumers) -> dict[str, list[frozenset]]:
    out = {}
    for c in consumers:
        seq: list[frozenset] = []
        for e in c.events:
            if e.assignment and (not seq or seq[-1] != e.assignment):
                seq.append(e.assignment)
        out[c.name] = seq
    return out


@pytest.fixture(scope="module")
def before_workload() -> float:
    """The wall clock before the workload starts: every record of its groups is later."""
    return time.time()


@pytest.fixture(scope="module")
def runs(kafka, before_workload):
    return workload(kafka, f"h{uuid.uuid4().hex[:6]}")


@pytest.mark.parametrize("kind", ["eager", "cooperative"])
def test_classic_generations_and_assignments(kafka, runs, kind):
    run = runs[kind]
    code, events, err = history(kafka, run.group)
    assert code == 0, err
    assert events and {e["source"] for e in events} == {"records"}
    assert [e["ts"] for e in events] == sorted(e["ts"] for e in events)
    gens = [e for e in events if e["event"] == "generation"]
    g = re.escape(run.group)
    assert [e["generation"] for e in gens if e["members"]] == log_numbers(
        kafka, rf"Stabilized group {g} generation (\d+) with")
    assert [e["generation"] for e in gens if not e["members"]] == log_numbers(
        kafka, rf"Group {g} with generation (\d+) is now empty")
    assert member_sequences(events) == callback_sequences(run.consumers)
    rebalances = [e for e in events if e["event"] == "rebalance"]
    assert rebalances and all(e["duration_ms"] is None and e["started"] is None
                              for e in rebalances)   # a classic round's start is not recorded
    assert "complete from offset" in err


def test_consumer_group_epochs_and_assignments(kafka, runs):
    run = runs["consumer"]
    code, events, err = history(kafka, run.group)
    assert code == 0, err
    epochs = sorted({e["group_epoch"] for e in events if e["event"] == "epoch"})
    assert epochs == log_numbers(kafka, rf"\[GroupId {re.escape(run.group)}\] Bumped group epoch to (\d+)")
    assert member_sequences(events) == callback_sequences(run.consumers)
    joined = [e["client_id"] for e in events if e["event"] == "member_joined"]
    assert sorted(joined) == sorted(c.name for c in run.consumers)
    assert any(e["event"] == "rebalance" and e["duration_ms"] is not None for e in events)
    asg = [e for e in events if e["event"] == "assignment"]
    assert all(e["member_epoch"] is not None and e["member_state"] for e in asg), asg
    # a revocation shows the member in UNREVOKED_PARTITIONS before it reaches its target
    # (the first member gives up half its partitions when the second joins)
    assert any(e["member_state"] == "UNREVOKED_PARTITIONS" for e in asg), asg


def test_share_group_members(kafka, runs):
    run = runs["share"]
    code, events, err = history(kafka, run.group)
    assert code == 0, err
    joined = sorted(e["client_id"] for e in events if e["event"] == "member_joined")
    assert joined == [f"{run.group}-share-1", f"{run.group}-share-2"]
    assert sorted(e["client_id"] for e in events if e["event"] == "member_left") == joined


def test_partition_is_the_coordinators_and_since_until_bound_the_events(kafka, runs):
    run = runs["eager"]
    code, events, err = history(kafka, run.group)
    assert code == 0 and "warning: FindCoordinator" not in err, err
    partition = coordinator_partition(run.group, 50)
    assert f"__consumer_offsets-{partition} " in err
    middle = events[len(events) // 2]["ts"]
    code, later, err = history(kafka, run.group, "--since", middle)
    assert code == 0, err
    assert later and all(e["ts"] >= middle for e in later)
    assert later == [e for e in events if e["ts"] >= middle][:len(later)]
    code, earlier, err = history(kafka, run.group, "--until", middle)
    assert code == 0 and all(e["ts"] < middle for e in earlier), err


def test_windows_before_and_after_the_groups_records_are_said_not_exit_5(
        kafka, runs, before_workload):
    run = runs["eager"]
    code, events, err = history(kafka, run.group)
    assert code == 0, err
    until = datetime.fromtimestamp(before_workload - 1, tz=timezone.utc).isoformat()
    code, told, err = history(kafka, run.group, "--until", until)
    assert (code, told) == (0, []), err
    m = re.search(rf"groupctl: history: no event of {re.escape(run.group)} before --until "
                  rf"\S+: its first record is at offset (\d+) \((\S+)\)\n", err)
    assert m, err
    # its time: after the workload began, no later than the first member's assignment as
    # the consumer's own callback saw it, nor than the history's first event
    first = datetime.fromisoformat(m.group(2).replace("Z", "+00:00")).timestamp()
    first_assign = min(e.ts for c in run.consumers for e in c.events if e.kind == "assign")
    assert before_workload <= first <= first_assign + 0.001, (first, first_assign)
    assert m.group(2) <= events[0]["ts"]
    code, told, err = history(kafka, run.group, "--since", "2099-01-01T00:00:00Z")
    assert (code, told) == (0, []), err
    assert f"no event of {run.group}: --since 2099-01-01T00:00:00Z is in the future" in err
    assert "warning" not in err   # the completeness footer is a note


def test_unknown_group_is_exit_5(kafka):
    code, events, err = history(kafka, f"never-{uuid.uuid4().hex}")
    assert (code, events) == (ExitCode.NOT_FOUND, [])
    assert err.startswith("groupctl: error: no records of group")


def test_without_the_acl_exit_4_naming_it(secure_lab):
    from tls_support import guest

    code, out, err = guest(secure_lab, "history", "any-group")
    assert (code, out) == (ExitCode.AUTH, ""), err
    assert err.startswith("groupctl: error: ") and err.count("\n") == 1, err
    assert "__consumer_offsets" in err and "--operation Read" in err, err
