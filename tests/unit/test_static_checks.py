"""ruff and mypy over the package, clean, from the suite: a misspelt field of a decoded
body, an ErrorCode that does not exist, a cluster method ClusterLike lacks, an `await` of a
sync call or an unused import fail here. ruff also reads the tests and benchmarks: a loop
variable a closure does not bind, or an async wait with no deadline, is a bug there too.
Both are configured in pyproject.toml ([tool.ruff], [tool.mypy]); the same commands by
hand, from the project root:

    python -m ruff check groupctl tests bench
    python -m mypy            # files = ["groupctl"] in pyproject.toml

They must be installed (the `dev` extra): missing is a failure, never a skip.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(*args: str, timeout: float) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout, check=False)


def test_ruff_is_clean():
    proc = _run("ruff", "check", "--no-cache", "--output-format", "concise",
                "groupctl", "tests", "bench", timeout=120)
    assert proc.returncode == 0, f"ruff check groupctl tests bench:\n{proc.stdout}{proc.stderr}"


def test_mypy_is_clean():
    # --cache-dir=/dev/null: no .mypy_cache in the tree (and no stale cache across branches);
    # a full run takes ~10-20 s.
    proc = _run("mypy", "--cache-dir", "/dev/null", timeout=600)
    assert proc.returncode == 0, f"mypy:\n{proc.stdout[-20000:]}{proc.stderr}"
    assert proc.stdout.startswith("Success: no issues found"), proc.stdout
