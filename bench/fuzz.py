"""Fuzz campaign: every harness of tests/fuzz (atheris, coverage-guided libFuzzer) for N
executions, one harness at a time, each in its own process; prints per harness the
executions reached, libFuzzer's coverage counters (cov: edges of instrumented Python
bytecode reached, ft: features), the corpus size, the time, and the crashes (inputs and
distinct crashes; see tests/fuzz/registry.py for what a crash is). Crash inputs are kept
in --work/<harness>-crashes (crashes.json names each distinct crash and its first input).

    nice -n 19 .venv/bin/python bench/fuzz.py [--runs 1000000] [--max-time S]
        [--harness NAME ...] [--work DIR] [--keep-corpus]

--max-time bounds each harness's wall time (libFuzzer -max_total_time); the table then
says how many executions were reached. The seed corpus (tests/fuzz/corpus/<harness>) is
read, never written: new inputs go to --work/<harness>-corpus. Exit 1 when any harness
crashed or hung.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

_DONE = re.compile(r"#(\d+)\s+(?:DONE|INITED|NEW|REDUCE|pulse|RELOAD)\s+(?:cov: (\d+) )?"
                   r"(?:ft: (\d+) )?(?:corp: (\d+)/\S+)?")
_STAT = re.compile(r"stat::number_of_executed_units:\s*(\d+)")


def run_harness(name: str, runs: int, max_time: int | None, work: Path,
                extra: list[str] | None = None) -> dict:
    """One harness under atheris; its figures."""
    from tests.fuzz.registry import CORPUS

    corpus, crashes = work / f"{name}-corpus", work / f"{name}-crashes"
    corpus.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "tests.fuzz.run", name, "--collect", str(crashes),
           f"-runs={runs}", "-print_final_stats=1", f"-artifact_prefix={work}/{name}-",
           *([f"-max_total_time={max_time}"] if max_time else []), *(extra or []),
           str(corpus)]
    if (CORPUS / name).is_dir():
        cmd.append(str(CORPUS / name))
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    started = time.monotonic()
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True,
                          errors="replace")
    took = time.monotonic() - started
    log = proc.stdout + proc.stderr
    (work / f"{name}.log").write_text(log)
    figures = {"harness": name, "exit": proc.returncode, "seconds": round(took, 1),
               "executions": 0, "cov": 0, "ft": 0, "corpus": 0}
    for m in _DONE.finditer(log):
        figures["executions"] = int(m.group(1))
        for key, group in (("cov", 2), ("ft", 3), ("corpus", 4)):
            if m.group(group):
                figures[key] = int(m.group(group))
    stat = _STAT.search(log)
    if stat:
        figures["executions"] = int(stat.group(1))
    found = {}
    if (crashes / "crashes.json").exists():
        found = json.loads((crashes / "crashes.json").read_text())
    figures["crash_inputs"] = sum(c["count"] for c in found.values())
    figures["crashes"] = sorted(found)
    figures["hang"] = "libFuzzer: timeout" in log or "ALARM: working on the last Unit" in log
    figures["died"] = proc.returncode != 0 and not figures["hang"]
    return figures


def _table(rows: list[dict]) -> str:
    head = f"{'harness':12} {'executions':>11} {'cov':>6} {'ft':>7} {'corpus':>7} " \
           f"{'exec/s':>7} {'seconds':>8} {'crash inputs':>12} {'distinct':>8}  status"
    lines = [head, "-" * len(head)]
    for r in rows:
        rate = r["executions"] / r["seconds"] if r["seconds"] else 0
        status = "HANG" if r["hang"] else f"died (exit {r['exit']})" if r["died"] else "ok"
        lines.append(f"{r['harness']:12} {r['executions']:>11,} {r['cov']:>6} {r['ft']:>7} "
                     f"{r['corpus']:>7} {rate:>7.0f} {r['seconds']:>8.1f} "
                     f"{r['crash_inputs']:>12} {len(r['crashes']):>8}  {status}")
        lines.extend(f"{'':14}crash: {sig}" for sig in r["crashes"])
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=1_000_000, help="executions per harness")
    ap.add_argument("--max-time", type=int, default=None,
                    help="seconds per harness at most (libFuzzer -max_total_time)")
    ap.add_argument("--harness", action="append", help="only these (repeatable)")
    ap.add_argument("--work", default=None, help="directory for corpora, crashes, logs "
                                                  "(default: a new temp directory)")
    ap.add_argument("--json", action="store_true", help="also print the figures as JSON")
    args = ap.parse_args()

    from tests.fuzz.registry import load

    names = args.harness or list(load())
    work = Path(args.work or tempfile.mkdtemp(prefix="groupctl-fuzz-"))
    work.mkdir(parents=True, exist_ok=True)
    print(f"fuzz: {len(names)} harnesses, {args.runs:,} executions each"
          f"{f', at most {args.max_time} s each' if args.max_time else ''}; work dir {work}",
          flush=True)
    rows = []
    for name in names:
        row = run_harness(name, args.runs, args.max_time, work)
        rows.append(row)
        print(f"fuzz: {name}: {row['executions']:,} executions, cov {row['cov']}, "
              f"{len(row['crashes'])} distinct crashes, {row['seconds']} s", flush=True)
    print()
    print(_table(rows))
    if args.json:
        print(json.dumps(rows, indent=1))
    return 1 if any(r["crashes"] or r["hang"] or r["died"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
