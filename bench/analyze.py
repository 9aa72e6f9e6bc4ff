"""`groupctl analyze`'s extraction on Spark against a plain single-threaded Python `re`
pass doing the same extraction over the same files, in the same run; then the same Spark
job on a standalone cluster with 1 worker and with 2 workers.

Workload: real lab broker lines (tests/fixtures/analyze/kafka4-server.log: group
coordinator lines of every kind plus the broker's other lines, multi-line records
included) replicated over GROUPS groups and many hours (each copy renames the groups and
shifts the timestamps) into FILES files in a temp dir, ~2,000,000 lines by default (not
committed). The extraction is what extract.broker_events does: the log4j header, the
coordinator prefix, the line kind and its fields (both sides use the regexes in
groupctl/analytics/patterns.py), plus the unparsed-line count; both sides end with the
number of events per kind and of unparsed lines, which must agree.

End to end first (issue 20: analyze at the speed of an incident), each a fresh process,
the minimum of --repeat runs taken in turn:
  bare          a bare PySpark local[2] session start plus one trivial job (count 1,000 rows)
  bare-short    the same with the JVM analyze gives a tiny input (C1 compiler only, the
                driver's class-data archive mapped: analytics/jvm_archive.py)
  e2e           `groupctl analyze --broker-logs` on a --e2e-lines log (5,000), local[2]
                ratio e2e / bare (target <= 1.5)
  e2e-no-cds    the same with GROUPCTL_SPARK_NO_CDS=1 (no class-data archive)
  first         once, in an empty GROUPCTL_CACHE: the run that writes the archive
  before        the same command from another checkout (--before /work/main), if given
  empty         `groupctl analyze` on an empty file (said before Spark starts)

Then the extraction (wall time, the minimum of --repeat runs; Spark on a started session,
after WARM_RUNS warm-up runs on a WARM_LINES-line sample):
  python-re     one thread, `re`, line by line
  local[2]      Spark local mode, 2 cores          ratio local[2] / python-re (target <= 1.0)
  cluster-1w    standalone master + 1 worker (1 core)
  cluster-2w    standalone master + 2 workers (1 core each)   ratio 2w / 1w (< 1: faster)

--full: `groupctl --debug analyze --master local[2]` over the whole workload, end to end, in
its own process with Spark's default driver memory (the 20M-line case: --lines 20000000
--files 8, about 1.8 GB): its wall time, its phases (--debug) and its peak RSS.

--growth: --full over --lines and over ten times as many (same --files and --groups), each
generated then removed, and the ratio of their wall times (target <= 10: the cost grows no
faster than the input, issue 34); --tmp DIR puts the temp dir there (20M lines ~1.7 GB).
bench/fleet_events.py feeds analyze a generated fleet's records (--events) instead.

--workload DIR keeps the generated files in DIR and reuses them when they are there (the
big inputs are generated once; not in the repository). Each section prints the load
average it ran under: on a shared machine the ratios move with it.

    ./dev setup && .venv/bin/python bench/analyze.py [--lines 2000000] [--repeat 2]
        [--e2e-only | --no-e2e] [--no-cluster] [--before /path/to/other/checkout]
        [--workload DIR] [--full | --growth [--tmp DIR]]
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

from groupctl.analytics import patterns as P

TEMPLATE = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "analyze" / "kafka4-server.log"
GROUPS_IN_TEMPLATE = ("harvest-classic-1795439393", "harvest-848-1795439393")
TS = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3})\]")


def generate(root: Path, lines: int, files: int, groups: int) -> list[Path]:
    template = TEMPLATE.read_text().splitlines()
    base = datetime(2026, 11, 1)
    t0 = datetime.strptime(TS.match(template[0]).group(1), "%Y-%m-%d %H:%M:%S")
    paths = [root / f"server.log.{i}" for i in range(files)]
    outs = [open(p, "w") for p in paths]
    copies = lines // len(template) + 1
    written = 0
    for copy in range(copies):
        shift = base + timedelta(minutes=3 * copy) - t0
        names = [f"bench-{copy % groups:04d}-{kind}" for kind in ("classic", "848")]
        out = outs[copy * files // copies]
        for line in template:
            m = TS.match(line)
            if m:
                when = datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S") + shift
                line = f"[{when:%Y-%m-%d %H:%M:%S},{m.group(2)}]{line[m.end():]}"
            for old, new in zip(GROUPS_IN_TEMPLATE, names):
                line = line.replace(old, new)
            out.write(line + "\n")
            written += 1
            if written >= lines:
                break
        if written >= lines:
            break
    for f in outs:
        f.close()
    return paths


def workload(root: Path, lines: int, files: int, groups: int) -> list[Path]:
    """The workload's files under `root`: generated unless a previous run with the same
    shape left them there (a stamp file says which shape)."""
    stamp = root / f".shape-{lines}-{files}-{groups}"
    paths = [root / f"server.log.{i}" for i in range(files)]
    if stamp.exists() and all(p.exists() for p in paths):
        return paths
    root.mkdir(parents=True, exist_ok=True)
    for old in root.glob(".shape-*"):
        old.unlink()
    paths = generate(root, lines, files, groups)
    stamp.touch()
    return paths


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def full_run(paths: list[Path], root: Path) -> tuple[float, list[str]]:
    """`groupctl --debug analyze` over `paths` on local[2], end to end, in its own process
    (Spark's default driver memory): wall time, peak RSS of the process tree's JVM, phases.
    Returns the wall time and the phase lines."""
    import threading

    here = str(Path(__file__).resolve().parent.parent)
    argv = [sys.executable, "-m", "groupctl", "--debug", "-o", "json", "analyze", "--master",
            "local[2]", *[a for p in paths for a in ("--broker-logs", str(p))],
            "--out", str(root / "full-out")]
    before = load()
    t = time.perf_counter()
    proc = subprocess.Popen(argv, env=dict(os.environ, PYTHONPATH=here), text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    peak = [0]

    def watch_rss():   # the JVM is the Python process's child
        while proc.poll() is None:
            peak[0] = max(peak[0], _tree_rss(proc.pid))
            time.sleep(1)

    threading.Thread(target=watch_rss, daemon=True).start()
    out, err = proc.communicate()
    took = time.perf_counter() - t
    print(f"full run     {took:8.2f} s   exit {proc.returncode}, peak RSS {peak[0] / 1e6:.0f} MB "
          f"(python + JVM), {len(json.loads(out)) if proc.returncode == 0 else '?'} groups; "
          f"{before} at start, {load()} at end")
    phases = [line for line in err.splitlines() if line.startswith("analyze: ")]
    for line in phases:
        print(f"  {line}")
    if proc.returncode != 0:
        print(err[-3000:])
        raise SystemExit(1)
    return took, phases


def growth(root: Path, lines: int, files: int, groups: int) -> None:
    """The same end-to-end `analyze` over `lines` and over 10x `lines` (same files, same
    groups: only the length grows), each generated, run, and removed in turn; the ratio of
    the wall times beside its target (<= 10: the cost grows no faster than the input)."""
    took = {}
    for n in (lines, lines * 10):
        where = root / f"growth-{n}"
        t = time.perf_counter()
        paths = generate_dir(where, n, files, groups)
        size = sum(p.stat().st_size for p in paths)
        print(f"{n:,} lines, {size / 1e6:.0f} MB in {files} files, {groups} x 2 groups "
              f"(generated in {time.perf_counter() - t:.0f} s); {load()}")
        took[n], _ = full_run(paths, where)
        shutil.rmtree(where, ignore_errors=True)
    small, big = took[lines], took[lines * 10]
    print(f"growth: {lines * 10:,} lines {big:.1f} s / {lines:,} lines {small:.1f} s = "
          f"{big / small:.2f}x (target <= 10x, the input's growth); {load()}")


def generate_dir(root: Path, lines: int, files: int, groups: int) -> list[Path]:
    root.mkdir(parents=True, exist_ok=True)
    return generate(root, lines, files, groups)


def _tree_rss(pid: int) -> int:
    """RSS in bytes of `pid` and its children (Linux /proc)."""
    total = 0
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        with open(f"/proc/{pid}/statm") as f:
            total = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return 0
    return total + sum(_tree_rss(int(c)) for c in children)


def python_pass(paths: list[Path]) -> dict:
    """The same extraction as extract.broker_events, with `re`, one line at a time."""
    def twin(pattern: str) -> re.Pattern:  # java.util.regex's ASCII classes, as Spark
        return re.compile(pattern, P.PYTHON_FLAGS)

    line_re, start_re = twin(P.LOG4J_LINE), twin(P.LOG4J_START)
    # the same steps as the Spark side: a substring test picks the candidate lines
    cont_re, trunc_re = twin(P.CONTINUATION), twin(P.BROKER_TRUNCATED)
    loggers_re, prefix_re = twin(P.BROKER_LOGGERS), twin(P.BROKER_PREFIX)
    pats = [(p.kind, p.prefix, twin(p.regex), p.fields) for p in P.BROKER_PATTERNS]
    counts: collections.Counter = collections.Counter()
    events = []
    for path in paths:
        with open(path, encoding="utf-8", errors="replace") as f:
            for raw in f:
                line = raw.rstrip("\n")
                candidate = " [GroupCoordinator " in line
                if line and (not start_re.match(line) if line.startswith("[")
                             else not (line[0] in "\t " or cont_re.match(line))):
                    counts["unparsed"] += 1          # garbage
                if not candidate:
                    continue
                m = line_re.match(line)
                if m is None:
                    if trunc_re.match(line):
                        counts["unparsed"] += 1      # one of ours, cut short
                    continue
                msg = m.group(3)
                if not (loggers_re.match(m.group(4)) and msg.startswith("[GroupCoordinator ")):
                    continue
                pm = prefix_re.match(msg)
                body = msg[pm.end():] if pm else msg
                for kind, prefix, rx, fields in pats:
                    if body.startswith(prefix):
                        fm = rx.match(body)
                        if fm:
                            event = {name: fm.group(i) or None for name, i in fields.items()}
                            event.update(kind=kind, ts=datetime.strptime(
                                line[1:24], "%Y-%m-%d %H:%M:%S,%f"),
                                broker=int(pm.group(1)) if pm else None)
                            events.append(event)
                            counts[kind] += 1
                            break
    return dict(counts)


def spark_pass(spark, paths: list[Path]) -> dict:
    from pyspark.sql import functions as F

    from groupctl.analytics import extract

    from groupctl.analytics.schema import EVENT_COLUMNS

    events = extract.broker_events(extract.read_lines(spark, [str(p) for p in paths]))
    # the hash over every column keeps Spark from pruning the field extraction away
    counted = events.groupBy("kind").agg(F.count("*").alias("n"),
                                         F.sum(F.hash(*EVENT_COLUMNS)).alias("h"))
    with extract.extraction_conf(spark):   # as analyze's extraction runs
        return {r["kind"]: r["n"] for r in counted.collect()}


BARE = ("from groupctl.analytics.session import build_session\n"
        "build_session('local[2]').range(1000).count()\n")
# the same with the JVM options analyze gives a tiny input's session (short_run)
BARE_SHORT = BARE.replace("'local[2]')", "'local[2]', short_run=True)")


def _process_s(argv: list[str], pythonpath: str, **environ: str) -> float:
    """Wall time of one fresh process (exit status must be 0, or 2 for an empty input)."""
    env = dict(os.environ, PYTHONPATH=pythonpath, **environ)
    t = time.perf_counter()
    # run in the checkout: `python -m` puts the working directory first on sys.path, so
    # from another checkout's directory --before timed this one's code
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, cwd=pythonpath)
    took = time.perf_counter() - t
    assert proc.returncode in (0, 2), proc.stderr[-2000:]
    return took


def end_to_end(root: Path, lines: int, repeat: int, before: str | None) -> None:
    """bare session + trivial job vs `groupctl analyze` of a `lines`-line log, in turn."""
    here = str(Path(__file__).resolve().parent.parent)
    (root / "e2e").mkdir()
    (log,) = generate(root / "e2e", lines, 1, 10)
    (root / "empty.log").write_text("")
    python = sys.executable

    def analyze(path: Path) -> list[str]:
        return [python, "-m", "groupctl", "-o", "json", "analyze", "--master", "local[2]",
                "--broker-logs", str(path), "--out", str(root / "e2e-out")]

    runs: dict[str, list[float]] = collections.defaultdict(list)
    # a machine's first short run writes the driver's class-data archive (jvm_archive.py):
    # timed once in a cache of its own; then one untimed run makes sure the real cache
    # has it, so that every timed run below maps it
    first = _process_s(analyze(log), here, GROUPCTL_CACHE=str(root / "fresh-cache"))
    shutil.rmtree(root / "fresh-cache", ignore_errors=True)
    _process_s(analyze(log), here)
    for _ in range(repeat):
        runs["bare"].append(_process_s([python, "-c", BARE], here))
        runs["bare-short"].append(_process_s([python, "-c", BARE_SHORT], here))
        runs["e2e"].append(_process_s(analyze(log), here))
        runs["e2e-no-cds"].append(_process_s(analyze(log), here, GROUPCTL_SPARK_NO_CDS="1"))
        if before:
            runs["before"].append(_process_s(analyze(log), before))
        runs["empty"].append(_process_s(analyze(root / "empty.log"), here))
    best = {k: min(v) for k, v in runs.items()}
    print(f"end to end ({lines:,}-line broker log, local[2], best of {repeat}; all runs: "
          + ", ".join(f"{k} {' '.join(f'{x:.1f}' for x in v)}" for k, v in runs.items()) + ")")
    print(f"bare         {best['bare']:8.2f} s   session start + count(1000)")
    print(f"bare-short   {best['bare-short']:8.2f} s   the same with analyze's short-run JVM: "
          f"C1 only (session.SHORT_RUN_JVM_OPTIONS), the class-data archive mapped")
    print(f"e2e          {best['e2e']:8.2f} s   ratio e2e/bare = {best['e2e'] / best['bare']:.2f} "
          f"(target <= 1.5); e2e/bare-short = {best['e2e'] / best['bare-short']:.2f}")
    print(f"e2e-no-cds   {best['e2e-no-cds']:8.2f} s   GROUPCTL_SPARK_NO_CDS=1 (no archive): "
          f"ratio /bare = {best['e2e-no-cds'] / best['bare']:.2f}")
    print(f"first        {first:8.2f} s   a machine's first run (writes the archive, once): "
          f"ratio /bare = {first / best['bare']:.2f}")
    if before:
        print(f"before       {best['before']:8.2f} s   ratio before/bare = "
              f"{best['before'] / best['bare']:.2f}  ({before})")
    print(f"empty        {best['empty']:8.2f} s   (an empty log: said before Spark starts)")


# The JIT needs a few passes over the extraction's code before it runs compiled: on 2M
# lines, in one session, six passes in turn took 11.6, 7.5, 6.7, 6.1, 5.0, 5.3 s (load 2-3).
# One 20,000-line warm-up left the timed runs half warm; these leave them warm. (A cold
# `analyze` of a big input pays that warm-up inside its one pass: `--full` times it.)
WARM_LINES = 200_000
WARM_RUNS = 3


def timed(fn, repeat: int):
    best, result = None, None
    for _ in range(repeat):
        t = time.perf_counter()
        result = fn()
        took = time.perf_counter() - t
        best = took if best is None else min(best, took)
    return best, result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lines", type=int, default=2_000_000)
    ap.add_argument("--files", type=int, default=4)
    ap.add_argument("--groups", type=int, default=500)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--no-cluster", action="store_true", help="skip the standalone rows")
    ap.add_argument("--e2e-lines", type=int, default=5_000)
    ap.add_argument("--e2e-only", action="store_true", help="only the end-to-end rows")
    ap.add_argument("--no-e2e", action="store_true", help="skip the end-to-end rows")
    ap.add_argument("--before", metavar="CHECKOUT", help="also time this checkout's analyze")
    ap.add_argument("--workload", metavar="DIR", help="keep (and reuse) the workload here")
    ap.add_argument("--full", action="store_true",
                    help="only: groupctl analyze end to end over the whole workload")
    ap.add_argument("--growth", action="store_true",
                    help="only: --full over --lines and over 10x --lines, and their ratio")
    ap.add_argument("--tmp", metavar="DIR", help="where the temp dir goes (TMPDIR otherwise)")
    args = ap.parse_args()
    if args.growth:
        with tempfile.TemporaryDirectory(prefix="groupctl-bench-analyze-", dir=args.tmp) as tmp:
            growth(Path(tmp), args.lines, args.files, args.groups)
        return 0
    if args.e2e_only:
        with tempfile.TemporaryDirectory(prefix="groupctl-bench-analyze-") as tmp:
            end_to_end(Path(tmp), args.e2e_lines, args.repeat, args.before)
        return 0

    from groupctl.analytics.session import build_session
    from groupctl.analytics.standalone import StandaloneCluster

    with tempfile.TemporaryDirectory(prefix="groupctl-bench-analyze-") as tmp:
        root = Path(tmp)
        t = time.perf_counter()
        paths = workload(Path(args.workload) if args.workload else root / "workload",
                         args.lines, args.files, args.groups)
        size = sum(p.stat().st_size for p in paths)
        print(f"workload: {args.lines:,} lines, {size / 1e6:.0f} MB in {args.files} files, "
              f"{args.groups} x 2 groups (ready in {time.perf_counter() - t:.1f}s); {load()}")
        if args.full:
            full_run(paths, root)
            return 0
        if not args.no_e2e:
            end_to_end(root, args.e2e_lines, args.repeat, args.before)
        (root / "warm").mkdir()
        # as many files as the workload: every executor of a cluster gets a warm-up task
        warm = generate(root / "warm", WARM_LINES, args.files, 10)

        print(f"extraction: {load()}")
        py_s, py_counts = timed(lambda: python_pass(paths), args.repeat)
        print(f"python-re    {py_s:8.2f} s   events {sum(v for k, v in py_counts.items() if k != 'unparsed'):,}")

        rows = {}

        def run_spark(name: str, master: str):
            spark = build_session(master)
            for _ in range(WARM_RUNS):
                spark_pass(spark, warm)
            secs, counts = timed(lambda: spark_pass(spark, paths), args.repeat)
            spark.stop()
            assert counts == py_counts, (name, counts, py_counts)
            rows[name] = secs
            return secs

        s = run_spark("local[2]", "local[2]")
        print(f"local[2]     {s:8.2f} s   ratio local[2]/python-re = {s / py_s:.2f} (target <= 1.0)")
        if not args.no_cluster:
            for workers in (1, 2):
                with StandaloneCluster(workers=workers, root=root / f"spark-{workers}w") as c:
                    s = run_spark(f"cluster-{workers}w", c.url)
                print(f"cluster-{workers}w   {s:8.2f} s")
            print(f"ratio cluster-2w/cluster-1w = {rows['cluster-2w'] / rows['cluster-1w']:.2f} "
                  f"(< 1: two workers faster)")
        print(f"done: {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
