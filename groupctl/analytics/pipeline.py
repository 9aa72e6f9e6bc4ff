"""The job: extract every source -> one event DataFrame -> filters -> transforms -> tables.

    inputs = Inputs(broker_logs=[...], client_logs=[...], events=[...])
    tables = analyze(spark, inputs, Options(group_regex="orders-.*"))
    tables.metrics / .episodes / .storms / .hourly / .flapping / .members / .files

Glob expansion lives here too (the CLI turns its errors into exit 2): each pattern must
match at least one file; a URL with a scheme (hdfs://, s3a://) goes to Spark as it is.
"""
from __future__ import annotations

import glob
import os
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Callable, Sequence

from ..errors import UsageError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


@dataclass
class Inputs:
    broker_logs: list[str] = field(default_factory=list)
    client_logs: list[str] = field(default_factory=list)
    events: list[str] = field(default_factory=list)
    # plain copies read in place of damaged .gz files (damage.salvage): {copy: original};
    # the copies' rows are named as their originals
    renamed: dict[str, str] = field(default_factory=dict)

    def empty(self) -> bool:
        return not (self.broker_logs or self.client_logs or self.events)

    def reading(self, copies: dict[str, str]) -> Inputs:
        """These inputs with each original in `copies` replaced by its copy."""
        copy_of = {original: copy for copy, original in copies.items()}
        swap = lambda paths: [copy_of.get(p, p) for p in paths]  # noqa: E731
        return Inputs(swap(self.broker_logs), swap(self.client_logs), swap(self.events),
                      {**self.renamed, **copies})


@dataclass(frozen=True)  # frozen: analyze()'s default instance is shared
class Options:
    since: datetime | None = None
    until: datetime | None = None
    group_regex: str | None = None
    storm_count: int = 3
    storm_window_s: int = 600
    flap_cycles: int = 2
    log_timezone: str = "UTC"


class Once:
    """A table's DataFrame, planned by whichever thread asks first, once. Planning a table
    is the driver's work (hundreds of py4j calls and the JVM's analysis): the thread that
    writes the table does it, while the others plan or run theirs."""

    def __init__(self, make: Callable[[], DataFrame]):
        self._make: Callable[[], DataFrame] | None = make
        self._df: DataFrame | None = None
        self._lock = threading.Lock()

    def __call__(self) -> DataFrame:
        with self._lock:
            if self._make is not None:
                self._df, self._make = self._make(), None
            assert self._df is not None
            return self._df


TABLE_NAMES = ("episodes", "metrics", "storms", "hourly", "flapping", "members", "files",
               "moves")


@dataclass
class Tables:
    """`events`, and each of TABLE_NAMES by attribute (tables.metrics) or in `planned`:
    name -> Once of its DataFrame."""
    events: object
    planned: dict
    cached: tuple = ()

    def __getattr__(self, name: str):
        planned = self.__dict__.get("planned", {})
        if name in planned:
            return planned[name]()
        raise AttributeError(name)

    def release(self) -> None:
        """Drop the checkpointed blocks (a session that runs more jobs): each cached
        DataFrame is a LogicalRDD over the RDD its localCheckpoint() computed."""
        for df in self.cached:
            plan = df._jdf.queryExecution().analyzed()
            if plan.getClass().getSimpleName() == "LogicalRDD":
                plan.rdd().unpersist(False)

    def named(self) -> dict:
        return {name: self.planned[name]() for name in TABLE_NAMES}


# What a directory given to each option usually holds, for the error that asks for its files
_FILES_IN_A_DIRECTORY = {"--broker-logs": "server.log*", "--client-logs": "*.log",
                         "--events": "*.ndjson"}


def expand(patterns: Sequence[str], option: str) -> list[str]:
    """Files matching each glob (sorted, deduplicated); UsageError if one matches nothing."""
    out: list[str] = []
    for pattern in patterns:
        if "://" in pattern:
            out.append(pattern)
            continue
        path = os.path.expanduser(pattern)
        found = glob.glob(path, recursive=True)
        matches = sorted(p for p in found if os.path.isfile(p))
        if not matches and found:
            # a log directory holds other logs too (controller.log, GC logs): say which files
            example = os.path.join(pattern, _FILES_IN_A_DIRECTORY.get(option, "*"))
            raise UsageError(f"{option} {pattern}: a directory, not a file "
                             f"(give its files, e.g. '{example}')")
        if not matches:
            raise UsageError(f"{option} {pattern}: no such file (the pattern matches nothing)")
        out.extend(os.path.abspath(m) for m in matches)
    return list(dict.fromkeys(out))


# Inputs up to this size run their tables on one shuffle partition with adaptive execution
# off: their events fit one task, and a small job's time goes to planning and scheduling
# (AQE re-plans after every shuffle stage and runs each stage as a job of its own).
SMALL_INPUT_BYTES = 256 << 20
SMALL_JOB_CONF = {"spark.sql.shuffle.partitions": "1", "spark.sql.adaptive.enabled": "false"}
LARGE_JOB_CONF = {"spark.sql.shuffle.partitions": "4", "spark.sql.adaptive.enabled": "true"}
# Inputs up to this size (a few hundred thousand lines: an incident's logs) also run with
# Spark's interpreted expressions instead of generated code. On a 5,000-line log the
# pipeline's ~470 Janino compilations (every stage, projection and ordering; each query
# compiles its own) cost more than the rows they run on; interpreted: ~30 compilations.
# Spark tests both paths to give the same results. The session start does its part
# (session.SHORT_RUN_JVM_OPTIONS, chosen by the CLI with is_tiny before Spark starts).
TINY_INPUT_BYTES = 16 << 20
TINY_JOB_CONF = {"spark.sql.codegen.wholeStage": "false",
                 "spark.sql.codegen.factoryMode": "NO_CODEGEN"}
CODEGEN_JOB_CONF = {"spark.sql.codegen.wholeStage": "true",
                    "spark.sql.codegen.factoryMode": "FALLBACK"}


def input_bytes(inputs: Inputs) -> int | None:
    """The inputs' total size on disk; None when one is a URL (hdfs://, s3a://)."""
    paths = [*inputs.broker_logs, *inputs.client_logs, *inputs.events]
    if any("://" in p for p in paths):
        return None
    return sum(os.path.getsize(p) for p in paths)


def is_tiny(inputs: Inputs) -> bool:
    """Small enough for a short run (TINY_INPUT_BYTES): no URL among the inputs."""
    size = input_bytes(inputs)
    return size is not None and size <= TINY_INPUT_BYTES


def empty_files(inputs: Inputs) -> list[str]:
    """Input files with nothing in them (a .gz holding no bytes counts), read before Spark
    starts; URLs are not looked at."""
    import gzip

    empty = []
    for path in dict.fromkeys([*inputs.broker_logs, *inputs.client_logs, *inputs.events]):
        if "://" in path:
            continue
        try:
            if os.path.getsize(path) == 0:
                empty.append(path)
            elif path.endswith(".gz"):
                with gzip.open(path, "rb") as f:
                    if not f.read(1):
                        empty.append(path)
        except (OSError, EOFError):   # unreadable or a damaged .gz: Spark reports it
            continue
    return empty


class Phases:
    """Wall time, the JVM's CPU time (Linux: /proc; a loaded machine inflates the wall
    time, not the CPU) and Spark jobs per phase of one run (`analyze --debug`)."""

    def __init__(self, spark=None):
        self.spark = spark
        self.done: list[tuple[str, float, float | None, int | None]] = []
        self._pid: int | None = None

    def _jvm_cpu(self) -> float | None:
        try:
            if self._pid is None:
                self._pid = self.spark._jvm.java.lang.ProcessHandle.current().pid()
            with open(f"/proc/{self._pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except Exception:  # no Spark yet, or not Linux
            return None

    def _last_job(self) -> int | None:
        if self.spark is None:
            return None
        return max(self.spark.sparkContext.statusTracker().getJobIdsForGroup(), default=-1)

    @contextmanager
    def __call__(self, name: str):
        start, cpu, first = time.perf_counter(), self._jvm_cpu(), self._last_job()
        try:
            yield
        finally:
            last, cpu_end = self._last_job(), self._jvm_cpu()
            self.done.append((name, time.perf_counter() - start,
                              None if cpu is None or cpu_end is None else cpu_end - cpu,
                              None if first is None or last is None else last - first))

    def lines(self) -> list[str]:
        out = []
        for name, secs, cpu, jobs in self.done:
            out.append(f"{name:<24} {secs:7.2f} s" + ("" if cpu is None else f"  jvm cpu {cpu:6.2f} s")
                       + ("" if jobs is None else f"  {jobs} job(s)"))
        return out + [f"{'total':<24} {sum(d[1] for d in self.done):7.2f} s"]


# The tables that read only the events, in the order `ready` gets them: begun while the
# episodes are built (load.TableWriter), they use the cores the episodes' planning leaves.
EVENT_TABLES = ("members", "flapping", "moves", "files")


def analyze(spark, inputs: Inputs, options: Options = Options(),
            progress: Callable[[str], None] = lambda _: None,
            phases: Phases | None = None,
            ready: Callable[[str, Callable[[], DataFrame]], None] | None = None) -> Tables:
    """The tables of `inputs`, each planned when first asked for (Once). `ready(name,
    table)`, when given, gets each of EVENT_TABLES as soon as the events are extracted."""
    from pyspark.sql import functions as F

    from . import extract, handover, observed, transforms as X
    from .schema import FILE_STATS_COLUMNS, empty_events

    phase = phases or Phases()
    size = input_bytes(inputs)
    small = size is not None and size <= SMALL_INPUT_BYTES
    tiny = size is not None and size <= TINY_INPUT_BYTES
    conf = {**(SMALL_JOB_CONF if small else LARGE_JOB_CONF),
            **(TINY_JOB_CONF if tiny else CODEGEN_JOB_CONF)}
    for key, value in conf.items():
        spark.conf.set(key, value)
    parts = []
    with phase("plan extraction"):
        if inputs.broker_logs:
            progress(f"reading {len(inputs.broker_logs)} broker log file(s)")
            parts.append(extract.broker_events(
                extract.read_lines(spark, inputs.broker_logs, inputs.renamed),
                options.log_timezone))
        client_lines = None
        if inputs.client_logs:
            progress(f"reading {len(inputs.client_logs)} client log file(s)")
            client_lines = extract.read_lines(spark, inputs.client_logs, inputs.renamed)
            parts.append(extract.client_events(client_lines, options.log_timezone))
        if inputs.events:
            progress(f"reading {len(inputs.events)} event record file(s)")
            parts.append(extract.record_events(spark, inputs.events, inputs.renamed))
        raw = parts[0] if parts else empty_events(spark)
        for part in parts[1:]:
            raw = raw.unionByName(part)
    # One pass over the input: events and damaged lines together, split after it. A local
    # checkpoint rather than persist(): every table below starts from the checkpoint's
    # short plan instead of the extract's (regex CASEs per field), which each table
    # would otherwise carry several times over - megabytes of plan per job, planned again
    # for every job and kept in the driver's SQL history until its heap ran out.
    with phase("extract (checkpoint)"), extract.extraction_conf(spark):
        raw = raw.localCheckpoint()
    is_bad = F.col("kind") == extract.UNPARSED
    files = (raw.groupBy("file").agg(F.sum((~is_bad).cast("long")).alias("events"),
                                     F.sum(is_bad.cast("long")).alias("unparsed"))
             .select(*FILE_STATS_COLUMNS).orderBy("file"))
    events = X.filter_events(raw.filter(~is_bad), options.since, options.until,
                             options.group_regex)
    planned = {
        "members": Once(lambda: X.member_outcomes(events).orderBy("group", "ts", "member")),
        "flapping": Once(lambda: X.flapping_members(events, options.flap_cycles)),
        "moves": Once(lambda: X.coordinator_moves(events)),
        "files": Once(lambda: files),
    }
    if ready is not None:   # EVENT_TABLES: written while the episodes are built
        for name in EVENT_TABLES:
            ready(name, planned[name])

    progress("building rebalance episodes")
    # Each witness's episodes (checkpointed: the dedupe reads them three times), every
    # rebalance once (checkpointed), then storms marked on them (checkpointed): every
    # table after them reads short checkpoints, never the episodes' plan again.
    with phase("episodes (checkpoints)"):
        every = observed.witnessed(events, records_given=bool(inputs.events),
                                   client_logs_given=bool(inputs.client_logs)).localCheckpoint()
        base = observed.once(every)
        # issue 19: the clients' own revoke -> assign figure of each classic round
        keep = lambda df: X.filter_events(df, options.since, options.until,  # noqa: E731
                                          options.group_regex)
        base = handover.with_client_cost(base, None if client_lines is None else
                                         handover.client_cost(events, client_lines, keep))
        base = base.localCheckpoint()
    with phase("storms (checkpoint)"):
        episodes, _ = X.storms(base, options.storm_count, options.storm_window_s)
        episodes = episodes.orderBy("group", "started", "to_generation").localCheckpoint()
    planned["episodes"] = Once(lambda: episodes)
    planned["storms"] = Once(lambda: X.storm_table(episodes))
    planned["metrics"] = Once(lambda: X.group_metrics(
        events, episodes, planned["storms"](), planned["flapping"](), planned["members"]()))
    planned["hourly"] = Once(lambda: X.hourly(episodes))
    return Tables(events, {name: planned[name] for name in TABLE_NAMES},
                  cached=(raw, every, base, episodes))
