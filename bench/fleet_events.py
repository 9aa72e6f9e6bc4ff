"""A generated fleet's records through `groupctl analyze --events` (issue 34), beside the
analyze growth bench (bench/analyze.py --growth, which feeds it broker-log lines).

On a fresh one-node lab, or on -b: the fleet of bench/fleet.py (--groups: 10 % classic
groups joined and synced, 10 % KIP-848 groups, the rest commit-only; --made: an earlier
run made it), then, each a fresh process timed to its exit:

  groupctl -o ndjson history GROUP...        the fleet's classic and KIP-848 groups, into
                                             a temp file (a commit-only group has no group
                                             record: history says it was never created)
  groupctl --debug analyze --events FILE     Spark (--master, local[2] by default), its
                                             tables into a temp --out

Reports the wall and CPU time and max RSS of each, the events history wrote (its lines),
the events analyze read from the file (its files table), which must agree, analyze's
phases (--debug) and the load average before and after.

    . .venv/bin/activate && python bench/fleet_events.py [--groups 20000] [-b HOST:PORT]
        [--made] [--master local[2]] [--keep FILE]

Run it from outside a checkout, as bench/describe_fleet.py.
"""
from __future__ import annotations

import argparse
import asyncio
import csv
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from describe_fleet import groupctl_cmd, run_measured  # noqa: E402
from fleet import PARTITIONS, TOPIC, kinds, produce  # noqa: E402
from fleet_requests import Fleet  # noqa: E402
from installed import byte_compile_groupctl  # noqa: E402


def timed(cmd: list[str], stdout_to: Path | None = None) -> tuple[dict, str, str]:
    """({wall_s, cpu_s, max_rss_mb}, stdout, stderr) of one fresh process; exit 0 or the
    bench stops."""
    wall, cpu, mb, code, out, err = run_measured(cmd)
    if code != 0:
        raise SystemExit(f"{cmd[:4]}... failed ({code}): {err[-2000:]}")
    if stdout_to is not None:
        stdout_to.write_text(out)
    return {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "max_rss_mb": round(mb)}, out, err


def run(bootstrap: str, n: int, made: bool, master: str, keep: Path | None) -> dict:
    by_kind = kinds(n)
    out: dict = {"groups": n, "load_before": [round(x, 2) for x in os.getloadavg()]}
    if made:
        out["made"] = "the fleet was made by an earlier run"
    else:
        produce(bootstrap)
        out["made"] = asyncio.run(Fleet(bootstrap, TOPIC, PARTITIONS).make(by_kind))
    replayed = by_kind["classic"] + by_kind["consumer"]
    with tempfile.TemporaryDirectory(prefix="bench-fleet-events-") as tmp:
        events = keep or Path(tmp) / "history.ndjson"
        out["history"], _, _ = timed([*groupctl_cmd(), "-b", bootstrap, "--timeout", "900",
                                      "-o", "ndjson", "history", *replayed], stdout_to=events)
        out["history"]["groups"] = len(replayed)
        with events.open() as f:
            out["events_written"] = sum(1 for _ in f)
        out["events_mb"] = round(events.stat().st_size / 1e6, 1)
        analysis = Path(tmp) / "analysis"
        out["analyze"], _, err = timed([*groupctl_cmd(), "--debug", "analyze", "--events",
                                        str(events), "--master", master, "--out",
                                        str(analysis)])
        with (analysis / "files.csv").open() as f:
            out["events_read"] = sum(int(row["events"]) for row in csv.DictReader(f))
        out["analyze"]["phases"] = [line.removeprefix("groupctl: analyze: ")
                                    for line in err.splitlines() if "analyze:" in line]
        shutil.rmtree(analysis)
    out["load_after"] = [round(x, 2) for x in os.getloadavg()]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", type=int, default=20_000)
    parser.add_argument("-b", "--bootstrap-server", help="use this cluster instead of a fresh lab")
    parser.add_argument("--made", action="store_true",
                        help="with -b: the fleet is there already (an earlier run made it)")
    parser.add_argument("--master", default="local[2]", help="analyze's Spark master")
    parser.add_argument("--keep", type=Path, metavar="FILE",
                        help="write the history's events here (kept) instead of a temp file")
    args = parser.parse_args()
    byte_compile_groupctl()
    if args.bootstrap_server:
        r = run(args.bootstrap_server, args.groups, args.made, args.master, args.keep)
    else:
        from groupctl.lab.cluster import throwaway

        with throwaway("bench-fleet-events") as lab:
            r = run(lab.bootstrap, args.groups, False, args.master, args.keep)
    print(json.dumps(r), flush=True)
    ok = r["events_read"] == r["events_written"]
    print(f"{r['groups']:,} groups ({r['history']['groups']:,} replayed): history "
          f"{r['history']['wall_s']} s, {r['events_written']:,} events ({r['events_mb']} MB); "
          f"analyze --events {r['analyze']['wall_s']} s (CPU {r['analyze']['cpu_s']} s, "
          f"{r['analyze']['max_rss_mb']} MB), {r['events_read']:,} events read"
          f" ({'agrees' if ok else 'DISAGREES'}); load {r['load_before']} -> {r['load_after']}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
