"""The whole truth matrix: every scenario with every client under every witness, on a lab of
its own (or a running one: --lab NAME), and a table: rows scenario / client, columns witness,
each cell `agree`, the disagreement in a few words, or `cannot know: <why>`.

    .venv/bin/python bench/truth.py                      # all, then analyze (Spark)
    .venv/bin/python bench/truth.py --only join:eager,kill:848 --no-analyze
    GROUPCTL_LAB_HOME=/tmp/x .venv/bin/python bench/truth.py --lab mine

The harness is tests/truth (the suite runs a seeded subset of it: tests/truth/test_truth_matrix.py).
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests" / d) for d in ("truth", "integration", "")]

import truth_analyze  # noqa: E402
import truth_run  # noqa: E402
import truth_scenarios as sc  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lab", help="use this running lab (groupctl lab up --name NAME)")
    ap.add_argument("--only", help="scenario:client,... (default: all)")
    ap.add_argument("--clients", help="only these clients, comma-separated (of: "
                                      f"{', '.join(sc.CLIENTS)})")
    ap.add_argument("--scenarios", help="only these scenarios, comma-separated")
    ap.add_argument("--wave", type=int, default=8, help="scenarios run at once (default 8)")
    ap.add_argument("--no-analyze", action="store_true", help="leave analyze (Spark) out")
    ap.add_argument("--json", help="also write the cells to this file")
    ap.add_argument("--keep", help="keep what each cell was judged on in this directory "
                                   "(GROUP.json: the broker's rounds, the records', each witness's)")
    args = ap.parse_args()
    pairs = ([tuple(p.split(":")) for p in args.only.split(",")] if args.only else
             [(s, c) for s in sc.SCENARIOS for c in sc.CLIENTS if sc.runs(s, c)])
    if args.clients:
        pairs = [p for p in pairs if p[1] in args.clients.split(",")]
    if args.scenarios:
        pairs = [p for p in pairs if p[0] in args.scenarios.split(",")]
    three = [p for p in pairs if p[0] in sc.CLUSTER3]
    pairs = [p for p in pairs if p[0] not in sc.CLUSTER3]
    from groupctl.lab.cluster import Lab

    started = time.monotonic()
    own = None
    if args.lab:
        lab = Lab.load(args.lab)
        assert lab is not None, f"no lab {args.lab}"
    else:
        own = lab = Lab.up(name=f"truth-{int(time.time())}", root=Path(tempfile.mkdtemp()),
                           tie_to_parent=True)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            if args.keep:
                Path(args.keep).mkdir(parents=True, exist_ok=True)
            work = Path(args.keep or tmp)
            cells, runs = truth_run.run_matrix(lab, pairs, work, wave_size=args.wave) if pairs else ({}, [])
            if not args.no_analyze and runs:
                cells.update(truth_analyze.analyze_cells(lab, runs, work))
            if three:   # a lab of three brokers of its own, for the coordinator's move
                lab3 = Lab.up(name=f"truth3-{int(time.time())}", brokers=3,
                              root=Path(tempfile.mkdtemp()), tie_to_parent=True)
                try:
                    (work / "three").mkdir(exist_ok=True)
                    more, runs3 = truth_run.run_matrix(lab3, three, work / "three")
                    cells.update(more)
                    if not args.no_analyze:
                        cells.update(truth_analyze.analyze_cells(lab3, runs3, work / "three"))
                    runs += runs3
                finally:
                    lab3.down()
            ran = time.monotonic() - started
    finally:
        if own is not None:
            own.down()
    print(truth_run.table(cells, truth_run.WITNESSES + truth_analyze.WITNESSES))
    for c in runs:
        if c.failure:
            print(f"note {c.scenario}/{c.client}: the scenario failed (its cells judge what the "
                  f"broker did): {c.failure}")
        for note in c.notes:
            print(f"note {c.scenario}/{c.client}: {note}")
        if getattr(c, "tool_checks", 0):
            print(f"note {c.scenario}/{c.client}: Kafka's group command agreed with the broker "
                  f"log's members and target epoch at {c.tool_checks} steps")
    took = time.monotonic() - started
    print(f"\n{len(pairs) + len(three)} scenarios, {len(cells)} cells: "
          f"{sum(c.verdict == 'agree' for c in cells.values())} agree, "
          f"{sum(c.verdict == 'disagree' for c in cells.values())} disagree, "
          f"{sum(c.verdict == 'cannot know' for c in cells.values())} cannot know; "
          f"scenarios, witnesses and analyze {ran:.0f} s, all {took:.0f} s")
    if args.json:
        Path(args.json).write_text(json.dumps(
            {"/".join(k): {"verdict": v.verdict, "text": v.text} for k, v in cells.items()}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
