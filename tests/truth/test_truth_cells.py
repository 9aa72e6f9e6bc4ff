"""The matrix's judge on made-up stories (no broker): a cell says disagree for each kind of
lie the matrix exists to find, and agree or cannot know where it should."""
from __future__ import annotations

from truth_cells import client_handovers, handover_revokes, metrics_cell, rounds_cell
from truth_ground import LogTruth, RecordRound, Round, broker_truth

T0 = 1_800_000_000_000   # ms


def iso(ms: int) -> str:
    from groupctl.events import iso_ts
    return iso_ts(ms / 1000)


def rebalance(to: int | None, end: int, duration: int | None = None, members: int = 1, **more):
    return {"event": "rebalance", "ts": iso(end), "to_generation": to, "ended": iso(end),
            "duration_ms": duration, "members_after": [f"m{i}" for i in range(members)], **more}


def classic(*spans: tuple[int, int, int]) -> LogTruth:
    """(start, end, members) per generation, from 1, ms after T0."""
    return LogTruth(rounds=[Round(i + 1, T0 + e, T0 + s, m) for i, (s, e, m) in enumerate(spans)])


TRUTH = classic((0, 50, 1), (2000, 2400, 2), (5000, 5100, 0))


def test_a_story_told_once_with_its_durations_agrees():
    told = [rebalance(1, T0 + 60, 40), rebalance(2, T0 + 2410, 380, 2), rebalance(3, T0 + 5110, 90, 0)]
    assert rounds_cell(told, TRUTH, interval_s=None, reads_generation=True).verdict == "agree"


def test_a_missed_a_twice_told_and_a_phantom_round_disagree():
    missed = rounds_cell([rebalance(1, T0 + 60), rebalance(3, T0 + 5110, members=0)], TRUTH,
                         interval_s=None, reads_generation=True)
    assert missed.problems == ["missed gen 2"]
    twice = rounds_cell([rebalance(1, T0 + 60), rebalance(2, T0 + 2410), rebalance(2, T0 + 2500),
                         rebalance(3, T0 + 5110)], TRUTH, interval_s=None, reads_generation=True)
    assert twice.problems == ["gen 2 told 2x"]
    phantom = rounds_cell([rebalance(None, T0 - 500)], TRUTH, interval_s=1, reads_generation=False)
    assert phantom.verdict == "disagree" and "phantom" in phantom.problems[0]


def test_describe_matches_rounds_on_time_and_knows_what_it_cannot_see():
    # an eager group's describe gives no generation: matched on the time it told each round
    told = [rebalance(None, T0 + 900, 0), rebalance(None, T0 + 2900, 400, 2),
            rebalance(None, T0 + 5900, None, 0)]
    assert rounds_cell(told, TRUTH, interval_s=1, reads_generation=False).verdict == "agree"
    # generation 2 lived 100 ms: a look every second cannot see it
    short = classic((0, 50, 1), (2000, 2400, 2), (2500, 2600, 1))
    cell = rounds_cell([rebalance(None, T0 + 900), rebalance(None, T0 + 3000, members=1)], short,
                       interval_s=1, reads_generation=False)
    assert cell.verdict == "cannot know" and "gen 2 lived 100 ms" in cell.text


def test_unknown_told_as_0_and_summed_as_0_disagree():
    zero = rounds_cell([rebalance(1, T0 + 60), rebalance(2, T0 + 2410, 0, 2), rebalance(3, T0 + 5110)],
                       TRUTH, interval_s=None, reads_generation=True)
    assert zero.problems == ["gen 2 in 0 ms (broker 400 ms)"]
    told = [rebalance(1, T0 + 60), rebalance(2, T0 + 2410, members=2), rebalance(3, T0 + 5110)]
    summed = rounds_cell(told, TRUTH, interval_s=None, reads_generation=True,
                         summary={"rebalances": 3, "rebalancing_ms_total": 0})
    assert summed.problems == ["summary 0 ms rebalancing with 3 unknown durations (None said untimed)"]


def test_a_summary_total_over_the_known_durations_with_the_rest_untimed_agrees():
    """The watch's summary: the known durations' sum, the unknown ones counted apart."""
    told = [rebalance(1, T0 + 60, 50), rebalance(2, T0 + 2410, members=2),
            rebalance(3, T0 + 5110, 100)]
    apart = {"rebalances": 3, "rebalancing_ms_total": 150, "rebalances_untimed": 1}
    assert rounds_cell(told, TRUTH, interval_s=None, reads_generation=True,
                       summary=apart).verdict == "agree"
    hidden = rounds_cell(told, TRUTH, interval_s=None, reads_generation=True,
                         summary={**apart, "rebalances_untimed": 0})
    assert hidden.problems == ["summary 150 ms rebalancing with 1 unknown durations (0 said untimed)"]
    wrong = rounds_cell(told, TRUTH, interval_s=None, reads_generation=True,
                        summary={**apart, "rebalancing_ms_total": 400})
    assert wrong.problems == ["summary 400 ms rebalancing, the known durations 150 ms"]


def test_unowned_longer_than_its_round_or_below_the_clients_disagrees():
    gap = [rebalance(1, T0 + 60), rebalance(3, T0 + 5110),
           rebalance(2, T0 + 2410, unowned_partitions_max_ms=2360, unowned_basis="upper_bound")]
    cell = rounds_cell(gap, TRUTH, interval_s=None, reads_generation=True)
    assert cell.problems == ["gen 2 unowned 2360 ms > round bound 900 ms"]
    low = [rebalance(1, T0 + 60), rebalance(3, T0 + 5110),
           rebalance(2, T0 + 2410, unowned_partitions_max_ms=200, unowned_basis="upper_bound")]
    cell = rounds_cell(low, TRUTH, interval_s=None, reads_generation=True, handovers={2: 350})
    assert cell.problems == ["gen 2 unowned bound 200 ms < clients' 350 ms"]


def test_a_revoke_before_the_last_look_before_the_round_is_unknowable_to_describe():
    """A member that revoked (librdkafka's eager subscribe()) 300 ms before the last look
    that showed it holding (2410 - 1000 ms = T0 + 1410): describe's bound of 1000 ms misses
    those 300 ms of the clients' 1250; without the early revoke it would disagree."""
    told = [rebalance(1, T0 + 60), rebalance(3, T0 + 5110),
            rebalance(2, T0 + 2410, unowned_partitions_max_ms=1000, unowned_basis="upper_bound",
                      duration_max_ms=1000)]
    cell = rounds_cell(told, TRUTH, interval_s=None, reads_generation=True, handovers={2: 1250},
                       revoked={2: T0 + 1110})
    assert cell.verdict == "cannot know" and "revoked 300 ms before the last look" in cell.text
    cell = rounds_cell(told, TRUTH, interval_s=None, reads_generation=True, handovers={2: 1250},
                       revoked={2: T0 + 1400})
    assert cell.problems == ["gen 2 unowned bound 1000 ms < clients' 1250 ms"]


def test_a_leavers_revoke_before_the_last_look_is_unknowable_to_a_measured_figure():
    """A cooperative member leaving revokes, commits, then sends LeaveGroup: the last look
    before the round (2410 - 400 ms) still showed it holding what it had revoked 700 ms
    before. Describe's measured 0 ms (the partition moved between two looks) misses the
    clients' 1000 ms by that; a revoke after that look would be a disagreement."""
    told = [rebalance(1, T0 + 60), rebalance(3, T0 + 5110),
            rebalance(2, T0 + 2410, unowned_partitions_max_ms=0, unowned_basis="measured",
                      duration_max_ms=400)]
    cell = rounds_cell(told, TRUTH, interval_s=0.5, reads_generation=True, handovers={2: 1000},
                       revoked={2: T0 + 1310})
    assert cell.verdict == "cannot know" and "revoked 700 ms before the last look" in cell.text
    cell = rounds_cell(told, TRUTH, interval_s=0.5, reads_generation=True, handovers={2: 1000},
                       revoked={2: T0 + 1990})
    assert cell.problems == ["gen 2 unowned 0 ms, clients' 1000 ms"], cell.text


def test_client_handovers_go_to_the_round_whose_window_holds_the_assign():
    gaps = [((T0 + 2100) / 1000, (T0 + 2420) / 1000, ("t", 0)),   # revoked in gen 2's round
            ((T0 + 100) / 1000, (T0 + 9000) / 1000, ("t", 1))]    # assigned in no round
    assert client_handovers(gaps, TRUTH, []) == {2: 320}
    assert handover_revokes(gaps, TRUTH, []) == {2: T0 + 2100}


def test_metrics_count_the_rounds_their_watch_could_see():
    told = [rebalance(1, T0 + 900, 0), rebalance(2, T0 + 2900, 400, 2, unowned_partition_ms=800),
            rebalance(3, T0 + 5900, None, 0)]
    seen = rounds_cell(told, TRUTH, interval_s=1, reads_generation=False)
    good = {"groupctl_group_rebalances_total": 3.0,
            "groupctl_group_rebalance_duration_seconds_count": 2.0,
            "groupctl_group_unowned_partition_seconds_total": 0.8}
    assert metrics_cell(good, told, 3, seen).verdict == "agree"
    bad = {**good, "groupctl_group_rebalances_total": 2.0,
           "groupctl_group_rebalance_duration_seconds_count": 3.0}
    assert metrics_cell(bad, told, 3, seen).problems == [
        "rebalances_total 2, broker 3 seeable", "duration histogram counts 3, 2 known"]


def test_the_broker_log_gives_each_generation_once_a_reload_begins_a_round_again():
    lines = [(T0, "Preparing to rebalance group g in state PreparingRebalance with old generation 0 "
                  "(reason: Adding new member m1; client reason: not provided)."),
             (T0 + 20, "Stabilized group g generation 1 with 1 members."),
             (T0 + 1000, "Preparing to rebalance group g in state PreparingRebalance with old "
                         "generation 1 (reason: join)."),
             (T0 + 1100, "Stabilized group g generation 2 with 2 members."),   # not written
             (T0 + 9000, "Loaded classic group g with 2 members."),
             (T0 + 9100, "Preparing to rebalance group g in state PreparingRebalance with old "
                         "generation 1 (reason: join)."),
             (T0 + 9300, "Stabilized group g generation 2 with 2 members."),
             (T0 + 9500, "Stabilized group gg generation 7 with 1 members."),
             (T0 + 9900, "Group g with generation 3 is now empty.")]
    truth = broker_truth(lines, "g")
    assert [(r.key, r.duration_ms, r.members) for r in truth.rounds] == [(1, 20, 1), (2, 200, 2),
                                                                       (3, None, 0)]


def test_a_consumer_epoch_superseded_before_its_target_is_one_no_witness_can_tell():
    lines = [(T0, "[GroupId g] Bumped group epoch to 2 with metadata hash 5."),
             (T0 + 1, "[GroupId g] Computed a new target assignment for epoch 2 with 'uniform' "
                      "assignor in 0ms."),
             (T0 + 900, "[GroupId g] Bumped group epoch to 3 with metadata hash 5."),
             (T0 + 950, "[GroupId g] Bumped group epoch to 4 with metadata hash 0.")]
    truth = broker_truth(lines, "g")
    assert [(r.key, r.superseded, r.members) for r in truth.rounds] == [(2, False, None),
                                                                       (3, True, None), (4, False, 0)]
    records = [RecordRound(2, T0 + 5, T0 + 2)]
    cell = rounds_cell([rebalance(2, T0 + 5, 3), rebalance(4, T0 + 960, 0, 0)], truth,
                       interval_s=None, reads_generation=True, records=records)
    assert cell.verdict == "cannot know" and "epoch 3 superseded" in cell.text


def test_a_consumer_epoch_lives_from_its_members_at_target_not_from_its_bump():
    """Epoch 4 bumped at +1000, its members at its target only at +1900 (the records), the
    next bump at +2400: settled 500 ms, less than a look every second (1400 ms counted
    from the bump would call it seeable)."""
    from truth_ground import RecordRound

    truth = LogTruth(rounds=[Round(3, T0, T0, None, kind="consumer"),
                             Round(4, T0 + 1000, T0 + 1000, None, kind="consumer"),
                             Round(5, T0 + 2400, T0 + 2400, 0, kind="consumer")])
    records = [RecordRound(3, T0 + 100, T0, 2), RecordRound(4, T0 + 1900, T0 + 1000, 2),
               RecordRound(5, T0 + 2400, T0 + 2400, 0)]
    told = [rebalance(3, T0 + 900), rebalance(5, T0 + 2900, members=0)]
    cell = rounds_cell(told, truth, interval_s=1, reads_generation=True, records=records)
    assert cell.verdict == "cannot know", cell.text
    assert "epoch 4 lived 500 ms settled < 1000 ms" in cell.text
    # reached only after epoch 5's bump (+2400): never the group's Stable epoch
    late = [RecordRound(3, T0 + 100, T0, 2), RecordRound(4, T0 + 2500, T0 + 1000, 2),
            RecordRound(5, T0 + 2900, T0 + 2400, 0)]
    cell = rounds_cell(told, truth, interval_s=1, reads_generation=True, records=late)
    assert "epoch 4 reached its target 100 ms after the next bump (never Stable)" in cell.text


def test_a_handover_belongs_to_the_round_that_gave_the_partition_out():
    """Cooperative: gen 2 (Stabilized +2400) revoked t-0 at +2410, gen 3 (begun +2420,
    Stabilized +2800) gave it out at +2850: inside gen 2's window + SYNC_MS too, but the
    handover is gen 3's (the records tell it there), not gen 2's as well."""
    coop = classic((0, 50, 1), (2000, 2400, 2), (2420, 2800, 2))
    gaps = [((T0 + 2410) / 1000, (T0 + 2850) / 1000, ("t", 0))]
    assert client_handovers(gaps, coop, []) == {3: 440}


def test_an_epoch_no_member_reached_before_the_next_is_one_no_witness_can_tell():
    """A streams group: epoch 3's target computed (+100), its only member's next heartbeat
    came after epoch 4's bump (+1000): no member was ever at epoch 3. A witness that tells
    1 -> 4 misses nothing it could see; one that skips a reached epoch still disagrees."""
    truth = LogTruth(rounds=[Round(3, T0, T0, 1, kind="consumer"),
                             Round(4, T0 + 1000, T0 + 1000, 2, kind="consumer"),
                             Round(5, T0 + 3000, T0 + 3000, 0, kind="consumer")],
                     targets=[3, 4])
    told = [rebalance(4, T0 + 1500, 500, 2), rebalance(5, T0 + 3100, 100, 0)]
    unreached = [RecordRound(3, None, T0, 1), RecordRound(4, T0 + 1500, T0 + 1000, 2),
                 RecordRound(5, T0 + 3000, T0 + 3000, 0)]
    cell = rounds_cell(told, truth, interval_s=None, reads_generation=True, records=unreached)
    assert cell.verdict == "cannot know", cell.text
    assert "epoch 3: no member reached its target before epoch 4" in cell.text
    reached = [RecordRound(3, T0 + 200, T0, 1), *unreached[1:]]
    cell = rounds_cell(told, truth, interval_s=None, reads_generation=True, records=reached)
    assert cell.problems == ["missed epoch 3"]


def test_share_and_streams_epochs_bumped_without_a_line_come_from_the_records():
    """Share and streams groups log `Bumped ... group epoch` on a join but bump silently on
    a leave; the records (as DumpLogSegments decodes them) hold every epoch."""
    from truth_ground import typed_truth

    lines = [(T0, "[GroupId s][MemberId m1] Bumped streams group epoch to 2 with metadata hash "
                  "7 and validated topic epoch -1."),
             (T0 + 300, "[GroupId s][MemberId m1] Bumped streams group epoch to 3 with metadata "
                        "hash 8 and validated topic epoch 0."),
             (T0 + 400, "[GroupId s] Computed a new target assignment for epoch 3 with 'sticky' "
                        "assignor in 0ms.")]

    def rec(type_, ts, value, member=None):
        key = {"group_id": "s", **({"member_id": member} if member else {})}
        return {"type": type_, "timestamp": ts, "key": key, "value": value}
    records = [rec(19, T0, {}, "m1"), rec(17, T0, {"epoch": 2}), rec(17, T0 + 300, {"epoch": 3}),
               rec(20, T0 + 400, {"assignment_epoch": 3}),
               rec(22, T0 + 500, {"member_epoch": 3, "state": 1}, "m1"),
               rec(22, T0 + 900, None, "m1"), rec(19, T0 + 900, None, "m1"),
               rec(17, T0 + 900, {"epoch": 4}), rec(20, T0 + 900, {"assignment_epoch": 4})]
    truth = typed_truth(lines, records, "s", "streams")
    assert [(r.key, r.end_ms - T0, r.members, r.superseded) for r in truth.rounds] == [
        (2, 0, 1, True), (3, 300, 1, False), (4, 900, 0, False)]
    assert truth.rounds[2].reason == "bumped without a log line"


def test_the_broker_log_tells_when_share_and_streams_members_are_at_their_target():
    from truth_kinds import group_view

    lines = [(T0, "[GroupId s] Member A joins the share group using the share protocol."),
             (T0, "[GroupId s] Computed a new target assignment for epoch 2 with 'x' assignor in 1ms."),
             (T0, "[GroupId s] Member A new assignment state: epoch=2, previousEpoch=0, "
                  "state=STABLE, assignedPartitions=[]."),
             (T0, "[GroupId t][MemberId B] Member joins the streams group."),
             (T0, "[GroupId t][MemberId B] Member's new assignment state: epoch=4, previousEpoch=0,"
                  " state=UNRELEASED_TASKS, assignedTasks=(active=[], standby=[], warmup=[]) and "
                  "tasksPendingRevocation=(active=[], standby=[], warmup=[])."),
             (T0, "[GroupId s] Member A left the share group.")]
    assert group_view(lines[:3], "s") == ({"A"}, 2, {"A": (2, "STABLE", False)})
    assert group_view(lines, "s") == (set(), None, {"A": (2, "STABLE", False)})
    assert group_view(lines, "t") == ({"B"}, None, {"B": (4, "UNRELEASED_TASKS", False)})
    holding = (T0, "[GroupId s] Member A new assignment state: epoch=3, previousEpoch=2, "
                   "state=STABLE, assignedPartitions=[x-0, x-1].")
    assert group_view([*lines[:3], holding], "s")[2] == {"A": (3, "STABLE", True)}


def test_share_and_streams_handovers_come_from_the_records():
    """No client callback tells a share or streams member's handover: the records do, from
    the write at which no member holds a partition (task) to the next at which one does."""
    from truth_ground import record_gaps

    def cur(member, ts, active):
        return {"type": 22, "timestamp": ts, "key": {"group_id": "s", "member_id": member},
                "value": None if active is None else {
                    "active_tasks": [{"subtopology_id": "0", "partitions": active}],
                    "active_tasks_pending_revocation": []}}
    records = [cur("a", T0, [0, 1]), cur("b", T0 + 10, []), cur("a", T0 + 500, [0]),
               cur("b", T0 + 2500, [1]), cur("b", T0 + 4000, None), cur("a", T0 + 4100, [0, 1])]
    assert [(round((b - a) * 1000), tp) for a, b, tp in record_gaps(records, "s", "streams")] == [
        (2000, ("0", 1)), (100, ("0", 1))]


def test_a_classic_generation_is_stable_for_describe_from_its_leaders_assignment():
    """Kafka's Java consumer as the leader, starting: generation 1 Stabilized at +0, its
    leader's SyncGroup at +540, the next round began at +1146. A look every second saw it
    CompletingRebalance, then PreparingRebalance: never Stable long enough to be seen."""
    lines = [(T0 - 5, "Preparing to rebalance group g in state PreparingRebalance with old "
                      "generation 0 (reason: Adding new member b; client reason: x)."),
             (T0, "Stabilized group g generation 1 with 1 members."),
             (T0 + 540, "Assignment received from leader b for group g for generation 1. The "
                        "group has 1 members, 0 of which are static."),
             (T0 + 1146, "Preparing to rebalance group g in state PreparingRebalance with old "
                         "generation 1 (reason: Adding new member a; client reason: x)."),
             (T0 + 3000, "Stabilized group g generation 2 with 2 members.")]
    truth = broker_truth(lines, "g")
    assert [(r.key, r.synced_ms) for r in truth.rounds] == [(1, T0 + 540), (2, None)]
    cell = rounds_cell([rebalance(2, T0 + 3100, 1900, 2)], truth, interval_s=1,
                       reads_generation=True)
    assert cell.verdict == "cannot know", cell.text
    assert "gen 1 lived 606 ms Stable < 1000 ms" in cell.text


def test_a_classic_generation_its_leader_never_synced_is_never_stable_for_describe():
    """librdkafka members closing at once: generation 5 Stabilized with the leader alone,
    who left before its SyncGroup; the group stayed CompletingRebalance until the last
    member's session expired (generation 6, empty). Describe saw one long round."""
    lines = [(T0, "Stabilized group g generation 4 with 3 members."),
             (T0 + 10, "Assignment received from leader b for group g for generation 4. The "
                       "group has 3 members, 0 of which are static."),
             (T0 + 840, "Preparing to rebalance group g in state PreparingRebalance with old "
                        "generation 4 (reason: explicit `LeaveGroup` request for (a) members.)."),
             (T0 + 1032, "Stabilized group g generation 5 with 1 members."),
             (T0 + 11034, "Group g with generation 6 is now empty.")]
    truth = broker_truth(lines, "g")
    told = [rebalance(None, T0 + 500, 100, 3), rebalance(None, T0 + 11100, 9800, 0)]
    cell = rounds_cell(told, truth, interval_s=0.5, reads_generation=False)
    assert cell.verdict == "cannot know", cell.text
    assert "gen 5 never Stable (no leader's assignment before the next round)" in cell.text


def test_an_epoch_its_members_left_before_reaching_is_not_reached_by_the_group_emptying():
    """more-members, Kafka's Java consumer (KIP-848): b left (epoch 5, its target computed),
    then a and c left before either reached epoch 5. The records' round for epoch 5 has no
    end (its members never at its target), not the write at which the group emptied."""
    from truth_ground import record_rounds

    def r(type_, ts, value, member=None):
        return {"type": type_, "timestamp": ts, "value": value,
                "key": {"group_id": "g", **({"member_id": member} if member else {})}}

    def at(member, epoch, ts):
        return r(8, ts, {"member_epoch": epoch, "state": 0, "partitions_pending_revocation": []},
                 member)
    records = [r(5, T0, {}, "a"), r(5, T0, {}, "c"), r(3, T0, {"epoch": 4}),
               r(6, T0, {"assignment_epoch": 4}), at("a", 4, T0), at("c", 4, T0 + 10),
               r(3, T0 + 1000, {"epoch": 5}), r(6, T0 + 1050, {"assignment_epoch": 5}),
               r(8, T0 + 1200, None, "a"), r(5, T0 + 1200, None, "a"),
               r(3, T0 + 1200, {"epoch": 6}),
               r(8, T0 + 1700, None, "c"), r(5, T0 + 1700, None, "c"),
               r(3, T0 + 1700, {"epoch": 7}), r(6, T0 + 1700, {"assignment_epoch": 7})]
    assert [(x.key, x.end_ms) for x in record_rounds(records, "g")] == [
        (4, T0 + 10), (5, None), (7, T0 + 1700)]


def test_analyze_ends_a_classic_round_at_its_leaders_assignment():
    """analyze's classic episode ends at "Assignment received from leader": with a starting
    Java leader that is 540 ms after Stabilized (join/java: 1359 ms against the broker's
    819 ms from Preparing to Stabilized), within the judge's bound; 2 s after it is not."""
    from truth_analyze import judge

    r = Round(2, T0 + 819, T0, 2, synced_ms=T0 + 1359)
    truth = LogTruth(rounds=[r])
    summary = {"rebalances": 1}
    ok = judge([{"to_generation": "2", "ended": iso(T0 + 1359), "duration_ms": "1359"}], summary,
               truth, has_start=True)
    assert ok.verdict == "agree", ok.text
    late = judge([{"to_generation": "2", "ended": iso(T0 + 3400), "duration_ms": "3400"}], summary,
                 truth, has_start=True)
    assert late.problems == ["gen 2 3400 ms (broker 819 ms)"]


def test_analyze_witnesses_that_contradict_each_others_unowned_bounds_disagree():
    """The records' lower bound above a watch's upper bound of the same round: analyze keeps
    both (unowned_min_ms > unowned_max_ms), and the judge says so."""
    from truth_analyze import judge

    truth = LogTruth(rounds=[Round(2, T0 + 819, T0, 2, synced_ms=T0 + 820)])
    episode = {"to_generation": "2", "ended": iso(T0 + 820), "duration_ms": "820",
               "unowned_min_ms": "120", "unowned_max_ms": "900"}
    assert judge([episode], {"rebalances": 1}, truth, has_start=True).verdict == "agree"
    episode.update(unowned_min_ms="1000")
    assert judge([episode], {"rebalances": 1}, truth, has_start=True).problems == [
        "gen 2 unowned witnesses disagree (>= 1000 ms, <= 900 ms)"]


def test_analyze_duration_interval_holds_the_broker_logs_round_or_disagrees():
    """A round the broker logged at 819 ms (Preparing to Stabilized; the leader's assignment
    at 1359): a watch's interval around it agrees, an interval wholly above or below it
    disagrees, and witnesses that contradict each other (the log's exact 1359 ms against a
    watch's at most 900) are a disagreement, said so."""
    from truth_analyze import judge

    truth = LogTruth(rounds=[Round(2, T0 + 819, T0, 2, synced_ms=T0 + 1359)])

    def verdict(low, high):
        episode = {"to_generation": "2", "ended": iso(T0 + 1359), "duration_ms": "1359",
                   "duration_min_ms": low, "duration_max_ms": high}
        return judge([episode], {"rebalances": 1}, truth, has_start=True)
    assert verdict("600", "1400").verdict == "agree"
    assert verdict("1359", "1359").verdict == "agree"
    assert verdict("1000", "").verdict == "agree"   # at least: no upper end
    assert verdict("2400", "").problems == ["gen 2 >= 2400 ms (broker 819 ms)"]
    assert verdict("", "200").problems == ["gen 2 <= 200 ms (broker 819 ms)"]
    assert verdict("1359", "900").problems == [
        "gen 2 duration witnesses disagree (>= 1359 ms, <= 900 ms)"]


def test_an_upper_bound_over_looks_held_through_a_restart_is_unknowable_not_wrong():
    """broker-restart/eager: a describe held 3.9 s through the restart; the round (400 ms
    by the broker) was told under way at 2100 and over at 6000, its unowned upper bound
    over the looks' window (5900 ms from the look before its start). No look answered in
    between: describe cannot narrow it. A bound past that window still disagrees."""
    held = [rebalance(1, T0 + 60), rebalance(3, T0 + 5110),
            rebalance(2, T0 + 6000, 3000, 2, started=iso(T0 + 2100), duration_max_ms=5900,
                      duration_min_ms=0, duration_basis="interval",
                      unowned_partitions_max_ms=5850, unowned_basis="upper_bound")]
    cell = rounds_cell(held, TRUTH, interval_s=0.5, reads_generation=True)
    assert cell.verdict == "cannot know" and "spans its looks' window 5900 ms" in cell.text
    held[2]["unowned_partitions_max_ms"] = 7000
    cell = rounds_cell(held, TRUTH, interval_s=0.5, reads_generation=True)
    assert cell.problems == ["gen 2 unowned 7000 ms > round bound 1900 ms"]


def test_a_generation_left_at_a_round_a_restart_dropped_lived_until_that_round_began():
    """broker-restart/coop: gen 2 Stabilized at 2400 and the next round's Preparing came 5 ms
    later; the broker restarted, reloaded the group and began that round again at 4000.
    Gen 2 lived 5 ms (not 1600): a describe every 500 ms cannot see it."""
    truth = LogTruth(rounds=[Round(1, T0 + 50, T0, 1), Round(2, T0 + 2400, T0 + 2000, 2),
                             Round(3, T0 + 4300, T0 + 4000, 2, begun_ms=T0 + 2405)])
    cell = rounds_cell([rebalance(None, T0 + 400), rebalance(None, T0 + 4500, 300, 2)], truth,
                       interval_s=0.5, reads_generation=False)
    assert cell.verdict == "cannot know" and "gen 2 lived 5 ms" in cell.text
