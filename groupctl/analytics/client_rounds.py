"""The clients' own logs as a witness of rounds (observed.witnessed): a classic group's
generations as its members joined and got their assignments, a KIP-848 consumer's member
epochs as its members reconciled to them."""
from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from .episodes import finish_episodes

CLASSIC_START = ("joining", "rejoin_requested", "rebalance_started")
CLASSIC_END = ("synced", "assigned")


def _classic_client_rounds(events: DataFrame) -> DataFrame:
    """Per member (file, group, client) and round: the generation it joined, when it began
    to rejoin (its first joining line since its previous join), why, and its first
    synced / assigned line after the join."""
    kind = F.col("kind")
    rows = events.filter((F.col("source") == "client-log") & F.col("epoch").isNull()
                         & kind.isin("joined", *CLASSIC_START, *CLASSIC_END))
    rank = F.when(kind == "joined", 1).when(kind.isin(*CLASSIC_END), 2).otherwise(0)
    member = Window.partitionBy("file", "group", "client")
    rows = rows.withColumn("round", F.sum((kind == "joined").cast("int")).over(
        member.orderBy("ts", rank, "kind").rowsBetween(Window.unboundedPreceding, 0)))
    start = kind.isin(*CLASSIC_START)
    rounds = rows.groupBy("file", "group", "client", "round").agg(
        F.min(F.when(start, F.col("ts"))).alias("rejoining"),
        F.min_by(F.when(start, F.col("reason")), F.when(start, F.col("ts"))).alias("why"),
        F.max(F.when(kind == "joined", F.col("generation"))).alias("to_generation"),
        F.min(F.when(kind == "joined", F.col("ts"))).alias("joined"),
        F.min(F.when(kind.isin(*CLASSIC_END), F.col("ts"))).alias("assigned"))
    # the joining lines of round k come before its join, so they carry round k - 1
    prev = member.orderBy("round")
    return rounds.withColumns({"rejoining": F.lag("rejoining").over(prev),
                               "why": F.lag("why").over(prev)}) \
        .filter(F.col("to_generation") >= 0)


def client_episodes(events: DataFrame) -> DataFrame:
    """Classic groups: one row per generation some member's log joined (from the first
    member that began to rejoin to the last that got its assignment); KIP-848 consumers:
    one per member epoch some member reconciled to (RECONCILING -> STABLE)."""
    rounds = _classic_client_rounds(events)
    classic = rounds.groupBy("group", "to_generation").agg(
        F.min(F.coalesce("rejoining", "joined")).alias("started"),
        F.max(F.coalesce("assigned", "joined")).alias("ended"),
        F.min_by("why", F.coalesce("rejoining", "joined")).alias("reason"),
    ).withColumns({"group_type": F.lit("classic"),
                   "from_generation": F.col("to_generation") - 1})
    kind = F.col("kind")
    kip848 = (events.filter((F.col("source") == "client-log") & F.col("epoch").isNotNull()
                            & kind.isin("reconciling", "stable"))
              .groupBy("file", "group", "client", "epoch").agg(
                  F.min(F.when(kind == "reconciling", F.col("ts"))).alias("started"),
                  F.min(F.when(kind == "stable", F.col("ts"))).alias("ended"))
              .filter(F.col("ended") >= F.col("started"))
              .groupBy("group", F.col("epoch").alias("to_generation"))
              .agg(F.min("started").alias("started"), F.max("ended").alias("ended")))
    kip848 = kip848.withColumns({
        "group_type": F.lit("consumer"),
        "from_generation": F.lag("to_generation").over(
            Window.partitionBy("group").orderBy("to_generation")),
        "reason": F.lit(None).cast("string")})
    both = classic.unionByName(kip848).withColumn("outcome", F.lit("stable"))
    return finish_episodes(both)
