"""Helpers shared by the analyze tests: run the CLI in-process, the fixture arguments."""
from __future__ import annotations

import io
from pathlib import Path

from groupctl.cli.app import invoke
from groupctl.cli.env import Env


def run(args: list[str]) -> tuple[int, str, str]:
    """`groupctl ARGS` in this process (sharing its SparkSession): (code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    code = invoke(args, Env(stdout=out, stderr=err))
    return code, out.getvalue(), err.getvalue()


def fixture_args(fixture_dir: Path, out: Path) -> list[str]:
    """`analyze` over every log fixture (globs, as a user would type them)."""
    return ["analyze", "--broker-logs", str(fixture_dir / "kafka*-server.log*"),
            "--client-logs", str(fixture_dir / "*-consumer.log"),
            "--events", str(fixture_dir / "probe*.ndjson"), "--out", str(out)]


def csv_table(out: Path, name: str) -> list[dict]:
    """`analyze --out`'s table `name` (its CSV), a dict per row."""
    import csv

    with open(out / f"{name}.csv") as f:
        return list(csv.DictReader(f))


def run_process(args: list[str], timeout: float = 840) -> tuple[int, str, str]:
    """`groupctl ARGS` in its own process (its own Spark): for tests that also run a lab
    and consumers in this one, so that nothing of theirs shares Spark's JVM gateway."""
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "groupctl", *args], capture_output=True,
                          text=True, timeout=timeout)
    return proc.returncode, proc.stdout, proc.stderr
