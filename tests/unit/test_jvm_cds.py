"""Class-data archives (groupctl/jvm_cds.py, analytics/jvm_archive.py): which JVM flags a
run gets, and that an archive is kept only when the JVM that wrote it exited cleanly. The
archive's effect on a real Spark driver is in tests/analytics/test_analyze_archive.py."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from groupctl import jvm_cds
from groupctl.analytics import jvm_archive


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("GROUPCTL_CACHE", str(tmp_path))
    return tmp_path / "cds"


def test_a_first_run_dumps_to_a_temp_file_and_a_commit_makes_it_the_archive(cache):
    flags, dump = jvm_cds.options("spark-driver", ["java-a", "jar-1"])
    assert dump is not None and dump.parent == cache and dump.name.endswith(".tmp")
    assert flags == [f"-XX:ArchiveClassesAtExit={dump}"]
    dump.write_bytes(b"archive")
    jvm_cds.commit(dump, ok=True)
    archive = cache / (dump.name.split(".", 1)[0] + ".jsa")
    assert archive.read_bytes() == b"archive" and not dump.exists()
    assert jvm_cds.options("spark-driver", ["java-a", "jar-1"]) == (
        [f"-XX:SharedArchiveFile={archive}"], None)


def test_another_jvm_or_jar_gets_its_own_archive(cache):
    _, dump = jvm_cds.options("spark-driver", ["java-a", "jar-1"])
    dump.write_bytes(b"archive")
    jvm_cds.commit(dump, ok=True)
    for other in (["java-b", "jar-1"], ["java-a", "jar-1", "jar-2"]):
        flags, again = jvm_cds.options("spark-driver", other)
        assert again is not None and flags == [f"-XX:ArchiveClassesAtExit={again}"]


def test_a_failed_dump_leaves_nothing(cache):
    _, dump = jvm_cds.options("tool", ["x"])
    dump.write_bytes(b"half")
    jvm_cds.commit(dump, ok=False)
    assert list(cache.iterdir()) == []


def test_a_dead_writer_s_temp_file_is_dropped_a_live_one_kept(cache):
    cache.mkdir(parents=True)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    orphan = cache / f"spark-driver-0123.{dead.pid}-1.tmp"
    alive = cache / f"spark-driver-0123.{os.getpid()}-2.tmp"
    orphan.write_bytes(b"x")
    alive.write_bytes(b"x")
    jvm_cds.options("spark-driver", ["y"])
    assert not orphan.exists() and alive.exists()


def test_an_unwritable_cache_means_no_archive(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("GROUPCTL_CACHE", str(blocker))
    assert jvm_cds.options("broker", ["x"]) == ([], None)


def test_the_spark_driver_plan_is_quiet_and_can_be_turned_off(cache, monkeypatch):
    plan = jvm_archive.plan()
    assert plan is not None and plan.dump is not None
    # the JVM's notes on classes it can't archive would otherwise land on stdout (-o json)
    assert plan.java_options.endswith(jvm_archive.QUIET)
    assert f"-XX:ArchiveClassesAtExit={plan.dump}" in plan.java_options
    monkeypatch.setenv("GROUPCTL_SPARK_NO_CDS", "1")
    assert jvm_archive.plan() is None


WRITER = ("import sys; sys.stdin.read(); open(sys.argv[1], 'wb').write(b'classes');"
          "sys.exit(int(sys.argv[2]))")


@pytest.mark.parametrize("status, kept", [(0, True), (1, False)])
def test_finish_ends_the_jvm_by_closing_its_stdin_and_keeps_a_clean_exit_s_archive(
        cache, status, kept):
    # a stand-in for Spark's gateway JVM: it exits on EOF on stdin, writing at exit
    plan = jvm_archive.plan()
    jvm = subprocess.Popen([sys.executable, "-c", WRITER, str(plan.dump), str(status)],
                           stdin=subprocess.PIPE)
    jvm_archive.finish(plan, jvm)
    assert jvm.returncode == status
    archives = list(cache.glob("spark-driver-*.jsa"))
    assert (archives != []) is kept and not list(cache.glob("*.tmp"))
