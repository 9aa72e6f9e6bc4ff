"""`groupctl analyze`: rebalance forensics on Spark (docs/commands/analyze.md).

Reads broker logs, client logs and groupctl's own event records (each option a glob,
repeatable, plain or .gz), builds rebalance episodes and per-group metrics with PySpark,
writes Parquet + CSV + report.html under --out and prints a summary (or the per-group
metrics with -o json/yaml). pyspark is imported inside the command only: `--help` stays fast.
Exit 0; 2 for no input, a glob matching nothing or an --out that cannot be written
(checked before Spark starts); 3 for an unreachable --master.
"""
from __future__ import annotations

import os
import re
import tempfile
from datetime import datetime, timezone
from pathlib import Path
from typing import List, Optional

import typer

from ..errors import GroupctlError, UsageError
from .app import app
from .timearg import TIME_HELP

_GLOB = "GLOB"


@app.command("analyze")
def analyze(
    ctx: typer.Context,
    broker_logs: Optional[List[str]] = typer.Option(
        None, "--broker-logs", metavar=_GLOB,
        help="Broker server.log* files (Kafka 3.x and 4.x group coordinator lines). Repeatable."),
    client_logs: Optional[List[str]] = typer.Option(
        None, "--client-logs", metavar=_GLOB,
        help="Client logs: the Java consumer's coordinator lines, librdkafka debug=cgrp. Each "
             "classic round then gets the clients' own unowned-partition time "
             "(revoke -> assign). Repeatable."),
    events: Optional[List[str]] = typer.Option(
        None, "--events", metavar=_GLOB,
        help="groupctl event records (ndjson from watch, join --watch --record, history). Repeatable."),
    master: str = typer.Option("local[*]", "--master", metavar="URL",
                               envvar="GROUPCTL_SPARK_MASTER",
                               help="Spark master: local[*] (default), spark://HOST:PORT, ..."),
    out: str = typer.Option("groupctl-analysis", "--out", metavar="DIR",
                            help="Output directory (Parquet, CSV, report.html)."),
    since: Optional[str] = typer.Option(None, "--since", metavar="TIME",
                                        help=f"Only events at or after TIME. {TIME_HELP}"),
    until: Optional[str] = typer.Option(None, "--until", metavar="TIME",
                                        help=f"Only events before TIME. {TIME_HELP}"),
    group: Optional[str] = typer.Option(None, "--group", metavar="REGEX",
                                        help="Only groups whose id matches REGEX."),
    storm_rebalances: int = typer.Option(3, "--storm-rebalances", metavar="N",
                                         help="A storm: at least N rebalances ..."),
    storm_window: float = typer.Option(600.0, "--storm-window", metavar="S",
                                       help="... within S seconds."),
    log_timezone: str = typer.Option("UTC", "--log-timezone", metavar="TZ",
                                     help="Time zone of the log files' timestamps."),
):
    """Explain rebalances after the fact: timelines, reasons and metrics from logs, on Spark.

    Classic groups: one rebalance per generation (Preparing -> Stabilized -> the leader's
    assignment), with the broker's reason (KIP-800, the client's own reason included) and
    the member that triggered it. Consumer (KIP-848), share (KIP-932) and streams (KIP-1071)
    groups: group-epoch bumps up to the new target assignment. Lines that are not log records (garbage, cut short) are counted
    per file and reported, never fatal; a damaged .gz is said and read up to the damage. Runs on local[*], or on any Spark cluster with
    --master (the input paths must then be readable by the executors).

    Writes CSV and Parquet tables and a self-contained report.html under --out, and prints
    a summary (with -o json/yaml: one object per group). Exit 2 for no input, a glob
    matching nothing or an --out that is not a writable directory, 3 when a spark://
    master does not answer, 1 when a Spark job fails (one line: its Java cause)."""
    env = ctx.find_root().obj
    from ..analytics.pipeline import Inputs, Options, empty_files, expand

    inputs = Inputs(expand(broker_logs or [], "--broker-logs"),
                    expand(client_logs or [], "--client-logs"),
                    expand(events or [], "--events"))
    if inputs.empty():
        raise UsageError("nothing to analyze: give --broker-logs, --client-logs and/or --events")
    empty = empty_files(inputs)
    given = len({*inputs.broker_logs, *inputs.client_logs, *inputs.events})
    if len(empty) == given:   # said at once: no Spark for nothing
        raise UsageError("nothing to analyze: " + (
            f"{empty[0]} is empty" if given == 1 else f"all {given} input files are empty"))
    for path in empty:
        env.warn(f"{path}: empty file")
    options = Options(since=_time(since, "--since"), until=_time(until, "--until"),
                      group_regex=_regex(group), storm_count=_positive(storm_rebalances,
                                                                       "--storm-rebalances"),
                      storm_window_s=int(_positive(storm_window, "--storm-window")),
                      log_timezone=_timezone(log_timezone))
    from ..analytics.session import check_master

    out_dir = _writable_dir(Path(out))
    check_master(master, env.settings.timeout)
    return _run(env, inputs, options, master, out_dir)


def _run(env, inputs, options, master: str, out: Path) -> int:
    from ..analytics import damage
    from ..analytics.session import interrupt_kills_jvm, no_session_yet

    damaged = damage.in_background([*inputs.broker_logs, *inputs.client_logs, *inputs.events])
    ours = no_session_yet()   # this run starts Spark's JVM, and ends it
    with tempfile.TemporaryDirectory(prefix="groupctl-analyze-") as copies, \
            interrupt_kills_jvm(ours):
        try:
            return _run_spark(env, inputs, options, master, out,
                              lambda: _salvaged(env, damaged.result(), Path(copies)))
        except Exception as exc:
            from ..analytics.session import spark_failure

            said = spark_failure(exc)   # (read from the JVM: before it ends)
            if said is None:
                raise
            raise GroupctlError(f"Spark failed: {said}") from exc
        finally:
            if ours:   # after the results or the failure are said: the JVM's end (and
                # its class-data archive, if this run writes it: once per install)
                from ..analytics.session import release_jvm

                env.stdout.flush()
                release_jvm((lambda m: env.note(f"analyze: {m}")) if env.stderr_is_terminal
                            else lambda _: None)


def _salvaged(env, damaged: list[tuple[str, str]], into: Path) -> dict[str, str]:
    """Each damaged .gz input said, and a plain copy of its text up to the damage made:
    {copy: original}."""
    from ..analytics.damage import salvage

    for path, what in damaged:
        env.warn(f"{path}: {what}")
    try:
        return salvage(damaged, into)
    except OSError as exc:   # the temp directory full, most likely
        raise UsageError(f"cannot copy the text of the damaged .gz input(s) into {into} "
                         f"(TMPDIR): {exc.strerror or exc}") from None


def _run_spark(env, inputs, options, master: str, out: Path, salvaged) -> int:
    from ..render.analyze import summary_table
    from ..render.output import emit

    progress = env.stderr_is_terminal

    def say(message: str) -> None:
        if progress:
            env.note(f"analyze: {message}")

    from ..analytics.pipeline import Phases, is_tiny

    phases = Phases()
    say(f"starting Spark ({master})")
    with phases("start Spark"):
        spark, owned = _session(master, progress, is_tiny(inputs), env.settings.debug)
    phases.spark = spark
    try:
        with phases("damaged .gz inputs"):   # read while the JVM started
            inputs = inputs.reading(salvaged())
        from ..analytics import load, report
        from ..analytics.pipeline import analyze as run_pipeline
        from .outdir import replaced_atomically

        with replaced_atomically(out) as staging:  # whole or not at all (a full disk)
            with load.TableWriter(staging) as writer:
                tables = run_pipeline(spark, inputs, options, say, phases, writer.submit)
                say(f"writing {out}")
                with phases(f"tables (the rest; {writer.parallel} at a time)"):
                    collected = writer.rows(tables.planned)
            with phases("report.html"):
                report.write_report(staging / "report.html", collected,
                                    "groupctl analyze: rebalances")
        report_path = out / "report.html"
        tables.release()
        unread = _nothing_read(spark, inputs, collected["files"])
    finally:
        phases.spark = None   # (no job count or JVM across the stop)
        if owned:
            from ..analytics.session import stop_session

            with phases("stop Spark"):
                stop_session(spark)
    if env.settings.debug:   # where the time went
        for line in phases.lines():
            env.note(f"analyze: {line}")
    for f in collected["files"]:
        if f["unparsed"]:
            env.warn(f"{f['file']}: {f['unparsed']} line(s) not understood (skipped)")
    for name, what in unread:
        env.warn(f"{name}: no {what} in it")
    data = {**collected, "out": str(out), "report": str(report_path)}
    if env.settings.output in ("json", "yaml", "ndjson"):
        emit(env, load.metrics_json(collected["metrics"]))
    else:
        emit(env, data, summary_table)
    return 0


# What each kind of input is read for (the files table counts the rows read from each)
_READ_FOR = (("broker_logs", "group coordinator line"),
             ("client_logs", "consumer group coordination line"),
             ("events", "groupctl record"))


def _nothing_read(spark, inputs, files: list[dict]) -> list[tuple[str, str]]:
    """(file, what it was read for) for each local input with no row in the files table:
    a wrong file given (controller.log), or a log of a broker that coordinated no group
    then. A damaged .gz of which nothing could be read was said already."""
    from ..analytics.extract import spark_name

    seen = {f["file"] for f in files}
    unread = []
    for option, what in _READ_FOR:
        for path in getattr(inputs, option):
            if "://" in path or (path in inputs.renamed and not os.path.getsize(path)):
                continue
            name = spark_name(spark, inputs.renamed.get(path, path))
            if name not in seen:
                unread.append((name, what))
    return unread


def _session(master: str, progress: bool, short_run: bool, debug: bool):
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise GroupctlError("analyze needs pyspark: pip install 'groupctl[spark]'") from None
    from ..analytics.session import build_session

    owned = SparkSession.getActiveSession() is None
    try:
        return build_session(master, progress=progress, short_run=short_run,
                             spark_errors=debug), owned
    except Exception as exc:  # no Java, or the JVM would not start
        raise GroupctlError(f"Spark did not start ({type(exc).__name__}: {exc}); "
                            f"analyze needs Java 17+ on PATH or JAVA_HOME") from None


def _writable_dir(out: Path) -> Path:
    """--out (or, when missing, its parent) proven writable, or UsageError naming it: found before
    Spark starts, not after its job. Tried, not guessed from mode bits (root passes those)."""
    import tempfile

    from .outdir import check_not_symlink

    check_not_symlink(out)
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out}: not a directory")
    try:   # a missing --out is made only once everything is written (outdir)
        probe = out if out.exists() else out.absolute().parent
        probe.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=probe, prefix=".groupctl-write-test-"):
            pass
    except OSError as exc:
        raise UsageError(f"--out {out}: cannot write there ({exc.strerror or exc})") from None
    return out


def _time(text: str | None, option: str) -> datetime | None:
    """--since/--until as `history` takes them (cli/timearg.py), as naive UTC."""
    if text is None:
        return None
    import time

    from .timearg import parse_time

    ms = parse_time(text, option, int(time.time() * 1000))
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).replace(tzinfo=None)


def _regex(text: str | None) -> str | None:
    if text is None:
        return None
    try:
        re.compile(text)
    except re.error as exc:
        raise UsageError(f"--group {text!r}: not a regular expression ({exc})") from None
    return text


def _positive(value, option: str):
    if value <= 0:
        raise UsageError(f"{option} must be positive")
    return value


def _timezone(name: str) -> str:
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    if name.upper() in ("UTC", "Z"):
        return "UTC"
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise UsageError(f"--log-timezone {name!r}: unknown time zone") from None
    return name
