"""`groupctl analyze` end to end in-process (on the shared local SparkSession): outputs
under --out, -o json per docs/commands/analyze.md, the summary, exit codes 2 and 3 (which fail before
Spark starts), and report.html in headless Chromium."""
from __future__ import annotations

import csv
import json
import shutil
import subprocess

import pytest

from analyze_support import fixture_args, run

# the first test of a module pays for a whole Spark job over the fixtures: several
# minutes on a loaded 2-core machine, past the suite's 300 s default
pytestmark = pytest.mark.timeout(900)

FIELDS_6 = ["group", "type", "rebalances", "failed_members", "left_members", "duration_ms_p50",
            "duration_ms_p95", "duration_ms_max", "storms", "top_reason"]


@pytest.fixture(scope="module")
def json_run(spark, fixture_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("analyze-out")
    code, stdout, stderr = run(["-o", "json", *fixture_args(fixture_dir, out)])
    return code, json.loads(stdout) if code == 0 else stdout, stderr, out


def test_json_is_one_object_per_group_with_the_design_fields(json_run):
    code, groups, stderr, _ = json_run
    assert code == 0, stderr
    assert sorted(g["group"] for g in groups) == [
        "fence-share", "fence-streams", "harvest-848-1795439393", "harvest-classic-1795439393",
        "harvest-java848", "harvest-share", "harvest-streams", "java848-leave", "orders-v3"]
    types = {g["group"]: g["type"] for g in groups}
    assert [types[g] for g in ("harvest-share", "fence-share", "harvest-streams",
                               "fence-streams", "harvest-java848")] == [
        "share", "share", "streams", "streams", "consumer"]
    for g in groups:
        assert list(g)[:len(FIELDS_6)] == FIELDS_6
    classic = next(g for g in groups if g["group"] == "harvest-classic-1795439393")
    # the broker's rounds: generations 1-8 Stabilized and 9 "is now empty"
    assert (classic["type"], classic["rebalances"], classic["failed_members"]) == ("classic", 9, 2)


def test_damaged_lines_are_reported_on_stderr_not_fatal(json_run):
    code, _, stderr, _ = json_run
    assert code == 0
    assert "kafka3-server.log.gz: 3 line(s) not understood" in stderr
    assert "probe-damaged.ndjson: 2 line(s) not understood" in stderr
    assert "Traceback" not in stderr
    assert " in it\n" not in stderr   # every fixture file has lines of its kind


def test_outputs_parquet_and_csv_under_out(json_run, spark):
    _, groups, _, out = json_run
    for table in ("episodes", "metrics", "storms", "hourly", "flapping", "members", "files"):
        assert (out / f"{table}.csv").is_file()
        assert list((out / "parquet" / table).glob("*.parquet")), table
    with open(out / "metrics.csv") as f:
        assert [r["group"] for r in csv.DictReader(f)] == [g["group"] for g in groups]
    episodes = spark.read.parquet(str(out / "parquet" / "episodes"))
    # 9 classic + 4 consumer + 6 from 3.x; share 4 + 3, streams 4 + 2, Java KIP-848 4 + 2:
    # the records' and the client logs' rounds are all the broker log's, counted once
    assert episodes.count() == 38
    assert (out / "report.html").is_file()


def test_table_output_is_a_summary(spark, fixture_dir, tmp_path):
    code, stdout, stderr = run([*fixture_args(fixture_dir, tmp_path), "--group", "^orders"])
    assert code == 0, stderr
    assert "orders-v3" in stdout and "harvest" not in stdout.split("Output:")[0]
    assert "Top reasons:" in stdout and "Output:" in stdout


@pytest.mark.parametrize("args,message", [
    (["analyze"], "nothing to analyze"),
    (["analyze", "--broker-logs", "/nonexistent/server.log*"], "matches nothing"),
    # a log directory given as it is: its files asked for, the broker's own named
    (["analyze", "--broker-logs", "{fx}"],
     "--broker-logs {fx}: a directory, not a file (give its files, e.g. '{fx}/server.log*')"),
    (["analyze", "--events", "{fx}/"],
     "--events {fx}/: a directory, not a file (give its files, e.g. '{fx}/*.ndjson')"),
    (["analyze", "--events", "{fx}/probe.ndjson", "--group", "(["], "not a regular expression"),
    (["analyze", "--events", "{fx}/probe.ndjson", "--since", "yesterday"], "ISO-8601"),
    (["analyze", "--events", "{fx}/probe.ndjson", "--log-timezone", "Mars/Olympus"],
     "unknown time zone"),
    (["analyze", "--events", "{fx}/probe.ndjson", "--storm-rebalances", "0"], "positive"),
    # --out naming a file, a path under a file, a place nobody may write (issue 23)
    (["analyze", "--events", "{fx}/probe.ndjson", "--out", "{fx}/probe.ndjson"],
     "--out {fx}/probe.ndjson: not a directory"),
    (["analyze", "--events", "{fx}/probe.ndjson", "--out", "/proc/version/out"],
     "--out /proc/version/out: cannot write there"),
    (["analyze", "--events", "{fx}/probe.ndjson", "--out", "/proc/groupctl-analysis"],
     "--out /proc/groupctl-analysis: cannot write there"),
])
def test_usage_errors_exit_2(fixture_dir, args, message):
    import time

    start = time.monotonic()
    code, stdout, stderr = run([a.format(fx=fixture_dir) for a in args])
    assert code == 2 and stdout == ""
    assert stderr.startswith("groupctl: error: ") and message.format(fx=fixture_dir) in stderr
    assert stderr.count("\n") == 1
    # found before Spark starts (a JVM start alone takes seconds)
    assert time.monotonic() - start < 5.0


def test_unreachable_master_exits_3(fixture_dir):
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code, _, stderr = run(["analyze", "--events", str(fixture_dir / "probe.ndjson"),
                           "--master", f"spark://127.0.0.1:{port}"])
    assert code == 3
    assert stderr == (f"groupctl: error: Spark master spark://127.0.0.1:{port} is not "
                      f"reachable: [Errno 111] Connection refused\n")


def _chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    assert path, "chromium is missing: ./dev setup installs Debian's chromium package"
    return path


def test_report_renders_one_timeline_trace_per_group_without_console_errors(json_run, tmp_path):
    _, groups, _, out = json_run
    report = out / "report.html"
    text = report.read_text()
    assert "<script src=" not in text and "<link " not in text  # self-contained: JS inlined
    proc = subprocess.run(
        [_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr",
         "--v=0", "--virtual-time-budget=10000", "--dump-dom", report.as_uri()],
        capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    dom = proc.stdout
    timeline = dom[dom.index('id="timeline"'):dom.index('id="durations"')]
    assert timeline.count('class="trace bars"') == len(groups)
    for g in groups:
        assert g["group"] in timeline
    console = [line for line in proc.stderr.splitlines() if "CONSOLE" in line]
    assert [line for line in console if "rror" in line or "Uncaught" in line] == []
    shot = tmp_path / "report.png"
    subprocess.run([_chromium(), "--headless", "--no-sandbox", "--disable-gpu",
                    "--hide-scrollbars", "--window-size=1400,1100", "--virtual-time-budget=10000",
                    f"--screenshot={shot}", report.as_uri()],
                   capture_output=True, timeout=120, check=True)
    assert shot.stat().st_size > 20_000
