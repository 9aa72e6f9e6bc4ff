"""The SparkSession `groupctl analyze` runs on: local[*] by default, any master Spark
accepts with --master. Spark's own log is off for the CLI (its errors only with --debug,
through our log4j2 file; a failure is said in one line: spark_failure); stage progress
goes to stderr when it is a terminal (Spark's console progress bar).

A `spark://HOST:PORT` master is checked with a TCP connect first: Spark itself would retry
an unreachable standalone master for a minute before giving up, and the CLI owes the user
exit 3 at once.
"""
from __future__ import annotations

import contextlib
import logging
import os
import re
import signal
import socket
import sys
import threading
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable
from urllib.parse import urlparse

from .. import safe_files
from .jvm_stderr import jvm_stderr_filtered
from ..errors import Interrupted, UnreachableError, UsageError

if TYPE_CHECKING:
    import subprocess

    from . import jvm_archive

# Spark's log: its errors only, or nothing. A failed job's errors (a task's Java stack
# trace, hundreds of lines) reach the CLI as the job's exception too, which it says in one
# line (spark_failure); `analyze --debug` lets Spark's errors through as well.
LOG4J2 = """\
status = error
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{{HH:mm:ss}} %p %c{{1}}: %m%n
rootLogger.level = {level}
rootLogger.appenderRef.console.ref = console
logger.jetty.name = org.sparkproject.jetty
logger.jetty.level = off
"""
LOOPBACK = ("127.0.0.1", "localhost", "::1")


def log4j_file(level: str = "error") -> Path:
    """Spark's log4j2 configuration logging at `level` (error, off)."""
    text = LOG4J2.format(level=level)
    # In the user's own cache (the JVM runs what a log4j configuration says): never in
    # the shared temp directory, where another user could plant it or a link at its name.
    try:
        directory = safe_files.private_dir(safe_files.cache_root() / "spark")
    except OSError:
        directory = Path(tempfile.mkdtemp(prefix="groupctl-spark-"))   # 0700, fresh
    path = directory / f"log4j2-{level}.properties"
    try:
        with safe_files.open_read(path) as f:
            if f.read().decode() == text:
                return path
    except (OSError, UnicodeDecodeError):
        pass
    safe_files.write_atomic(path, text)
    return path


def spark_failure(exc: BaseException) -> str | None:
    """One line for a failed Spark job or call: the innermost Java exception's class and
    message (py4j's Py4JJavaError, pyspark's captured exceptions), else the error's first
    line; None for an error that is not Spark's."""
    if not type(exc).__module__.startswith(("py4j.", "pyspark.")):
        return None
    chain: list[str] = []
    java = getattr(exc, "java_exception", None) or getattr(exc, "_origin", None)
    try:
        while java is not None and len(chain) < 100:   # a cycle must not hang the exit
            chain.append(str(java.toString()))
            java = java.getCause()
    except Exception:  # the JVM may be gone (the reason the job failed)
        pass
    text = chain[-1] if chain else next(
        (line for line in str(exc).splitlines() if line.strip()), type(exc).__name__)
    # Spark's FAILED_READ_FILE names the file; its cause (e.g. "not a gzip file") does not
    read = next((m.group(1) for m in map(_READING.search, chain) if m), None)
    return " ".join(text.split())[:400] + (f" (reading {read})" if read else "")


_READING = re.compile(r"while reading file (\S+?)\.?(?:\s|$)")


def check_master(master: str, timeout: float) -> None:
    """UsageError for a malformed spark:// URL, UnreachableError when no master answers."""
    if not master.startswith("spark://"):
        return
    for hostport in master[len("spark://"):].split(","):
        parsed = urlparse(f"//{hostport}")
        if not parsed.hostname or not parsed.port:
            raise UsageError(f"--master {master}: expected spark://HOST:PORT")
        try:
            with socket.create_connection((parsed.hostname, parsed.port), timeout=timeout):
                return
        except OSError as exc:
            last = exc
    raise UnreachableError(f"Spark master {master} is not reachable: {last}")


def _is_loopback(master: str) -> bool:
    if master.startswith("local"):
        return True
    host = urlparse(master.replace("spark://", "//", 1)).hostname
    return host in LOOPBACK


# A short run's JVMs (a tiny input: pipeline.is_tiny): the C1 compiler only. Measured on a
# 5,000-line log (bench/analyze.py; /proc per-thread CPU of the driver JVM): of 60 s of
# JVM CPU, C2's compiler threads took 24 s and C1's 7 s, compiling Catalyst and Spark code
# that a short run leaves before the compiled code pays back; with C1 alone the run took
# 30 s of JVM CPU. A long run keeps C2 (its regex and row loops run for minutes).
SHORT_RUN_JVM_OPTIONS = "-XX:TieredStopAtLevel=1"


def build_session(master: str = "local[*]", *, progress: bool = False,
                  app_name: str = "groupctl-analyze", extra: dict | None = None,
                  short_run: bool = False, spark_errors: bool = True):
    """Get (or create) the SparkSession. `progress`: Spark's stage progress bar on stderr.
    `short_run`: JVMs tuned for a run of seconds (SHORT_RUN_JVM_OPTIONS); only a new
    session's JVM takes them. `spark_errors`: Spark logs its errors on stderr (the CLI
    says a failure in one line, and lets them through with --debug only)."""
    global _archive, _local_dir
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    from . import jvm_archive, scratch

    log_level = "error" if spark_errors else "off"
    java_opts = f"-Dlog4j2.configurationFile=file:{log4j_file(log_level)}"
    # a local JVM this call starts keeps its files where this process can remove them
    local_dir = None
    if master.startswith("local") and SparkContext._gateway is None \
            and "spark.local.dir" not in (extra or {}):
        local_dir = scratch.make()
        java_opts += f" -Djava.io.tmpdir={local_dir}"
    if short_run:
        java_opts += f" {SHORT_RUN_JVM_OPTIONS}"
    # the class-data archive: only a JVM this call starts (the driver's own classpath)
    archive = jvm_archive.plan() if short_run and SparkContext._gateway is None else None
    conf = {
        "spark.ui.showConsoleProgress": "true" if progress else "false",
        "spark.ui.enabled": "false",
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.shuffle.partitions": "4",
        # the SQL tab's history (plans of finished queries) has no reader with the UI off
        "spark.sql.ui.retainedExecutions": "20",
        "spark.sql.adaptive.enabled": "true",
        # pyspark's call-site capture for error messages: six py4j round trips per
        # DataFrame call (planning the extraction: 6,271 calls, 2.5 s; without: 1,925)
        "spark.python.sql.dataFrameDebugging.enabled": "false",
        "spark.driver.extraJavaOptions": java_opts + (f" {archive.java_options}"
                                                      if archive else ""),
        "spark.executor.extraJavaOptions": java_opts,
    }
    if _is_loopback(master):
        conf["spark.driver.host"] = "127.0.0.1"
        conf["spark.driver.bindAddress"] = "127.0.0.1"
    if local_dir is not None:
        conf["spark.local.dir"] = local_dir
    conf.update(extra or {})
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1" if _is_loopback(master) else "")
    if not os.environ.get("SPARK_LOCAL_IP"):
        os.environ.pop("SPARK_LOCAL_IP", None)
    builder = SparkSession.builder.master(master).appName(app_name)
    for key, value in conf.items():
        builder = builder.config(key, value)
    try:
        with jvm_stderr_filtered():
            spark = builder.getOrCreate()
    except BaseException:
        scratch.remove(local_dir)
        raise
    _archive, _local_dir = archive, local_dir
    return spark


_archive: "jvm_archive.Archive | None" = None   # of the JVM build_session started
_local_dir: str | None = None                    # its scratch directory (analytics.scratch)


def stop_session(spark) -> None:
    """Stop Spark; its JVM stays until release_jvm() (a failure's Java cause is read from
    it after the stop)."""
    spark.stop()


_ending: "subprocess.Popen | None" = None   # the JVM release_jvm waits for


def release_jvm(note: Callable[[str], None] = lambda _: None) -> None:
    """End the JVM build_session started, once the run's results or its failure are said:
    cut it loose from this process's gateway (a later session here starts a JVM of its
    own), let it exit (EOF on its stdin ends Spark's Python gateway) and wait for it; keep
    the class-data archive it writes at exit (the first short run: 10-20 s, once per
    install); remove its scratch directory. No process of the run outlives the command."""
    global _archive, _local_dir, _ending
    from pyspark import SparkContext

    from . import jvm_archive, scratch

    archive, _archive = _archive, None
    local_dir, _local_dir = _local_dir, None
    gateway, SparkContext._gateway, SparkContext._jvm = SparkContext._gateway, None, None
    try:
        if gateway is not None:
            gateway.shutdown()
    except Exception:  # the connection may already be gone; the JVM's exit is what counts
        pass
    _ending = getattr(gateway, "proc", None)
    if archive is not None and archive.dump is not None:
        note("saving the Spark driver's class-data archive (once; later runs start faster)")
        jvm_archive.finish(archive, _ending)
    elif _ending is not None:
        jvm_archive.end(_ending)
    _ending = None
    scratch.remove(local_dir)


def no_session_yet() -> bool:
    """Whether no SparkSession runs in this process yet (so this command starts its own)."""
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        return False
    return SparkSession.getActiveSession() is None


class Interrupt:
    """What interrupt_kills_jvm saw: `interrupted` once Ctrl-C (SIGINT) came."""

    interrupted = False


@contextlib.contextmanager
def interrupt_kills_jvm(enabled: bool = True):
    """Ctrl-C while this process's Spark driver JVM runs: the JVM (and anything it
    started) is killed at once, py4j's complaints as its connection drops are muted, and
    whatever the unwinding code raises on the dead connection leaves this block as
    Interrupted (the CLI says it in one line, exit 130). Nothing of an interrupted
    job is kept (analyze replaces --out whole or not at all), so there is nothing to wait
    for. pyspark's own handler cancels the jobs over py4j from inside the signal handler,
    re-entering the call the main thread is in: tracebacks, and a JVM that can outlive us.
    `enabled` False (a session this process did not start: tests) changes nothing."""
    state = Interrupt()
    if not enabled or threading.current_thread() is not threading.main_thread():
        yield state
        return

    def on_sigint(signum, frame):
        first = not state.interrupted
        state.interrupted = True
        if first:
            logging.disable(logging.CRITICAL)
            _kill_jvms()
        raise KeyboardInterrupt

    def unraisable(report) -> None:
        # the signal's KeyboardInterrupt may land in a finalizer (py4j's weakref callback
        # that frees a JVM object) and Python prints it as "Exception ignored in ...":
        # once interrupted, that and py4j's complaints on the dead JVM are ours to mute
        if not state.interrupted:
            unraisable_before(report)

    from pyspark import SparkContext

    unraisable_before = sys.unraisablehook
    sys.unraisablehook = unraisable
    previous = signal.signal(signal.SIGINT, on_sigint)
    # a SparkContext installs pyspark's handler as it starts, before the session is
    # returned: ours goes back as soon as it has
    do_init: Any = SparkContext.__dict__.get("_do_init")

    def do_init_then_ours(*args, **kwargs):
        try:
            return do_init(*args, **kwargs)
        finally:
            signal.signal(signal.SIGINT, on_sigint)

    if do_init is not None:
        SparkContext._do_init = do_init_then_ours   # type: ignore[method-assign]
    try:
        yield state
    except BaseException:
        if state.interrupted:
            _kill_jvms()   # one started while the signal came (the launch)
            raise Interrupted("interrupted") from None
        raise
    finally:
        if do_init is not None:
            SparkContext._do_init = do_init   # type: ignore[method-assign]
        signal.signal(signal.SIGINT, previous)
        if not state.interrupted:   # else the process ends: late finalizers stay muted
            sys.unraisablehook = unraisable_before


def _kill_jvms() -> None:
    """Kill every process under this one: the driver JVM (a direct child, also while it
    starts and before pyspark holds it) and anything it started; then reap the JVM."""
    from pyspark import SparkContext

    from . import scratch

    procs = [getattr(SparkContext._gateway, "proc", None), _ending]
    children = _descendants(os.getpid(), direct=True)
    for pid in reversed(_descendants(os.getpid())):   # the deepest first
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    for proc in procs:   # reaped through Popen, which knows its own
        if proc is not None:
            with contextlib.suppress(Exception):
                proc.wait(timeout=10)
    for pid in children:   # one pyspark did not hold yet (killed while it started)
        with contextlib.suppress(OSError):
            os.waitpid(pid, 0)
    scratch.remove(_local_dir)   # the killed JVM's hooks deleted nothing


def _descendants(pid: int, direct: bool = False) -> list[int]:
    """The processes under `pid`, parents before their children (from /proc; none where
    there is no /proc); `direct`: its children only."""
    children: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    if direct:
        return children.get(pid, [])
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found
