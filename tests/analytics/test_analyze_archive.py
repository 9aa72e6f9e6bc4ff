"""The Spark driver's class-data archive (analytics/jvm_archive.py) with a real JVM: a
machine's first short `analyze` writes it after its results are out, a later one maps it,
and both print the same results (the JVM's archive notes never reach stdout)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.timeout(900)


def _analyze(fixture_dir, out, cache) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "groupctl", "-o", "json", "analyze", "--master", "local[2]",
         "--broker-logs", str(fixture_dir / "kafka4-server.log"), "--out", str(out)],
        capture_output=True, text=True, timeout=840,
        env=dict(os.environ, GROUPCTL_CACHE=str(cache)))


def test_the_first_run_writes_the_archive_and_the_next_maps_it(fixture_dir, tmp_path):
    cache = tmp_path / "cache"
    first = _analyze(fixture_dir, tmp_path / "out1", cache)
    assert first.returncode == 0, first.stderr
    archives = list((cache / "cds").glob("spark-driver-*.jsa"))
    assert len(archives) == 1 and archives[0].stat().st_size > 10 << 20
    assert not list((cache / "cds").glob("*.tmp"))
    written = archives[0].stat()
    second = _analyze(fixture_dir, tmp_path / "out2", cache)
    assert second.returncode == 0, second.stderr
    # the second run mapped the archive: it wrote none (a run that dumps renames a new file
    # over it), and nothing else is in the cache
    kept = archives[0].stat()
    assert (kept.st_ino, kept.st_mtime_ns) == (written.st_ino, written.st_mtime_ns)
    assert sorted((cache / "cds").iterdir()) == archives
    assert first.stdout == second.stdout
    groups = json.loads(second.stdout)
    assert sorted(g["group"] for g in groups) == [
        "harvest-848-1795439393", "harvest-classic-1795439393"]
    for table in ("episodes", "metrics", "members"):
        assert (tmp_path / "out1" / f"{table}.csv").read_bytes() == \
            (tmp_path / "out2" / f"{table}.csv").read_bytes()
