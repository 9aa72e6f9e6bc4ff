"""`analyze` (Spark) as a witness, over what the scenarios left: the broker's log alone, the
coordinator's records alone (`history -o ndjson`), and all at once (the log, history, the
describe and records watches, the probe's events). Slow (a Spark job each, 30-90 s on the
lab machine): bench/truth.py runs it, the suite does not.

A cell holds analyze's `episodes` table for the group against the broker's rounds (each
round once, in order, no phantom; durations within SYNC_MS of the broker's, which ends a
classic round at "Stabilized" where analyze ends it at the leader's assignment, "Assignment
received from leader", 540-820 ms later with a starting Java leader; null, never
0, where the input holds no start; its duration interval holding the broker's round; its
duration and unowned intervals not contradicted by their own witnesses) and its per-group
metrics (`rebalances`; a duration it cannot know is null, never 0).
"""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from truth_cells import SYNC_MS, Cell
from truth_ground import broker_truth, log_lines
from truth_scenarios import group_kind

WITNESSES = ("analyze-log", "analyze-records", "analyze-all")


def _write(path: Path, events) -> Path:
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    return path


def _run(lab, args: list[str], out: Path) -> tuple[dict, dict[str, list[dict]], str]:
    from groupctl.cli.app import invoke
    from groupctl.cli.env import Env

    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    code = invoke(["-o", "json", "analyze", *args, "--out", str(out)], env)
    if code != 0:
        return {}, {}, f"exit {code}: {env.stderr.getvalue().strip()[-300:]}"
    groups = {g["group"]: g for g in json.loads(env.stdout.getvalue() or "[]")}
    episodes: dict[str, list[dict]] = {}
    table = out / "episodes.csv"
    if table.exists():
        for row in csv.DictReader(table.open()):
            episodes.setdefault(row["group"], []).append(row)
    return groups, episodes, ""


def analyze_cells(lab, runs, workdir: Path) -> dict:
    if not runs:
        return {}
    hist = runs[0].readings["history"]
    groups = [c.group for c in runs]
    history_file = _write(workdir / "history.ndjson", [e for g in groups for e in hist.of(g)])
    watch_files = []
    for name in ("describe-1", "records"):
        events = [e for c in runs for e in c.readings[name].of(c.group)]
        watch_files.append(_write(workdir / f"{name}.ndjson", events))
    probe_file = _write(workdir / "probe.ndjson", [e for c in runs for e in c.probe_lines if "event" in e])
    logs = [a for p in lab.log_files for a in ("--broker-logs", str(p))]
    regex = ["--group", "^(" + "|".join(groups) + ")$"]
    inputs = {
        "analyze-log": logs,
        "analyze-records": ["--events", str(history_file)],
        "analyze-all": [*logs, "--events", str(history_file),
                        *[a for f in watch_files for a in ("--events", str(f))],
                        *(["--events", str(probe_file)] if probe_file.stat().st_size else [])],
    }
    lines = log_lines(lab)
    cells = {}
    for witness, args in inputs.items():
        summary, episodes, error = _run(lab, [*args, *regex], workdir / witness)
        for c in runs:
            cell = (Cell(problems=[error or "no output"]).finish() if error else
                    judge(episodes.get(c.group, []), summary.get(c.group),
                          c.truth or broker_truth(lines, c.group),
                          has_start=witness != "analyze-records" or group_kind(c.client) != "classic",
                          from_records=witness == "analyze-records"))
            cells[(c.scenario, c.client, witness)] = cell
    return cells


def _int(text: str | None) -> int | None:
    return None if text in (None, "") else int(float(text))


def _holds(cell: Cell, e: dict, r) -> None:
    """The round's duration interval (duration_min_ms .. duration_max_ms) holds the broker
    log's own round, within SYNC_MS (its Preparing line to Stabilized, or to the leader's
    assignment, where analyze ends it); an end no witness proves holds anything."""
    low, high = _int(e.get("duration_min_ms")), _int(e.get("duration_max_ms"))
    longest = (r.synced_ms or r.end_ms) - (r.begun_ms or r.start_ms or 0)
    if (low is not None and low > longest + SYNC_MS) or (
            high is not None and high < r.duration_ms - SYNC_MS):
        said = (f">= {low}" if high is None else f"<= {high}" if low is None else
                f"{low}-{high}")
        cell.problems.append(f"gen {r.key} {said} ms (broker {r.duration_ms} ms)")


def judge(episodes: list[dict], summary: dict | None, truth, has_start: bool,
          from_records: bool = False) -> Cell:
    """from_records: the input is the records alone, which tell no epoch no member reached
    before the next (truth_cells: no witness of the group's members can)."""
    cell = Cell()
    keys = [r.key for r in truth.rounds]
    told = [_int(e["to_generation"]) for e in sorted(episodes, key=lambda e: e["ended"] or "")]
    phantom = [g for g in told if g is None or g not in keys]
    twice = sorted({g for g in told if g is not None and told.count(g) > 1})
    unseen = {r.key for r in truth.rounds if r.superseded or (from_records and r.unreached)}
    missed = [r.key for r in truth.rounds if r.key not in told and r.key not in unseen]
    if phantom:
        cell.problems.append(f"{len(phantom)} phantom (gen {phantom[:3]})")
    if twice:
        cell.problems.append(f"gen {twice} told twice")
    if missed:
        cell.problems.append(f"missed gen {missed}")
    by_key = {r.key: r for r in truth.rounds}
    no_start: list[tuple[int, int]] = []
    for e in episodes:
        r = by_key.get(_int(e["to_generation"]))
        d = _int(e.get("duration_ms"))
        if r is None or r.kind != "classic":
            continue
        if not has_start and d is not None:
            no_start.append((r.key, d))
        elif d is not None and r.duration_ms is not None and not (
                r.duration_ms - SYNC_MS <= d
                <= (r.synced_ms or r.end_ms) - (r.begun_ms or r.start_ms or 0) + SYNC_MS):
            cell.problems.append(f"gen {r.key} {d} ms (broker {r.duration_ms} ms)")
        if r.duration_ms is not None:
            _holds(cell, e, r)
    # the round's unowned time and duration as its witnesses together prove them: a lower
    # end above the upper end is two witnesses contradicting each other (analyze keeps both)
    for e in episodes:
        for figure in ("unowned", "duration"):
            low, high = _int(e.get(f"{figure}_min_ms")), _int(e.get(f"{figure}_max_ms"))
            if low is not None and high is not None and low > high:
                cell.problems.append(f"gen {_int(e['to_generation'])} {figure} witnesses "
                                     f"disagree (>= {low} ms, <= {high} ms)")
    if no_start:
        gens = ",".join(str(k) for k, _ in no_start)
        times = sorted({d for _, d in no_start})
        cell.problems.append(f"gen {gens} in {'/'.join(map(str, times))} ms, no start in the input")
    if summary is None:
        cell.problems.append("no metrics row")
    else:
        rounds = [r for r in truth.rounds if r.key not in unseen]
        if summary.get("rebalances") != len(rounds):
            emptied = sum(1 for r in rounds if r.members == 0)
            why = (" (not the rounds that emptied the group)"
                   if summary.get("rebalances") == len(rounds) - emptied else "")
            cell.problems.append(f"rebalances {summary.get('rebalances')}{why}, broker {len(rounds)}")
        known = [_int(e.get("duration_ms")) for e in episodes if e.get("duration_ms") not in (None, "")]
        if not known and (summary.get("duration_ms_max") == 0 or summary.get("time_rebalancing_ms") == 0):
            cell.problems.append("unknown durations as 0 "
                                 f"(max {summary.get('duration_ms_max')}, total {summary.get('time_rebalancing_ms')})")
    return cell.finish()
