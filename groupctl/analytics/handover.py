"""The clients' own unowned-partition figure (issue 19), from `--client-logs`.

No observer of the broker sees when a member of an eager classic group stops: the
coordinator voids every assignment when the round starts, the member learns it at its next
heartbeat. Its own log says so. Per partition, from the client line that gave it up
(revoke) to the next client line, of any member, that took it (assign):

- the Java consumer (classic protocol, INFO): `Revoke previously assigned partitions [..]`
  (just before onPartitionsRevoked) gives up the partitions named; `Notifying assignor
  about the new Assignment(partitions=[..])` names the whole new assignment, and a partition
  in it takes over only from an open revoke (one still held is no handover);
- librdkafka with `debug=cgrp` (librdkafka >= 1.6): after every change of the member's
  assignment it lists the whole of it (`GRPASSIGNMENT` `List with N partition(s):` and one
  line per partition), or says `clearing group assignment`; the difference between two
  consecutive lists is what it gave up and what it took, eager or incremental alike. Its
  `delegating [incremental] revoke of N partition(s)` line names no partition: a log that
  lacks the lists (filtered by facility, an older librdkafka) falls back to each member's
  own eager revoke -> its next assign, counted for the N partitions it revoked
  (basis `client_logs_per_member`, an estimate: where they went is not said).

A handover belongs to the generation that gave the partition out: the member's latest
joined generation (Java `Successfully joined/synced`, librdkafka `JoinGroup response`) at
its assign line. A revoke nobody's log takes up again (the group emptied, or its next owner
logged nothing) is counted apart per round (`client_unassigned_partitions`), never summed.
Figures are joined to classic episodes by (group, generation).

Built-in functions only (regexp_extract, windows, array_except): no Python UDF.
"""
from __future__ import annotations

from functools import reduce
from typing import Optional

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

from . import patterns as P
from .extract import rdkafka_group_context
from .schema import CLIENT_COST_FIELDS, EPISODE_TABLE_COLUMNS, ROUND_COLUMNS

MEASURED = "client_logs"                  # per partition, named by the clients' lines
PER_MEMBER = "client_logs_per_member"     # partitions not named: each member's own gap
RELEASE, ACQUIRE = 0, 1

# librdkafka debug=cgrp lines read here, by facility (the `|FAC|` field)
RD_FACILITIES = ("GRPASSIGNMENT", "ASSIGNMENT", "ASSIGN", "JOINGROUP")
RD_LIST_HEAD = r"^List with \d+ partition\(s\):$"
RD_LIST_ITEM = r"^ (\S+) \[(\d+)\] offset "
RD_CLEARED = r'^Group "[^"]+": clearing group assignment$'
# an incremental revoke of everything held empties the assignment without `clearing`
RD_REMOVED = (r'^Group "[^"]+": (\d+) partition\(s\) being removed from group assignment '
              r"of (\d+) partition\(s\)$")
RD_DELEGATED = (r'^Group "[^"]+": delegating (incremental )?(revoke|assign) of (\d+) '
                r"partition\(s\) to application")
RD_JOINED = r"^JoinGroup response: GenerationId (\d+), .*: \(no error\)$"
JAVA_LIST_SEP = ", "


def _ms(col: Column) -> Column:
    return F.unix_millis(col)


def rdkafka_lines(lines: DataFrame) -> DataFrame:
    """librdkafka lines this module reads, one row each: file, pos, key (the client
    instance), ts, group (extract.rdkafka_group_context), gen (its latest
    JoinGroup generation), kind (list / item / cleared / delegated / joined), tp (an
    item's `topic-partition`), verb / incremental / count (a delegation), named (the
    instance logs its assignment lists)."""
    line = F.col("line")
    wanted = reduce(lambda a, b: a | b, [line.contains(f"|{f}|") for f in RD_FACILITIES])
    df = lines.filter(line.startswith("%") & (wanted | line.contains(P.RDKAFKA_NAMES_GROUP))) \
        .select("file", "pos", "line", *[
            F.regexp_extract(line, P.RDKAFKA_LINE, i).alias(name) for i, name in
            ((2, "epoch_s"), (3, "fac"), (4, "client"), (5, "instance"), (6, "msg"))])
    df = df.withColumn("group", rdkafka_group_context(line, "file", "client", "instance"))
    msg, fac = F.col("msg"), F.col("fac")
    removed_all = (msg.rlike(RD_REMOVED) & (F.regexp_extract(msg, RD_REMOVED, 1)
                                             == F.regexp_extract(msg, RD_REMOVED, 2)))
    kind = (F.when((fac == "GRPASSIGNMENT") & msg.rlike(RD_LIST_HEAD), F.lit("list"))
            .when((fac == "GRPASSIGNMENT") & msg.rlike(RD_LIST_ITEM), F.lit("item"))
            .when((fac == "ASSIGNMENT") & (msg.rlike(RD_CLEARED) | removed_all), F.lit("cleared"))
            .when((fac == "ASSIGN") & msg.rlike(RD_DELEGATED), F.lit("delegated"))
            .when((fac == "JOINGROUP") & msg.rlike(RD_JOINED), F.lit("joined")))
    df = df.withColumn("kind", kind).filter(F.col("kind").isNotNull())
    kind = F.col("kind")
    df = df.withColumns({
        "key": F.concat_ws("|", "file", "client", "instance"),
        "ts": F.timestamp_seconds(F.col("epoch_s").try_cast(T.DecimalType(20, 3))),
        "tp": F.when(kind == "item", F.concat(F.regexp_extract(msg, RD_LIST_ITEM, 1), F.lit("-"),
                                              F.regexp_extract(msg, RD_LIST_ITEM, 2))),
        "_gen": F.when(kind == "joined", F.regexp_extract(msg, RD_JOINED, 1).cast("int")),
        "verb": F.when(kind == "delegated", F.regexp_extract(msg, RD_DELEGATED, 2)),
        "incremental": F.when(kind == "delegated", F.regexp_extract(msg, RD_DELEGATED, 1) != ""),
        "count": F.when(kind == "delegated", F.regexp_extract(msg, RD_DELEGATED, 3).cast("int")),
    })
    whole = Window.partitionBy("key")
    upto = whole.orderBy("pos").rowsBetween(Window.unboundedPreceding, 0)
    return df.withColumns({
        "gen": F.last("_gen", ignorenulls=True).over(upto),
        "list_pos": F.last(F.when(kind == "list", F.col("pos")), ignorenulls=True).over(upto),
        "named": F.max((kind == "list").cast("int")).over(whole) == 1,
    }).drop("_gen", "epoch_s", "msg", "fac", "line")


def rdkafka_edges(rd: DataFrame) -> DataFrame:
    """Per named instance, each change of its assignment as edges: (group, key, ts, gen,
    tp, edge) - RELEASE for a partition gone from one list to the next, ACQUIRE for one new."""
    named = rd.filter(F.col("named"))
    lists = (named.filter(F.col("kind").isin("list", "item"))
             .groupBy("key", "list_pos").agg(
                 F.min(F.when(F.col("kind") == "list", F.col("ts"))).alias("ts"),
                 F.max("group").alias("group"), F.max("gen").alias("gen"),
                 F.array_sort(F.collect_list("tp")).alias("held"))
             .withColumnRenamed("list_pos", "pos"))
    empty = F.array().cast(T.ArrayType(T.StringType()))
    cleared = named.filter(F.col("kind") == "cleared").select(
        "key", "pos", "ts", "group", "gen", empty.alias("held"))
    snaps = lists.unionByName(cleared)
    prev = F.coalesce(F.lag("held").over(Window.partitionBy("key").orderBy("pos")), empty)
    snaps = snaps.withColumns({"_gone": F.array_except(prev, "held"),
                               "_new": F.array_except("held", prev)})
    cols = ("group", "key", "ts", "gen")
    return (snaps.select(*cols, F.explode("_gone").alias("tp"), F.lit(RELEASE).alias("edge"))
            .unionByName(snaps.select(*cols, F.explode("_new").alias("tp"),
                                      F.lit(ACQUIRE).alias("edge"))))


def java_edges(events: DataFrame) -> DataFrame:
    """The Java classic consumer's revoke and assignment lines as edges (librdkafka's
    `revoked` / `assigned` events carry a count, not names: left out)."""
    kind = F.col("kind")
    rows = events.filter((F.col("source") == "client-log") & F.col("epoch").isNull() & (
        kind.isin("joined", "synced")
        | (kind.isin("revoked", "assigned") & ~F.col("partitions").rlike(r"^\d+$"))))
    rank = F.when(kind.isin("joined", "synced"), 0).when(kind == "revoked", 1).otherwise(2)
    upto = (Window.partitionBy("file", "client", "group").orderBy("ts", rank)
            .rowsBetween(Window.unboundedPreceding, 0))
    rows = rows.withColumns({
        "gen": F.last(F.when(kind.isin("joined", "synced"), F.col("generation")),
                      ignorenulls=True).over(upto),
        "key": F.concat_ws("|", "file", "client")})
    moves = rows.filter(kind.isin("revoked", "assigned") & F.col("partitions").isNotNull())
    return moves.select(
        "group", "key", "ts", "gen",
        F.explode(F.split("partitions", JAVA_LIST_SEP)).alias("tp"),
        F.when(kind == "revoked", RELEASE).otherwise(ACQUIRE).alias("edge"))


def handovers(edges: DataFrame) -> DataFrame:
    """One row per partition and handover: a gap (acquire right after a release, in time
    across every member of the group: gap_ms, gen = the acquiring generation) or an
    unmatched release (followed by another release or nothing: gen = its own + 1)."""
    order = Window.partitionBy("group", "tp").orderBy("ts", "edge", "key")
    e = edges.withColumns({"_prev": F.lag("edge").over(order),
                           "_prev_ts": F.lag("ts").over(order),
                           "_next": F.lead("edge").over(order)})
    gap = (F.col("edge") == ACQUIRE) & (F.col("_prev") == RELEASE)
    lost = (F.col("edge") == RELEASE) & (F.col("_next").isNull() | (F.col("_next") == RELEASE))
    return e.filter(gap | lost).select(
        "group", "tp",
        F.when(gap, F.col("gen")).otherwise(F.col("gen") + 1).alias("gen"),
        F.when(gap, _ms(F.col("ts")) - _ms(F.col("_prev_ts"))).alias("gap_ms"),
        F.lit(1).alias("weight"), F.lit(0).alias("per_member"))


def per_member_gaps(rd: DataFrame) -> DataFrame:
    """Instances that name no partitions: each eager `delegating revoke of N` to the same
    member's next non-empty assign, weight N; an incremental revoke (its partitions go to
    another member, unnamed) or one with no assign after it is unmatched."""
    d = rd.filter(~F.col("named") & (F.col("kind") == "delegated"))
    is_assign = (F.col("verb") == "assign") & (F.col("count") > 0)
    after = Window.partitionBy("key").orderBy("pos").rowsBetween(1, Window.unboundedFollowing)
    d = d.withColumns({
        "_next_ts": F.first(F.when(is_assign, F.col("ts")), ignorenulls=True).over(after),
        "_next_gen": F.first(F.when(is_assign, F.col("gen")), ignorenulls=True).over(after)})
    revokes = d.filter((F.col("verb") == "revoke") & (F.col("count") > 0))
    paired = ~F.col("incremental") & F.col("_next_ts").isNotNull()
    return revokes.select(
        "group", F.lit(None).cast("string").alias("tp"),
        F.when(paired, F.col("_next_gen")).otherwise(F.col("gen") + 1).alias("gen"),
        F.when(paired, _ms(F.col("_next_ts")) - _ms(F.col("ts"))).alias("gap_ms"),
        F.col("count").alias("weight"), F.lit(1).alias("per_member"))


def round_cost(gaps: DataFrame) -> DataFrame:
    """Per (group, generation): the clients' figures (CLIENT_COST_FIELDS)."""
    has_gap = F.col("gap_ms").isNotNull()
    per = gaps.filter(F.col("gen").isNotNull()).groupBy("group", "gen").agg(
        F.sum(F.col("gap_ms") * F.col("weight")).alias("_sum"),
        F.max("gap_ms").alias("client_unowned_partitions_max_ms"),
        F.sum(F.when(has_gap, F.col("weight"))).alias("_n"),
        F.sum(F.when(~has_gap, F.col("weight"))).alias("_lost"),
        F.max("per_member").alias("_per_member"))
    return per.select(
        "group", F.col("gen").alias("to_generation"), F.lit("classic").alias("group_type"),
        F.coalesce("_sum", F.lit(0)).cast("long").alias("client_unowned_partition_ms"),
        F.col("client_unowned_partitions_max_ms").cast("long"),
        F.when(F.col("_per_member") == 1, F.lit(PER_MEMBER)).otherwise(F.lit(MEASURED))
         .alias("client_unowned_basis"),
        F.coalesce("_n", F.lit(0)).cast("int").alias("client_unowned_partitions"),
        F.coalesce("_lost", F.lit(0)).cast("int").alias("client_unassigned_partitions"))


def client_cost(events: DataFrame, client_lines: DataFrame, keep) -> DataFrame:
    """The clients' figures per classic round, from the client-log events (Java) and the
    client log lines (librdkafka). `keep(df)`: the run's --since/--until/--group filter,
    applied to the edges (they have group and ts)."""
    rd = rdkafka_lines(client_lines)
    named = keep(rdkafka_edges(rd).unionByName(java_edges(events)))
    return round_cost(handovers(named).unionByName(per_member_gaps(keep(rd))))


def with_client_cost(episodes: DataFrame, cost: Optional[DataFrame]) -> DataFrame:
    """`episodes` with the clients' figures of their classic round (null elsewhere, and
    every column null when no client logs were given)."""
    if cost is None:
        return episodes.select(*ROUND_COLUMNS, *[
            F.lit(None).cast(f.dataType).alias(f.name) for f in CLIENT_COST_FIELDS])
    joined = episodes.join(cost, ["group", "group_type", "to_generation"], how="left")
    return joined.select(*EPISODE_TABLE_COLUMNS)
