"""Load: the result tables as Parquet (Spark's writer) and CSV under --out, and as plain
rows for the summary, `-o json` and the HTML report.

Layout of --out (default ./groupctl-analysis/):
    episodes.csv metrics.csv storms.csv hourly.csv flapping.csv members.csv files.csv moves.csv
    parquet/<table>/part-*.parquet
    report.html
The tables are small (one row per rebalance at most), so the CSV files are written from
collected rows: one file each, the same bytes from local mode and from a cluster.
"""
from __future__ import annotations

import csv
import re
from pathlib import Path
from typing import Callable

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

ISO_MS = "yyyy-MM-dd'T'HH:mm:ss.SSS'Z'"


def plain(df: DataFrame) -> DataFrame:
    """Timestamps as ISO-8601 UTC text with milliseconds (the events' format), nothing else
    changed: the form every output shares."""
    return df.select(*[
        F.date_format(F.col(f.name), ISO_MS).alias(f.name)
        if isinstance(f.dataType, T.TimestampType) else F.col(f.name)
        for f in df.schema.fields])


def rows(df: DataFrame) -> list[dict]:
    return [r.asDict() for r in plain(df).collect()]


# A text cell a spreadsheet would read as a formula (OWASP's CSV injection: = + - @, tab,
# carriage return first) is written after a `'`, which makes it text; numbers (typed
# numbers, and text that is a plain number such as -1) are written as they are.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[+-]?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?")


def csv_cell(value):
    """One CSV cell: None empty, a text that would start a formula made text."""
    if value is None:
        return ""
    if isinstance(value, str) and value.startswith(_FORMULA_START) \
            and not _PLAIN_NUMBER.fullmatch(value):
        return "'" + value
    return value


def write_csv(path: Path, columns: list[str], data: list[dict]) -> None:
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow([csv_cell(c) for c in columns])
        for row in data:
            writer.writerow([csv_cell(row[c]) for c in columns])


class TableWriter:
    """Each table's Parquet and CSV files under `out`, and its rows, from `parallel` threads,
    a table begun as soon as it is submitted: the pipeline hands over the tables that read
    only the events (pipeline.EVENT_TABLES) while it builds the episodes. A table's jobs are
    mostly the driver planning and scheduling them on one thread, so one table's planning
    runs while another's tasks do (5,000-line log, local[2], runs alternated: 4.95 and
    5.01 s one at a time, 3.75 and 3.72 s two at a time, the same JVM CPU). Leaving the
    `with` block waits for the tables begun and drops those not begun."""

    def __init__(self, out: Path, parallel: int = 2):
        from concurrent.futures import ThreadPoolExecutor

        out.mkdir(parents=True, exist_ok=True)
        self.out, self.parallel = out, parallel
        self._pool = ThreadPoolExecutor(max_workers=parallel, thread_name_prefix="table")
        self._begun: dict = {}   # name -> Future of its rows

    def __enter__(self) -> "TableWriter":
        return self

    def __exit__(self, *exc) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)

    def submit(self, name: str, table: Callable[[], DataFrame]) -> None:
        """Begin writing table `name`, planned by `table()` on the writing thread (once: a
        second submit of a name is ignored)."""
        if name not in self._begun:
            self._begun[name] = self._pool.submit(_write, self.out, name, table)

    def rows(self, tables: dict[str, Callable[[], DataFrame]]) -> dict[str, list[dict]]:
        """Write every table of `tables` not begun yet; each table's rows, in their order."""
        for name, table in tables.items():
            self.submit(name, table)
        return {name: self._begun[name].result() for name in tables}


def _write(out: Path, name: str, table: Callable[[], DataFrame]) -> list[dict]:
    df = table().persist()  # computed once, for the rows and the Parquet files
    data = rows(df)
    df.write.mode("overwrite").parquet(str(out / "parquet" / name))
    df.unpersist()
    write_csv(out / f"{name}.csv", df.columns, data)
    return data


def metrics_json(metric_rows: list[dict]) -> list[dict]:
    """`-o json`: one object per group, docs/commands/analyze.md's fields first."""
    return [dict(row) for row in metric_rows]
