"""`groupctl describe GROUP` (one group, a fresh process as a user runs it) against its
import floor, `python -c 'import typer, rich, asyncio, ssl'` (what any CLI of this shape
pays before it does anything), alternated in one run so that the machine's load hits both
alike. Wall and CPU (user + sys) medians, and the ratios. Target (issue 34): <= 1.25x.

    .venv/bin/python bench/describe_one.py -b HOST:PORT GROUP [--runs 15] [--before CHECKOUT]

--before CHECKOUT also times that checkout's groupctl (its .venv), in the same turns: a
before/after comparison the machine's load hits alike.

The group should exist with committed offsets (describe then asks FindCoordinator,
DescribeGroups/ConsumerGroupDescribe, OffsetFetch, Metadata and ListOffsets).
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from installed import byte_compile_groupctl  # bench/installed.py

TARGET = 1.25


def measured(cmd: list[str]) -> tuple[float, float]:
    """(wall s, CPU s) of one fresh process run to its exit (exit 0 checked)."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{cmd} failed: {proc.stderr.read().decode()[-2000:]}")  # type: ignore[union-attr]
    return wall, usage.ru_utime + usage.ru_stime


def alternated(tools: dict[str, list[str]], runs: int) -> dict[str, tuple[float, float]]:
    """Each command once to warm (the page cache, the broker), then all in turn `runs`
    times: per command its median (wall s, CPU s)."""
    got: dict[str, list[tuple[float, float]]] = {k: [] for k in tools}
    for cmd in tools.values():
        measured(cmd)
    for _ in range(runs):
        for name, cmd in tools.items():
            got[name].append(measured(cmd))
    return {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v))
            for k, v in got.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-b", "--bootstrap-server", required=True)
    ap.add_argument("group")
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--before", metavar="CHECKOUT", help="also time this checkout's groupctl")
    args = ap.parse_args()
    byte_compile_groupctl()
    script = str(Path(sys.executable).with_name("groupctl"))
    b, group = args.bootstrap_server, args.group
    tools = {
        "floor": [sys.executable, "-c", "import typer, rich, asyncio, ssl"],
        "describe (table)": [script, "-b", b, "describe", group],
        "describe -o json": [script, "-b", b, "-o", "json", "describe", group],
    }
    if args.before:
        byte_compile_groupctl(Path(args.before))
        before = str(Path(args.before) / ".venv" / "bin" / "groupctl")
        tools["before (table)"] = [before, "-b", b, "describe", group]
        tools["before -o json"] = [before, "-b", b, "-o", "json", "describe", group]
    load = os.getloadavg()[0]
    med = alternated(tools, args.runs)
    fw, fc = med["floor"]
    print(f"load average {load:.1f} before, {os.getloadavg()[0]:.1f} after, on "
          f"{os.cpu_count()} cores; median of {args.runs}; target <= {TARGET}x the floor")
    for name, (w, c) in med.items():
        print(f"  {name:18} {w * 1000:7.1f} ms wall {c * 1000:7.1f} ms CPU   "
              f"{w / fw:5.2f}x wall {c / fc:5.2f}x CPU")


if __name__ == "__main__":
    main()
