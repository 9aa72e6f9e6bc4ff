"""Helpers of the force-rebalance / wait / remove-member integration tests: the CLI in-process
and as a process, describe through the CLI, the broker log's group lines, and waiting on a
condition with a deadline."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys

from describe_support import wait_until  # noqa: F401 - re-exported for the steer tests

from cli_runner import run_cli


def cli(kafka, *args: str, stdin: str | None = None, terminal: bool = False,
        timeout: float | None = None) -> tuple[int, str, str]:
    """groupctl in-process: (exit code, stdout, stderr)."""
    return run_cli(*args, bootstrap=kafka.bootstrap, timeout=timeout, stdin=stdin,
                   terminal=terminal)


def cli_json(kafka, *args: str, **kw):
    code, out, err = cli(kafka, "-o", "json", *args, **kw)
    return code, (json.loads(out) if out.strip() else None), err


def spawn(kafka, *args: str, env: dict | None = None) -> subprocess.Popen:
    """groupctl as a process (for signals)."""
    return subprocess.Popen(
        [sys.executable, "-m", "groupctl", "-b", kafka.bootstrap, *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1,
        env={**os.environ, "NO_COLOR": "1", **(env or {})})


def describe(kafka, group: str) -> dict | None:
    """The group as `describe -o json` shows it; None when it does not exist."""
    code, data, err = cli_json(kafka, "describe", group, timeout=20)
    if code == 5:
        return None
    assert code == 0, err
    return data[0]


def members(kafka, group: str) -> dict[str, dict]:
    return {m["member_id"]: m for m in (describe(kafka, group) or {}).get("members") or []}


def groupctl_members(kafka, group: str) -> list[str]:
    """Members groupctl added (its client id is `groupctl`)."""
    return [m for m, d in members(kafka, group).items()
            if (d.get("client_id") or "").startswith("groupctl") or m.startswith("groupctl")]


def log_lines(kafka, group: str, pattern: str) -> list[re.Match]:
    with open(kafka.log_file, encoding="utf-8", errors="replace") as f:
        text = f.read()
    return list(re.finditer(pattern.replace("GROUP", re.escape(group)), text))


def stabilized(kafka, group: str) -> list[int]:
    """Generations the broker log says the group stabilized at, in order."""
    return [int(m.group(1)) for m in
            log_lines(kafka, group, r"Stabilized group GROUP generation (\d+) ")]


def fresh_stats(consumer, timeout: float = 10.0) -> int:
    """The consumer's rebalance_cnt from a statistics report made after this call."""
    with consumer._cond:
        seen = (consumer.stats or {}).get("ts")
    wait_until(lambda: consumer.stats is not None and consumer.stats.get("ts") != seen,
               timeout, f"fresh statistics from {consumer.name}")
    return consumer.rebalance_count
