"""The broker log's rounds (one row per rebalance), a pure transform of the event
DataFrame: no I/O, no Python UDFs (tests/analytics/test_analyze_transforms.py).

- classic: `Preparing to rebalance ... old generation N` -> `Stabilized group ... generation
  N+1` (or `is now empty`) -> `Assignment received from leader ... generation N+1` (the
  leader's SyncGroup: members have their assignment). started = the first Preparing line
  of the round after the generation before it stood, ended = the assignment (else the
  Stabilized line). A round whose Preparing line the log lacks is placed at its
  Stabilized line, its duration unknown (null). A generation logged twice (a restarted or new coordinator reloaded the
  group from its last written generation and made the next again) is the last one; a
  round a restart dropped is not the start of the one made later. The reason is the first
  Preparing line's (KIP-800: the broker's words and the client's own reason).
- consumer (KIP-848), share (KIP-932) and streams (KIP-1071) groups: `Bumped group epoch`
  ... -> `Computed a new target assignment for epoch E`. Bumps that arrive before the
  target is computed fold into one episode; the member that joined, left or was fenced
  first in it is the trigger. An episode that ends with the group empty has no target
  assignment: outcome `empty`. Share and streams groups log no bump when a member leaves
  (the target's epoch, or the last known epoch + 1 when the group is left empty, stands in).
  Lines of one millisecond are taken in the order the broker wrote them (LINE_ORDER).
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
from .schema import COST_FIELDS, EPISODE_COLUMNS

# The broker's lines in the order it wrote them: by millisecond, then (several brokers'
# logs) by broker, then in its log's own order (extract.read_lines' `pos`): lines of one
# millisecond are in the order the coordinator handled them
LINE_ORDER = ("ts", "broker", "pos")
MEMBER_CHANGE_KINDS = ("member_joined", "member_left", "member_fenced", "member_failed")


def millis(col: Column) -> Column:
    return F.unix_millis(col)


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
    # a generation logged twice (a restarted or new coordinator reloaded the group from its
    # last written generation and made the next one again): the last one stood
    ends = (broker.filter(F.col("kind").isin("stabilized", "empty"))
            .groupBy("group", F.col("generation").alias("to_generation"))
            .agg(F.max("ts").alias("stabilized"), F.max_by("members", "ts").alias("members_after"),
                 F.max_by("kind", "ts").alias("end_kind"), F.max_by("broker", "ts").alias("broker")))
    ends = ends.withColumn("after", F.lag("stabilized").over(
        Window.partitionBy("group").orderBy("to_generation")))
    bounds = ends.select("group", "to_generation", "after", "stabilized")
    # the round: its Preparing lines after the generation before it stood (a round a restart
    # dropped, begun from a generation made again later, is not this one's start)
    prepares = (broker.filter(F.col("kind") == "prepare")
                .select("group", (F.col("generation") + 1).alias("to_generation"),
                        F.col("ts").alias("prep_ts"), "reason",
                        F.col("broker").alias("prep_broker"), "generation")
                .join(bounds, ["group", "to_generation"], "inner")
                .filter((F.col("after").isNull() | (F.col("prep_ts") >= F.col("after")))
                        & (F.col("prep_ts") <= F.col("stabilized")))
                .groupBy("group", "to_generation")
                .agg(F.min("prep_ts").alias("started"),
                     F.min_by("reason", "prep_ts").alias("reason"),
                     F.min_by("prep_broker", "prep_ts").alias("prep_broker"),
                     F.min("generation").alias("from_generation")))
    synced = (broker.filter(F.col("kind") == "assignment_received")
              .select("group", F.col("generation").alias("to_generation"),
                      F.col("ts").alias("synced_ts"))
              .join(bounds, ["group", "to_generation"], "inner")
              .filter(F.col("synced_ts") >= F.col("stabilized"))
              .groupBy("group", "to_generation")
              .agg(F.min("synced_ts").alias("synced")))
    moved = (events.filter((F.col("kind") == "rebalance") & F.col("generation").isNotNull())
             .groupBy("group", F.col("generation").alias("to_generation"))
             .agg(F.max("moved_partitions").alias("moved_partitions")))
    ends = ends.drop("after")
    ep = (ends.join(prepares, ["group", "to_generation"], "left")
          .join(synced, ["group", "to_generation"], "left")
          .join(moved, ["group", "to_generation"], "left"))
    by_gen = Window.partitionBy("group").orderBy("to_generation")
    ep = ep.withColumns({
        "group_type": F.lit("classic"),
        # a round whose Preparing line the log lacks (it began before the log does, or on a
        # broker whose log was not given) is placed at its Stabilized line; its duration is
        # not known: the time since that line is only a piece of it
        "_begun": F.col("started").isNotNull(),
        "started": F.coalesce("started", "stabilized"),
        "ended": F.when(F.col("end_kind") == "empty", F.col("stabilized"))
                  .otherwise(F.coalesce("synced", "stabilized")),
        "members_before": F.lag("members_after").over(by_gen),
        "outcome": F.when(F.col("end_kind") == "empty", F.lit("empty")).otherwise(F.lit("stable")),
        "broker": F.coalesce("broker", "prep_broker"),
        "members_after": F.when(F.col("end_kind") == "empty", F.lit(0))
                          .otherwise(F.col("members_after")),
    })
    ep = finish_episodes(ep, keep=("_begun", "stabilized"))
    return ep.withColumn("duration_ms", F.when(F.col("_begun"), F.col("duration_ms"))
                         ).transform(lambda e: _reloaded(e, broker)).drop("_begun", "stabilized")


def _reloaded(ep: DataFrame, broker: DataFrame) -> DataFrame:
    """`_reloaded`: a coordinator loaded the group between the round's first Preparing line
    and its Stabilized line (a broker restarted, or the coordinator moved, mid-round): the
    round was begun again there, and its members were rebalancing from the first line; a
    watch that looked only after the load saw the round begun again, not its start."""
    loads = broker.filter(F.col("kind") == "loaded").select("group", F.col("ts").alias("_load"))
    hit = (ep.select("group", "to_generation", "started", "stabilized").join(loads, "group")
           .filter((F.col("_load") > F.col("started")) & (F.col("_load") < F.col("stabilized")))
           .select("group", "to_generation", F.lit(True).alias("_reloaded")).distinct())
    return ep.join(hit, ["group", "to_generation"], "left").withColumn(
        "_reloaded", F.coalesce(F.col("_reloaded"), F.lit(False)))


def finish_episodes(ep: DataFrame, keep: tuple[str, ...] = ()) -> DataFrame:
    ep = ep.withColumns({
        "duration_ms": millis(F.col("ended")) - millis(F.col("started")),
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
    ev = _without_rejected_joins(ev)
    order = Window.partitionBy("group").orderBy(*LINE_ORDER)
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
        "seq": F.row_number().over(order),
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


def _without_rejected_joins(ev: DataFrame) -> DataFrame:
    """A member's join line the broker followed with no epoch bump (the join it refused:
    INVALID_REGULAR_EXPRESSION, an unknown assignor, ...): no member joined, no round began
    (it became a 16 s "rebalance" from the refused join to the next real round, blamed on
    the refused member). In the log's order, each bump is the latest join's before it that
    has none yet, between two leave / fence / target lines of the coordinator: a join the
    broker took logs its bump in the same coordinator event, right after it; a member
    subscribing by a pattern the group has not resolved yet gets its bump in a later event,
    when the resolution comes back (GroupMetadataManager.handleRegularExpressionsResult),
    maybe after other members' joins and bumps. A join left with no bump was refused."""
    kind = F.col("kind")
    by_broker = Window.partitionBy("group", "broker").orderBy(*LINE_ORDER)
    ev = ev.withColumn("_segment", F.sum(kind.isin(
        "member_left", "member_fenced", "member_failed", "target_computed").cast("int")).over(
        by_broker.rowsBetween(Window.unboundedPreceding, 0)))
    by_segment = Window.partitionBy("group", "broker", "_segment").orderBy(*LINE_ORDER)
    step = F.when(kind == "member_joined", 1).when(kind == "epoch_bumped", -1).otherwise(0)
    ev = ev.withColumn("_open", F.sum(step).over(
        by_segment.rowsBetween(Window.unboundedPreceding, 0)))
    # a join is matched when a later bump of the segment closes it: the running count of
    # unmatched joins falls below its own
    ev = ev.withColumn("_closed", F.min("_open").over(
        by_segment.rowsBetween(1, Window.unboundedFollowing)))
    closed = F.col("_closed")
    refused = (kind == "member_joined") & (closed.isNull() | (closed >= F.col("_open")))
    return ev.filter(~refused).drop("_segment", "_open", "_closed")


def broker_episodes(events: DataFrame) -> DataFrame:
    """The broker log's episodes (observed.witnessed adds the records' and the clients')."""
    return classic_episodes(events).unionByName(
        consumer_episodes(events).withColumn("_reloaded", F.lit(False)))
