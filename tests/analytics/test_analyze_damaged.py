"""Damaged .gz inputs (a rotated log copied while it was written, bytes that are not gzip)
on Spark: before, Spark's gzip codec failed the whole job (exit 1, 190 lines of Java stack
trace, no tables). Now each is said in one warning and read up to its damage: the run's
tables equal those of plain files holding exactly the text `zcat` gives before the
damage, under the damaged files' own names. A failure Spark still meets (a URL groupctl
does not read first) is one line on stderr, and --out is left as it was."""
from __future__ import annotations

import gzip
import json

from analyze_support import csv_table, run, run_process
from gzip_oracle import zcat_text


def test_damaged_gz_inputs_are_read_up_to_the_damage(spark, fixture_dir, tmp_path):
    damaged, plain = tmp_path / "damaged", tmp_path / "plain"
    damaged.mkdir()
    plain.mkdir()
    cut = {}
    for name in ("kafka4-server.log", "probe.ndjson"):
        packed = gzip.compress((fixture_dir / name).read_bytes(), mtime=0)
        cut[name] = packed[:len(packed) * 9 // 10]     # cut inside a line of each
        (damaged / f"{name}.gz").write_bytes(cut[name])
        (plain / name).write_bytes(zcat_text(cut[name]))
    (damaged / "notgzip.log.gz").write_bytes((fixture_dir / "kafka4-server.log").read_bytes())

    def analyze(where, names, out):
        return run(["-o", "json", "analyze",
                    "--broker-logs", str(where / names[0]), "--events", str(where / names[1]),
                    *extra(where), "--out", str(out)])

    extra = lambda where: ["--broker-logs", str(where / "notgzip.log.gz")] \
        if where == damaged else []  # noqa: E731
    code, out, err = analyze(damaged, ["kafka4-server.log.gz", "probe.ndjson.gz"],
                             tmp_path / "out-damaged")
    assert code == 0, err
    text = {name: len(zcat_text(data)) for name, data in cut.items()}
    said = err.splitlines()
    assert said[:3] == [
        f"groupctl: warning: {damaged}/kafka4-server.log.gz: cut short after "
        f"{text['kafka4-server.log']:,} bytes of text (its gzip data ends early): the lines "
        f"up to there are read",
        f"groupctl: warning: {damaged}/notgzip.log.gz: not gzip (nothing read from it)",
        f"groupctl: warning: {damaged}/probe.ndjson.gz: cut short after "
        f"{text['probe.ndjson']:,} bytes of text (its gzip data ends early): the lines up "
        f"to there are read"], err
    assert 0 < text["kafka4-server.log"] < (fixture_dir / "kafka4-server.log").stat().st_size
    # the line and the record cut in the middle are damaged lines, counted under the .gz's
    # own names
    assert said[3:] == [f"groupctl: warning: file:{damaged}/{name}.gz: 1 line(s) not "
                        f"understood (skipped)" for name in cut], err

    code, plain_out, plain_err = analyze(plain, ["kafka4-server.log", "probe.ndjson"],
                                         tmp_path / "out-plain")
    assert code == 0, plain_err
    assert json.loads(out) == json.loads(plain_out) and json.loads(out)
    for table in ("episodes", "members", "storms"):
        assert csv_table(tmp_path / "out-damaged", table) == \
            csv_table(tmp_path / "out-plain", table), table
    files = csv_table(tmp_path / "out-damaged", "files")
    assert [(f["file"], f["events"], f["unparsed"]) for f in files] == [
        (f"file:{damaged}/{name}.gz", p["events"], p["unparsed"])
        for name, p in zip(("kafka4-server.log", "probe.ndjson"),
                           csv_table(tmp_path / "out-plain", "files"))]
    # some of the broker log's coordinator lines are read (52 in the whole file), not all
    assert 0 < int(files[0]["events"]) < 52 and int(files[1]["events"]) > 0, files


def test_a_spark_failure_is_one_line_and_out_is_kept(fixture_dir, tmp_path):
    bad = tmp_path / "server.log.gz"
    bad.write_bytes((fixture_dir / "kafka4-server.log").read_bytes())   # not gzip
    out = tmp_path / "out"
    out.mkdir()
    (out / "episodes.csv").write_text("an earlier run's\n")
    # a URL goes to Spark as it is: Spark's own gzip codec meets the damage
    args = ["analyze", "--broker-logs", f"file://{bad}", "--out", str(out)]
    code, stdout, stderr = run_process(args)
    assert (code, stdout) == (1, "")
    assert stderr == (f"groupctl: error: Spark failed: java.io.IOException: not a gzip file "
                      f"(reading file://{bad})\n")
    assert sorted(p.name for p in out.iterdir()) == ["episodes.csv"]
    assert (out / "episodes.csv").read_text() == "an earlier run's\n"
    # --debug: Spark's own errors (the task's stack trace) and the traceback too
    code, _, stderr = run_process(["--debug", *args])
    assert code == 1
    assert "ERROR Executor: Exception in task" in stderr and "Traceback" in stderr
    assert stderr.splitlines()[-1] == ("groupctl: error: Spark failed: java.io.IOException: "
                                       f"not a gzip file (reading file://{bad})")


def test_a_file_with_nothing_to_read_is_said(spark, fixture_dir, tmp_path):
    # a broker's log lines, none of them the group coordinator's (a controller.log given
    # by mistake, or a broker that coordinated no group then), beside a real one
    lines = (fixture_dir / "kafka4-server.log").read_text().splitlines(keepends=True)
    assert not any("GroupCoordinator" in line for line in lines[:300])
    (tmp_path / "controller.log").write_text("".join(lines[:300]))
    client = tmp_path / "app.log"   # an application's log, nothing of the consumer's
    client.write_text("[2026-11-24 10:00:00,000] INFO started (com.example.App)\n")
    code, out, err = run(["-o", "json", "analyze", "--broker-logs", str(tmp_path / "con*.log"),
                          "--broker-logs", str(fixture_dir / "kafka4-server.log"),
                          "--client-logs", str(client), "--out", str(tmp_path / "out")])
    assert code == 0, err
    assert err.splitlines() == [
        f"groupctl: warning: file:{tmp_path}/controller.log: no group coordinator line in it",
        f"groupctl: warning: file:{client}: no consumer group coordination line in it"]
    assert json.loads(out)   # the real log's groups
