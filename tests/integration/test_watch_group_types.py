"""`groupctl watch` and `wait` on share groups, streams groups and groups converting between
classic and consumer, on the lab broker, against peers groupctl did not write:
confluent-kafka ShareConsumers and ShareGroupCommand, a Kafka Streams application and
StreamsGroupCommand, librdkafka consumers of both protocols and ConsumerGroupCommand's
`--list --type`. Every step waits on an event or a condition with a deadline."""
from __future__ import annotations

import json
import uuid

import pytest

from groupctl.lab.workload import create_topic

from describe_support import cgc_rows, cli, tool_rows
from group_types_support import ShareMembers, StreamsApp, streams_tasks
from watch_support import WatchProcess

pytestmark = pytest.mark.broker

STREAMS_PARTITIONS = 4
EVERY_TASK = {"0": list(range(STREAMS_PARTITIONS)), "1": list(range(STREAMS_PARTITIONS))}


def _name(kind: str) -> str:
    return f"{kind}-{uuid.uuid4().hex[:8]}"


def _rebalance_with(watch, count: int, start: int, timeout: float = 60, extra=lambda e: True):
    return watch.wait_event(
        lambda e: e["event"] == "rebalance" and len(e["members_after"]) == count and extra(e),
        timeout, f"a rebalance to {count} member(s)", start)


def _kinds_between(watch, start: int, end: int) -> list[str]:
    return [e["event"] for e in watch.events[start:end + 1]]


def _epochs(watch, start: int, end: int) -> list[tuple[int, int]]:
    return [(e["group_epoch"], e["assignment_epoch"]) for e in watch.events[start:end + 1]
            if e["event"] == "epoch"]


def _tool(command, *args: str, last_free: bool = False) -> list[dict]:
    proc = command(*args)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return tool_rows(proc.stdout, last_free)


# ---- share groups ------------------------------------------------------------------------------

def _share_view(kafka, group):
    """ShareGroupCommand's members: {member id: (client id, [(topic, partition)])}."""
    rows = _tool(kafka.share_group_command, "--describe", "--group", group, "--members",
                 "--verbose")
    return {r["CONSUMER-ID"]: (r["CLIENT-ID"], sorted(
        (t, int(p)) for part in r["ASSIGNMENT"].split(";") if ":" in part
        for t, _, ps in [part.rpartition(":")] for p in ps.split(",") if p)) for r in rows}


def _event_view(rebalance, joined):
    clients = {e["member_id"]: e["client_id"] for e in joined}
    return {m: (clients.get(m), sorted((a["topic"], p) for a in asg or () for p in a["partitions"]))
            for m, asg in rebalance["assignments"].items()}


def test_share_group_second_member_joins_then_one_leaves(kafka):
    group, topic = _name("share-w"), _name("share-wt")
    create_topic(kafka.bootstrap, topic, 1, 1, None)   # one partition: both members hold it
    watch = WatchProcess(kafka, group, "--interval", "0.2")
    first = second = None
    try:
        i, _ = watch.wait_event(lambda e: e["event"] == "state" and e["state"] == "Dead", 30,
                                "the missing group's Dead state")
        first = ShareMembers(kafka.bootstrap, group, topic, n=1, name="a")
        i, r1 = _rebalance_with(watch, 1, i, extra=lambda e: any(e["assignments"].values()))
        joined = [e for e in watch.events[:i] if e["event"] == "member_joined"]
        assert [e["client_id"] for e in joined] == first.client_ids
        a_id = joined[0]["member_id"]
        assert r1["assignments"] == {a_id: [{"topic": topic, "partitions": [0]}]}

        second = ShareMembers(kafka.bootstrap, group, topic, n=1, name="b")
        j, r2 = _rebalance_with(watch, 2, i + 1)
        story = watch.events[i + 1:j + 1]
        (b_joined,) = [e for e in story if e["event"] == "member_joined"]
        assert b_joined["client_id"] == second.client_ids[0] and b_joined["host"]
        b_id = b_joined["member_id"]
        # the group epoch moved, and the rebalance ends at it, from the one before
        epochs = _epochs(watch, i + 1, j)
        assert epochs and epochs[-1] == (r2["to_generation"], r2["to_generation"])
        assert r2["from_generation"] == r1["to_generation"] < r2["to_generation"]
        assert r2["reason"].startswith(f"member {b_id} (client {second.client_ids[0]}")
        # both hold partition 0: the share group hands it out record by record
        assert r2["assignments"] == {a_id: [{"topic": topic, "partitions": [0]}],
                                     b_id: [{"topic": topic, "partitions": [0]}]}
        assert r2["moved_partitions"] == 1   # t:0's holders went from {a} to {a, b}
        # once the broker computed the assignment (seen: seconds after the join moved the
        # group epoch), a member holds the group up until its next heartbeat (share groups:
        # every 5 s by default) takes the assignment epoch, b as well as a: each told
        # behind, then caught up, unless no 0.2 s look fell in between; the last to catch
        # up is the slowest member, and a share member has nothing to give up: it held
        # nothing once told
        marks = [(e["member_id"], e["behind"]) for e in story
                 if e["event"] == "assignment" and "behind" in e]
        for mid in {m for m, _ in marks}:
            assert mid in (a_id, b_id) and [f for m, f in marks if m == mid] == [True, False], marks
        if marks:
            last = [m for m, f in marks if not f][-1]
            assert (r2["slowest_member"], r2["slowest_member_held_ms"]) == (last, 0), r2
        else:
            assert r2["slowest_member"] is None, r2
        assert _share_view(kafka, group) == _event_view(r2, [*joined, b_joined])

        first.close()
        first = None
        k, r3 = _rebalance_with(watch, 1, j + 1)
        story = watch.events[j + 1:k + 1]
        assert [(e["event"], e["member_id"]) for e in story
                if e["event"] in ("member_joined", "member_left")] == [("member_left", a_id)]
        assert _epochs(watch, j + 1, k)[-1] == (r3["to_generation"], r3["to_generation"])
        assert r3["from_generation"] == r2["to_generation"] < r3["to_generation"]
        assert r3["members_after"] == [b_id]
        assert _share_view(kafka, group) == _event_view(r3, [b_joined])

        # wait on the share group: one member at an epoch beyond the join's
        code, out, err = cli(kafka, "-o", "json", "wait", group, "--state", "stable",
                             "--members", "1", "--generation-gt", str(r2["to_generation"]),
                             "--timeout", "30")
        assert code == 0, err
        got = json.loads(out)
        assert (got["type"], got["members"], got["group_epoch"]) == (
            "share", 1, r3["to_generation"])
        code, _, err = cli(kafka, "wait", group, "--members", "2", "--timeout", "1")
        assert code == 6 and "members: want 2, has 1" in err
    finally:
        for members in (first, second):
            if members is not None:
                members.close()
        assert watch.stop() == 0, watch.stderr()


# ---- streams groups ----------------------------------------------------------------------------

def _task_view(tasks: dict) -> dict:
    """An event's tasks of one member in streams_tasks' shape (empty kinds left out)."""
    out = {}
    for kind in ("active", "standby", "warmup"):
        found = {t["subtopology_id"]: t["partitions"] for t in tasks[kind] if t["partitions"]}
        if found:
            out[kind.upper()] = found
    return out


def _streams_view(kafka, app_id):
    """StreamsGroupCommand's members: {member id: current tasks} (TARGET-* kinds dropped:
    the event's tasks are the converged ones, equal to their targets)."""
    rows = _tool(kafka.streams_group_command, "--describe", "--group", app_id, "--members",
                 "--verbose", last_free=True)
    return {r["MEMBER"]: {k: v for k, v in streams_tasks(r["ASSIGNMENTS"]).items()
                          if not k.startswith("TARGET-")} for r in rows}


@pytest.mark.slow
def test_streams_instance_killed_its_tasks_move_to_the_other(kafka, tmp_path):
    app_id, source, sink = _name("streams-w"), _name("streams-win"), _name("streams-wout")
    create_topic(kafka.bootstrap, source, STREAMS_PARTITIONS, 1, None)
    create_topic(kafka.bootstrap, sink, STREAMS_PARTITIONS, 1, None)
    watch = WatchProcess(kafka, app_id, "--interval", "0.2")
    apps = []
    try:
        watch.wait_event(lambda e: e["event"] == "state" and e["state"] == "Dead", 30,
                         "the missing group's Dead state")
        apps = [StreamsApp(kafka.bootstrap, app_id, source, sink, tmp_path / f"state-{i}",
                           f"localhost:{7300 + i}") for i in (1, 2)]
        for app in apps:
            app.wait_running()
        code, out, err = cli(kafka, "-o", "json", "wait", app_id, "--state", "Stable",
                             "--members", "2", "--timeout", "90")
        assert code == 0, err
        assert json.loads(out)["type"] == "streams"

        # the rebalance whose two members hold every active task between them
        def split(e):
            held = [_task_view(t).get("ACTIVE", {}) for t in e["tasks"].values()]
            return all(held) and all(sorted(p for h in held for p in h.get(s, ())) == ps
                                     for s, ps in EVERY_TASK.items())

        i, r2 = _rebalance_with(watch, 2, 0, 90, split)
        before = {m: _task_view(t) for m, t in r2["tasks"].items()}
        assert _streams_view(kafka, app_id) == before
        assert [e for e in watch.events[:i] if e["event"] == "assignment"
                and e.get("tasks") is not None]

        apps[1].proc.kill()   # SIGKILL: no leave; the broker expires it after its session
        apps[1].proc.wait(10)
        j, r3 = _rebalance_with(watch, 1, i + 1, 150)
        story = watch.events[i + 1:j + 1]
        (left,) = [e for e in story if e["event"] == "member_left"]
        (kept,) = r3["members_after"]
        assert left["member_id"] in before and kept in before and kept != left["member_id"]
        # every task of the killed instance moved to the one left
        assert _task_view(r3["tasks"][kept]) == {"ACTIVE": EVERY_TASK}
        # its tasks' move (the member's marks as it holds the group up, `behind`, aside)
        (moved,) = [e for e in story if e["event"] == "assignment" and e["member_id"] == kept
                    and "behind" not in e]
        marks = [e["behind"] for e in story if e["event"] == "assignment" and "behind" in e]
        assert marks in ([], [True, False]), marks   # told behind, then caught up, or unseen
        assert _task_view(moved["tasks_added"]) == before[left["member_id"]]
        assert _task_view(moved["tasks_revoked"]) == {}
        assert _epochs(watch, i + 1, j)[-1] == (r3["to_generation"], r3["to_generation"])
        assert r3["from_generation"] == r2["to_generation"] < r3["to_generation"]
        assert r3["moved_partitions"] == len(before[left["member_id"]]["ACTIVE"]["0"]) * 2
        assert _streams_view(kafka, app_id) == {kept: {"ACTIVE": EVERY_TASK}}

        code, out, err = cli(kafka, "-o", "json", "wait", app_id, "--state", "stable",
                             "--members", "1", "--generation-gt", str(r2["to_generation"]),
                             "--timeout", "30")
        assert code == 0, err
        assert json.loads(out)["group_epoch"] == r3["to_generation"]
    finally:
        for app in apps:
            app.close()
        assert watch.stop() == 0, watch.stderr()


# ---- classic <-> consumer conversion ----------------------------------------------------------

def _kafka_type(kafka, group) -> str | None:
    """The group's TYPE in ConsumerGroupCommand's `--list --type` (Classic / Consumer)."""
    return {r["GROUP"]: r["TYPE"] for r in cgc_rows(kafka, "--list", "--type")}.get(group)


def test_conversion_to_consumer_and_back_is_told_as_type_changed(
        kafka, topic_factory, consumer_factory, unique_group):
    """Kafka 4.3 (group.consumer.migration.policy bidirectional by default): the first
    KIP-848 member converts a classic group to a consumer group; a classic member leaving
    a mixed group converts nothing; the last KIP-848 member leaving converts it back."""
    g, topic = unique_group, topic_factory(4)
    watch = WatchProcess(kafka, g, "--interval", "0.2")
    try:
        i, _ = watch.wait_event(lambda e: e["event"] == "state" and e["state"] == "Dead", 30,
                                "the missing group's Dead state")
        c1 = consumer_factory(g, topic, protocol="classic", name=f"{g}-c1")
        c1.wait_assigned(timeout=30)
        i, _ = _rebalance_with(watch, 1, i)
        assert _kafka_type(kafka, g) == "Classic"

        n = consumer_factory(g, topic, protocol="consumer", name=f"{g}-n")
        n.wait_assigned(timeout=30)
        j, up = _rebalance_with(watch, 2, i + 1)
        changes = [e for e in watch.events[i + 1:j + 1] if e["event"] == "type_changed"]
        assert [(e["type"], e["previous"]) for e in changes] == [("consumer", "classic")]
        assert _kafka_type(kafka, g) == "Consumer"
        assert sorted(up["members_after"]) == sorted([c1.member_id, n.member_id])
        # after the conversion the group counts epochs, and they are told
        assert _epochs(watch, i + 1, j)[-1] == (up["to_generation"], up["to_generation"])

        c1_id = c1.member_id
        c1.close()   # the classic member leaves: the group stays a consumer group
        k, _ = _rebalance_with(watch, 1, j + 1)
        assert "type_changed" not in _kinds_between(watch, j + 1, k)
        assert [e["member_id"] for e in watch.events[j + 1:k + 1]
                if e["event"] == "member_left"] == [c1_id]
        assert _kafka_type(kafka, g) == "Consumer"

        c2 = consumer_factory(g, topic, protocol="classic", name=f"{g}-c2")
        c2.wait_assigned(timeout=30)
        m, _ = _rebalance_with(watch, 2, k + 1)
        assert "type_changed" not in _kinds_between(watch, k + 1, m)
        n_id = n.member_id
        n.close()    # the last KIP-848 member leaves: back to a classic group
        o, down = _rebalance_with(watch, 1, m + 1)
        changes = [e for e in watch.events[m + 1:o + 1] if e["event"] == "type_changed"]
        assert [(e["type"], e["previous"]) for e in changes] == [("classic", "consumer")]
        assert n_id in [e["member_id"] for e in watch.events[m + 1:o + 1]
                        if e["event"] == "member_left"]
        assert down["members_after"] == [c2.member_id]
        assert _kafka_type(kafka, g) == "Classic"
        (desc,) = json.loads(cli(kafka, "-o", "json", "describe", g)[1])
        assert desc["type"] == "classic"
        assert [mm["member_protocol"] for mm in desc["members"]] == ["classic"]
    finally:
        assert watch.stop() == 0, watch.stderr()
