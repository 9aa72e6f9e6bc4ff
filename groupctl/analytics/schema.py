"""The pipeline's schema contracts: every extractor ends with `select(*EVENT_COLUMNS)` and
every output table is selected through its column list before it is written, so a column
that goes missing or changes type fails where it happens, not in a report.

Event rows (one per recognised log line or event record):
    group, ts (UTC timestamp), broker (coordinator id, broker logs), source (broker-log,
    client-log, probe, describe), kind, generation (classic), epoch (consumer-group epoch),
    member, instance_id, client, reason, state, members (count), protocol, group_type,
    partitions (text), duration_ms (a record's or the broker's own), moved_partitions,
    file; started, from_generation, members_before (a `rebalance` event record's own);
    pos (a log line's place in its file: POS_TYPE).
"""
from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

COST_FIELDS = (
    T.StructField("unowned_partition_ms", T.LongType()),
    T.StructField("unowned_partitions_max_ms", T.LongType()),
    T.StructField("unowned_basis", T.StringType()),
    T.StructField("slowest_member", T.StringType()),
    T.StructField("slowest_member_ms", T.LongType()),
)
COST_COLUMNS = tuple(f.name for f in COST_FIELDS)
# issue 19: the clients' own figure for a classic round, from --client-logs (handover.py):
# partition time from a client's revoke line to the next member's assign line
CLIENT_COST_FIELDS = (
    T.StructField("client_unowned_partition_ms", T.LongType()),
    T.StructField("client_unowned_partitions_max_ms", T.LongType()),
    T.StructField("client_unowned_basis", T.StringType()),
    T.StructField("client_unowned_partitions", T.IntegerType()),
    T.StructField("client_unassigned_partitions", T.IntegerType()),
)
CLIENT_COST_COLUMNS = tuple(f.name for f in CLIENT_COST_FIELDS)

# Where a log line stood in the input (extract.read_lines): its file's place among the
# inputs (a log's rotated files oldest first), the byte offset of the split it was read
# from, its row in that split's partition. Lines of one file order by it as in the file.
POS_TYPE = T.StructType([
    T.StructField("file", T.IntegerType()),
    T.StructField("split", T.LongType()),
    T.StructField("row", T.LongType()),
])

EVENT_SCHEMA = T.StructType([
    T.StructField("group", T.StringType()),
    T.StructField("ts", T.TimestampType()),
    T.StructField("broker", T.IntegerType()),
    T.StructField("source", T.StringType()),
    T.StructField("kind", T.StringType()),
    T.StructField("generation", T.IntegerType()),
    T.StructField("epoch", T.IntegerType()),
    T.StructField("member", T.StringType()),
    T.StructField("instance_id", T.StringType()),
    T.StructField("client", T.StringType()),
    T.StructField("reason", T.StringType()),
    T.StructField("state", T.StringType()),
    T.StructField("members", T.IntegerType()),
    T.StructField("protocol", T.StringType()),
    T.StructField("group_type", T.StringType()),
    T.StructField("partitions", T.StringType()),
    T.StructField("duration_ms", T.LongType()),
    # a `rebalance` record's: the least and the most its duration may be (null: not
    # bounded that way)
    T.StructField("duration_min_ms", T.LongType()),
    T.StructField("duration_max_ms", T.LongType()),
    # ...and how its duration is known (events.py: exact, interval, lower_bound, unknown)
    T.StructField("duration_basis", T.StringType()),
    T.StructField("moved_partitions", T.IntegerType()),
    T.StructField("file", T.StringType()),
    # a `rebalance` event record's own start, first generation / epoch and members before
    T.StructField("started", T.TimestampType()),
    T.StructField("from_generation", T.IntegerType()),
    T.StructField("members_before", T.IntegerType()),
    # issue 19: what a recorded rebalance cost and who held it up (events.py `rebalance`)
    *COST_FIELDS,
    # a `rebalance` record's `seen`: false for a round its observer found over between two
    # looks (its `ended` is when it was found over, not when it ended)
    T.StructField("seen", T.BooleanType()),
    # a log line's place in the input (POS_TYPE; null for an event record): the broker
    # wrote its lines in the order it handled them, which lines of one millisecond keep
    T.StructField("pos", POS_TYPE),
])
EVENT_COLUMNS = tuple(f.name for f in EVENT_SCHEMA.fields)

# Per-file line accounting (unparsed lines are counted, never fatal)
FILE_STATS_COLUMNS = ("file", "events", "unparsed")

EPISODE_COLUMNS = (
    "group", "group_type", "from_generation", "to_generation", "started", "ended",
    "duration_ms", "reason", "reason_kind", "trigger_member", "trigger_client",
    "members_before", "members_after", "moved_partitions", "outcome", "broker",
    *COST_COLUMNS,   # from groupctl's records only; null from the other witnesses
)
# the round's unowned time (unowned_partition_ms, the sum over partitions) as every witness
# of it together proves it (observed.unowned_interval): at least `unowned_min_ms` (the
# largest lower bound or the measured figure), at most `unowned_max_ms` (the smallest upper
# bound or the measured figure); null where no witness proves that end, never 0; min > max
# when two witnesses contradict each other (both kept as told)
UNOWNED_INTERVAL_COLUMNS = ("unowned_min_ms", "unowned_max_ms")
# which witness each figure of a round came from (observed.BEST_FIGURE, one per field:
# coordinator-records, broker-log, records, client-log; null with the figure)
FIGURE_SOURCE_COLUMNS = (
    "duration_source", "unowned_source", "slowest_member_source", "members_before_source",
    "members_after_source", "moved_partitions_source", "reason_source")
UNOWNED_INTERVAL_SOURCE_COLUMNS = ("unowned_min_source", "unowned_max_source")
# the round's duration as every witness of it together proves it (observed.
# duration_interval), as the unowned interval: at least `duration_min_ms` (the largest
# lower bound or interval's low end, or the exact figure), at most `duration_max_ms`;
# null where no witness proves that end, never 0; min > max when witnesses contradict
# each other. `duration_ms` stays the best witness's one figure.
DURATION_INTERVAL_COLUMNS = ("duration_min_ms", "duration_max_ms")
DURATION_INTERVAL_SOURCE_COLUMNS = ("duration_min_source", "duration_max_source")
# one row per round (observed.once): each witness's columns, the unowned interval, where
# each figure came from, the duration's interval
ROUND_COLUMNS = (*EPISODE_COLUMNS, *UNOWNED_INTERVAL_COLUMNS, *FIGURE_SOURCE_COLUMNS,
                 *UNOWNED_INTERVAL_SOURCE_COLUMNS, *DURATION_INTERVAL_COLUMNS,
                 *DURATION_INTERVAL_SOURCE_COLUMNS)
# the episodes table as written: the rounds, then the clients' figures
EPISODE_TABLE_COLUMNS = (*ROUND_COLUMNS, *CLIENT_COST_COLUMNS)
GROUP_METRIC_COLUMNS = (
    "group", "type", "rebalances", "failed_members", "left_members", "duration_ms_p50",
    "duration_ms_p95", "duration_ms_max", "storms", "top_reason", "rebalances_per_hour",
    "time_rebalancing_ms", "flapping_members", "group_epoch", "max_generation",
    "first_seen", "last_seen", "errors", "unowned_partition_ms_total",
    "client_unowned_partition_ms_total", "rebalances_untimed", "left_or_failed_members",
    "unowned_min_ms_total", "unowned_max_ms_total",
    "time_rebalancing_min_ms", "time_rebalancing_max_ms",
)
HOURLY_COLUMNS = ("group", "hour", "rebalances", "duration_ms_p50", "duration_ms_p95",
                  "duration_ms_max", "time_rebalancing_ms", "rebalances_untimed",
                  "time_rebalancing_min_ms", "time_rebalancing_max_ms")
STORM_COLUMNS = ("group", "storm", "started", "ended", "rebalances", "top_reason")
FLAPPING_COLUMNS = ("group", "client", "joins", "leaves", "failures")
MEMBER_COLUMNS = ("group", "member", "client", "outcome", "ts", "reason")
# The group's coordinator moved: `ts` its first line on the new broker, `last_on_old` its
# last on the old one; `members` what the new one loaded (when it logged that)
MOVE_COLUMNS = ("group", "ts", "from_broker", "to_broker", "last_on_old", "members")


def conform(df: DataFrame, schema: T.StructType = EVENT_SCHEMA) -> DataFrame:
    """`df` with exactly the schema's columns, in order and of its types (missing ones null)."""
    have = set(df.columns)
    cols: list[Column] = [
        (F.col(f.name) if f.name in have else F.lit(None)).cast(f.dataType).alias(f.name)
        for f in schema.fields]
    return df.select(*cols)


def empty_events(spark) -> DataFrame:
    """No rows, in the event schema. Planned in the JVM alone: createDataFrame([]) maps a
    Python function over its (empty) partitions, which started Python workers on the
    executors, each importing pyspark (2-3 s of CPU in a 5,000-line run)."""
    return conform(spark.range(0, numPartitions=1))
