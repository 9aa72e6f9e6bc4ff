"""Replaying coordinator records into group descriptions (observe/reads/replay.py) and into the
rebalance story (as `history` does), on small hand-made records; the partition of a
group (Java's String.hashCode, abs(Integer.MIN_VALUE)); completeness from offset gaps."""
from __future__ import annotations

from groupctl.observe.sources.history import (
    GapTracker, amend_from_records, created_from_nothing, unowned_unknown,
)
from groupctl.observe.reads.model import coordinator_partition, java_string_hash
from groupctl.observe.sources.observations import Seen
from groupctl.observe.reads.replay import replay
from groupctl.observe.story.story import RebalanceStory
from groupctl.protocol.consumer import (
    Assignment, Subscription, TopicPartitions, encode_assignment, encode_subscription,
)
from groupctl.protocol.records.coordinator import CoordinatorRecord

TID = "JOjphzW4SaiJtRd4hoi-lA"
NAMES = {TID: "orders"}
_offsets = iter(range(10_000))


def rec(rtype, key, value, ts):
    return CoordinatorRecord(next(_offsets), ts, rtype, key, 0 if value is not None else None,
                             value, value is None)


def classic(gen, members, ts, group="g", joined=None):
    """`joined`: the end of the generation's join phase (its current_state_timestamp)."""
    return rec(2, {"group": group}, {
        "protocol_type": "consumer", "generation": gen, "protocol": "range" if members else None,
        "leader": members[0][0] if members else None,
        "current_state_timestamp": ts if joined is None else joined,
        "members": [{"member_id": m, "group_instance_id": None, "client_id": f"c-{m}",
                     "client_host": "/10.0.0.1", "rebalance_timeout": 300000,
                     "session_timeout": 10000,
                     "subscription": encode_subscription(Subscription(topics=["orders"])),
                     "assignment": encode_assignment(Assignment(assigned_partitions=[
                         TopicPartitions("orders", parts)])) if parts is not None else b""}
                    for m, parts in members]}, ts)


def epoch(e, ts, group="g"):
    return rec(3, {"group_id": group}, {"epoch": e, "metadata_hash": 1}, ts)


def member(mid, ts, group="g", classic_meta=None, assignor=None):
    return rec(5, {"group_id": group, "member_id": mid}, {
        "instance_id": None, "rack_id": None, "client_id": f"c-{mid}", "client_host": "/h",
        "subscribed_topic_names": ["orders"], "subscribed_topic_regex": "",
        "rebalance_timeout_ms": 300000, "server_assignor": assignor,
        "classic_member_metadata": classic_meta}, ts)


def target(mid, parts, ts, group="g"):
    return rec(7, {"group_id": group, "member_id": mid},
               {"topic_partitions": [{"topic_id": TID, "partitions": parts}]}, ts)


def target_meta(e, ts, group="g"):
    return rec(6, {"group_id": group}, {"assignment_epoch": e, "assignment_timestamp": ts}, ts)


def current(mid, e, prev, state, parts, ts, pending=(), group="g"):
    return rec(8, {"group_id": group, "member_id": mid}, {
        "member_epoch": e, "previous_member_epoch": prev, "state": state,
        "assigned_partitions": [{"topic_id": TID, "partitions": list(parts)}],
        "partitions_pending_revocation": [{"topic_id": TID, "partitions": list(pending)}]
        if pending else []}, ts)


def tomb(rtype, key, ts):
    return rec(rtype, key, None, ts)


def snapshots(batches):
    return [(at, d) for at, d in replay(batches, NAMES)]


def test_classic_generations_states_and_deletion():
    """One GroupMetadata record per generation, written when the leader's SyncGroup
    completes it: Stable with members, whatever their assignments (b got zero bytes: a
    probe's empty subscription, a member beyond the partitions), Empty without; as the
    broker replays it (GroupMetadataManager: members.isEmpty() ? EMPTY : STABLE)."""
    out = snapshots([[classic(0, [], 1000)],
                     [classic(1, [("a", [0, 1])], 2000)],
                     [classic(2, [("a", [0, 1]), ("b", None)], 3000)],   # b: zero-byte assignment
                     [classic(3, [("a", [0]), ("b", [1])], 3500)],
                     [classic(4, [], 4000)],
                     [tomb(2, {"group": "g"}, 5000)]])
    assert [(at, d.state, d.generation) for at, d in out] == [
        (1.0, "Empty", 0), (2.0, "Stable", 1), (3.0, "Stable", 2),
        (3.5, "Stable", 3), (4.0, "Empty", 4), (5.0, "Dead", None)]
    given_nothing = out[2][1].members[1]
    assert (given_nothing.member_id, given_nothing.assignment) == ("b", [])
    stable = out[3][1]
    assert {m.member_id: [tp.to_dict() for tp in m.assignment] for m in stable.members} == {
        "a": [{"topic": "orders", "partitions": [0]}], "b": [{"topic": "orders", "partitions": [1]}]}
    assert stable.extra["leader"] == "a" and stable.protocol == "range"


def test_history_of_a_group_with_a_member_given_nothing_tells_every_generation():
    """Issue 30: a probe (or a member beyond the partitions) holds a zero-byte assignment in
    every generation it is in; each generation is still told once, the group never held in
    CompletingRebalance (it was told "rebalance 1 -> 4" and CompletingRebalance throughout)."""
    batches = [[classic(0, [], 1000)], [classic(1, [("a", [0, 1])], 2000)],
               [classic(2, [("a", [0, 1]), ("probe", None)], 3000)],
               [classic(3, [("a", [0]), ("b", [1]), ("probe", None)], 4000)],
               [classic(4, [("a", [0, 1])], 5000)]]
    story, events = RebalanceStory("g"), []
    for i, (at, desc) in enumerate(replay(batches, NAMES)):
        if i == 0:
            story.feed(Seen(desc.group, at, "records", created_from_nothing(desc)))
        events += [amend_from_records(e.to_dict(), desc)
                   for e in story.feed(Seen(desc.group, at, "records", desc))]
    assert [e["generation"] for e in events if e["event"] == "generation"] == [1, 2, 3, 4]
    assert [(e["from_generation"], e["to_generation"]) for e in events
            if e["event"] == "rebalance"] == [(0, 1), (1, 2), (2, 3), (3, 4)]
    assert [e["state"] for e in events if e["event"] == "state"] == ["Stable"]


def test_consumer_group_state_follows_the_broker():
    out = snapshots([
        [member("m1", 1000), epoch(1, 1000), target("m1", [0, 1], 1000), target_meta(1, 1000),
         current("m1", 1, 0, 0, [0, 1], 1000)],
        [member("m2", 2000), epoch(2, 2000)],                                   # Assigning
        [target("m1", [0], 2001), target("m2", [1], 2001), target_meta(2, 2001),
         current("m2", 2, 0, 2, [], 2001)],                                     # Reconciling
        [current("m1", 2, 1, 0, [0], 2500)],
        [current("m2", 2, 2, 0, [1], 2600)],                                    # Stable
    ])
    assert [(d.state, d.group_epoch, d.assignment_epoch) for _, d in out] == [
        ("Stable", 1, 1), ("Assigning", 2, 1), ("Reconciling", 2, 2), ("Reconciling", 2, 2),
        ("Stable", 2, 2)]
    m2 = out[2][1].members[1]
    assert (m2.member_id, m2.member_epoch, m2.extra["member_state"]) == ("m2", 2, "UNRELEASED_PARTITIONS")
    assert [tp.to_dict() for tp in m2.target_assignment] == [{"topic": "orders", "partitions": [1]}]
    assert out[-1][1].members[0].assignment[0].topic == "orders"   # topic ids named


def test_story_from_records_tells_epochs_joins_and_the_exact_round():
    batches = [
        [member("m1", 1000), epoch(1, 1000), target("m1", [0, 1], 1000), target_meta(1, 1000),
         current("m1", 1, 0, 0, [0, 1], 1000)],
        [member("m2", 2000), epoch(2, 2000), target("m1", [0], 2000), target("m2", [1], 2000),
         target_meta(2, 2000), current("m2", 2, 0, 2, [], 2000)],
        [current("m1", 2, 1, 0, [0], 2400)],
        [current("m2", 2, 2, 0, [1], 2750)],
    ]
    story = RebalanceStory("g")
    events = []
    for i, (at, desc) in enumerate(replay(batches, NAMES)):
        if i == 0:
            story.feed(Seen(desc.group, at, "records", created_from_nothing(desc)))
        events += [e.to_dict() for e in story.feed(Seen(desc.group, at, "records", desc))]
    kinds = [e["event"] for e in events]
    assert kinds.count("member_joined") == 2 and "epoch" in kinds
    last = [e for e in events if e["event"] == "rebalance"][-1]
    # target computed at 2.0 s, the last member at its target at 2.75 s
    assert (last["from_generation"], last["to_generation"], last["duration_ms"]) == (1, 2, 750)
    assert last["moved_partitions"] == 1


def test_conversion_to_a_consumer_group_in_one_batch_changes_type():
    out = snapshots([[classic(1, [("a", [0])], 1000)],
                     [tomb(2, {"group": "g"}, 2000), member("a", 2000, classic_meta={
                         "session_timeout_ms": 10000, "supported_protocols": []}), epoch(2, 2000),
                      target("a", [0], 2000), target_meta(2, 2000), current("a", 2, 1, 0, [0], 2000)]])
    assert [(d.type, d.state) for _, d in out] == [("classic", "Stable"), ("consumer", "Stable")]
    assert out[1][1].members[0].member_protocol == "classic"
    story, events = RebalanceStory("g"), []
    for at, d in out:
        events += [e.to_dict()["event"] for e in story.feed(Seen(d.group, at, "records", d))]
    assert "type_changed" in events


def test_other_groups_and_unknown_records_do_not_disturb():
    out = snapshots([[epoch(1, 1000, group="other"), rec(24, {"group_id": "g"}, None, 1000)],
                     [classic(1, [("a", [0])], 2000)]])
    assert [(d.group, d.type) for _, d in out] == [("other", "consumer"), ("g", "classic")]


def test_classic_rebalance_gets_no_invented_duration():
    class D:
        type, extra = "classic", {"leader": "a"}

    e = amend_from_records({"event": "rebalance", "started": "x", "duration_ms": 0}, D)
    assert (e["started"], e["duration_ms"]) == (None, None)
    assert amend_from_records({"event": "generation", "leader": None}, D)["leader"] == "a"


def test_gap_tracker():
    g = GapTracker()
    g.batch(0, 4, 5, 1.0)
    g.batch(5, 5, 1, 2.0)
    assert (g.complete_from, g.complete_from_ts) == (0, 1.0)
    g.batch(9, 12, 4, 3.0)          # offsets 6-8 compacted away
    g.batch(13, 20, 3, 4.0)         # a cleaned batch: 3 records span 8 offsets
    g.batch(21, 22, 2, 5.0)
    assert (g.complete_from, g.complete_from_ts) == (21, 5.0)


def test_partition_like_the_broker_including_integer_min_value():
    assert java_string_hash("polygenelubricants") == -(1 << 31)   # Java trivia
    assert coordinator_partition("polygenelubricants", 50) == 0
    # values from the lab broker (FindCoordinator / its log's partition=N)
    assert coordinator_partition("dev-classic", 5) == 1
    assert coordinator_partition("dev-consumer", 5) == 3


def leave(mid, e, ts, group="g"):
    key = {"group_id": group, "member_id": mid}
    return [tomb(8, key, ts), tomb(7, key, ts), tomb(5, key, ts), epoch(e, ts, group)]


def test_writes_sharing_a_batch_are_each_a_snapshot():
    """The coordinator lingers before it appends: writes 2 ms apart (two members joining,
    two leaving, as the lab broker wrote them) share a batch; every epoch is told."""
    out = snapshots([
        [member("m1", 1000), epoch(1, 1000), target("m1", [0, 1], 1000), target_meta(1, 1000),
         current("m1", 1, 0, 0, [0, 1], 1000)],
        [member("m2", 1020), epoch(2, 1020), current("m2", 1, 0, 0, [], 1020),
         member("m3", 1022), epoch(3, 1022), current("m3", 1, 0, 0, [], 1022)],
        [*leave("m2", 4, 3000), *leave("m3", 5, 3002)],
    ])
    assert [(at, d.group_epoch, sorted(m.member_id for m in d.members)) for at, d in out] == [
        (1.0, 1, ["m1"]), (1.02, 2, ["m1", "m2"]), (1.022, 3, ["m1", "m2", "m3"]),
        (3.0, 4, ["m1", "m3"]), (3.002, 5, ["m1"])]


def test_writes_within_one_millisecond_are_cut_where_a_write_begins():
    out = snapshots([[*leave("m2", 4, 3000), *leave("m3", 5, 3000),
                      member("m4", 3000), epoch(6, 3000), current("m4", 5, 0, 0, [], 3000)]])
    assert [d.group_epoch for _, d in out] == [4, 5, 6]


def test_one_write_with_its_target_and_assignments_is_one_snapshot():
    out = snapshots([[member("m1", 1000), epoch(1, 1000), target("m1", [0], 1000),
                      target_meta(1, 1000), current("m1", 1, 0, 0, [0], 1000),
                      classic(1, [("a", [0])], 1000, group="other"),
                      classic(2, [("a", [0]), ("b", [1])], 1000, group="other")]])
    assert [(d.group, d.group_epoch or d.generation, d.state) for _, d in out] == [
        ("other", 1, "Stable"), ("g", 1, "Stable"), ("other", 2, "Stable")]


def test_streams_member_states_are_numbered_from_one():
    """Kafka's streams MemberState is STABLE=1, UNREVOKED_TASKS=2, UNRELEASED_TASKS=3 (the
    consumer one counts from 0): a streams member at its target with state 1 is Stable."""
    def tasks(parts):
        return {"active_tasks": [{"subtopology_id": "0", "partitions": parts}],
                "standby_tasks": [], "warmup_tasks": []}

    key = {"group_id": "s", "member_id": "m1"}
    meta = {"instance_id": None, "rack_id": None, "client_id": "c", "client_host": "/h",
            "rebalance_timeout_ms": 1000, "topology_epoch": 0, "process_id": "p",
            "user_endpoint": None, "client_tags": []}

    def cur(e, state, parts, ts):
        return rec(22, key, {"member_epoch": e, "previous_member_epoch": e - 1, "state": state,
                             **tasks(parts), "active_tasks_pending_revocation": [],
                             "standby_tasks_pending_revocation": [],
                             "warmup_tasks_pending_revocation": []}, ts)

    out = snapshots([
        [rec(19, key, meta, 1000), rec(17, {"group_id": "s"}, {"epoch": 2}, 1000),
         cur(1, 1, [], 1000)],
        [rec(21, key, tasks([0, 1]), 2000),
         rec(20, {"group_id": "s"}, {"assignment_epoch": 2, "assignment_timestamp": 2000}, 2000)],
        [cur(2, 2, [0], 2500)],
        [cur(2, 1, [0, 1], 3000)]])
    assert [(d.state, d.members[0].extra["member_state"]) for _, d in out] == [
        ("Assigning", "STABLE"), ("Reconciling", "STABLE"), ("Reconciling", "UNREVOKED_TASKS"),
        ("Stable", "STABLE")]


def test_a_member_epoch_with_the_same_assignment_is_told():
    """m1 keeps its partitions when m2 joins; its member epoch moves 1 -> 2 all the same:
    history tells it as an `assignment` at the new member epoch, nothing added or revoked
    (the story tells changed assignments only)."""
    from groupctl.observe.sources.history import member_transitions

    batches = [
        [member("m1", 1000), epoch(1, 1000), target("m1", [0], 1000), target_meta(1, 1000),
         current("m1", 1, 0, 0, [0], 1000)],
        [member("m2", 2000), epoch(2, 2000), target("m1", [0], 2000), target("m2", [1], 2000),
         target_meta(2, 2000), current("m2", 2, 0, 0, [1], 2000)],
        [current("m1", 2, 1, 0, [0], 2400)],
    ]
    story, last, told = RebalanceStory("g"), {}, []
    for i, (at, desc) in enumerate(replay(batches, NAMES)):
        if i == 0:
            story.feed(Seen(desc.group, at, "records", created_from_nothing(desc)))
        events = [amend_from_records(e.to_dict() | {"ts": at}, desc)
                  for e in story.feed(Seen(desc.group, at, "records", desc))]
        told += events + member_transitions(desc, events, last, None, at)
    m1 = [(e["member_epoch"], e["member_state"], e["added"]) for e in told
          if e["event"] == "assignment" and e["member_id"] == "m1"]
    assert m1 == [(1, "STABLE", [{"topic": "orders", "partitions": [0]}]), (2, "STABLE", [])]


def _rebalances(batches) -> list[dict]:
    story, events = RebalanceStory("g"), []
    for i, (at, desc) in enumerate(replay(batches, NAMES)):
        if i == 0:
            story.feed(Seen(desc.group, at, "records", created_from_nothing(desc)))
        events += [unowned_unknown(amend_from_records(e.to_dict(), desc), desc)
                   for e in story.feed(Seen(desc.group, at, "records", desc))]
    return [e for e in events if e["event"] == "rebalance"]


def test_eager_unowned_from_records_is_the_sync_phase_not_the_gap_between_generations():
    """Issue 30: the records hold no start of a classic round. Generation 2 came 58 s after
    generation 1; its join phase ended at 59.995 s (the broker's Stabilized line) and its
    assignments were written at 60.0 s. Both partitions were held before and given out
    again (eager: revoked before the rejoin): each unowned at least those 5 ms, never the
    58 s between the two generations. The first generation took nothing from anyone."""
    r1, r2 = _rebalances([[classic(0, [], 1000)],
                          [classic(1, [("a", [0, 1])], 2000, joined=1990)],
                          [classic(2, [("a", [0]), ("b", [1])], 60000, joined=59995)]])
    assert (r1["unowned_partition_ms"], r1["unowned_basis"]) == (0, "measured")
    assert "unowned_unknown" not in r1 and "unowned_unknown" not in r2
    assert (r2["unowned_partition_ms"], r2["unowned_partitions_max_ms"], r2["unowned_basis"]) \
        == (10, 5, "lower_bound")
    assert [(x["partition"], x["ms"]) for x in r2["unowned_longest"]] == [(0, 5), (1, 5)]


def test_eager_unowned_without_a_sync_phase_of_the_round_is_null():
    """A generation whose record gives no join end inside the round (older than the
    generation before, or none): no honest bound, so null, never the gap nor 0."""
    r = _rebalances([[classic(1, [("a", [0, 1])], 2000, joined=1990)],
                     [classic(2, [("a", [0]), ("b", [1])], 60000, joined=1500)]])[-1]
    assert (r["unowned_partition_ms"], r["unowned_partitions_max_ms"], r["unowned_basis"]) == (
        None, None, None)
    assert "no sync phase of this round" in r["unowned_unknown"]   # and the output says why
    from groupctl.render.watch_lines import plain_line

    line = plain_line({**r, "ts": "T", "group": "g", "source": "records"}, set())
    assert "; partitions unowned: unknown (the records hold no sync phase" in line, line


def test_a_consumer_groups_assignor_is_the_one_most_members_name_else_the_brokers_default():
    """As the broker picks it (computePreferredServerAssignor, else the first of
    group.consumer.assignors, which no record holds: asked of the broker once)."""
    from groupctl.observe.reads.replay import GroupRecords, apply, describe

    g = GroupRecords()
    for r in [member("m1", 1000), epoch(1, 1000)]:
        apply(g, r)
    assert describe("g", g, NAMES).protocol is None                       # not known
    assert describe("g", g, NAMES, {"consumer": "uniform"}).protocol == "uniform"
    for r in [member("m2", 2000, assignor="range"), member("m3", 2000, assignor="range"),
              member("m4", 2000, assignor="uniform")]:
        apply(g, r)
    assert describe("g", g, NAMES, {"consumer": "uniform"}).protocol == "range"


def test_cooperative_unowned_from_records_counts_a_leavers_partitions_over_the_sync_phase():
    """Issue 30: b left a cooperative group; its partition 1 went straight to a in
    generation 3 (no generation shows it unowned: the records watch said 0 ms where the
    clients' revoke -> assign took 481 ms). b gave it up before the join phase ended at
    9.990 s and a got it from the write at 10.0 s: unowned at least those 10 ms. Partition
    0 stayed with a: nothing lost."""
    coop = lambda *a, **k: _protocol(classic(*a, **k), "cooperative-sticky")  # noqa: E731
    r = _rebalances([[coop(1, [("a", [0, 1])], 1000, joined=990)],
                     [coop(2, [("a", [0]), ("b", [1])], 2000, joined=1990)],
                     [coop(3, [("a", [0, 1])], 10000, joined=9990)]])
    assert (r[-1]["unowned_partition_ms"], r[-1]["unowned_partitions_max_ms"],
            r[-1]["unowned_basis"]) == (10, 10, "lower_bound")
    assert [(x["partition"], x["ms"]) for x in r[-1]["unowned_longest"]] == [(1, 10)]
    # b's join took partition 1 from a over two generations: what the gaps show, no bound
    assert r[-2]["unowned_basis"] != "lower_bound"


def test_cooperative_leavers_partitions_without_a_sync_phase_are_null():
    """The same handover, its record giving no join end after the generation before: null."""
    coop = lambda *a, **k: _protocol(classic(*a, **k), "cooperative-sticky")  # noqa: E731
    r = _rebalances([[coop(2, [("a", [0]), ("b", [1])], 2000, joined=1990)],
                     [coop(3, [("a", [0, 1])], 10000, joined=1500)]])[-1]
    assert (r["unowned_partition_ms"], r["unowned_partitions_max_ms"], r["unowned_basis"]) == (
        None, None, None)


def _protocol(record, name):
    record.value["protocol"] = name if record.value["protocol"] else None
    return record


def test_an_epoch_reached_after_the_next_bump_is_told_at_its_own_epoch():
    """Issue 30 (force-rebalance of a consumer group): a member joined (epoch 4, its target
    computed at once) and left 5 ms later (epoch 5, whose target the broker computed only
    0.8 s later). The members reached epoch 4's target at 5.310 while the group epoch was
    already 5: epoch 4's round was over there, and the records told "3 -> 5" as one. Epoch
    5's round began at its bump's record (5.005), not at epoch 4's start (1310 ms before)."""
    batches = [
        [member("a", 1000), member("b", 1000), epoch(3, 1000), target("a", [0], 1000),
         target("b", [1], 1000), target_meta(3, 1000), current("a", 3, 2, 0, [0], 1000),
         current("b", 3, 2, 0, [1], 1000)],
        [member("p", 5000), epoch(4, 5000), target("a", [0], 5000), target("b", [1], 5000),
         target("p", [], 5000), target_meta(4, 5000)],
        [tomb(5, {"group_id": "g", "member_id": "p"}, 5005), epoch(5, 5005)],
        [current("a", 4, 3, 0, [0], 5300)], [current("b", 4, 3, 0, [1], 5310)],
        [target_meta(5, 5800)],
        [current("a", 5, 4, 0, [0], 6300)], [current("b", 5, 4, 0, [1], 6310)],
    ]
    told = [(r["from_generation"], r["to_generation"], r["ended"][17:], r["duration_ms"])
            for r in _rebalances(batches)]
    assert told[1:] == [(3, 4, "05.310Z", 310), (4, 5, "06.310Z", 1305)]


def test_a_streams_tasks_unowned_time_from_the_records_is_its_handover():
    """Issue 30 (the truth matrix, streams): a task's input partitions are its member's
    assignment, as StreamsGroupDescribe gives them; the replay gave none, so a task revoked
    at 3.0 s and given to the joiner at 4.0 s was told "unowned 0 ms (measured)" where the
    records hold 1000 ms (and describe told it). From 2.5 s the task was pending
    revocation: its member still ran it (the records know; describe does not)."""
    def tasks(parts):
        return {"active_tasks": [{"subtopology_id": "0", "partitions": parts}] if parts else [],
                "standby_tasks": [], "warmup_tasks": []}

    def meta(mid, ts):
        return rec(19, {"group_id": "g", "member_id": mid}, {
            "instance_id": None, "rack_id": None, "client_id": f"c-{mid}", "client_host": "/h",
            "rebalance_timeout_ms": 1000, "topology_epoch": 0, "process_id": mid,
            "user_endpoint": None, "client_tags": []}, ts)

    def cur(mid, e, state, parts, ts, pending=()):
        return rec(22, {"group_id": "g", "member_id": mid}, {
            "member_epoch": e, "previous_member_epoch": e - 1, "state": state, **tasks(parts),
            "active_tasks_pending_revocation": tasks(list(pending))["active_tasks"],
            "standby_tasks_pending_revocation": [], "warmup_tasks_pending_revocation": []}, ts)

    def targets(e, ts, **parts):
        return [*(rec(21, {"group_id": "g", "member_id": m}, tasks(p), ts) for m, p in parts.items()),
                rec(20, {"group_id": "g"}, {"assignment_epoch": e, "assignment_timestamp": ts}, ts)]

    topology = rec(23, {"group_id": "g"}, {"epoch": 0, "subtopologies": [{
        "subtopology_id": "0", "source_topics": ["orders"], "source_topic_regex": [],
        "state_changelog_topics": [], "repartition_sink_topics": [],
        "repartition_source_topics": [], "copartition_groups": []}]}, 1000)
    batches = [
        [meta("m1", 1000), topology, rec(17, {"group_id": "g"}, {"epoch": 1}, 1000),
         *targets(1, 1000, m1=[0, 1]), cur("m1", 1, 1, [0, 1], 1000)],
        [meta("m2", 2000), rec(17, {"group_id": "g"}, {"epoch": 2}, 2000),
         *targets(2, 2000, m1=[0], m2=[1]), cur("m2", 2, 3, [], 2000)],
        [cur("m1", 1, 2, [0], 2500, pending=[1])],
        [cur("m1", 2, 1, [0], 3000)],
        [cur("m2", 2, 1, [1], 4000)]]
    first, second = _rebalances(batches)
    desc = list(replay(batches, NAMES))[-1][1]
    assert [[tp.to_dict() for tp in m.assignment] for m in desc.members] == [
        [{"topic": "orders", "partitions": [0]}], [{"topic": "orders", "partitions": [1]}]]
    assert (second["unowned_partition_ms"], second["unowned_partitions_max_ms"],
            second["unowned_basis"]) == (1000, 1000, "measured")
