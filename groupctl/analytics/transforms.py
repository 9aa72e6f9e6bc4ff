"""Pure transforms: event DataFrame -> result DataFrames (storms, flapping members, member
outcomes, coordinator moves, hourly rows, per-group metrics). No I/O, no Python UDFs; each
is tested on small fixtures (tests/analytics/test_analyze_transforms.py). The episodes, one
row per rebalance, come from episodes.py (the broker log's) and observed.py (every witness's).
"""
from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from .episodes import MEMBER_CHANGE_KINDS, client_of
from .intervals import interval_totals
from .schema import (FLAPPING_COLUMNS, GROUP_METRIC_COLUMNS, HOURLY_COLUMNS, MEMBER_COLUMNS,
                     MOVE_COLUMNS, STORM_COLUMNS)

# the outcomes of a round the broker counts (a generation or an epoch): the group figures,
# storms and hourly rows count these; `open` (no end in the input) is not a round yet
ROUND_OUTCOMES = ("stable", "empty")


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
    """A set of rounds' count and durations: the percentiles, longest and total of the
    best figures over the rounds whose duration is known (null when none is, never 0), how
    many are not (`rebalances_untimed`: not in the total), and the total as the rounds'
    duration intervals prove it (`time_rebalancing_min_ms`, at least; `..._max_ms`, at
    most: null unless every round is bounded above; intervals.interval_totals)."""
    return [F.count("*").alias("rebalances"),
            F.percentile_approx("duration_ms", 0.5).alias("duration_ms_p50"),
            F.percentile_approx("duration_ms", 0.95).alias("duration_ms_p95"),
            F.max("duration_ms").alias("duration_ms_max"),
            F.sum("duration_ms").alias("time_rebalancing_ms"),
            F.sum(F.col("duration_ms").isNull().cast("int")).alias("rebalances_untimed"),
            *interval_totals("duration", "time_rebalancing_min_ms", "time_rebalancing_max_ms")]


def _unowned_totals() -> list[Column]:
    """A set of rounds' unowned time summed, each end of its interval apart
    (intervals.interval_totals): `unowned_min_ms_total`, at least; `unowned_max_ms_total`,
    at most; `unowned_partition_ms_total`, the total measured (null unless every round's
    lower and upper ends are one figure)."""
    return interval_totals("unowned", "unowned_min_ms_total", "unowned_max_ms_total",
                           "unowned_partition_ms_total")


def group_metrics(events: DataFrame, episodes_df: DataFrame, storms_df: DataFrame,
                  flapping_df: DataFrame, outcomes_df: DataFrame) -> DataFrame:
    """One row per group: the fields of docs/commands/analyze.md first, then the extra metrics."""
    done = episodes_df.filter(F.col("outcome").isin(*ROUND_OUTCOMES))
    per = done.groupBy("group").agg(
        *_duration_figures(), *_unowned_totals(),
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
        **{c: F.when(F.col("rebalances") == 0, zero.cast("long")).otherwise(F.col(c))
           for c in ("time_rebalancing_min_ms", "time_rebalancing_max_ms")},
    })
    # a rate over the window the inputs observed the group (null when that is no time)
    out = out.withColumn("rebalances_per_hour", F.when(span_h > 0, F.round(
        F.col("rebalances") / span_h, 3)))
    return out.select(*GROUP_METRIC_COLUMNS).orderBy(F.desc("rebalances"), "group")
