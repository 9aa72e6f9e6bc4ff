"""Extract: one reader per source, each ending in the event schema (schema.EVENT_COLUMNS).

Built-in Spark functions only (`F.regexp_extract`, `rlike`, `startswith`): no Python UDF
touches a line. A line's kind is chosen by a cheap prefix test and confirmed by its regex;
the fields of that kind are then pulled from the same regex, inside a CASE on the kind, so
each line pays only for the patterns it could be.

Every reader returns (events, unparsed): `unparsed` holds one row per line that is neither
a record nor a record's continuation (garbage) or a record of ours cut short (truncated),
with its file: counted per file by the pipeline, never fatal.
"""
from __future__ import annotations

from functools import reduce
from typing import Sequence

from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

from . import patterns as P
from .schema import EVENT_SCHEMA, conform

INT_FIELDS = {f.name for f in EVENT_SCHEMA.fields
              if isinstance(f.dataType, (T.IntegerType, T.LongType))}


def read_lines(spark: SparkSession, paths: Sequence[str]) -> DataFrame:
    """(file, line, pos) of every line; .gz files are decompressed by Spark's codecs.
    `pos` orders lines within a file (it grows along each file's splits)."""
    return (spark.read.text(list(paths))
            .select(F.col("_metadata.file_path").alias("file"), F.col("value").alias("line"),
                    F.monotonically_increasing_id().alias("pos")))


def _nullif_empty(col: Column) -> Column:
    return F.when(col == "", None).otherwise(col)


def _match(msg: Column, pat: P.LinePattern) -> Column:
    return msg.startswith(pat.prefix) & msg.rlike(pat.regex)


def _classify(df: DataFrame, pats: Sequence[P.LinePattern]) -> tuple[DataFrame, dict[str, Column]]:
    """`df` with `_pat`, the index of the pattern its `msg` matches (null: not ours), and
    each field's column: a CASE over the patterns that have it, on the materialised index
    (two patterns may share a kind)."""
    msg = F.col("msg")
    index = reduce(lambda acc, ip: acc.when(_match(msg, ip[1]), F.lit(ip[0])),
                   list(enumerate(pats))[1:], F.when(_match(msg, pats[0]), F.lit(0)))
    df = df.withColumn("_pat", index).filter(F.col("_pat").isNotNull())
    pat = F.col("_pat")
    fields: dict[str, Column] = {"kind": F.element_at(F.array(*[F.lit(p.kind) for p in pats]),
                                                      pat + 1)}
    for name in sorted({name for p in pats for name in p.fields}):
        col = None
        for i, p in enumerate(pats):
            if name in p.fields:
                value = _nullif_empty(F.regexp_extract(msg, p.regex, p.fields[name]))
                col = F.when(pat == i, value) if col is None else col.when(pat == i, value)
        fields[name] = col
    return df, fields


def _events(df: DataFrame, fields: dict[str, Column], source: str,
            extra: dict[str, Column]) -> DataFrame:
    cols = {"source": F.lit(source), **extra}
    for name, col in fields.items():
        cols[name] = col.cast("long" if name == "duration_ms" else "int") \
            if name in INT_FIELDS else col
    return conform(df.withColumns(cols))


def _log4j_ts(text: Column, tz: str) -> Column:
    ts = F.to_timestamp(text, P.LOG4J_TS_FORMAT)
    return ts if tz.upper() in ("UTC", "Z") else F.to_utc_timestamp(ts, tz)


def _unparsed(lines: DataFrame, ok: Column, candidate: Column, truncated_regex: str,
              source: str) -> DataFrame:
    """Lines that are garbage (no record start, no continuation) or one of ours cut short.
    Cheap tests first: most lines are well-formed records starting with `[`."""
    line = F.col("line")
    garbage = (line != "") & F.when(line.startswith("["), ~line.rlike(P.LOG4J_START)) \
        .otherwise(~line.rlike(P.CONTINUATION))
    truncated = candidate & ~ok & line.rlike(truncated_regex)
    return lines.filter(garbage | truncated).select("file", F.lit(source).alias("source"))


def broker_events(lines: DataFrame, tz: str = "UTC") -> tuple[DataFrame, DataFrame]:
    """Group-coordinator lines of Kafka 4.x (GroupMetadataManager) and 3.x (GroupCoordinator).
    Only lines that name the coordinator (a substring test) pay for the regexes."""
    line = F.col("line")
    candidate = line.contains(" [GroupCoordinator ")
    df = lines.filter(candidate).withColumns({
        "msg_full": F.regexp_extract(line, P.LOG4J_LINE, 3),
        "logger": F.regexp_extract(line, P.LOG4J_LINE, 4),
        "ts_text": F.substring(line, 2, 23),
    })
    ours = df.filter(F.col("logger").rlike(P.BROKER_LOGGERS)
                     & F.col("msg_full").startswith("[GroupCoordinator "))
    ours = ours.withColumns({
        "broker": F.regexp_extract("msg_full", P.BROKER_PREFIX, 1).cast("int"),
        "msg": F.regexp_replace("msg_full", P.BROKER_PREFIX, ""),
    })
    ours, fields = _classify(ours, P.BROKER_PATTERNS)
    events = _events(ours, fields, "broker-log",
                     {"ts": _log4j_ts(F.col("ts_text"), tz)})
    unparsed = _unparsed(lines, line.rlike(P.LOG4J_LINE), candidate, P.BROKER_TRUNCATED,
                         "broker-log")
    return events, unparsed


def java_client_events(lines: DataFrame, tz: str = "UTC") -> DataFrame:
    """The Java consumer's coordinator lines (`[Consumer clientId=C, groupId=G] ...`)."""
    df = lines.withColumns({
        "msg_full": F.regexp_extract(F.col("line"), P.LOG4J_LINE, 3),
        "logger": F.regexp_extract(F.col("line"), P.LOG4J_LINE, 4),
        "ts_text": F.regexp_extract(F.col("line"), P.LOG4J_LINE, 1),
    })
    ours = df.filter(F.col("logger").rlike(P.JAVA_LOGGERS)
                     & F.col("msg_full").startswith("[Consumer clientId="))
    ours = ours.withColumns({
        "client_id": _nullif_empty(F.regexp_extract("msg_full", P.JAVA_PREFIX, 1)),
        "group_id": _nullif_empty(F.regexp_extract("msg_full", P.JAVA_PREFIX, 2)),
        "msg": F.regexp_replace("msg_full", P.JAVA_PREFIX, ""),
    })
    ours, fields = _classify(ours, P.JAVA_PATTERNS)
    events = _events(ours, fields, "client-log",
                     {"ts": _log4j_ts(F.col("ts_text"), tz), "client": F.col("client_id"),
                      "group": F.col("group_id")})
    return events


def rdkafka_client_events(lines: DataFrame) -> DataFrame:
    """librdkafka `debug=cgrp` lines. A JoinGroup response names no group: it takes the
    group of the same client instance's latest line that did."""
    line = F.col("line")
    df = lines.filter(line.startswith("%")).withColumns({
        "epoch_s": F.regexp_extract(line, P.RDKAFKA_LINE, 2),
        "facility": F.regexp_extract(line, P.RDKAFKA_LINE, 3),
        "client_id": F.regexp_extract(line, P.RDKAFKA_LINE, 4),
        "instance": F.regexp_extract(line, P.RDKAFKA_LINE, 5),
        "msg": F.regexp_extract(line, P.RDKAFKA_LINE, 6),
    }).filter(F.col("facility").isin(*P.RDKAFKA_FACILITIES))
    named = df.withColumn("group_named", _nullif_empty(
        F.regexp_extract("msg", r'Group "([^"]+)"', 1)))
    order = Window.partitionBy("file", "client_id", "instance").orderBy("pos") \
        .rowsBetween(Window.unboundedPreceding, 0)
    named = named.withColumn("group_ctx", F.last("group_named", ignorenulls=True).over(order))
    named, fields = _classify(named, P.RDKAFKA_PATTERNS)
    fields = {**fields, "group": F.coalesce(fields.get("group"), F.col("group_ctx"))}
    return _events(named, fields, "client-log", {
        "ts": F.timestamp_seconds(F.col("epoch_s").cast(T.DecimalType(20, 3))),
        "client": F.col("client_id")})


def client_events(lines: DataFrame, tz: str = "UTC") -> tuple[DataFrame, DataFrame]:
    """Java and librdkafka client lines (one glob may hold both)."""
    events = java_client_events(lines, tz).unionByName(rdkafka_client_events(lines))
    line = F.col("line")
    garbage = (line != "") & F.when(line.startswith("["), ~line.rlike(P.LOG4J_START)) \
        .when(line.startswith("%"), ~line.rlike(P.RDKAFKA_LINE)) \
        .otherwise(~line.rlike(P.CONTINUATION))
    truncated = line.contains("[Consumer clientId=") & ~line.rlike(P.LOG4J_LINE) \
        & line.rlike(P.JAVA_TRUNCATED)
    unparsed = lines.filter(garbage | truncated).select("file", F.lit("client-log").alias("source"))
    return events, unparsed


RECORD_SCHEMA = T.StructType([
    *(T.StructField(n, T.StringType()) for n in (
        "ts", "source", "cluster", "group", "event", "reason", "member_id", "instance_id",
        "client_id", "state", "action", "protocol", "name", "started", "ended")),
    *(T.StructField(n, T.LongType()) for n in (
        "v", "generation", "from_generation", "to_generation", "group_epoch", "member_epoch",
        "duration_ms", "moved_partitions", "code")),
    T.StructField("members_after", T.ArrayType(T.StringType())),
    T.StructField("members", T.ArrayType(T.StringType())),
    T.StructField("_corrupt_record", T.StringType()),
])
RECORD_KINDS = {"member_joined": "member_joined", "member_left": "member_left",
                "epoch": "epoch_bumped", "rebalance": "rebalance", "generation": "generation",
                "state": "state", "probe": "probe", "error": "error",
                "assignment": "assignment"}


def record_events(spark: SparkSession, paths: Sequence[str]) -> tuple[DataFrame, DataFrame]:
    """groupctl's own §4 ndjson records (`watch` / `join --watch --record`)."""
    raw = (spark.read.schema(RECORD_SCHEMA).option("mode", "PERMISSIVE")
           .option("columnNameOfCorruptRecord", "_corrupt_record").json(list(paths))
           .withColumn("file", F.col("_metadata.file_path")))
    ts = F.to_timestamp("ts")
    good = (F.col("_corrupt_record").isNull() & ts.isNotNull() & F.col("event").isNotNull()
            & F.col("group").isNotNull())
    kind = reduce(lambda acc, kv: acc.when(F.col("event") == kv[0], F.lit(kv[1])),
                  RECORD_KINDS.items(), F).otherwise(F.col("event"))
    is_rebalance = F.col("event") == "rebalance"
    events = raw.filter(good).withColumns({
        "kind": kind,
        "ts": F.when(is_rebalance, F.to_timestamp("ended")).otherwise(ts),
        "generation": F.when(is_rebalance, F.col("to_generation")).otherwise(F.col("generation")),
        "epoch": F.coalesce("group_epoch", "member_epoch"),
        "member": F.col("member_id"),
        "client": F.col("client_id"),
        "members": F.size(F.coalesce("members_after", "members")),
        "reason": F.coalesce("reason", "action", "name"),
    })
    events = conform(events.withColumn("members", F.when(F.col("members") < 0, None)
                                       .otherwise(F.col("members"))))
    unparsed = raw.filter(~good).select("file", F.lit("events").alias("source"))
    return events, unparsed
