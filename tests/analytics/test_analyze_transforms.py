"""Pure transforms on small hand-made DataFrames: storms, flapping members, hourly
metrics, the reason and trigger columns, filters."""
from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from groupctl.analytics import episodes as E
from groupctl.analytics import transforms as X
from groupctl.analytics.schema import DURATION_INTERVAL_COLUMNS, EPISODE_COLUMNS, EVENT_SCHEMA

# the first test of a module pays for a whole Spark job over the fixtures: several
# minutes on a loaded 2-core machine, past the suite's 300 s default
pytestmark = pytest.mark.timeout(900)

T0 = datetime(2026, 11, 22, 3, 0, 0)


def _episodes(spark, group_starts: dict[str, list[int]], duration_ms: int = 500):
    """Rounds of exact durations, as the broker log tells them (the interval one figure)."""
    columns = (*EPISODE_COLUMNS, *DURATION_INTERVAL_COLUMNS)
    rows = []
    for group, starts in group_starts.items():
        for gen, s in enumerate(starts, 1):
            start = T0 + timedelta(seconds=s)
            row = dict.fromkeys(columns)
            row.update(group=group, group_type="classic", from_generation=gen - 1,
                       to_generation=gen, started=start,
                       ended=start + timedelta(milliseconds=duration_ms * gen),
                       duration_ms=duration_ms * gen, reason="r", reason_kind="join",
                       outcome="stable", duration_min_ms=duration_ms * gen,
                       duration_max_ms=duration_ms * gen)
            rows.append(row)
    schema = ("group string, group_type string, from_generation int, to_generation int, "
              "started timestamp, ended timestamp, duration_ms long, reason string, "
              "reason_kind string, trigger_member string, trigger_client string, "
              "members_before int, members_after int, moved_partitions int, outcome string, "
              "broker int, unowned_partition_ms long, unowned_partitions_max_ms long, "
              "unowned_basis string, slowest_member string, slowest_member_ms long, "
              "duration_min_ms long, duration_max_ms long")
    return spark.createDataFrame([tuple(r[c] for c in columns) for r in rows], schema)


def test_storms_need_n_rebalances_within_the_window_and_merge_overlaps(spark):
    # g1: 3 within 100 s (a storm), a lone one an hour later, then 4 within 10 min but
    # spread so that windows overlap (one storm); g2: 2 close together (no storm)
    eps = _episodes(spark, {"g1": [0, 50, 100, 3600, 7200, 7500, 7800, 8100],
                            "g2": [0, 10]})
    marked, table = X.storms(eps, count=3, window_s=600)
    storms = [(r["group"], r["storm"], r["rebalances"]) for r in table.collect()]
    assert storms == [("g1", 1, 3), ("g1", 2, 4)]
    by_gen = {(r["group"], r["to_generation"]): r["storm"] for r in marked.collect()}
    assert [by_gen[("g1", g)] for g in range(1, 9)] == [1, 1, 1, None, 2, 2, 2, 2]
    assert by_gen[("g2", 1)] is None and by_gen[("g2", 2)] is None


def test_hourly_counts_and_percentiles(spark):
    eps = _episodes(spark, {"g": [0, 60, 120, 3600 + 5]}, duration_ms=100)
    rows = [r.asDict() for r in X.hourly(eps).collect()]
    assert [(r["hour"], r["rebalances"], r["duration_ms_max"], r["time_rebalancing_ms"])
            for r in rows] == [(T0, 3, 300, 600), (T0 + timedelta(hours=1), 1, 400, 400)]
    assert rows[0]["duration_ms_p50"] == 200
    # exact rounds: the proven total is the total
    assert [(r["time_rebalancing_min_ms"], r["time_rebalancing_max_ms"]) for r in rows] == [
        (600, 600), (400, 400)]


def _events(spark, rows: list[dict]):
    """Broker-log events, `rows` in their log's order (each row's `pos` its place in it)."""
    names = [f.name for f in EVENT_SCHEMA.fields]
    full = []
    for i, r in enumerate(rows):
        row = dict.fromkeys(names)
        row.update(source="broker-log", pos=(0, 0, i), **r)
        full.append(tuple(row[n] for n in names))
    return spark.createDataFrame(full, EVENT_SCHEMA)


def test_flapping_members_join_and_leave_repeatedly(spark):
    uuid = "-0a0639f0-e5d5-4964-9929-7c911b990aa5"
    rows = []
    for i in range(3):  # flappy joins and times out 3 times; steady joins once and leaves
        rows += [dict(group="g", ts=T0 + timedelta(minutes=i), kind="member_joined",
                      member=f"flappy{uuid[:-1]}{i}"),
                 dict(group="g", ts=T0 + timedelta(minutes=i, seconds=30), kind="member_failed",
                      member=f"flappy{uuid[:-1]}{i}")]
    rows += [dict(group="g", ts=T0, kind="member_joined", member=f"steady{uuid}"),
             dict(group="g", ts=T0 + timedelta(hours=1), kind="member_left", member=f"steady{uuid}")]
    flapping = [r.asDict() for r in X.flapping_members(_events(spark, rows)).collect()]
    assert flapping == [{"group": "g", "client": "flappy", "joins": 3, "leaves": 0, "failures": 3}]


@pytest.mark.parametrize("reason,kind,member", [
    ("Adding new member c-1-0a0639f0-e5d5-4964-9929-7c911b990aa5 with group instance id null; "
     "client reason: not provided", "join", "c-1-0a0639f0-e5d5-4964-9929-7c911b990aa5"),
    ("removing member m-2 on heartbeat expiration.", "session timeout", "m-2"),
    ("explicit `LeaveGroup` request for (m-3) members.", "leave", "m-3"),
    ("Removing member m-4 on LeaveGroup; client reason: the consumer is being closed", "leave",
     "m-4"),
    ("Updating metadata for static member m-5 with instance id s-5; client reason: x",
     "static member", "m-5"),
    ("Removing Set(m-6) on pending sync request expiration", "sync timeout", None),
    ("member Xy7= joined the group", "join", None),
    (None, "unknown", None),
])
def test_reason_kind_and_trigger_member(spark, reason, kind, member):
    from pyspark.sql import functions as F

    df = spark.createDataFrame([(reason,)], "reason string")
    row = df.select(E.reason_kind(F.col("reason")).alias("k"),
                    E.trigger_member(F.col("reason")).alias("m")).first()
    assert (row["k"], row["m"]) == (kind, member)


def test_filters_apply_to_time_and_group(spark):
    rows = [dict(group=g, ts=T0 + timedelta(hours=h), kind="prepare")
            for g in ("orders", "payments") for h in range(3)]
    got = X.filter_events(_events(spark, rows), since=T0 + timedelta(hours=1),
                          until=T0 + timedelta(hours=2), group_regex="^ord").collect()
    assert [(r["group"], r["ts"]) for r in got] == [("orders", T0 + timedelta(hours=1))]


def test_coordinator_moves_are_told_once_per_change_of_broker(spark):
    """Lines of one group from broker 2, then 3 (the old one's unload and the new one's
    load in the same millisecond: unload first), then 3 only; another group never moves.
    A line without a broker (a client's) changes nothing. A third group's old coordinator
    unloads it 17 ms after the new one loaded it (a 3-broker lab did): one move, not three."""
    def event(group, ms, broker, kind, members=None, source="broker-log"):
        row = dict.fromkeys(f.name for f in EVENT_SCHEMA.fields)
        row.update(group=group, ts=T0 + timedelta(milliseconds=ms), broker=broker, kind=kind,
                   source=source, members=members)
        return tuple(row[f.name] for f in EVENT_SCHEMA.fields)

    events = spark.createDataFrame([
        event("g", 0, 2, "stabilized"), event("g", 10, None, "joined", source="client-log"),
        event("g", 500, 3, "loaded", members=2), event("g", 500, 2, "unloaded"),
        event("g", 900, 3, "prepare"), event("g", 950, 3, "stabilized"),
        event("h", 0, 1, "stabilized"), event("h", 700, 1, "loaded", members=1),
        event("k", 0, 3, "stabilized"), event("k", 401, 2, "loaded", members=2),
        event("k", 418, 3, "unloaded"), event("k", 1651, 2, "prepare"),
    ], EVENT_SCHEMA)
    rows = [r.asDict() for r in X.coordinator_moves(events).collect()]
    assert rows == [{"group": "g", "ts": T0 + timedelta(milliseconds=500), "from_broker": 2,
                     "to_broker": 3, "last_on_old": T0 + timedelta(milliseconds=500),
                     "members": 2},
                    {"group": "k", "ts": T0 + timedelta(milliseconds=401), "from_broker": 3,
                     "to_broker": 2, "last_on_old": T0, "members": 2}]


def test_members_leaving_at_once_bump_a_share_groups_epoch_once_each(spark):
    """Issue 30 (the truth matrix, share and streams): a share (streams) member's leave
    bumps the group epoch without a log line. Two members leaving within half a second
    empty the group at epoch 5 (the records' ShareGroupMetadata: 4 on the first leave, 5
    on the second), not 4: the broker log alone gave 3 -> 4, so analyze of the log and the
    records told the one round twice (3 -> 4 and 3 -> 5)."""
    t = lambda ms: T0 + timedelta(milliseconds=ms)  # noqa: E731
    rows = [dict(group="s", ts=t(0), kind="member_joined", member="a", group_type="share"),
            dict(group="s", ts=t(1), kind="epoch_bumped", epoch=2),
            dict(group="s", ts=t(2), kind="target_computed", epoch=2),
            dict(group="s", ts=t(1000), kind="member_joined", member="b", group_type="share"),
            dict(group="s", ts=t(1001), kind="epoch_bumped", epoch=3),
            dict(group="s", ts=t(1002), kind="target_computed", epoch=3),
            dict(group="s", ts=t(5000), kind="member_left", member="b", group_type="share"),
            dict(group="s", ts=t(5400), kind="member_left", member="a", group_type="share")]
    eps = sorted((r.asDict() for r in E.consumer_episodes(_events(spark, rows)).collect()),
                 key=lambda e: e["ended"] or e["started"])
    assert [(e["from_generation"], e["to_generation"], e["outcome"]) for e in eps] == [
        (1, 2, "stable"), (2, 3, "stable"), (3, 5, "empty")]


def test_a_round_a_restart_dropped_is_not_the_start_of_a_generation_made_later(spark):
    """broker-restart/coop in the truth matrix, as the broker logged it: generation 2 made
    and synced but not written, a round toward 3 begun (Preparing, old generation 2), the
    broker restarted and reloaded the group at generation 1, made 2 again (20.1 -> 21.8 s)
    and later 3 (22.3 -> 22.9 s). analyze gave 2 96 ms and 3 5425 ms (from the dropped
    round's Preparing line); generation 2 is the one made last, begun at the round's first
    Preparing line (17.4 s: its members rebalanced from then), generation 3 at 22.3 s."""
    def at(seconds, kind, generation, **more):
        return dict(group="g", ts=T0 + timedelta(seconds=seconds), kind=kind,
                    generation=generation, broker=1, **more)

    rows = [at(16.413, "prepare", 0, reason="join"), at(16.414, "stabilized", 1, members=2),
            at(16.418, "assignment_received", 1),
            at(17.436, "prepare", 1, reason="metadata"), at(17.500, "stabilized", 2, members=2),
            at(17.510, "assignment_received", 2), at(17.530, "prepare", 2, reason="dropped"),
            at(20.106, "prepare", 1, reason="metadata"), at(21.837, "stabilized", 2, members=2),
            at(21.840, "assignment_received", 2),
            at(22.284, "prepare", 2, reason="join"), at(22.859, "stabilized", 3, members=3),
            at(22.861, "assignment_received", 3)]
    eps = {r["to_generation"]: r.asDict() for r in E.classic_episodes(_events(spark, rows)).collect()}
    assert {g: (e["duration_ms"], e["reason"]) for g, e in eps.items()} == {
        1: (5, "join"), 2: (4404, "metadata"), 3: (577, "join")}
    assert eps[3]["started"] == T0 + timedelta(seconds=22.284)


def test_a_classic_round_whose_preparing_line_the_log_lacks_has_no_known_duration(spark):
    """A log that begins mid-round (rotated away, or a coordinator that took the group over
    whose old broker's log was not given): generation 5's Stabilized and assignment lines
    without the Preparing line. Its start is not in the log: the 3 ms from Stabilized to
    the assignment are a piece of the round, not its duration (null, never that piece);
    the next round, whole in the log, is exact."""
    def at(seconds, kind, generation, **more):
        return dict(group="g", ts=T0 + timedelta(seconds=seconds), kind=kind,
                    generation=generation, broker=1, **more)

    rows = [at(1.000, "stabilized", 5, members=2), at(1.003, "assignment_received", 5),
            at(4.000, "prepare", 5, reason="join"), at(4.250, "stabilized", 6, members=3),
            at(4.260, "assignment_received", 6)]
    eps = {r["to_generation"]: r.asDict() for r in E.classic_episodes(_events(spark, rows)).collect()}
    assert {g: e["duration_ms"] for g, e in eps.items()} == {5: None, 6: 260}
    assert eps[5]["started"] == T0 + timedelta(seconds=1)   # placed at its Stabilized line


def _line(ms: int, kind: str, **more) -> dict:
    """A KIP-848 group's broker-log line, as extract reads it: group k, T0 + ms."""
    return dict(group="k", ts=T0 + timedelta(milliseconds=ms), kind=kind, **more)


def _joined(ms: int, member: str) -> dict:
    return _line(ms, "member_joined", member=member, group_type="consumer")


def _left(ms: int, member: str) -> dict:
    return _line(ms, "member_left", member=member, group_type="consumer")


def _bumped(ms: int, epoch: int) -> dict:
    return _line(ms, "epoch_bumped", epoch=epoch)


def _target(ms: int, epoch: int) -> dict:
    return _line(ms, "target_computed", epoch=epoch)


def test_a_join_whose_bump_shares_the_next_joins_millisecond_is_not_refused(spark):
    """The full suite on a loaded machine, KIP-848 group scaled 1 -> 3 -> 1, as the broker
    logged it: member b's `joins` at .588 and its `Bumped ... 3` at .589, member c's
    `joins` also at .589 (its bump at .590). Ordered by millisecond (joins before bumps),
    c's join came between b's join and b's bump and b's join was taken for one the broker
    refused: the group's last epoch had 0 members after it where ConsumerGroupCommand
    showed 1."""
    rows = [_joined(499, "a"),
            _bumped(511, 2),
            _target(519, 2),
            _joined(588, "b"),
            _bumped(589, 3),
            _joined(589, "c"),
            _bumped(590, 4),
            _target(1529, 4),
            _left(1630, "c"),
            _bumped(1631, 5),
            _left(1731, "b"),
            _bumped(1731, 6),
            _target(2533, 6),
            # a join the broker refused: no bump before the next target line
            _joined(3000, "r"),
            _joined(3500, "d"),
            _bumped(3500, 7),
            _target(3502, 7)]
    eps = sorted((r.asDict() for r in E.consumer_episodes(_events(spark, rows)).collect()),
                 key=lambda e: e["to_generation"])
    assert [(e["to_generation"], e["members_before"], e["members_after"], e["trigger_member"])
            for e in eps] == [(2, 0, 1, "a"), (4, 1, 3, "b"), (6, 3, 1, "c"), (7, 1, 2, "d")]


def test_a_refused_join_after_anothers_join_in_its_bumps_millisecond_is_the_refused_one(spark):
    """As the broker logs it: b joins at .588 and its bump is at .589, then r's join at .589
    the broker refused (no bump of its own before the target). Ordered by a rule within
    the millisecond (joins before bumps), r's join came before b's bump and took it: b's
    join was the refused one and the round was blamed on r."""
    rows = [_joined(499, "a"),
            _bumped(511, 2),
            _target(519, 2),
            _joined(588, "b"),
            _bumped(589, 3),
            _joined(589, "r"),
            _target(590, 3)]
    eps = sorted((r.asDict() for r in E.consumer_episodes(_events(spark, rows)).collect()),
                 key=lambda e: e["to_generation"])
    assert [(e["to_generation"], e["members_before"], e["members_after"], e["trigger_member"])
            for e in eps] == [(2, 0, 1, "a"), (3, 1, 2, "b")]


def test_a_leave_and_a_join_in_one_millisecond_are_two_rounds_in_the_logs_order(spark):
    """x leaves, epoch 6 is bumped and its target computed, then a joins and epoch 7 is
    bumped and computed, all in one millisecond. Ordered by a rule (member changes, then
    bumps, then targets), a's join went into the round of epoch 6 (which then had x's leave
    and a's join, 2 -> 2 members) and the round of epoch 7 had no member change at all."""
    rows = [_joined(0, "x"),
            _bumped(0, 4),
            _target(1, 4),
            _joined(50, "y"),
            _bumped(50, 5),
            _target(51, 5),
            _left(700, "x"),
            _bumped(700, 6),
            _target(700, 6),
            _joined(700, "a"),
            _bumped(700, 7),
            _target(700, 7)]
    eps = sorted((r.asDict() for r in E.consumer_episodes(_events(spark, rows)).collect()),
                 key=lambda e: e["to_generation"])
    assert [(e["from_generation"], e["to_generation"], e["members_before"],
             e["members_after"], e["trigger_member"]) for e in eps] == [
        (3, 4, 0, 1, "x"), (4, 5, 1, 2, "y"), (5, 6, 2, 1, "x"), (6, 7, 1, 2, "a")]


def test_a_join_after_a_bump_of_its_own_millisecond_without_one_was_refused(spark):
    """A subscription change bumps the epoch (no member joins), then r's join in the same
    millisecond is refused. Joins first within a millisecond, the subscription's bump was
    r's and r a member."""
    rows = [_joined(0, "a"),
            _bumped(0, 2),
            _target(1, 2),
            _bumped(900, 3),
            _joined(900, "r"),
            _target(902, 3)]
    eps = sorted((r.asDict() for r in E.consumer_episodes(_events(spark, rows)).collect()),
                 key=lambda e: e["to_generation"])
    assert [(e["to_generation"], e["members_after"], e["trigger_member"]) for e in eps] == [
        (2, 1, "a"), (3, 1, None)]


def test_a_pattern_subscribers_bump_may_come_after_another_members_join(spark):
    """p subscribes by a pattern the group has not resolved: its join logs no bump; q
    joins and bumps; the pattern's resolution comes back and bumps the epoch for p (a
    later coordinator event) before the target. Both joined."""
    rows = [_joined(0, "p"),
            _joined(3, "q"),
            _bumped(3, 2),
            _bumped(9, 3),
            _target(12, 3)]
    eps = [r.asDict() for r in E.consumer_episodes(_events(spark, rows)).collect()]
    assert [(e["to_generation"], e["members_before"], e["members_after"], e["trigger_member"])
            for e in eps] == [(3, 0, 2, "p")]
