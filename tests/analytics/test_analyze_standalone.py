"""The same job on a real Spark standalone cluster (a master and two workers on 127.0.0.1,
started from the pyspark install, stopped by pid) gives output identical to local mode:
the same `-o json` and byte-identical CSV files."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest
from analyze_support import fixture_args, run

from groupctl.analytics.standalone import StandaloneCluster

# Three more JVMs (master, two workers) beside the session's own Spark: on a loaded 2-core
# machine this took over pytest's default 300 s once, on a quiet one ~2-3 min.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]
TABLES = ("episodes", "metrics", "storms", "hourly", "flapping", "members", "files")


def test_standalone_cluster_output_is_identical_to_local(spark, fixture_dir, tmp_path):
    local_out, cluster_out = tmp_path / "local", tmp_path / "cluster"
    code, local_json, stderr = run(["-o", "json", *fixture_args(fixture_dir, local_out)])
    assert code == 0, stderr
    with StandaloneCluster(workers=2, root=tmp_path / "spark") as cluster:
        status = cluster.status()
        assert status["aliveworkers"] == 2 and status["status"] == "ALIVE"
        proc = subprocess.run(
            [sys.executable, "-m", "groupctl", "-o", "json",
             *fixture_args(fixture_dir, cluster_out), "--master", cluster.url],
            capture_output=True, text=True, timeout=840)
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
