"""Pure transforms: event DataFrame -> result DataFrames. No I/O, no Python UDFs; each
is tested on small fixtures (tests/unit/test_analytics_transforms.py).

Episodes (one row per rebalance):
- classic: `Preparing to rebalance ... old generation N` -> `Stabilized group ... generation
  N+1` (or `is now empty`) -> `Assignment received from leader ... generation N+1` (the
  leader's SyncGroup: members have their assignment). started = the first Preparing line
  of the round, ended = the assignment (else the Stabilized line). The reason is the first
  Preparing line's (KIP-800: the broker's words and the client's own reason).
- consumer (KIP-848), share (KIP-932) and streams (KIP-1071) groups: `Bumped group epoch`
  ... -> `Computed a new target assignment for epoch E`. Bumps that arrive before the
  target is computed fold into one episode; the member that joined, left or was fenced
  first in it is the trigger. An episode that ends with the group empty has no target
  assignment: outcome `empty`. Share and streams groups log no bump when a member leaves
  (the target's epoch, or the last known epoch + 1 when the group is left empty, stands in).
The from/to columns hold generations for classic groups and group epochs for consumer
groups. `outcome` is `stable` for a rebalance that ended in an assignment, `empty` for one
that left the group with no member (the broker counts it as a generation or epoch too:
`rebalances` counts both, as the broker log, the records and the watch tell every round
once) and `open` for one whose end the input does not hold (counted nowhere).
"""
from __future__ import annotations

from functools import reduce

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from . import patterns as P
from .schema import (COST_FIELDS, EPISODE_COLUMNS, FLAPPING_COLUMNS, GROUP_METRIC_COLUMNS,
                     HOURLY_COLUMNS, MEMBER_COLUMNS, MOVE_COLUMNS, STORM_COLUMNS)

MEMBER_CHANGE_KINDS = ("member_joined", "member_left", "member_fenced", "member_failed")
# the outcomes of a round the broker counts (a generation or an epoch): the group figures,
# storms and hourly rows count these; `open` (no end in the input) is not a round yet
ROUND_OUTCOMES = ("stable", "empty")


def _millis(col: Column) -> Column:
    return F.unix_millis(col)


def filter_events(events: DataFrame, since=None, until=None, group_regex=None) -> DataFrame:
    """--since / --until / --group, applied before anything heavy."""
    cond = F.lit(True)
    if since is not None:
        cond &= F.col("ts") >= F.lit(since)
    if until is not None:
        cond &= F.col("ts") < F.lit(until)
    if group_regex:
        cond &= F.col("group").rlike(group_regex)
    return events.filter(cond & F.col("group").isNotNull() & F.col("ts").isNotNull())


def trigger_member(reason: Column) -> Column:
    groups = P.TRIGGER_MEMBER.count("(\\S+") + P.TRIGGER_MEMBER.count("(\\S+?)")
    return F.coalesce(*[F.when(F.regexp_extract(reason, P.TRIGGER_MEMBER, i) != "",
                               F.regexp_extract(reason, P.TRIGGER_MEMBER, i))
                        for i in range(1, groups + 1)])


def client_of(member: Column) -> Column:
    client = F.regexp_extract(member, P.CLIENT_OF_MEMBER, 1)
    return F.when(client != "", client)


def reason_kind(reason: Column) -> Column:
    chain = reduce(lambda acc, kv: acc.when(reason.rlike(kv[1]), F.lit(kv[0])),
                   P.REASON_KINDS[1:], F.when(reason.rlike(P.REASON_KINDS[0][1]),
                                              F.lit(P.REASON_KINDS[0][0])))
    return F.when(reason.isNull(), F.lit("unknown")).otherwise(chain.otherwise(F.lit("other")))


def classic_episodes(events: DataFrame) -> DataFrame:
    broker = events.filter(F.col("source") == "broker-log")
    prepares = (broker.filter(F.col("kind") == "prepare")
                .groupBy("group", (F.col("generation") + 1).alias("to_generation"))
                .agg(F.min("ts").alias("started"), F.min_by("reason", "ts").alias("reason"),
                     F.min_by("broker", "ts").alias("prep_broker"),
                     F.min("generation").alias("from_generation")))
    ends = (broker.filter(F.col("kind").isin("stabilized", "empty"))
            .groupBy("group", F.col("generation").alias("to_generation"))
            .agg(F.min("ts").alias("stabilized"), F.min_by("members", "ts").alias("members_after"),
                 F.min_by("kind", "ts").alias("end_kind"), F.min_by("broker", "ts").alias("broker")))
    synced = (broker.filter(F.col("kind") == "assignment_received")
              .groupBy("group", F.col("generation").alias("to_generation"))
              .agg(F.min("ts").alias("synced")))
    moved = (events.filter((F.col("kind") == "rebalance") & F.col("generation").isNotNull())
             .groupBy("group", F.col("generation").alias("to_generation"))
             .agg(F.max("moved_partitions").alias("moved_partitions")))
    ep = (ends.join(prepares, ["group", "to_generation"], "left")
          .join(synced, ["group", "to_generation"], "left")
          .join(moved, ["group", "to_generation"], "left"))
    by_gen = Window.partitionBy("group").orderBy("to_generation")
    ep = ep.withColumns({
        "group_type": F.lit("classic"),
        "started": F.coalesce("started", "stabilized"),
        "ended": F.when(F.col("end_kind") == "empty", F.col("stabilized"))
                  .otherwise(F.coalesce("synced", "stabilized")),
        "members_before": F.lag("members_after").over(by_gen),
        "outcome": F.when(F.col("end_kind") == "empty", F.lit("empty")).otherwise(F.lit("stable")),
        "broker": F.coalesce("broker", "prep_broker"),
        "members_after": F.when(F.col("end_kind") == "empty", F.lit(0))
                          .otherwise(F.col("members_after")),
    })
    return finish_episodes(ep)


def finish_episodes(ep: DataFrame, keep: tuple[str, ...] = ()) -> DataFrame:
    ep = ep.withColumns({
        "duration_ms": _millis(F.col("ended")) - _millis(F.col("started")),
        "reason_kind": reason_kind(F.col("reason")),
        "trigger_member": F.coalesce(F.col("trigger_member"), trigger_member(F.col("reason")))
        if "trigger_member" in ep.columns else trigger_member(F.col("reason")),
    })
    ep = ep.withColumn("trigger_client", client_of(F.col("trigger_member")))
    typed = {f.name: f.dataType for f in COST_FIELDS}   # typed: the witnesses' union
    return ep.select(*[F.col(c) if c in ep.columns else (
        F.lit(None).cast(typed[c]) if c in typed else F.lit(None)).alias(c)
        for c in EPISODE_COLUMNS], *keep)


def consumer_episodes(events: DataFrame) -> DataFrame:
    broker = events.filter((F.col("source") == "broker-log") & (
        F.col("kind").isin("epoch_bumped", "target_computed", "member_fenced")
        | (F.col("kind").isin("member_joined", "member_left") & F.col("group_type").isNotNull())))
    consumer_groups = broker.filter(F.col("kind") == "epoch_bumped").select("group").distinct()
    ev = broker.join(consumer_groups, "group", "left_semi")
    # consumer, share or streams: what the group's member (or streams bump) lines say
    types = (ev.filter(F.col("group_type").isin("consumer", "share", "streams"))
             .groupBy("group").agg(F.max("group_type").alias("declared_type")))
    # order within a millisecond: member change, then bump, then target
    rank = (F.when(F.col("kind") == "target_computed", 2)
            .when(F.col("kind") == "epoch_bumped", 1).otherwise(0))
    order = Window.partitionBy("group").orderBy("ts", rank)
    ev = _without_rejected_joins(ev, order)
    # ... and within a millisecond, by the epoch each line belongs to (a member change:
    # its bump's): a join and a leave in one millisecond logged the first epoch's target
    # after the leave, and the two episodes both ended at the second epoch
    next_bump = F.first(F.when(F.col("kind") == "epoch_bumped", F.col("epoch")),
                        ignorenulls=True).over(order.rowsBetween(0, Window.unboundedFollowing))
    ev = ev.withColumn("_epoch_of", F.coalesce(F.col("epoch"), next_bump))
    order = Window.partitionBy("group").orderBy("ts", "_epoch_of", rank)
    before = order.rowsBetween(Window.unboundedPreceding, -1)
    upto = order.rowsBetween(Window.unboundedPreceding, 0)
    delta = (F.when(F.col("kind") == "member_joined", 1)
             .when(F.col("kind").isin("member_left", "member_fenced", "member_failed"), -1)
             .otherwise(0))
    ev = ev.withColumns({
        "episode": F.coalesce(F.sum((F.col("kind") == "target_computed").cast("int")).over(before),
                              F.lit(0)),
        "live": F.sum(delta).over(upto),
        "known": F.max("epoch").over(upto),
        "seq": F.row_number().over(order),   # ties within a millisecond: the window's order
    })
    change = F.col("kind").isin(*MEMBER_CHANGE_KINDS)
    change_text = F.concat(F.lit("member "), F.col("member"), F.lit(" "), F.element_at(
        F.create_map(F.lit("member_joined"), F.lit("joined the group"),
                     F.lit("member_left"), F.lit("left the group"),
                     F.lit("member_fenced"), F.lit("fenced: "),
                     F.lit("member_failed"), F.lit("failed")), F.col("kind")),
        F.coalesce(F.col("reason"), F.lit("")))
    ep = (ev.groupBy("group", "episode").agg(
        F.min("ts").alias("started"),
        F.max(F.when(F.col("kind") == "target_computed", F.col("ts"))).alias("target_ts"),
        F.max(F.when(F.col("kind") == "epoch_bumped", F.col("ts"))).alias("last_bump"),
        # a share group's leave bumps its epoch without a line: the target's epoch then
        F.coalesce(F.min(F.when(F.col("kind") == "epoch_bumped", F.col("epoch"))),
                   F.min(F.when(F.col("kind") == "target_computed", F.col("epoch"))))
         .alias("first_epoch"),
        F.max("known").alias("known_epoch"),
        F.sum(F.col("kind").isin("member_left", "member_fenced", "member_failed").cast("int"))
         .alias("departures"),
        F.max("ts").alias("last_ts"),
        F.max(F.when(F.col("kind").isin("epoch_bumped", "target_computed"), F.col("epoch")))
         .alias("to_generation"),
        F.min_by(F.when(change, change_text), F.when(change, F.col("ts"))).alias("reason"),
        F.min_by(F.when(change, F.col("member")), F.when(change, F.col("ts")))
         .alias("trigger_member"),
        F.max_by("live", "seq").alias("members_after"),
        F.min_by(F.col("live") - delta, "seq").alias("members_before"),
        F.min_by("broker", "ts").alias("broker"),
    ).filter(F.col("first_epoch").isNotNull()
             # share / streams groups log no bump when their last member leaves
             | ((F.col("members_after") <= 0) & F.col("known_epoch").isNotNull())))
    ep = ep.join(types, "group", "left").withColumns({
        "group_type": F.coalesce("declared_type", F.lit("consumer")),
        "from_generation": F.coalesce(F.col("first_epoch") - 1, F.col("known_epoch")),
        # (the silent bump: +1 per departure, as their `Unloaded ... group epoch` lines and
        # their records show: two members leaving at once are two epochs)
        "to_generation": F.coalesce("to_generation", F.col("known_epoch")
                                    + F.greatest(F.col("departures"), F.lit(1))),
        "outcome": F.when(F.col("target_ts").isNotNull(), F.lit("stable"))
                    .when(F.col("members_after") <= 0, F.lit("empty")).otherwise(F.lit("open")),
        "ended": F.coalesce("target_ts", F.when(F.col("members_after") <= 0,
                                                F.coalesce("last_bump", "last_ts"))),
        "moved_partitions": F.lit(None).cast("int"),
    })
    return finish_episodes(ep)


def _without_rejected_joins(ev: DataFrame, order) -> DataFrame:
    """A member's join line the broker followed with no epoch bump (the join it refused:
    INVALID_REGULAR_EXPRESSION, an unknown assignor, ...) before the group's next member
    or target line: no member joined, no round began (it became a 16 s "rebalance" from
    the refused join to the next real round, blamed on the refused member). Joins within
    one millisecond sort before their bumps: a join's own bump may follow another's."""
    after = order.rowsBetween(1, Window.unboundedFollowing)
    ev = ev.withColumn("_seq", F.row_number().over(order))
    kind = F.col("kind")
    first = lambda cond: F.min(F.when(cond, F.col("_seq"))).over(after)  # noqa: E731
    ev = ev.withColumns({
        "_next_bump": first(kind == "epoch_bumped"),
        "_next_other": first(kind.isin("member_left", "member_fenced", "member_failed",
                                       "target_computed")),
        "_next_join": F.min(F.when(kind == "member_joined", F.struct("_seq", "ts"))).over(after),
    })
    bump, other, join = F.col("_next_bump"), F.col("_next_other"), F.col("_next_join")
    refused = (kind == "member_joined") & (
        bump.isNull() | (other.isNotNull() & (other < bump))
        | (join.isNotNull() & (join["_seq"] < bump) & (join["ts"] > F.col("ts"))))
    return ev.filter(~refused).drop("_seq", "_next_bump", "_next_other", "_next_join")


def broker_episodes(events: DataFrame) -> DataFrame:
    """The broker log's episodes (observed.witnessed adds the records' and the clients')."""
    return classic_episodes(events).unionByName(consumer_episodes(events))


def member_outcomes(events: DataFrame) -> DataFrame:
    """Members that left cleanly (LeaveGroup) vs failed (session timeout / fenced), as the
    broker log tells; a member only groupctl's records saw go (a `member_left` event) is
    `left_or_failed`: a look cannot tell which. Each member once."""
    out = events.filter((F.col("source") == "broker-log")
                        & F.col("kind").isin("member_left", "member_failed", "member_fenced"))
    told = out.select(
        "group", "member", F.coalesce("client", client_of(F.col("member"))).alias("client"),
        F.when(F.col("kind") == "member_left", F.lit("left")).otherwise(F.lit("failed"))
         .alias("outcome"), "ts", "reason").select(*MEMBER_COLUMNS)
    seen = events.filter(~F.col("source").isin("broker-log", "client-log")
                         & (F.col("kind") == "member_left") & F.col("member").isNotNull())
    seen = (seen.join(told.select("group", "member"), ["group", "member"], "left_anti")
            .groupBy("group", "member").agg(
                F.first(F.coalesce("client", client_of(F.col("member"))), ignorenulls=True)
                 .alias("client"), F.min("ts").alias("ts"))
            .withColumns({"outcome": F.lit("left_or_failed"),
                          "reason": F.lit(None).cast("string")}))
    return told.unionByName(seen.select(*MEMBER_COLUMNS))


def coordinator_moves(events: DataFrame) -> DataFrame:
    """One row per move of a group's coordinator: consecutive lines about the group (in
    time, across every broker's log) from two brokers. Within a millisecond the old one's
    `unloaded` line comes first and the new one's `loaded` last. An `unloaded` line says
    its broker no longer holds the group, so it never tells a move: the old coordinator
    may log it after the new one loaded the group (17 ms after, in a 3-broker lab's
    controlled shutdown), which is no move back."""
    lines = events.filter((F.col("source") == "broker-log") & F.col("broker").isNotNull())
    # only groups logged by two brokers or more can have moved: the ordered window below
    # sorts their lines alone (a small aggregate finds them)
    moving = (lines.groupBy("group").agg(F.countDistinct("broker").alias("_brokers"))
              .filter(F.col("_brokers") > 1).select("group"))
    lines = lines.join(moving, "group", "left_semi")
    rank = (F.when(F.col("kind") == "unloaded", 0).when(F.col("kind") == "loaded", 2)
            .otherwise(1))
    order = Window.partitionBy("group").orderBy("ts", rank, "broker")
    lines = (lines.withColumn("last_on_old", F.lag("ts").over(order))
             .filter(F.col("kind") != "unloaded")
             .withColumn("from_broker", F.lag("broker").over(order)))
    moved = lines.filter(F.col("from_broker").isNotNull()
                         & (F.col("broker") != F.col("from_broker")))
    return moved.select(
        "group", "ts", "from_broker", F.col("broker").alias("to_broker"), "last_on_old",
        F.when(F.col("kind") == "loaded", F.col("members")).alias("members"),
    ).select(*MOVE_COLUMNS).orderBy("group", "ts")


def flapping_members(events: DataFrame, min_cycles: int = 2) -> DataFrame:
    """Clients (member ids for consumer-group members) that joined and left or failed at
    least `min_cycles` times each."""
    changes = events.filter((F.col("source") == "broker-log")
                            & F.col("kind").isin(*MEMBER_CHANGE_KINDS))
    who = F.coalesce(F.col("client"), client_of(F.col("instance_id")), client_of(F.col("member")),
                     F.col("instance_id"), F.col("member"))
    counts = changes.groupBy("group", who.alias("client")).agg(
        F.sum((F.col("kind") == "member_joined").cast("int")).alias("joins"),
        F.sum((F.col("kind") == "member_left").cast("int")).alias("leaves"),
        F.sum(F.col("kind").isin("member_failed", "member_fenced").cast("int")).alias("failures"))
    return (counts.filter((F.col("joins") >= min_cycles)
                          & (F.col("leaves") + F.col("failures") >= min_cycles))
            .select(*FLAPPING_COLUMNS).orderBy("group", "client"))


def storms(episodes_df: DataFrame, count: int = 3, window_s: int = 600) -> tuple[DataFrame, DataFrame]:
    """A storm: >= `count` rebalances (ROUND_OUTCOMES) of a group within `window_s` seconds;
    overlapping windows merge into one storm. Returns (episodes with a `storm` number or
    null, the storms)."""
    done = episodes_df.filter(F.col("outcome").isin(*ROUND_OUTCOMES)).withColumn(
        "t", F.unix_seconds(F.col("started")))
    ahead = Window.partitionBy("group").orderBy("t").rangeBetween(0, window_s)
    behind = Window.partitionBy("group").orderBy("t").rangeBetween(-window_s, 0)
    order = Window.partitionBy("group").orderBy("t", "to_generation")
    marked = (done.withColumn("opens", (F.count("*").over(ahead) >= count).cast("int"))
              .withColumn("in_storm", F.max("opens").over(behind) == 1)
              .withColumn("prev_in", F.lag("in_storm").over(order))
              .withColumn("run_start", (F.col("in_storm") & ~F.coalesce("prev_in", F.lit(False)))
                          .cast("int"))
              .withColumn("storm", F.when(F.col("in_storm"), F.sum("run_start").over(
                  order.rowsBetween(Window.unboundedPreceding, 0)))))
    rest = episodes_df.filter(~F.col("outcome").isin(*ROUND_OUTCOMES)).withColumn(
        "storm", F.lit(None).cast("long"))
    marked = marked.drop("t", "opens", "in_storm", "prev_in", "run_start").unionByName(rest)
    return marked, storm_table(marked)


def storm_table(marked: DataFrame) -> DataFrame:
    """The storms of episodes marked by storms() (one row per group and storm)."""
    return (marked.filter(F.col("storm").isNotNull()).groupBy("group", "storm").agg(
        F.min("started").alias("started"), F.max("ended").alias("ended"),
        F.count("*").alias("rebalances"), F.mode("reason_kind").alias("top_reason"))
            .select(*STORM_COLUMNS).orderBy("group", "storm"))


def hourly(episodes_df: DataFrame) -> DataFrame:
    done = episodes_df.filter(F.col("outcome").isin(*ROUND_OUTCOMES))
    return (done.groupBy("group", F.date_trunc("hour", "started").alias("hour"))
            .agg(*_duration_figures()).select(*HOURLY_COLUMNS).orderBy("group", "hour"))


def _duration_figures() -> list[Column]:
    """A set of rounds' count and durations: the percentiles, longest and total over the
    rounds whose duration is known (null when none is, never 0), and how many are not
    (`rebalances_untimed`: not in the total)."""
    return [F.count("*").alias("rebalances"),
            F.percentile_approx("duration_ms", 0.5).alias("duration_ms_p50"),
            F.percentile_approx("duration_ms", 0.95).alias("duration_ms_p95"),
            F.max("duration_ms").alias("duration_ms_max"),
            F.sum("duration_ms").alias("time_rebalancing_ms"),
            F.sum(F.col("duration_ms").isNull().cast("int")).alias("rebalances_untimed")]


def group_metrics(events: DataFrame, episodes_df: DataFrame, storms_df: DataFrame,
                  flapping_df: DataFrame, outcomes_df: DataFrame) -> DataFrame:
    """One row per group: the fields of docs/commands/analyze.md first, then the extra metrics."""
    done = episodes_df.filter(F.col("outcome").isin(*ROUND_OUTCOMES))
    per = done.groupBy("group").agg(
        *_duration_figures(),
        F.sum("unowned_partition_ms").alias("unowned_partition_ms_total"),
        F.sum("client_unowned_partition_ms").alias("client_unowned_partition_ms_total"))
    reasons = done.groupBy("group", "reason_kind").count()
    top = (reasons.withColumn("r", F.row_number().over(
        Window.partitionBy("group").orderBy(F.desc("count"), "reason_kind")))
           .filter(F.col("r") == 1).select("group", F.col("reason_kind").alias("top_reason")))
    seen = events.groupBy("group").agg(
        F.min("ts").alias("first_seen"), F.max("ts").alias("last_seen"),
        F.max("epoch").alias("group_epoch"),
        F.max(F.when(F.col("kind") == "stabilized", F.col("generation"))
              .when(F.col("kind") == "empty", F.col("generation"))
              .when(F.col("kind") == "prepare", F.col("generation"))).alias("max_generation"),
        F.sum(F.col("kind").isin("error", "heartbeat_failed", "poll_timeout").cast("int"))
         .alias("errors"),
        F.max(F.when(F.col("kind").isin("epoch_bumped", "target_computed"), F.lit(1))
              .otherwise(F.lit(0))).alias("has_epoch"),
        # the type the group declared last (it converts: classic -> consumer -> classic)
        F.max_by(F.col("group_type"), F.when(F.col("group_type").isNotNull(), F.col("ts")))
         .alias("declared_type"))
    failed = outcomes_df.groupBy("group").agg(
        F.sum((F.col("outcome") == "failed").cast("int")).alias("failed_members"),
        F.sum((F.col("outcome") == "left").cast("int")).alias("left_members"),
        F.sum((F.col("outcome") == "left_or_failed").cast("int"))
         .alias("left_or_failed_members"))
    n_storms = storms_df.groupBy("group").agg(F.count("*").alias("storms"))
    n_flap = flapping_df.groupBy("group").agg(F.count("*").alias("flapping_members"))
    out = (seen.join(per, "group", "left").join(top, "group", "left")
           .join(failed, "group", "left").join(n_storms, "group", "left")
           .join(n_flap, "group", "left"))
    span_h = (F.unix_millis("last_seen") - F.unix_millis("first_seen")) / 3_600_000.0
    zero = F.lit(0)
    out = out.withColumns({
        "type": F.coalesce(F.col("declared_type"), F.when(F.col("has_epoch") == 1, "consumer"),
                           F.lit("classic")),
        "rebalances": F.coalesce("rebalances", zero),
        "failed_members": F.coalesce("failed_members", zero),
        "left_members": F.coalesce("left_members", zero),
        "left_or_failed_members": F.coalesce("left_or_failed_members", zero),
        "storms": F.coalesce("storms", zero),
        "flapping_members": F.coalesce("flapping_members", zero),
        "rebalances_untimed": F.coalesce("rebalances_untimed", zero),
        # no rebalance: no time; rebalances none of whose durations is known: null
        "time_rebalancing_ms": F.when(F.col("rebalances") == 0, zero.cast("long"))
                                .otherwise(F.col("time_rebalancing_ms")),
    })
    # a rate over the window the inputs observed the group (null when that is no time)
    out = out.withColumn("rebalances_per_hour", F.when(span_h > 0, F.round(
        F.col("rebalances") / span_h, 3)))
    return out.select(*GROUP_METRIC_COLUMNS).orderBy(F.desc("rebalances"), "group")
