"""CLI start-up cost: wall time of `groupctl --help` through the console script, and the
import time of groupctl.cli.app (python -X importtime), each the median of N runs, next
to a bare `python -c pass` in the same run (the floor no CLI can go below).

    python bench/startup.py [--runs 10]

Budget (tests/unit/test_import_budget.py checks the module set, not the time): --help
under 300 ms on a developer machine.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from installed import byte_compile_groupctl  # bench/installed.py


def _wall_ms(cmd: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def _import_ms(module: str, runs: int) -> float:
    """Cumulative import time of `module` as -X importtime reports it (median, ms)."""
    times = []
    for _ in range(runs):
        proc = subprocess.run([sys.executable, "-X", "importtime", "-c", f"import {module}"],
                              capture_output=True, text=True, check=True)
        for line in proc.stderr.splitlines():
            m = re.match(r"import time:\s+\d+ \|\s+(\d+) \|\s+(\S+)$", line)
            if m and m.group(2) == module:
                times.append(int(m.group(1)) / 1000)
    return statistics.median(times)


def _console_script() -> list[str]:
    script = Path(sys.executable).with_name("groupctl")
    if script.exists():
        return [str(script)]
    found = shutil.which("groupctl")
    return [found] if found else [sys.executable, "-m", "groupctl"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    runs = parser.parse_args().runs
    byte_compile_groupctl()
    env_note = f"python {sys.version.split()[0]}, {os.cpu_count()} cpu(s), median of {runs}"
    floor = _wall_ms([sys.executable, "-c", "pass"], runs)
    help_ms = _wall_ms([*_console_script(), "--help"], runs)
    import_ms = _import_ms("groupctl.cli.app", runs)
    print(f"startup ({env_note})")
    print(f"  python -c pass            {floor:7.1f} ms")
    print(f"  groupctl --help           {help_ms:7.1f} ms  ({help_ms / floor:.1f}x the floor)")
    print(f"  import groupctl.cli.app   {import_ms:7.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
