"""Run a set of (scenario, client) pairs on one lab, at once, under every witness, and give
the cells: {(scenario, client, witness): Cell}.

    cells, runs = run_matrix(lab, [("join", "eager"), ...], workdir)

The scenarios of one wave run concurrently, each in a group of its own, while the watches
(started before any group exists) follow all of them; then `history` reads them after the
fact, Kafka's DumpLogSegments decodes the records and the broker log is read for the truth.
"""
from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1] / d) for d in ("", "integration")]

import truth_scenarios as sc  # noqa: E402
from truth_cells import (  # noqa: E402
    Cell, client_handovers, handover_revokes, metrics_cell, ms, rounds_cell)
from truth_ground import (  # noqa: E402
    broker_truth, callback_gaps, dump_records, log_lines, record_gaps, record_rounds,
    typed_truth)
from truth_witness import Watches, history, reading  # noqa: E402

PROBE_LEAVE_MS = 50   # the probe tells `left` as it sends LeaveGroup: a round after is its leave's
WITNESSES = ("describe-0.5", "describe-1", "records", "auto", "history", "metrics", "probe")


def run_wave(lab, pairs, workdir: Path, tag: str):
    brokers_back(lab)
    ctxs = [sc.make_ctx(lab, s, c, workdir, tag) for s, c in pairs]
    watches = Watches(lab, [c.group for c in ctxs])
    try:
        _wait_watching(watches)
        for c in ctxs:
            c.watches = watches
        threads = [threading.Thread(target=sc.run, args=(c,), name=c.group) for c in ctxs]
        for t in threads:
            t.start()
        for t in threads:
            t.join(600)
        _settle(watches, [c.group for c in ctxs])
    finally:
        readings = watches.stop()
    return ctxs, readings


def brokers_back(lab, timeout: float = 120) -> None:
    """Every node running (a scenario that stopped one may have failed before starting it
    again) and listed in the brokers' own Metadata, before a wave creates its topics or
    `history` reads the records."""
    for n in lab.nodes:
        if not n.alive():
            lab.start_node(n.node_id)   # this thread lives as long as the run
    lab.wait_ready(timeout)


def _wait_watching(watches: Watches, timeout: float = 60) -> None:
    """Until every watch has told something of every group (a group not created yet is
    Dead): each is looking, so none misses a group's first round."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if all({e["group"] for e in p.events} >= set(watches.groups) for p in watches.procs.values()):
            return
        for name, p in watches.procs.items():
            if p.proc.poll() is not None:
                raise AssertionError(f"watch {name} exited: {p.stderr()[-500:]}")
        time.sleep(0.1)
    raise AssertionError("the watches did not start telling within {timeout}s")


def _settle(watches: Watches, groups: list[str], timeout: float = 30) -> None:
    """At most `timeout` s for every watch to tell every group empty again (a watch that
    never does is a finding, not a failure here)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not all(watches.told_empty(g) for g in groups):
        time.sleep(0.2)


def run_matrix(lab, pairs, workdir: Path, wave_size: int = 8):
    """Every pair under every witness; returns ({(scenario, client, witness): Cell}, runs)."""
    runs = []
    readings = []
    tag = f"{int(time.time()) % 100000}"
    shared = [p for p in pairs if p[0] not in sc.EXCLUSIVE]
    waves = [shared[i:i + wave_size] for i in range(0, len(shared), wave_size)]
    waves += [[p] for p in pairs if p[0] in sc.EXCLUSIVE]
    for i, wave in enumerate(waves):
        ctxs, read = run_wave(lab, wave, workdir, f"{tag}{i}")
        runs += ctxs
        readings.append((ctxs, read))
    brokers_back(lab)
    hist = history(lab, [c.group for c in runs])
    lines = log_lines(lab)
    records = dump_records(lab, workdir)
    cells: dict[tuple[str, str, str], Cell] = {}
    for ctxs, read in readings:
        for c in ctxs:
            c.readings = {**read, "history": hist}
            cells.update(judge(c, read, hist, lines, records))
    return cells, runs


def judge(c, read: dict, hist, lines, records) -> dict:
    kind = sc.group_kind(c.client)
    if kind in ("share", "streams"):   # epochs bumped without a log line: the records hold them
        truth = typed_truth(lines, records, c.group, kind)
        rec = record_rounds(records, c.group, kind)
    else:
        truth, rec = broker_truth(lines, c.group), record_rounds(records, c.group)
    c.truth = truth
    for r in truth.rounds[:-1]:
        r.unreached = any(rr.key == r.key and rr.end_ms is None for rr in rec)
    # share and streams members tell no handover: their records do
    gaps = (record_gaps(records, c.group, kind) if kind in ("share", "streams") else
            callback_gaps([*c.consumers, *c.callbacks]))
    whose = "the records'" if kind in ("share", "streams") else "clients'"
    hand, revoked = client_handovers(gaps, truth, rec), handover_revokes(gaps, truth, rec)
    _keep(c, truth, rec, read, hist)
    out: dict[tuple[str, str, str], Cell] = {}

    def put(witness: str, cell: Cell) -> None:
        # a scenario that failed (its clients never reached a step) is still judged: the
        # broker's log says what happened; the failure is a note of its own
        out[(c.scenario, c.client, witness)] = cell

    if not truth.rounds:
        for w in WITNESSES[:-1]:
            put(w, Cell(problems=["no round in the broker log"]).finish())
        return out
    for name in ("describe-0.5", "describe-1"):
        r = read[name]
        events = r.of(c.group)
        gens = any(e.get("to_generation") is not None for e in events if e["event"] == "rebalance")
        put(name, rounds_cell(events, truth, interval_s=r.interval,
                              reads_generation=gens or kind != "classic",
                              records=rec if kind != "classic" else None,
                              summary=r.summaries.get(c.group), handovers=hand, revoked=revoked,
                              handovers_from=whose))
    put("metrics", metrics_cell(read["metrics"].summaries.get(c.group), read["describe-1"].of(c.group),
                                len(truth.rounds), out[(c.scenario, c.client, "describe-1")]))
    put("records", rounds_cell(read["records"].of(c.group), truth, interval_s=None,
                               reads_generation=True, records=rec, handovers=hand,
                               handovers_from=whose,
                               summary=read["records"].summaries.get(c.group)))
    # auto: the records' rounds, a classic round's start bounded by describe's looks
    put("auto", rounds_cell(read["auto"].of(c.group), truth, interval_s=None,
                            reads_generation=True, records=rec, handovers=hand,
                            summary=read["auto"].summaries.get(c.group)))
    put("history", rounds_cell(hist.of(c.group), truth, interval_s=None, reads_generation=True,
                               records=rec, handovers=hand, handovers_from=whose))
    if c.probe_lines:
        probe = reading("probe", None, c.probe_lines)
        events = probe.of(c.group)
        times = [ms(e["ts"]) for e in events]
        left = [ms(e["ts"]) for e in events if e["event"] == "probe" and e.get("action") == "left"]
        # its stay: from its first look to its leave (the round its leave makes is not its own)
        window = (min(times), (left or times)[-1] - PROBE_LEAVE_MS)
        put("probe", rounds_cell(events, truth, interval_s=1.0, reads_generation=True, looks=False,
                                 records=rec, window=window, summary=probe.summaries.get(c.group),
                                 handovers=hand))
    return out


def _keep(c, truth, rec, read, hist) -> None:
    """What the cells were judged on, for a person checking one: workdir/GROUP.json."""
    import dataclasses
    import json

    brief = lambda e: {k: e.get(k) for k in ("ts", "event", "to_generation", "from_generation",  # noqa: E731
                                             "started", "ended", "duration_ms", "members_after",
                                             "unowned_partition_ms", "unowned_partitions_max_ms",
                                             "unowned_basis", "state", "reason") if k in e}
    data = {"truth": [dataclasses.asdict(r) for r in truth.rounds],
            "callbacks": [{"name": x.name, "events": [(e.ts, e.kind, sorted(e.partitions))
                                                      for e in x.events]} for x in [*c.consumers, *c.callbacks]],
            "records": [dataclasses.asdict(r) for r in rec], "notes": c.notes, "failure": c.failure,
            "witnesses": {name: [brief(e) for e in r.of(c.group) if e["event"] in ("rebalance", "state")]
                          for name, r in [*read.items(), ("history", hist)] if name != "metrics"},
            "summaries": {name: r.summaries.get(c.group) for name, r in read.items()},
            "probe": [brief(e) for e in c.probe_lines if e.get("event") in ("rebalance", "state")]}
    (c.workdir / f"{c.group}.json").write_text(json.dumps(data, indent=1))


def table(cells: dict, witnesses=WITNESSES) -> str:
    """Rows scenario/client, columns witness; each cell agree / what disagrees / cannot know."""
    rows = sorted({(s, c) for s, c, _ in cells}, key=lambda x: (list(sc.SCENARIOS).index(x[0]),
                                                               list(sc.CLIENTS).index(x[1])))
    cols = [w for w in witnesses if any(k[2] == w for k in cells)]
    lines = ["| scenario | client | " + " | ".join(cols) + " |",
             "|---|---|" + "---|" * len(cols)]
    for s, c in rows:
        cell = [cells[(s, c, w)].text if (s, c, w) in cells else "-" for w in cols]
        lines.append(f"| {s} | {c} | " + " | ".join(x.replace("|", "/") for x in cell) + " |")
    return "\n".join(lines)
