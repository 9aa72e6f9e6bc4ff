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
from dataclasses import dataclass, field
from datetime import datetime
from typing import Callable, Sequence

from ..errors import UsageError


@dataclass
class Inputs:
    broker_logs: list[str] = field(default_factory=list)
    client_logs: list[str] = field(default_factory=list)
    events: list[str] = field(default_factory=list)

    def empty(self) -> bool:
        return not (self.broker_logs or self.client_logs or self.events)


@dataclass(frozen=True)  # frozen: analyze()'s default instance is shared
class Options:
    since: datetime | None = None
    until: datetime | None = None
    group_regex: str | None = None
    storm_count: int = 3
    storm_window_s: int = 600
    flap_cycles: int = 2
    log_timezone: str = "UTC"


@dataclass
class Tables:
    events: object
    episodes: object
    metrics: object
    storms: object
    hourly: object
    flapping: object
    members: object
    files: object
    cached: tuple = ()

    def release(self) -> None:
        """Drop the checkpointed blocks (a session that runs more jobs): each cached
        DataFrame is a LogicalRDD over the RDD its localCheckpoint() computed."""
        for df in self.cached:
            plan = df._jdf.queryExecution().analyzed()
            if plan.getClass().getSimpleName() == "LogicalRDD":
                plan.rdd().unpersist(False)

    def named(self) -> dict:
        return {"episodes": self.episodes, "metrics": self.metrics, "storms": self.storms,
                "hourly": self.hourly, "flapping": self.flapping, "members": self.members,
                "files": self.files}


def expand(patterns: Sequence[str], option: str) -> list[str]:
    """Files matching each glob (sorted, deduplicated); UsageError if one matches nothing."""
    out: list[str] = []
    for pattern in patterns:
        if "://" in pattern:
            out.append(pattern)
            continue
        path = os.path.expanduser(pattern)
        matches = sorted(p for p in glob.glob(path, recursive=True) if os.path.isfile(p))
        if not matches:
            raise UsageError(f"{option} {pattern}: no such file (the pattern matches nothing)")
        out.extend(os.path.abspath(m) for m in matches)
    return list(dict.fromkeys(out))


def analyze(spark, inputs: Inputs, options: Options = Options(),
            progress: Callable[[str], None] = lambda _: None) -> Tables:
    from pyspark.sql import functions as F

    from . import extract, transforms as X
    from .schema import FILE_STATS_COLUMNS, empty_events

    parts = []
    if inputs.broker_logs:
        progress(f"reading {len(inputs.broker_logs)} broker log file(s)")
        parts.append(extract.broker_events(extract.read_lines(spark, inputs.broker_logs),
                                           options.log_timezone))
    if inputs.client_logs:
        progress(f"reading {len(inputs.client_logs)} client log file(s)")
        parts.append(extract.client_events(extract.read_lines(spark, inputs.client_logs),
                                           options.log_timezone))
    if inputs.events:
        progress(f"reading {len(inputs.events)} event record file(s)")
        parts.append(extract.record_events(spark, inputs.events))
    raw = empty_events(spark)
    for part in parts:
        raw = raw.unionByName(part)
    # One pass over the input: events and damaged lines together, split after it. A local
    # checkpoint rather than persist(): every table below starts from the checkpoint's
    # short plan instead of the extract's (regex CASEs per field), which each table
    # would otherwise carry several times over - megabytes of plan per job, planned again
    # for every job and kept in the driver's SQL history until its heap ran out.
    raw = raw.localCheckpoint()
    is_bad = F.col("kind") == extract.UNPARSED
    files = (raw.groupBy("file").agg(F.sum((~is_bad).cast("long")).alias("events"),
                                     F.sum(is_bad.cast("long")).alias("unparsed"))
             .select(*FILE_STATS_COLUMNS).orderBy("file"))
    events = X.filter_events(raw.filter(~is_bad), options.since, options.until,
                             options.group_regex)

    progress("building rebalance episodes")
    episodes = X.episodes(events)
    episodes, storms = X.storms(episodes, options.storm_count, options.storm_window_s)
    episodes = episodes.orderBy("group", "started", "to_generation").localCheckpoint()  # same
    members = X.member_outcomes(events).orderBy("group", "ts", "member")
    flapping = X.flapping_members(events, options.flap_cycles)
    metrics = X.group_metrics(events, episodes, storms, flapping, members)
    hourly = X.hourly(episodes)

    return Tables(events, episodes, metrics, storms, hourly, flapping, members, files,
                  cached=(raw, episodes))
