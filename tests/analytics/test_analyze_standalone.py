"""The same job on a real Spark standalone cluster (a master and two workers on 127.0.0.1,
started from the pyspark install, stopped by pid) gives output identical to local mode:
the same `-o json` and byte-identical CSV files. Both runs have no Python for Spark's
executors (PYSPARK_PYTHON names no file): every input kind is read and every table
computed in the JVM, with no Python worker started (an earlier `createDataFrame([])`
started them on every run)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from analyze_support import fixture_args

from groupctl.analytics.standalone import StandaloneCluster

# Three more JVMs (master, two workers) beside the session's own Spark: on a loaded 2-core
# machine this took over pytest's default 300 s once, on a quiet one ~2-3 min.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]
TABLES = ("episodes", "metrics", "storms", "hourly", "flapping", "members", "files", "moves")


def _analyze(fixture_dir, out, *extra: str) -> subprocess.CompletedProcess:
    """groupctl in its own process: this test never shares the session's SparkSession, so
    whatever goes wrong beside the standalone cluster cannot take the other tests down."""
    return subprocess.run([sys.executable, "-m", "groupctl", "-o", "json",
                           *fixture_args(fixture_dir, out), *extra],
                          capture_output=True, text=True, timeout=840,
                          env=dict(os.environ, PYSPARK_PYTHON=str(out / "no-python-here")))


def test_standalone_cluster_output_is_identical_to_local(fixture_dir, tmp_path):
    local_out, cluster_out = tmp_path / "local", tmp_path / "cluster"
    local = _analyze(fixture_dir, local_out, "--master", "local[2]")
    assert local.returncode == 0, local.stderr[-3000:]
    local_json = local.stdout
    with StandaloneCluster(workers=2, root=tmp_path / "spark") as cluster:
        status = cluster.status()
        assert status["aliveworkers"] == 2 and status["status"] == "ALIVE"
        proc = _analyze(fixture_dir, cluster_out, "--master", cluster.url)
        assert proc.returncode == 0, proc.stderr[-3000:]
        apps = cluster.status()["completedapps"] + cluster.status()["activeapps"]
        assert any(app["name"] == "groupctl-analyze" for app in apps)
    assert json.loads(proc.stdout) == json.loads(local_json)
    for table in TABLES:
        assert (cluster_out / f"{table}.csv").read_bytes() == \
            (local_out / f"{table}.csv").read_bytes(), table
    # quiet: no Spark log lines, only our own warnings about the damaged fixture lines
    assert [line for line in proc.stderr.splitlines()
            if not line.startswith("groupctl: warning: ")] == []
