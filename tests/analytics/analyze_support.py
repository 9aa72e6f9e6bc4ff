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
