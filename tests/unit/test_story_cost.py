"""Issue 19 in the one story: what each rebalance cost (unowned partition time, its basis,
the longest partitions, unsubscribed ones apart) and who held it up (slowest member), fed
looks at injected times exactly as a describe poller or the records replay would."""
from __future__ import annotations

from story_support import look
from groupctl.events import envelope
from groupctl.observe.story.convergence import behind_target, pending_revocation
from groupctl.observe.reads.model import GroupDescription, Member, TopicPartitions
from groupctl.observe.sources.observations import ContactLost, Seen
from groupctl.observe.story.story import RebalanceStory


def cm(mid, current, target, epoch, topic="t"):
    return Member(mid, client_id=f"c-{mid}", member_epoch=epoch,
                  subscription={"topics": [topic]},
                  assignment=[TopicPartitions(topic, current)],
                  target_assignment=[TopicPartitions(topic, target)])


def consumer(state, epoch, aepoch, *members):
    return GroupDescription("g", type="consumer", state=state, group_epoch=epoch,
                            assignment_epoch=aepoch, members=list(members))


def km(mid, parts, topics=("t",)):
    """A classic member, Stable (assignment known); parts None: rebalancing (unknown)."""
    return Member(mid, client_id=f"c-{mid}",
                  subscription=None if parts is None else {"topics": list(topics)},
                  assignment=None if parts is None else [TopicPartitions("t", parts)])


def classic(state, gen, protocol, *members):
    return GroupDescription("g", type="classic", state=state, protocol=protocol,
                            generation=gen, members=list(members))


def story():
    return RebalanceStory("g", clock=lambda: 0.0)


def rebalances(events):
    return [e for e in events if e.KIND == "rebalance"]


def test_consumer_group_member_joins_unowned_time_and_slowest_member():
    """a and c share t-0..3; b joins. c gives t-3 up at once, a holds t-1 for 4 s (its
    revoke callback). Gaps: t-3 from 10.5 (c let go) to 11.0 (b got it); t-1 from 14.5 to
    15.0. a is behind from 10.0 (its new target) to 14.5, c from 10.0 to 10.5."""
    s = story()
    look(s, consumer("Stable", 3, 3, cm("a", [0, 1], [0, 1], 3), cm("c", [2, 3], [2, 3], 3)),
         at=9.0)
    look(s, consumer("Reconciling", 4, 4, cm("a", [0, 1], [0], 3), cm("c", [2, 3], [2], 3),
                     cm("b", [], [1, 3], 4)), at=10.0)
    look(s, consumer("Reconciling", 4, 4, cm("a", [0, 1], [0], 3), cm("c", [2], [2], 4),
                     cm("b", [], [1, 3], 4)), at=10.5)
    look(s, consumer("Reconciling", 4, 4, cm("a", [0, 1], [0], 3), cm("c", [2], [2], 4),
                     cm("b", [3], [1, 3], 4)), at=11.0)
    look(s, consumer("Reconciling", 4, 4, cm("a", [0], [0], 4), cm("c", [2], [2], 4),
                     cm("b", [3], [1, 3], 4)), at=14.5)
    (r,) = rebalances(look(s, consumer("Stable", 4, 4, cm("a", [0], [0], 4),
                                       cm("c", [2], [2], 4), cm("b", [1, 3], [1, 3], 4)),
                           at=15.0))
    assert (r.unowned_partition_ms, r.unowned_partitions_max_ms, r.unowned_basis) == (
        1000, 500, "measured")
    assert r.unowned_longest == [{"topic": "t", "partition": 1, "ms": 500},
                                 {"topic": "t", "partition": 3, "ms": 500}]
    assert (r.slowest_member, r.slowest_member_ms) == ("a", 4500)
    # Kafka 4.3.1's describe: a's pending partition stays in its assignment and its epoch
    # stays 3 until it acknowledges, so no look shows when it was told
    assert r.slowest_member_held_ms is None
    # the record carries every §4 field of the type, the extra ones too
    rec = envelope(r, group="g", cluster=None, source="describe")
    assert rec["unowned_partition_ms"] == 1000 and rec["slowest_member"] == "a"
    assert rec["unowned_basis"] == "measured" and rec["slowest_member_ms"] == 4500


def test_behind_target_is_epoch_or_pending_revocation_not_waiting():
    g = consumer("Reconciling", 4, 4)
    assert behind_target(cm("a", [0, 1], [0], 3), g)          # both
    assert behind_target(cm("a", [0, 1], [0], 4), g)          # still holds t-1
    assert behind_target(cm("a", [0], [0, 1], 3), g)          # has not acknowledged
    assert not behind_target(cm("b", [], [1, 3], 4), g)       # only waits for others
    assert pending_revocation(cm("a", [0, 1], [0], 3)) == {"t": frozenset({1})}
    share = GroupDescription("s", type="share", state="Stable", group_epoch=5,
                             members=[])
    assert behind_target(Member("x", member_epoch=4), share)
    assert not behind_target(Member("x", member_epoch=5), share)
    # the group epoch moved on (a join) but the broker has not computed the assignment yet:
    # nobody can catch up, so nobody holds the group up but the broker
    computing = GroupDescription("s", type="share", state="Stable", group_epoch=5,
                                 assignment_epoch=4, members=[])
    assert not behind_target(Member("x", member_epoch=4), computing)
    assert behind_target(Member("x", member_epoch=3), computing)


def test_cooperative_classic_revoked_from_one_generation_to_the_next():
    """Gen 3: a holds 0-3. Gen 4 (b joined, first round): a keeps 0,1, gives 2,3 up, no
    one holds them. Gen 5: b gets them. Unowned from the look showing gen 4 (11.0) to the
    one showing gen 5 (12.0): 2 partitions x 1 s, told with gen 5."""
    s = story()
    coop = "cooperative-sticky"
    look(s, classic("Stable", 3, coop, km("a", [0, 1, 2, 3])), at=10.0)
    look(s, classic("PreparingRebalance", None, coop, km("a", None), km("b", None)), at=10.5)
    (r4,) = rebalances(look(s, classic("Stable", 4, coop, km("a", [0, 1]), km("b", [])),
                            at=11.0))
    assert (r4.unowned_partition_ms, r4.unowned_basis, r4.unowned_unsubscribed) == (
        0, "measured", [])   # t-2, t-3 still pending: b subscribes to t
    look(s, classic("CompletingRebalance", None, coop, km("a", None), km("b", None)), at=11.5)
    (r5,) = rebalances(look(s, classic("Stable", 5, coop, km("a", [0, 1]), km("b", [2, 3])),
                            at=12.0))
    assert (r5.unowned_partition_ms, r5.unowned_partitions_max_ms, r5.unowned_basis) == (
        2000, 1000, "measured")
    assert [x["partition"] for x in r5.unowned_longest] == [2, 3]
    assert (r5.slowest_member, r5.slowest_member_ms) == (None, None)   # classic: not seen


def test_eager_classic_is_an_upper_bound_over_the_window_holding_the_round():
    """Eager range: the last look before the round (10.0, unchanged looks count) to the
    look that showed it over (12.0): every partition given out x 2 s."""
    s = story()
    look(s, classic("Stable", 3, "range", km("a", [0, 1, 2])), at=9.0)
    look(s, classic("Stable", 3, "range", km("a", [0, 1, 2])), at=10.0)   # the same look
    look(s, classic("PreparingRebalance", None, "range", km("a", None), km("b", None)),
         at=10.5)
    (r,) = rebalances(look(s, classic("Stable", 4, "range", km("a", [0, 1]), km("b", [2])),
                           at=12.0))
    assert (r.unowned_partition_ms, r.unowned_partitions_max_ms, r.unowned_basis) == (
        6000, 2000, "upper_bound")
    # begun after 10.0, by 10.5, over by 12.0
    assert (r.duration_min_ms, r.duration_max_ms) == (0, 2000)


def test_partitions_no_one_subscribes_to_are_apart_and_not_summed():
    """b (the only subscriber of u) leaves a consumer group: u's partitions are reported
    apart once the group converged, and never summed in later rounds."""
    s = story()
    b_u = Member("b", client_id="c-b", member_epoch=3, subscription={"topics": ["u"]},
                 assignment=[TopicPartitions("u", [0, 1])],
                 target_assignment=[TopicPartitions("u", [0, 1])])
    look(s, consumer("Stable", 3, 3, cm("a", [0], [0], 3), b_u), at=1.0)
    (r,) = rebalances(look(s, consumer("Stable", 4, 4, cm("a", [0], [0], 4)), at=2.0))
    assert r.unowned_unsubscribed == [{"topic": "u", "partitions": [0, 1]}]
    assert r.unowned_partition_ms == 0
    look(s, consumer("Reconciling", 5, 5, cm("a", [0], [0], 4), cm("c", [], [], 5)), at=3.0)
    (r2,) = rebalances(look(s, consumer("Stable", 5, 5, cm("a", [0], [0], 5),
                                        cm("c", [], [], 5)), at=9.0))
    assert (r2.unowned_partition_ms, r2.unowned_unsubscribed) == (0, [])


def test_a_round_under_way_at_the_first_look_is_a_lower_bound():
    s = story()
    look(s, consumer("Reconciling", 4, 4, cm("a", [0], [0], 4), cm("b", [], [1], 4)), at=1.0)
    (r,) = rebalances(look(s, consumer("Stable", 4, 4, cm("a", [0], [0], 4),
                                       cm("b", [1], [1], 4)), at=2.0))
    # t-1 unowned before the first look: its gap's start unknown, not counted
    assert (r.unowned_partition_ms, r.unowned_basis) == (0, "lower_bound")


def test_contact_lost_mid_round_makes_it_a_lower_bound_and_behind_times_unknown():
    s = story()
    look(s, consumer("Stable", 3, 3, cm("a", [0, 1], [0, 1], 3)), at=1.0)
    look(s, consumer("Reconciling", 4, 4, cm("a", [0, 1], [0], 3), cm("b", [], [1], 4)), at=2.0)
    s.feed(ContactLost("g", 2.5, "describe", OSError("down")))
    look(s, consumer("Reconciling", 4, 4, cm("a", [0], [0], 4), cm("b", [], [1], 4)), at=5.0)
    (r,) = rebalances(look(s, consumer("Stable", 4, 4, cm("a", [0], [0], 4),
                                       cm("b", [1], [1], 4)), at=6.0))
    assert (r.unowned_partition_ms, r.unowned_basis) == (1000, "lower_bound")
    assert (r.slowest_member, r.slowest_member_ms, r.slowest_member_held_ms) == ("a", 3000, None)


def test_records_source_exact_times_are_the_broker_timestamps():
    """The records replay feeds one look per coordinator record at the broker's time: the
    same code gives the exact gap (here 37 ms)."""
    s = story()
    look(s, consumer("Stable", 3, 3, cm("a", [0, 1], [0, 1], 3)), at=100.000)
    look(s, consumer("Reconciling", 4, 4, cm("a", [0, 1], [0], 3), cm("b", [], [1], 4)),
         at=100.010)
    look(s, consumer("Reconciling", 4, 4, cm("a", [0], [0], 4), cm("b", [], [1], 4)),
         at=100.020)
    (r,) = rebalances(look(s, consumer("Stable", 4, 4, cm("a", [0], [0], 4),
                                       cm("b", [1], [1], 4)), at=100.057))
    assert (r.unowned_partition_ms, r.slowest_member, r.slowest_member_ms) == (37, "a", 10)


def unrevoked(m, pending):
    """A member as the records show it told of its target: UNREVOKED_PARTITIONS, what it
    must give up apart from its assignment (observe/reads/replay.py)."""
    m.extra |= {"member_state": "UNREVOKED_PARTITIONS",
                "partitions_pending_revocation": [{"topic": "t", "partitions": pending}]}
    return m


def test_records_tell_when_the_member_was_told_so_its_hold_is_exact():
    """The target at 10.000; a hears of it at its heartbeat 0.300 later (its record turns
    UNREVOKED_PARTITIONS, t-1 pending), holds t-1 for 4 s, acknowledges at 14.300."""
    s = story()
    look(s, consumer("Stable", 3, 3, cm("a", [0, 1], [0, 1], 3)), at=9.0)
    look(s, consumer("Reconciling", 4, 4, cm("a", [0, 1], [0], 3), cm("b", [], [1], 4)),
         at=10.000)
    look(s, consumer("Reconciling", 4, 4, unrevoked(cm("a", [0], [0], 3), [1]),
                     cm("b", [], [1], 4)), at=10.300)
    look(s, consumer("Reconciling", 4, 4, cm("a", [0], [0], 4), cm("b", [], [1], 4)),
         at=14.300)
    (r,) = rebalances(look(s, consumer("Stable", 4, 4, cm("a", [0], [0], 4),
                                       cm("b", [1], [1], 4)), at=14.310))
    assert (r.slowest_member, r.slowest_member_ms, r.slowest_member_held_ms) == ("a", 4300, 4000)


def test_describe_listing_pending_partitions_apart_shows_the_member_told():
    """A broker whose describe lists a member's partitions pending revocation apart from its
    assignment (StreamsGroupDescribe's tasks; ConsumerGroupDescribe in earlier Kafka sources): the
    look where t-1 left a's assignment while its epoch still lags is when it was told, to
    one poll."""
    s = story()
    look(s, consumer("Stable", 3, 3, cm("a", [0, 1], [0, 1], 3)), at=9.0)
    look(s, consumer("Reconciling", 4, 4, cm("a", [0, 1], [0], 3), cm("b", [], [1], 4)), at=10.0)
    look(s, consumer("Reconciling", 4, 4, cm("a", [0], [0], 3), cm("b", [], [1], 4)), at=10.5)
    look(s, consumer("Reconciling", 4, 4, cm("a", [0], [0], 3), cm("b", [], [1], 4)), at=12.0)
    look(s, consumer("Reconciling", 4, 4, cm("a", [0], [0], 4), cm("b", [], [1], 4)), at=14.5)
    (r,) = rebalances(look(s, consumer("Stable", 4, 4, cm("a", [0], [0], 4),
                                       cm("b", [1], [1], 4)), at=15.0))
    assert (r.slowest_member, r.slowest_member_ms, r.slowest_member_held_ms) == ("a", 4500, 4000)


def test_a_member_with_nothing_to_give_up_held_nothing_after_told():
    """Only gaining, a member is told and acknowledges in one heartbeat: all its time behind
    is the wait to hear of its target."""
    s = story()
    look(s, consumer("Stable", 3, 3, cm("a", [0], [0, 1], 3), cm("c", [1], [1], 3)), at=9.0)
    look(s, consumer("Reconciling", 4, 4, cm("a", [0], [0, 1], 3), cm("c", [], [], 4)), at=10.0)
    (r,) = rebalances(look(s, consumer("Stable", 4, 4, cm("a", [0, 1], [0, 1], 4),
                                       cm("c", [], [], 4)), at=10.8))
    assert (r.slowest_member, r.slowest_member_ms, r.slowest_member_held_ms) == ("a", 800, 0)


def test_eager_round_between_two_looks_bounded_by_them():
    s = story()
    look(s, classic("Stable", 3, "range", km("a", [0, 1])), at=9.0)
    (r,) = rebalances(look(s, classic("Stable", 4, "range", km("a", [0]), km("b", [1])),
                           at=9.5))
    assert (r.unowned_partition_ms, r.unowned_basis) == (1000, "upper_bound")


def test_cooperative_revoke_generation_unseen_is_an_upper_bound():
    """Gen 4 (which took t-1 from a) was Stable between two looks: t-1 went a -> b while
    the assignments were unknown, so it was unowned at most from the last look that
    showed them (10.0) to the one that showed gen 5 (12.0)."""
    s = story()
    coop = "cooperative-sticky"
    look(s, classic("Stable", 3, coop, km("a", [0, 1])), at=10.0)
    look(s, classic("PreparingRebalance", None, coop, km("a", None), km("b", None)), at=11.0)
    (unseen, r) = rebalances(look(s, classic("Stable", 5, coop, km("a", [0]), km("b", [1])),
                                  at=12.0))
    assert (unseen.seen, unseen.to_generation, unseen.duration_ms) == (False, 4, None)
    assert (r.unowned_partition_ms, r.unowned_basis) == (2000, "upper_bound")
    assert r.unowned_longest == [{"topic": "t", "partition": 1, "ms": 2000}]


def test_eager_bound_opens_at_the_last_look_that_showed_a_partition_held():
    """Issue 30 (leave, eager, describe at 0.5 s): b left; Kafka described the group
    preparing its rebalance with no member at all (51.618), then a holding everything
    (52.120). b revoked before its LeaveGroup, after the look at 51.120 that showed it
    holding 2 and 3: each partition's window opens there (1 s), not at the memberless look
    (502 ms, below the clients' own 511 ms handover): a classic group's look while it
    rebalances holds no assignment of the round."""
    s = story()
    look(s, classic("Stable", 1, "range", km("a", [0, 1]), km("b", [2, 3])), at=50.620)
    look(s, classic("Stable", 1, "range", km("a", [0, 1]), km("b", [2, 3])), at=51.120)
    look(s, classic("PreparingRebalance", None, "range"), at=51.618)
    (r,) = rebalances(look(s, classic("Stable", 2, "range", km("a", [0, 1, 2, 3])), at=52.120))
    assert (r.unowned_partition_ms, r.unowned_partitions_max_ms, r.unowned_basis) == (
        4000, 1000, "upper_bound")


def test_eager_bound_ignores_the_last_generations_assignments_shown_mid_round():
    """Issue 30 (a subscription change, eager, describe at 0.5 s): Kafka described the group
    preparing and completing its rebalance with the members' last assignments (30.647,
    31.116). Those looks are inside the round: the window opens at the last settled look
    (30.147: 1496 ms), not at the latest look that showed them (527 ms, where the
    clients' own revoke -> assign took 1409 ms)."""
    s = story()
    old = (km("a", [0, 1]), km("b", [2, 3]))
    look(s, classic("Stable", 2, "range", *old), at=30.147)
    look(s, classic("PreparingRebalance", None, "range", *old), at=30.647)
    look(s, classic("CompletingRebalance", None, "range", *old), at=31.116)
    (r,) = rebalances(look(s, classic("Stable", 3, "range", km("a", [0, 1]), km("b", [2, 3, 4])),
                           at=31.643))
    assert (r.unowned_partitions_max_ms, r.unowned_basis) == (1496, "upper_bound")


def test_repeated_looks_mid_round_do_not_narrow_a_cooperative_bound():
    """Issue 30 (a subscription change, cooperative, describe at 0.5 s): generation 4, which
    took t-2 from b, was Stable for 5 ms between two looks; the looks in between were all
    the same PreparingRebalance. t-2 went b -> a unseen: at most from the last look that
    showed the assignments (10.0) to the one that showed gen 5 (12.0), not from the last
    repeat of a look that showed none (11.5: 500 ms, where the clients' took 1005 ms)."""
    s = story()
    coop = "cooperative-sticky"
    look(s, classic("Stable", 3, coop, km("a", [0, 1]), km("b", [2])), at=10.0)
    for at in (10.5, 11.0, 11.5):
        look(s, classic("PreparingRebalance", None, coop, km("a", None), km("b", None)), at=at)
    (unseen, r) = rebalances(look(s, classic("Stable", 5, coop, km("a", [0, 1, 2]), km("b", [])),
                                  at=12.0))
    assert (r.unowned_partitions_max_ms, r.unowned_basis) == (2000, "upper_bound")


def test_cooperative_leave_between_two_looks_is_an_upper_bound_not_a_measured_0():
    """Issue 30 (Kafka 4.4.0, cooperative-sticky, describe at 0.5 s): b left and the
    broker's round (2 ms) fell between two looks that both showed the group Stable. Its
    partitions went to a in that one generation, so no look showed them unowned: the watch
    said "0 ms measured" where the coordinator's records proved at least 2 ms. Each was
    unowned at most from the last look that showed b holding it (10.0: a repeat of the
    look before counts) to the one that showed a holding it (10.5)."""
    s = story()
    coop = "cooperative-sticky"
    for at in (9.5, 10.0):
        look(s, classic("Stable", 3, coop, km("a", [0, 1]), km("b", [2, 3])), at=at)
    (r,) = rebalances(look(s, classic("Stable", 4, coop, km("a", [0, 1, 2, 3])), at=10.5))
    assert (r.unowned_partition_ms, r.unowned_partitions_max_ms, r.unowned_basis) == (
        1000, 500, "upper_bound")
    assert [(x["partition"], x["ms"]) for x in r.unowned_longest] == [(2, 500), (3, 500)]
    assert r.duration_max_ms == 500   # the same window holds the round


def test_consumer_group_partition_moved_unseen_bounds_the_whole_round():
    """A consumer group: c left (epoch 4); a got t-2 before the next look (no look showed
    it unowned: at most 9.0 -> 9.5), t-3 was seen unowned at 9.5 and held at 10.0. The
    round is an upper bound, t-3 counted from the last look that showed it held (9.0): 1 s."""
    s = story()
    look(s, consumer("Stable", 3, 3, cm("a", [0], [0], 3), cm("b", [1], [1], 3),
                     cm("c", [2, 3], [2, 3], 3)), at=9.0)
    look(s, consumer("Reconciling", 4, 4, cm("a", [0, 2], [0, 2], 4),
                     cm("b", [1], [1, 3], 4)), at=9.5)
    (r,) = rebalances(look(s, consumer("Stable", 4, 4, cm("a", [0, 2], [0, 2], 4),
                                       cm("b", [1, 3], [1, 3], 4)), at=10.0))
    assert (r.unowned_partition_ms, r.unowned_partitions_max_ms, r.unowned_basis) == (
        1500, 1000, "upper_bound")
    assert [(x["partition"], x["ms"]) for x in r.unowned_longest] == [(3, 1000), (2, 500)]


def test_a_static_members_restart_is_no_move_of_its_partitions():
    """b (instance ib) restarts under a new member id, no rebalance: its partition did
    not go to another member, and the next round (c joins, nothing moves) is no bound."""
    s = story()
    coop = "cooperative-sticky"

    def static(mid, parts):
        return Member(mid, client_id="c-b", instance_id="ib", subscription={"topics": ["t"]},
                      assignment=[TopicPartitions("t", parts)])

    look(s, classic("Stable", 3, coop, km("a", [0]), static("b1", [1])), at=1.0)
    assert rebalances(look(s, classic("Stable", 3, coop, km("a", [0]), static("b2", [1])),
                           at=2.0)) == []
    (r,) = rebalances(look(s, classic("Stable", 4, coop, km("a", [0]), static("b2", [1]),
                                      km("c", [])), at=2.5))
    assert (r.unowned_partition_ms, r.unowned_basis) == (0, "measured")


def test_records_looks_come_with_a_change_so_a_move_between_two_is_no_window():
    """The records (a consumer group's writes, at the broker's times): t-1 left a and
    reached b in one write; the time since the write before is no bound of anything."""
    def written(*a):
        d = consumer(*a)
        d.extra["assignment_timestamp_ms"] = 1000
        return d

    def record(desc, at):
        return s.feed(Seen(desc.group, at, "records", desc))

    s = story()
    record(written("Stable", 3, 3, cm("a", [0, 1], [0, 1], 3), cm("b", [], [], 3)), at=1.0)
    (r,) = rebalances(record(written("Stable", 4, 4, cm("a", [0], [0], 4),
                                     cm("b", [1], [1], 4)), at=30.0))
    assert (r.unowned_partition_ms, r.unowned_basis) == (0, "measured")


def test_a_move_unseen_in_a_round_after_lost_contact_stays_a_lower_bound():
    """Contact lost: the round is a lower bound; a partition that moved unseen adds at
    least nothing to it (its window is no lower bound), and never makes it an upper one."""
    s = story()
    look(s, consumer("Stable", 3, 3, cm("a", [0, 1], [0, 1], 3)), at=1.0)
    look(s, consumer("Reconciling", 4, 4, cm("a", [0, 1], [0], 3), cm("b", [], [1], 4)), at=2.0)
    s.feed(ContactLost("g", 2.5, "describe", OSError("down")))
    (r,) = rebalances(look(s, consumer("Stable", 4, 4, cm("a", [0], [0], 4),
                                       cm("b", [1], [1], 4)), at=6.0))
    assert (r.unowned_partition_ms, r.unowned_basis) == (0, "lower_bound")
