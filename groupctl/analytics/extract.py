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

import re
from contextlib import contextmanager
from functools import reduce
from typing import Any, Iterator, Mapping, Sequence

from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

from . import patterns as P
from .schema import COST_FIELDS, EVENT_SCHEMA, conform

UNPARSED = "unparsed"  # the kind of a damaged line's row (counted per file, then dropped)
INT_FIELDS = {f.name for f in EVENT_SCHEMA.fields
              if isinstance(f.dataType, (T.IntegerType, T.LongType))}


# The extraction's one stage runs without whole-stage code generation. Fused, its CASEs over
# every pattern are generated inline into one method (Spark splits expressions into
# methods only outside whole-stage code), far past the size HotSpot compiles
# (HugeMethodLimit, 8,000 bytes of bytecode): -XX:+PrintCompilation never listed it, and JFR
# put 42 % of the stage's samples in that code itself, interpreted. Unfused, each
# projection's expressions are split into small methods the JIT compiles. Measured on 2M
# broker-log lines (bench/analyze.py's extraction, one session, six passes each in turn,
# warm): median 5.7 s against 8.7 s fused. The tables after it keep the session's setting.
EXTRACT_CONF = {"spark.sql.codegen.wholeStage": "false"}


@contextmanager
def extraction_conf(spark: SparkSession) -> Iterator[None]:
    """EXTRACT_CONF for the queries planned inside, the session's own values after."""
    before: dict[str, str | None] = {key: spark.conf.get(key, None) for key in EXTRACT_CONF}
    for key, value in EXTRACT_CONF.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, old in before.items():
            if old is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, old)


def file_column(spark: SparkSession, renamed: Mapping[str, str] | None = None) -> Column:
    """The file a row came from, as Spark names it (`file:/a%20b/x.log`); the rows of a
    damaged file's plain copy (damage.salvage: {copy: original}) named as the original."""
    path = F.col("_metadata.file_path")
    if not renamed:
        return path
    pairs = [(path == spark_name(spark, copy), F.lit(spark_name(spark, original)))
             for copy, original in renamed.items()]
    named = F.when(*pairs[0])
    for is_copy, original in pairs[1:]:
        named = named.when(is_copy, original)
    return named.otherwise(path)


def spark_name(spark: SparkSession, path: str) -> str:
    """A local file's name in Spark's `_metadata.file_path`: Hadoop's URI of the path."""
    jvm: Any = spark._jvm   # a classic (py4j) session's gateway
    return "file:" + jvm.org.apache.hadoop.fs.Path(path).toUri().toString()


# compression suffixes Spark's text source decompresses (a rotated file may be compressed)
_CODECS = (".gz", ".bz2", ".deflate", ".lz4", ".snappy", ".zst")
# a rotated file's suffix: log4j's size rotation `.3`, a date pattern `.2026-11-27-10`
_ROTATED = re.compile(r"^(.*?)\.(\d[\d._-]*)$")


def rotation_key(path: str) -> tuple:
    """Sorts a log's rotated files oldest first, the live file (no suffix) last: `.N` of
    log4j's size rotation counts from the newest (`.1`), a date suffix grows with time
    (a single number of six digits or more is a date: `.20261127`). Files of different
    logs sort by their names."""
    name = next((path[:-len(c)] for c in _CODECS if path.endswith(c)), path)
    m = _ROTATED.match(name)
    if not m:
        return (name, 1, ())
    numbers = re.findall(r"\d+", m.group(2))
    index = len(numbers) == 1 and len(numbers[0]) < 6
    return (m.group(1), 0, tuple(-int(n) if index else int(n) for n in numbers))


def _spark_path(spark: SparkSession, path: str) -> str:
    return path if "://" in path else spark_name(spark, path)


def read_lines(spark: SparkSession, paths: Sequence[str],
               renamed: Mapping[str, str] | None = None) -> DataFrame:
    """(file, line, pos) of every line; .gz files are decompressed by Spark's codecs.
    `pos` (schema.POS_TYPE) is the line's place in the input: (file: its file's place
    among `paths`, a log's rotated files oldest first (rotation_key); split: the byte
    offset of the file split it was read from; row: its row number in that split's
    partition). Ordered by `pos`, the lines of a file are in the file's order however
    Spark cuts it: a split is read whole and in order by one task, where the row numbers
    grow, and the splits' offsets order them. (The row number alone is ordered along a
    file only as long as Spark packs a file's splits into partitions in the file's
    order, which is how its packing happens to work, not what it promises.)
    The files are cut into at least two splits per core (spark.sql.files.minPartitionNum;
    Spark's default is one per core): with one split per core, a core whose split runs
    slow (a cold executor JVM on a standalone cluster, another process on its core) held
    the whole stage up while the others sat idle."""
    spark.conf.set("spark.sql.files.minPartitionNum",
                   str(2 * spark.sparkContext.defaultParallelism))
    names = sorted({(renamed or {}).get(p, p) for p in paths}, key=rotation_key)
    places = F.create_map(*[v for i, p in enumerate(names)
                            for v in (F.lit(_spark_path(spark, p)), F.lit(i))])
    file = file_column(spark, renamed)
    pos = F.struct(F.element_at(places, file).alias("file"),
                   F.col("_metadata.file_block_start").alias("split"),
                   F.monotonically_increasing_id().alias("row"))
    return (spark.read.text(list(paths))
            .select(file.alias("file"), F.col("value").alias("line"), pos.alias("pos")))


def _nullif_empty(col: Column) -> Column:
    return F.when(col == "", None).otherwise(col)


def _match(msg: Column, pat: P.LinePattern) -> Column:
    """Byte tests every match passes first (its prefix, the literal its regex requires):
    patterns sharing a prefix (`[GroupId `) rule each other out without running a regex,
    each of which decodes the message to a Java string."""
    needle = P.required_literal(pat.regex)
    test = msg.startswith(pat.prefix)
    return (test & msg.contains(needle) if needle else test) & msg.rlike(pat.regex)


def _classify(df: DataFrame, pats: Sequence[P.LinePattern], bad: Column
              ) -> tuple[DataFrame, dict[str, Column]]:
    """Keep the rows whose `msg` matches a pattern, or that are `bad` (kind `unparsed`).
    `_pat` is the index of the matching pattern (two patterns may share a kind); each
    field is a CASE over the patterns that have it, on that materialised index."""
    msg = F.col("msg")
    index = reduce(lambda acc, ip: acc.when(_match(msg, ip[1]), F.lit(ip[0])),
                   list(enumerate(pats))[1:], F.when(_match(msg, pats[0]), F.lit(0)))
    df = (df.withColumn("_pat", index).withColumn("_bad", bad)
          .filter(F.col("_pat").isNotNull() | F.col("_bad")))
    pat = F.col("_pat")
    kinds = F.array(*[F.lit(p.kind) for p in pats])
    names = sorted({name for p in pats for name in p.fields})
    df = df.withColumn("_parts", _all_groups(msg, pat, pats, names))
    whole = F.size("_parts") == len(names)
    fields: dict[str, Column] = {
        "kind": F.when(pat.isNotNull(), F.element_at(kinds, pat + 1)).otherwise(F.lit(UNPARSED))}
    for slot, name in enumerate(names):
        # "" -> null outside the CASE: Spark evaluates a nullif's operand once (a common
        # expression), where a nullif inside each branch ran its expression twice
        value = F.when(whole, F.element_at("_parts", slot + 1)) \
            .otherwise(_one_group(msg, pat, pats, name))
        fields[name] = F.nullif(value, F.lit(""))
    return df, fields


# Between a line's fields in _all_groups' result: a control character log lines do not
# hold. A line that does (its field holds one) splits into too many parts and is read
# field by field instead (_one_group), so it changes only the speed.
FIELD_SEP = "\u0001"


def _all_groups(msg: Column, pat: Column, pats: Sequence[P.LinePattern], names: list[str]
                ) -> Column:
    """Every field of the line's pattern from one regex run: the pattern rewrites the
    message to its groups in `names` order, joined by FIELD_SEP (`$n`, or nothing for a
    field the pattern has not), then split. Reading each field with its own
    regexp_extract ran the pattern once per field: on 2M broker-log lines that was half
    the extraction's time. `(?:regex)[\\s\\S]*` takes the rest of the message into the match
    (each regex starts with `^`, so there is one match), leaving nothing else in the
    result; the groups are those of the regex's first match, as regexp_extract's."""
    out: Column | None = None
    for i, p in enumerate(pats):
        assert p.regex.startswith("^"), p.regex
        template = FIELD_SEP.join(f"${p.fields[n]}" if n in p.fields else "" for n in names)
        parts = F.split(F.regexp_replace(msg, f"(?:{p.regex})[\\s\\S]*", template), FIELD_SEP)
        out = F.when(pat == i, parts) if out is None else out.when(pat == i, parts)
    assert out is not None  # `pats` is not empty
    return out


def _one_group(msg: Column, pat: Column, pats: Sequence[P.LinePattern], name: str) -> Column:
    """Field `name` of the line's pattern by its own regex run (NULL for a pattern
    without it): what _all_groups does for a line whose fields hold FIELD_SEP."""
    col = None
    for i, p in enumerate(pats):
        if name in p.fields:
            value = F.regexp_extract(msg, p.regex, p.fields[name])
            col = F.when(pat == i, value) if col is None else col.when(pat == i, value)
    assert col is not None  # `name` is a field of some pattern
    return col


def _events(df: DataFrame, fields: dict[str, Column], source: str,
            extra: dict[str, Column]) -> DataFrame:
    cols = {"source": F.lit(source), **extra}
    for name, col in fields.items():
        cols[name] = col.cast("long" if name == "duration_ms" else "int") \
            if name in INT_FIELDS else col
    return conform(df.withColumns(cols))


def _log4j_ts(text: Column, tz: str) -> Column:
    ts = F.try_to_timestamp(text, F.lit(P.LOG4J_TS_FORMAT))
    ts = ts if tz.upper() in ("UTC", "Z") else F.to_utc_timestamp(ts, tz)
    return F.when(F.col("_pat").isNotNull(), ts)


def _garbage(line: Column, rdkafka: bool = False) -> Column:
    """Neither a record's start nor a continuation line. Cheap tests first: most lines are
    records starting with `[`, whose anchored start pattern fails or matches at once."""
    test = F.when(line.startswith("["), ~line.rlike(P.LOG4J_START))
    if rdkafka:
        test = test.when(line.startswith("%"), ~line.rlike(P.RDKAFKA_LINE))
    # a tab or a space first is a continuation (CONTINUATION's `\s`) without a regex: most
    # lines of a broker log are its config dumps' `\tkey = value` lines
    test = test.when(line.startswith("\t") | line.startswith(" "), F.lit(False))
    return (line != "") & test.otherwise(~line.rlike(P.CONTINUATION))


def broker_events(lines: DataFrame, tz: str = "UTC") -> DataFrame:
    """Group-coordinator lines of Kafka 4.x (GroupMetadataManager) and 3.x (GroupCoordinator),
    plus one `unparsed` row per damaged line, in one pass over the lines. Only lines that
    name the coordinator (a substring test) pay for the full-line regexes."""
    line = F.col("line")
    candidate = line.contains(" [GroupCoordinator ")
    garbage = _garbage(line)
    df = lines.filter(candidate | garbage).withColumns({
        "msg_full": F.when(candidate, F.regexp_extract(line, P.LOG4J_LINE, 3)),
        "logger": F.when(candidate, F.regexp_extract(line, P.LOG4J_LINE, 4)),
        "ts_text": F.substring(line, 2, 23),
    })
    ours = (F.col("logger").rlike(P.BROKER_LOGGERS)
            & F.col("msg_full").startswith("[GroupCoordinator "))
    df = df.withColumns({
        "broker": F.when(ours, F.regexp_extract("msg_full", P.BROKER_PREFIX, 1)).cast("int"),
        "msg": F.when(ours, F.regexp_replace("msg_full", P.BROKER_PREFIX, "")),
    })
    truncated = candidate & (F.col("logger") == "") & line.rlike(P.BROKER_TRUNCATED)
    df, fields = _classify(df, P.BROKER_PATTERNS, garbage | truncated)
    return _events(df, fields, "broker-log", {"ts": _log4j_ts(F.col("ts_text"), tz)})


def java_client_events(lines: DataFrame, tz: str = "UTC") -> DataFrame:
    """The Java consumer's coordinator lines (`[Consumer clientId=C, groupId=G] ...`), and
    the damaged lines among those that are not librdkafka's."""
    line = F.col("line")
    candidate = line.contains(" [Consumer clientId=")
    garbage = _garbage(line)
    df = lines.filter(~line.startswith("%") & (candidate | garbage)).withColumns({
        "msg_full": F.when(candidate, F.regexp_extract(line, P.LOG4J_LINE, 3)),
        "logger": F.when(candidate, F.regexp_extract(line, P.LOG4J_LINE, 4)),
        "ts_text": F.substring(line, 2, 23),
    })
    ours = (F.col("logger").rlike(P.JAVA_LOGGERS)
            & F.col("msg_full").startswith("[Consumer clientId="))
    df = df.withColumns({
        "client_id": F.when(ours, _nullif_empty(F.regexp_extract("msg_full", P.JAVA_PREFIX, 1))),
        "group_id": F.when(ours, _nullif_empty(F.regexp_extract("msg_full", P.JAVA_PREFIX, 2))),
        "msg": F.when(ours, F.regexp_replace("msg_full", P.JAVA_PREFIX, "")),
    })
    truncated = (candidate & (F.col("logger") == "") & line.rlike(P.JAVA_TRUNCATED)
                 & ~line.rlike(P.JAVA_MULTILINE))
    df, fields = _classify(df, P.JAVA_PATTERNS, garbage | truncated)
    return _events(df, fields, "client-log",
                   {"ts": _log4j_ts(F.col("ts_text"), tz), "client": F.col("client_id"),
                    "group": F.col("group_id")})


def rdkafka_group_context(line: Column, *instance: str) -> Column:
    """The group of the client instance's latest line (by `pos`) naming one, this line
    included. A JoinGroup answer names no group, and a member's first answer may follow
    only CGRPSTATE / CGRPCOORD / JOIN lines naming it (when its first try was answered
    MEMBER_ID_REQUIRED): the rows this runs over must keep every line naming a group
    (line.contains(P.RDKAFKA_NAMES_GROUP)), not only the lines read for events."""
    named = _nullif_empty(F.regexp_extract(line, P.RDKAFKA_GROUP_NAMED, 1))
    upto = Window.partitionBy(*instance).orderBy("pos") \
        .rowsBetween(Window.unboundedPreceding, 0)
    return F.last(named, ignorenulls=True).over(upto)


def rdkafka_client_events(lines: DataFrame) -> DataFrame:
    """librdkafka `debug=cgrp` lines (and damaged `%` lines). A JoinGroup response names no
    group: it takes the group of the same client instance's latest line that did."""
    line = F.col("line")
    parsed = line.rlike(P.RDKAFKA_LINE)
    df = lines.filter(line.startswith("%")).withColumns({
        "_bad": ~parsed,
        "epoch_s": F.regexp_extract(line, P.RDKAFKA_LINE, 2),
        "facility": F.regexp_extract(line, P.RDKAFKA_LINE, 3),
        "client_id": F.regexp_extract(line, P.RDKAFKA_LINE, 4),
        "instance": F.regexp_extract(line, P.RDKAFKA_LINE, 5),
    })
    ours = F.col("facility").isin(*P.RDKAFKA_FACILITIES) | F.col("_bad")
    df = df.filter(ours | line.contains(P.RDKAFKA_NAMES_GROUP)) \
        .withColumn("group_ctx", rdkafka_group_context(line, "file", "client_id", "instance")) \
        .filter(ours).withColumn(
            "msg", F.when(~F.col("_bad"), F.regexp_extract(line, P.RDKAFKA_LINE, 6)))
    df, fields = _classify(df.drop("_bad"), P.RDKAFKA_PATTERNS, ~parsed)
    fields = {**fields, "group": F.coalesce(fields["group"], F.col("group_ctx"))}
    seconds = F.col("epoch_s").try_cast(T.DecimalType(20, 3))
    return _events(df, fields, "client-log", {
        "ts": F.when(F.col("_pat").isNotNull(), F.timestamp_seconds(seconds)),
        "client": F.when(F.col("_pat").isNotNull(), F.col("client_id"))})


def client_events(lines: DataFrame, tz: str = "UTC") -> DataFrame:
    """Java and librdkafka client lines (one glob may hold both)."""
    return java_client_events(lines, tz).unionByName(rdkafka_client_events(lines))


RECORD_SCHEMA = T.StructType([
    *(T.StructField(n, T.StringType()) for n in (
        "ts", "source", "cluster", "group", "event", "reason", "member_id", "instance_id",
        "client_id", "state", "action", "protocol", "name", "started", "ended", "type",
        "duration_basis")),
    *(T.StructField(n, T.LongType()) for n in (
        "v", "generation", "from_generation", "to_generation", "group_epoch", "member_epoch",
        "duration_ms", "duration_min_ms", "duration_max_ms", "moved_partitions", "code")),
    *COST_FIELDS,   # a `rebalance` record's cost (issue 19)
    T.StructField("members_before", T.ArrayType(T.StringType())),
    T.StructField("members_after", T.ArrayType(T.StringType())),
    T.StructField("members", T.ArrayType(T.StringType())),
    T.StructField("seen", T.BooleanType()),
    T.StructField("_corrupt_record", T.StringType()),
])
RECORD_KINDS = {"member_joined": "member_joined", "member_left": "member_left",
                "epoch": "epoch_bumped", "rebalance": "rebalance", "generation": "generation",
                "state": "state", "probe": "probe", "error": "error",
                "assignment": "assignment"}


def record_events(spark: SparkSession, paths: Sequence[str],
                  renamed: Mapping[str, str] | None = None) -> DataFrame:
    """groupctl's own ndjson event records (`watch` / `join --watch --record`); a line that is
    not an event record becomes an `unparsed` row."""
    raw = (spark.read.schema(RECORD_SCHEMA).option("mode", "PERMISSIVE")
           .option("columnNameOfCorruptRecord", "_corrupt_record").json(list(paths))
           .withColumn("file", file_column(spark, renamed)))
    ts = F.try_to_timestamp(F.col("ts"))
    good = (F.col("_corrupt_record").isNull() & ts.isNotNull() & F.col("event").isNotNull()
            & F.col("group").isNotNull())
    kind = reduce(lambda acc, kv: acc.when(F.col("event") == kv[0], F.lit(kv[1])),
                  RECORD_KINDS.items(), F).otherwise(F.col("event"))
    is_rebalance = F.col("event") == "rebalance"
    size = F.size(F.coalesce("members_after", "members"))
    before = F.size("members_before")
    events = raw.withColumns({
        "kind": F.when(good, kind).otherwise(F.lit(UNPARSED)),
        "ts": F.when(good, F.when(is_rebalance, F.try_to_timestamp(F.col("ended")))
                     .otherwise(ts)),
        "generation": F.when(is_rebalance, F.col("to_generation")).otherwise(F.col("generation")),
        "epoch": F.coalesce("group_epoch", "member_epoch"),
        "member": F.col("member_id"),
        "client": F.col("client_id"),
        "members": F.when(size >= 0, size),
        "reason": F.coalesce("reason", "action", "name"),
        # a rebalance record's own round; the type a type_changed / snapshot record names,
        # or a rebalance record its own (`lab workload`'s: no snapshot before it)
        "started": F.when(is_rebalance, F.try_to_timestamp(F.col("started"))),
        "members_before": F.when(is_rebalance & (before >= 0), before),
        "group_type": F.when(F.col("event").isin("type_changed", "snapshot", "rebalance"),
                             F.col("type")),
    })
    return conform(events)
