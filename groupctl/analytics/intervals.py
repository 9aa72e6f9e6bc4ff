"""A round's figure as the interval every witness of it together proves (observed.once):
its unowned time and its duration. Each witness's row proves a lower end, an upper end or
both (one figure: exact, or measured); the round is at least the largest lower end and at
most the smallest upper end, each end's witness named. Of several one-figure rows of a
round only the best witness's counts: they measured the same thing, each to its own
precision, and are no bounds of each other. An end no witness proves is null, never 0;
where witnesses contradict each other (lower end > upper end) both ends stay as told,
neither picked: one of them is wrong and which is not known.
"""
from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F


def proven_interval(rows: DataFrame, name: str, low: Column, high: Column,
                    asked: tuple[int, ...], witnesses: tuple[str, ...],
                    key: tuple[str, ...] | None, who: Column | None = None) -> DataFrame:
    """`rows` with `<name>_min_ms`, `<name>_max_ms`, `<name>_min_source` and
    `<name>_max_source`: the interval the rows of each round (`key`; None: each row alone)
    prove together. `low` / `high`: the end each row proves (null: none); `asked`: the
    witnesses (`_witness` ranks) whose rows count, best first (a tie between two ends of
    one figure: the better witness); `who`: the row's witness named (else
    witnesses[_witness])."""
    place = F.array_position(F.array(*[F.lit(w) for w in asked]), F.col("_witness"))
    low, high = F.when(place > 0, low), F.when(place > 0, high)
    one_figure = F.coalesce(low == high, F.lit(False))
    if key is not None:
        first = F.row_number().over(Window.partitionBy(*key, one_figure).orderBy(
            place, "started", "ended"))
        counts = ~one_figure | (first == 1)
        low, high = F.when(counts, low), F.when(counts, high)
    named = F.element_at(F.array(*map(F.lit, witnesses)), F.col("_witness") + 1)
    named = named if who is None else F.coalesce(who, named)
    lo = F.when(low.isNotNull(), F.struct(low.alias("ms"), (-place).alias("p"),
                                          named.alias("w")))
    hi = F.when(high.isNotNull(), F.struct(high.alias("ms"), place.alias("p"),
                                           named.alias("w")))
    if key is not None:
        lo, hi = (F.max(lo).over(Window.partitionBy(*key)),
                  F.min(hi).over(Window.partitionBy(*key)))
    return rows.withColumns({f"{name}_min_ms": lo["ms"], f"{name}_max_ms": hi["ms"],
                             f"{name}_min_source": lo["w"], f"{name}_max_source": hi["w"]})


def contradicted(low: Column, high: Column) -> Column:
    """A round whose witnesses contradict each other (lower end above the upper end)."""
    return F.coalesce(low > high, F.lit(False))


def interval_totals(name: str, at_least: str, at_most: str,
                    one_figure: str | None = None) -> list[Column]:
    """A set of rounds' `<name>_min_ms` / `<name>_max_ms` summed, each end apart (a sum of
    bounds is a bound, never one figure): `at_least`, the rounds' proven lower ends (a
    round without one adds nothing; null when no round has one); `at_most`, null unless
    every round is bounded above; `one_figure` (when named), the sum of the rounds' one
    figure, null unless every round's two ends are one figure. A round whose witnesses
    contradict each other proves neither end."""
    low, high = F.col(f"{name}_min_ms"), F.col(f"{name}_max_ms")
    agree = ~contradicted(low, high)
    every = lambda rounds: F.min(F.coalesce(rounds, F.lit(False)).cast("int")) == 1  # noqa: E731
    out = [F.sum(F.when(agree, low)).alias(at_least),
           F.when(every(high.isNotNull() & agree), F.sum(high)).alias(at_most)]
    if one_figure is not None:
        out.insert(0, F.when(every(low == high), F.sum(low)).alias(one_figure))
    return out


def begun_before(high: Column, key: tuple[str, ...], watch: int) -> Column:
    """`high`, null on a watch's row (`_witness` == `watch`) of a round (`key`) the broker
    log shows begun again by a coordinator's load (episodes._reloaded): the watch may have
    seen only the round begun again (the lab: a broker restarted 0.4 s after the round's
    first Preparing line; the members rebalanced for 9675 ms, a describe watch saw the
    reloaded group's round in at most 2001 ms)."""
    reloaded = F.max(F.coalesce(F.col("_reloaded"), F.lit(False))).over(
        Window.partitionBy(*key))
    return F.when(~reloaded | (F.col("_witness") != watch), high)


def this_round_only(low: Column, key: tuple[str, ...], watch: int, *,
                    unsaid: bool = True) -> Column:
    """`low`, null on a row of a round (`key`) that began from an earlier generation or
    epoch than the round's (as its best witness tells it), or, a watch's (`_witness` ==
    `watch`), does not say which: a watch that saw several rounds as one holds this round
    and the ones before it, so its upper end bounds this round and its lower end does not
    (the lab: a describe watch's epochs 3 -> 7 in 1000-3005 ms, the records' 5 -> 7 in
    14 ms; its unowned time, as much of it as fell in 4 -> 5, the same)."""
    told_from = F.first("from_generation", ignorenulls=True).over(
        Window.partitionBy(*key).orderBy("_witness", "started")
        .rowsBetween(Window.unboundedPreceding, Window.unboundedFollowing))
    # a watch's row that tells its generation but not where it began from (its first
    # round) may too; a row lent a round by its time (_lent: no generation of its own) not
    # (`unsaid` False: a measured figure of the watch's own window, its unowned time, holds)
    unsaid_from = F.col("from_generation").isNull() & ~F.coalesce(F.col("_lent"), F.lit(False)) \
        & (F.col("_witness") == watch) & F.lit(unsaid)
    return F.when(told_from.isNull() | ~unsaid_from & F.coalesce(
        F.col("from_generation") >= told_from, F.lit(True)), low)
