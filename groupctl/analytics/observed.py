"""Episodes from what the members and groupctl saw, and one episode per rebalance.

Three witnesses can tell the same rebalance:
- the broker log (episodes.classic_episodes / consumer_episodes): the coordinator's own
  lines, the whole round;
- groupctl's event records (`watch` / `join --watch --record`): one `rebalance` record per
  round the observer saw settle, with its own started / ended / members / reason;
- client logs: classic members (Java `Successfully joined group with generation N` /
  `synced`, librdkafka `JoinGroup response: GenerationId N` / `delegating assign`) and the
  Java KIP-848 consumer (`... with epoch E transitioned from RECONCILING to STABLE`).

The dedupe rule (docs/commands/analyze.md): one episode per (group, to_generation) --
the generation of a classic group, the group epoch of a consumer / share / streams group --
taken from the best witness there is: the coordinator's own records (`history`, source
"records": every round the coordinator wrote, exactly), else the broker log, else
groupctl's other records (watch / join: what a describe or the probe saw), else client
logs; among records (two watchers of one group) or client logs (several members) the
earliest start. An episode from the coordinator's records takes from the broker log's
episode of the same round what the records do not hold: the reason (KIP-800: the
broker's words and the client's own reason), the trigger member, the coordinator, and a
classic round's start (the records hold only its end) unless the records' own duration
is exact: the broker log's start is exact, better than a record's interval (`watch
--source auto`: its start bounded by describe's looks), bound or unknown.
A records or client episode with no generation (a watcher that could not know it) is kept
unless a better witness's episode of the same group overlaps it in time, or ends up to
LOOK_SLACK_MS before the earliest start it allows (a look sees a round's end up to one
describe interval late). A record's own duration stands (null when unknown: never the 0
of an unknown start). Each figure of a round (duration, unowned time, slowest member,
members before / after, moved partitions, reason) is then the best any witness of the
same round has, whole from one witness (BEST_FIGURE), its witness in `<field>_source`;
unowned time and duration are also the interval every witness of the round together
proves (unowned_interval, duration_interval: a lower bound of one and an upper bound of
another both kept).
"""
from __future__ import annotations

from functools import reduce

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from .schema import (COST_COLUMNS, DURATION_INTERVAL_COLUMNS, DURATION_INTERVAL_SOURCE_COLUMNS,
                     EPISODE_COLUMNS, ROUND_COLUMNS, UNOWNED_INTERVAL_COLUMNS,
                     UNOWNED_INTERVAL_SOURCE_COLUMNS)
from .client_rounds import client_episodes
from .episodes import broker_episodes, finish_episodes, trigger_member
from .intervals import begun_before, proven_interval, this_round_only

WITNESSES = ("coordinator-records", "broker-log", "records", "client-log")   # best first
COORDINATOR_RECORDS = "records"   # the `source` of `history`'s events (events.Source.RECORDS)
EXACT, BROKER = 0, 1              # the ranks whose episodes are each a distinct round
OTHER_RECORDS, CLIENTS = 2, 3     # the ranks of the others (WITNESSES order)
RECORD_TYPE_HINT = {"epoch_bumped": "consumer", "generation": "classic"}
LOOK_SLACK_MS = 1000   # watch's default describe interval
ROUND_KEY = ("group", "to_generation", "group_type")   # one round's witnesses
BROKER_AND_RECORDS = "broker-log+coordinator-records"   # the log's start, the records' end

# The best figure of each field of a round (docs/commands/analyze.md, "The best figure"):
# field -> (its columns, taken together from one witness; the witnesses asked, best first).
# Of the witnesses asked that have the figure, the one whose basis ranks best (BASIS_ORDER,
# by the last column) wins, then the first in this order, then the earliest start.
BEST_FIGURE: dict[str, tuple[tuple[str, ...], tuple[int, ...]]] = {
    # exact over an interval over a bound: the records' exact figure, or the broker log's
    # start to the records' end (with_broker_reasons), before a describe watch's interval;
    # never the clients' span (rejoining to assigned: another figure). The broker log's
    # consumer, share or streams round (its first member change to the target's
    # computation) is another span than the records' and the watches' (the bump to every
    # member at the target): last for those groups (_best_figures), so that the figure
    # lies in the interval the others prove
    "duration": (("duration_ms", "started"), (EXACT, BROKER, OTHER_RECORDS)),
    # only groupctl's records measure it; the broker log and the clients' coordinator lines
    # do not (the clients' own figure is client_unowned_*, apart)
    "unowned": (("unowned_partition_ms", "unowned_partitions_max_ms", "unowned_basis"),
                (EXACT, OTHER_RECORDS)),
    "slowest_member": (("slowest_member", "slowest_member_ms"), (EXACT, OTHER_RECORDS)),
    "members_before": (("members_before",), (EXACT, BROKER, OTHER_RECORDS)),
    "members_after": (("members_after",), (EXACT, BROKER, OTHER_RECORDS)),
    # the broker log's is the records' (classic_episodes): last
    "moved_partitions": (("moved_partitions",), (EXACT, OTHER_RECORDS, BROKER)),
    # the broker's own words first (KIP-800: the client's reason with them)
    "reason": (("reason", "reason_kind", "trigger_member", "trigger_client"),
               (BROKER, EXACT, OTHER_RECORDS, CLIENTS)),
}
# basis -> rank (lower is better; a basis not named ranks after these). Unowned time: a
# measured figure over a bound; an upper and a lower bound rank alike (the figure is the
# better witness's, the coordinator records' sync phase, a lower bound, over a describe
# watch's window of looks, an upper bound; both bounds stay in unowned_interval's columns)
BASIS_ORDER = {"unowned": {"measured": 0, "upper_bound": 1, "lower_bound": 1}}
FROM_COLUMNS = tuple(f"_from_{field}" for field in BEST_FIGURE)
# unowned time's basis -> which ends of the round's interval its figure proves (lower, upper)
UNOWNED_ENDS = {"measured": (True, True), "lower_bound": (True, False),
                "upper_bound": (False, True)}
# the round's own ends each row of a witness proves of its duration (duration_interval)
DURATION_ENDS = ("_duration_low", "_duration_high")


def record_episodes(events: DataFrame) -> DataFrame:
    """One row per `rebalance` event record. Its type is the one the group's latest record
    up to it names (`type_changed` / `snapshot`), else implies (`epoch`: consumer,
    `generation`: classic); classic when none does."""
    rec = events.filter(~F.col("source").isin("broker-log", "client-log"))
    kind = F.col("kind")
    hint = F.coalesce(F.col("group_type"), F.element_at(
        F.create_map(*[F.lit(x) for kv in RECORD_TYPE_HINT.items() for x in kv]), kind))
    rank = F.when(kind == "rebalance", 2).when(F.col("group_type").isNotNull(), 1).otherwise(0)
    upto = (Window.partitionBy("group").orderBy("ts", rank, hint)
            .rowsBetween(Window.unboundedPreceding, 0))
    rec = rec.withColumn("_type", F.last(hint, ignorenulls=True).over(upto))
    # a round whose start no look saw: from the earliest start its duration allows (the
    # most it may have taken; a lower bound's: the latest start), else its end
    earliest = F.timestamp_millis(F.unix_millis("ts") - F.coalesce("duration_max_ms",
                                                                   "duration_ms"))
    ep = rec.filter(kind == "rebalance").select(
        "group", F.coalesce("_type", F.lit("classic")).alias("group_type"),
        "from_generation", F.col("generation").alias("to_generation"),
        F.coalesce("started", earliest, "ts").alias("started"), F.col("ts").alias("ended"),
        "reason", "members_before", F.col("members").alias("members_after"),
        # a round that left the group with no member: `empty`, as the broker log's
        "moved_partitions", F.when(F.col("members") == 0, F.lit("empty"))
        .otherwise(F.lit("stable")).alias("outcome"), *COST_COLUMNS,
        F.col("duration_ms").alias("_rec_ms"),
        F.coalesce(F.col("source") == COORDINATOR_RECORDS, F.lit(False)).alias("_exact"),
        # its duration exact (records written before the basis was told: a duration
        # known was exact): a broker log's start cannot better it
        (F.col("duration_ms").isNotNull()
         & (F.coalesce("duration_basis", F.lit("exact")) == "exact")).alias("_rec_exact"),
        # a round its observer found over between two looks: its end is not its `ended`
        F.coalesce("seen", F.lit(True)).alias("_seen"), *_record_ends())
    # the record's own duration: exact, the middle of its looks' interval, a lower bound,
    # or null (unknown: never the 0 its start and end would give)
    return finish_episodes(ep, keep=("_exact", "_rec_exact", "_rec_ms", "_seen", "_rec_low",
                                     "_rec_high")) \
        .withColumn("duration_ms", F.col("_rec_ms"))


def _record_ends() -> list[Column]:
    """The ends of its duration a `rebalance` record proves (`_rec_low`, `_rec_high`), by
    its basis: exact, both (a record written before the basis was told: a duration known
    was exact); an interval, its two; a lower bound, its low end; unknown, neither."""
    ms = F.col("duration_ms")
    basis = F.when(ms.isNotNull(), F.coalesce("duration_basis", F.lit("exact")))
    return [F.when(basis == "exact", ms).when(basis == "interval", F.col("duration_min_ms"))
            .when(basis == "lower_bound", F.coalesce("duration_min_ms", ms)).alias("_rec_low"),
            F.when(basis == "exact", ms).when(basis == "interval", F.col("duration_max_ms"))
            .alias("_rec_high")]


def with_broker_reasons(exact: DataFrame, broker: DataFrame) -> DataFrame:
    """The coordinator's records' episodes with the broker log's reason, trigger member and
    coordinator of the same round (group, type and generation / epoch), and a classic
    round's start where the records had none (the duration follows)."""
    said = broker.select(
        "group", "group_type", "to_generation", F.col("reason").alias("_b_reason"),
        F.col("trigger_member").alias("_b_trigger"), F.col("broker").alias("_b_broker"),
        # a classic round's start only where the log has it (its Preparing line: episodes)
        F.when((F.col("group_type") != "classic") | F.col("duration_ms").isNotNull(),
               F.col("started")).alias("_b_started"), F.col("ended").alias("_b_ended"))
    ep = exact.join(said, ["group", "group_type", "to_generation"], "left")
    # the best figure of each round: the records' exact duration, else the broker log's
    # start (exact) before the records' own interval, bound or unknown
    from_broker = ~F.col("_rec_exact") & F.col("_seen") & F.coalesce(
        F.col("_b_started") <= F.col("ended"), F.lit(False))
    # a round the records jumped over: its `ended` is the record after it (generation 1,
    # superseded 1 ms after its Stabilized line, was 1931 ms long, to generation 2's
    # record): the broker log's round whole, where it has it
    jumped = ~F.col("_seen") & F.col("_b_started").isNotNull()
    ep = ep.withColumns({
        "reason": F.coalesce("_b_reason", "reason"),
        "trigger_member": F.coalesce("_b_trigger", trigger_member(F.col("reason"))),
        "broker": F.coalesce("_b_broker", "broker"),
        "started": F.when(from_broker | jumped, F.col("_b_started")).otherwise(F.col("started")),
        "ended": F.when(jumped, F.col("_b_ended")).otherwise(F.col("ended")),
        "_from_broker": from_broker, "_jumped": jumped,
    })
    ep = finish_episodes(ep.drop("duration_ms", "reason_kind", "trigger_client"),
                         keep=("_from_broker", "_jumped", "_rec_ms", "_rec_low", "_rec_high"))
    # a start from neither the records nor the broker log: the record's own figure (and
    # its own ends); from the broker log's start: exact
    logs = F.col("_from_broker") | F.col("_jumped")
    return ep.withColumn("duration_ms", F.when(logs, F.col("duration_ms"))
                         .otherwise(F.col("_rec_ms"))).select(
        *EPISODE_COLUMNS, F.when(F.col("_from_broker"), F.lit(BROKER_AND_RECORDS))
        .when(F.col("_jumped"), F.lit(WITNESSES[BROKER])).alias("_duration_from"),
        F.when(logs, F.col("duration_ms")).otherwise(F.col("_rec_low")).alias(DURATION_ENDS[0]),
        F.when(logs, F.col("duration_ms")).otherwise(F.col("_rec_high"))
        .alias(DURATION_ENDS[1]))


def witnessed(events: DataFrame, records_given: bool = True,
              client_logs_given: bool = True) -> DataFrame:
    """Every witness's episodes, `_witness` its rank in WITNESSES (checkpoint this: once()
    reads it three times). A witness whose input was not given is left out of the plan
    (its episodes would be none; planning them is most of a small run's time)."""
    broker = broker_episodes(events)
    told = [broker.withColumns({"_witness": F.lit(BROKER), **_broker_ends()})]
    if records_given:
        records = record_episodes(events)
        exact = with_broker_reasons(records.filter(F.col("_exact")), broker)
        others = records.filter(~F.col("_exact")).select(
            *EPISODE_COLUMNS, F.col("_rec_low").alias(DURATION_ENDS[0]),
            F.col("_rec_high").alias(DURATION_ENDS[1]))
        told = [exact.withColumn("_witness", F.lit(EXACT)), *told,
                others.withColumn("_witness", F.lit(OTHER_RECORDS))]
    if client_logs_given:   # the clients' span is another figure (BEST_FIGURE): no ends
        told.append(client_episodes(events).withColumns({
            "_witness": F.lit(CLIENTS), **{c: F.lit(None).cast("long") for c in DURATION_ENDS}}))
    # `_duration_from`: a duration of two witnesses (the broker log's start, the records' end)
    told = [t if "_duration_from" in t.columns
            else t.withColumn("_duration_from", F.lit(None).cast("string")) for t in told]
    # `_reloaded`: the broker log's round was begun again by a coordinator's load
    told = [t if "_reloaded" in t.columns
            else t.withColumn("_reloaded", F.lit(None).cast("boolean")) for t in told]
    return reduce(DataFrame.unionByName, told)


def _broker_ends() -> dict[str, Column]:
    """The ends of its duration the broker log's round proves. A classic round, both: its
    Preparing line to the leader's assignment, as a describe watch or the records time it
    (the group Stable again). A consumer, share or streams round, neither: the log's span
    (its first member change line to the target's computation) is another figure than the
    records' and the watches' (the epoch's bump record to its members at the target), told
    by other timestamps: on the lab a leave's round was 440 ms by the log's lines and 439
    by the records', no bound of each other (its figure stays the best where no other
    witness has one, BEST_FIGURE)."""
    ms = F.when(F.col("group_type") == "classic", F.col("duration_ms"))
    return {DURATION_ENDS[0]: ms, DURATION_ENDS[1]: ms}


def _best_figures(known: DataFrame) -> DataFrame:
    """Each round's rows with every field of BEST_FIGURE from the witness that has its best
    figure (all its columns together: never a sum, never a null made 0), and `_from_<field>`
    the witness it came from; a field no witness asked has keeps the row's own."""
    key = Window.partitionBy(*ROUND_KEY)
    every_col: dict[str, Column] = {}
    for field, (columns, asked) in BEST_FIGURE.items():
        place = F.array_position(F.array(*[F.lit(w) for w in asked]), F.col("_witness"))
        if field == "duration":   # the log's consumer round is another span: after the rest
            place = F.when((F.col("_witness") == BROKER) & (F.col("group_type") != "classic"),
                           F.lit(len(asked) + 1)).otherwise(place)
        basis = F.lit(0) if field not in BASIS_ORDER else F.coalesce(F.element_at(
            F.create_map(*[F.lit(x) for kv in BASIS_ORDER[field].items() for x in kv]),
            F.col(columns[-1])), F.lit(len(BASIS_ORDER[field])))
        best = F.min(F.when(F.col(columns[0]).isNotNull() & (place > 0), F.struct(
            basis.alias("_b"), place.alias("_p"), F.col("started").alias("_s"),
            F.col("ended").alias("_e"), F.col("_witness").alias("_w"),
            F.col("_duration_from").alias("_d"), *[F.col(c).alias(c) for c in columns])))
        best = best.over(key)
        for c in columns:
            every_col[c] = F.when(best.isNotNull(), best[c]).otherwise(F.col(c))
        own = F.when(F.col("_witness") == EXACT, F.col("_duration_from")) \
            if field == "duration" else F.lit(None).cast("string")
        every_col[f"_from_{field}"] = F.when(best.isNotNull(), F.coalesce(
            best["_d"] if field == "duration" else F.lit(None).cast("string"),
            F.element_at(F.array(*map(F.lit, WITNESSES)), best["_w"] + 1))) \
            .otherwise(F.coalesce(own, F.element_at(F.array(*map(F.lit, WITNESSES)),
                                                    F.col("_witness") + 1)))
    return known.withColumns(every_col)


def _with_sources(episodes: DataFrame) -> DataFrame:
    """`<field>_source`: the witness its figure came from, null with the figure."""
    return episodes.withColumns({
        f"{field}_source": F.when(F.col(columns[0]).isNotNull(), F.col(f"_from_{field}"))
        for field, (columns, _) in BEST_FIGURE.items()})


def unowned_interval(rows: DataFrame, per_round: bool = True) -> DataFrame:
    """`rows` with UNOWNED_INTERVAL_COLUMNS and their witnesses (`unowned_min_source`,
    `unowned_max_source`): the tightest interval every witness of the round together
    proves of its unowned time (per_round; else each row's own figure's;
    intervals.proven_interval). A lower bound or measured figure proves the lower end, an
    upper bound or measured figure the upper end (UNOWNED_ENDS); of several measured
    figures only the best witness's counts (BEST_FIGURE's order); a figure of no known
    basis bounds nothing. A watch's row over several rounds bounds the last from above
    only (intervals.this_round_only)."""
    ms, basis = F.col("unowned_partition_ms"), F.col("unowned_basis")
    low, high = (F.when(basis.isin(*[b for b, ends in UNOWNED_ENDS.items() if ends[end]]), ms)
                 for end in (0, 1))
    if per_round:
        low, high = this_round_only(low, ROUND_KEY, OTHER_RECORDS, unsaid=False), \
            begun_before(high, ROUND_KEY, OTHER_RECORDS)
    return proven_interval(rows, "unowned", low, high, BEST_FIGURE["unowned"][1], WITNESSES,
                           ROUND_KEY if per_round else None)


def duration_interval(rows: DataFrame, per_round: bool = True) -> DataFrame:
    """`rows` with DURATION_INTERVAL_COLUMNS and their witnesses (`duration_min_source`,
    `duration_max_source`), as unowned_interval: each witness's row proves the ends its
    basis gives (DURATION_ENDS: the broker log's classic round both, its consumer round
    none; a record's exact figure both, its interval its two ends, its lower bound its
    low end); of several exact figures only the best witness's counts (BEST_FIGURE's
    order). A duration of the broker log's start and the records' end is named so. A lower
    end of 0 is no end (a watch's round seen under way at one look and over at the next
    lasted between nothing and the time between them: at most that), unless it is the
    exact figure. A watch's row over several rounds bounds the last from above only
    (intervals.this_round_only)."""
    low, high = F.col(DURATION_ENDS[0]), F.col(DURATION_ENDS[1])
    low = F.when((low > 0) | (low == high), low)
    if per_round:
        low, high = this_round_only(low, ROUND_KEY, OTHER_RECORDS), \
            begun_before(high, ROUND_KEY, OTHER_RECORDS)
    return proven_interval(rows, "duration", low, high, BEST_FIGURE["duration"][1], WITNESSES,
                           ROUND_KEY if per_round else None, who=F.col("_duration_from"))


def _rounds(known: DataFrame) -> DataFrame:
    """Episodes with a generation, as _same_round matches them."""
    return known.select(F.col("group").alias("_g"), F.col("to_generation").alias("_gen"),
                        F.col("group_type").alias("_type"), F.col("started").alias("_s"),
                        F.col("ended").alias("_e"), F.col("_witness").alias("_w"))


def _same_round(unknown: DataFrame) -> Column:
    """An episode with no generation (`unknown`'s) is the same round as a better witness's
    episode of its group (_rounds) that it overlaps in time, or that ends up to
    LOOK_SLACK_MS before the earliest start it allows (a look sees a round's end up to one
    describe interval after it; records written before a look's interval was told give no
    earlier start)."""
    seen_from = F.timestamp_millis(F.unix_millis(unknown["started"]) - LOOK_SLACK_MS)
    return ((unknown["group"] == F.col("_g")) & (F.col("_w") < unknown["_witness"])
            & (seen_from <= F.col("_e")) & (unknown["ended"] >= F.col("_s")))


def _lent(unknown: DataFrame, known: DataFrame) -> DataFrame:
    """The rows of `unknown` that told unowned time or their duration, each given the
    round (ROUND_KEY) of the one better witness's round it is the same round as
    (_same_round): a describe watch of a classic group (DescribeGroups tells no
    generation) bounds the unowned time and the duration of the round the coordinator's
    records or the broker log name. A row that is the same round as several (a window of
    looks over two rounds) bounds none: which one it saw is not known."""
    told = unknown.filter(F.col("unowned_partition_ms").isNotNull()
                          | F.col(DURATION_ENDS[0]).isNotNull()
                          | F.col(DURATION_ENDS[1]).isNotNull()).withColumn(
        "_id", F.monotonically_increasing_id())
    pairs = told.join(_rounds(known.filter(F.col("_witness") <= BROKER)), _same_round(told))
    one = Window.partitionBy("_id")
    pairs = pairs.withColumns({
        "_matched": F.size(F.collect_set(F.struct("_gen", "_type")).over(one)),
        "_pick": F.row_number().over(one.orderBy("_w", "_s"))})
    return pairs.filter((F.col("_matched") == 1) & (F.col("_pick") == 1)).withColumns({
        "to_generation": F.col("_gen"), "group_type": F.col("_type")}).select(*unknown.columns)


def once(every: DataFrame) -> DataFrame:
    """Every rebalance once (the module's rule), ordered by group, start, generation, with
    each figure the best any witness of the round has (BEST_FIGURE)."""
    key = Window.partitionBy("group", "to_generation")
    order = key.orderBy("_witness", "started", "ended", "reason", "members_after")
    typed = Window.partitionBy("group", "to_generation", "group_type").orderBy(
        "_witness", "started", "ended", "reason", "members_after")
    known = every.filter(F.col("to_generation").isNotNull()).withColumns({
        "_best": F.min("_witness").over(key), "_n": F.row_number().over(order),
        "_n_typed": F.row_number().over(typed)})
    # the coordinator's records' and the broker log's episodes all stand, once per type (a
    # group converted between classic and consumer may hold generation N and epoch N; two
    # history files may hold the same round); any other witness once per key
    keep = (F.col("_witness") == F.col("_best")) & F.when(
        F.col("_witness") == EXACT, F.col("_n_typed") == 1) \
        .when(F.col("_witness") == BROKER, F.lit(True)).otherwise(F.col("_n") == 1)
    unknown = every.filter(F.col("to_generation").isNull() & (F.col("_witness") > BROKER))
    lent = _lent(unknown, known).withColumns({
        "_best": F.lit(None).cast("int"), "_n": F.lit(None).cast("int"),
        "_n_typed": F.lit(None).cast("int"), "_lent": F.lit(True)})
    known = duration_interval(unowned_interval(
        known.withColumn("_lent", F.lit(False)).unionByName(lent))).filter(~F.col("_lent"))
    known = _best_figures(known).filter(keep)
    unknown = unknown.join(_rounds(known), _same_round(unknown), "left_anti")
    broker_unknown = every.filter(F.col("to_generation").isNull()
                                  & (F.col("_witness") <= BROKER))
    own = F.element_at(F.array(*map(F.lit, WITNESSES)), F.col("_witness") + 1)
    alone = duration_interval(unowned_interval(unknown.unionByName(broker_unknown).withColumns({
        f"_from_{field}": own for field in BEST_FIGURE}), per_round=False), per_round=False)
    figures = (*EPISODE_COLUMNS, *FROM_COLUMNS, *UNOWNED_INTERVAL_COLUMNS,
               *UNOWNED_INTERVAL_SOURCE_COLUMNS, *DURATION_INTERVAL_COLUMNS,
               *DURATION_INTERVAL_SOURCE_COLUMNS)
    out = known.select(*figures).unionByName(alone.select(*figures))
    return _with_sources(out).select(*ROUND_COLUMNS) \
        .orderBy("group", "started", "to_generation")
