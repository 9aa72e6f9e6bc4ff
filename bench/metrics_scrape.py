"""One /metrics scrape at fleet size, no broker: a synthetic reducer state of N groups
(classic and consumer, two members each, a rebalance each), then the scrape as the server
makes it (WatchMetrics.scrape + the gzip body) cold (every group's lines built) and warm
(1 % of the groups changed since the last scrape), with the per-group series of every
group on, and with the default selection (fleet-level series + DEFAULT_LIMIT groups).

    .venv/bin/python bench/metrics_scrape.py --groups 100000
"""
from __future__ import annotations

import argparse
import os
import time

from groupctl.events import envelope
from groupctl.observe.sinks.metrics import WatchMetrics
from groupctl.observe.sinks.metrics_fleet import GroupSelection
from groupctl.observe.sinks.metrics_server import _Gzip
from groupctl.observe.state.reducer import Reducer

T0 = 1_700_000_000.0
TARGET = 1.0   # seconds per scrape at 100,000 groups with per-group series on


def _member(mid: str, partition: int) -> dict:
    return {"member_id": mid, "client_id": mid,
            "assignment": [{"topic": "t", "partitions": [partition]}], "target_assignment": None}


def fleet(n: int, select: GroupSelection) -> tuple[Reducer, WatchMetrics]:
    reducer = Reducer()
    metrics = WatchMetrics(reducer, followed=lambda: len(reducer.groups), select=select)
    for i in range(n):
        group = f"fleet-{i:06d}"
        kind = "classic" if i % 2 else "consumer"
        state = "Stable" if i % 10 else ("PreparingRebalance" if kind == "classic" else "Reconciling")
        body = {"event": "snapshot", "state": state, "type": kind, "generation": 3,
                "group_epoch": 3, "assignment_epoch": 3,
                "members": [_member(f"{group}-a", 0), _member(f"{group}-b", 1)]}
        for e in (envelope(body, group=group, cluster="c1", source="records", at=T0),
                  envelope({"event": "rebalance", "from_generation": 2, "to_generation": 3,
                            "duration_ms": 120 + i % 500, "ended": "2023-11-14T22:13:25.000Z",
                            "members_before": [f"{group}-a"],
                            "members_after": [f"{group}-a", f"{group}-b"],
                            "reason": "member b joined"},
                           group=group, cluster="c1", source="records", at=T0 + 1)):
            reducer.apply(e)
            metrics.event(e)
    return reducer, metrics


def scrape(metrics: WatchMetrics, gzip: _Gzip) -> tuple[float, float, int, int]:
    """(wall s, CPU s, body bytes, text bytes) of one gzipped scrape."""
    w, c = time.perf_counter(), time.process_time()
    s = metrics.scrape()
    body = gzip.body(s)
    wall, cpu = time.perf_counter() - w, time.process_time() - c
    return wall, cpu, len(body), len(s.text())


def churn(reducer: Reducer, metrics: WatchMetrics, n: int, every: int, at: float) -> None:
    for i in range(0, n, every):
        group = f"fleet-{i:06d}"
        e = envelope({"event": "state", "state": "PreparingRebalance", "previous": "Stable"},
                     group=group, cluster="c1", source="records", at=at)
        reducer.apply(e)
        metrics.event(e)


def run(n: int, select: GroupSelection, label: str) -> dict:
    built = time.perf_counter()
    reducer, metrics = fleet(n, select)
    built = time.perf_counter() - built
    gzip = _Gzip()
    cold = scrape(metrics, gzip)
    churn(reducer, metrics, n, 100, T0 + 10)
    warm = scrape(metrics, gzip)
    return {"label": label, "groups": n, "state_s": built, "cold": cold, "warm": warm}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--groups", type=int, default=100_000)
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; "
          f"{args.groups} groups; target: one scrape <= {TARGET} s with per-group series on")
    for label, select in (("per-group on (every group)", GroupSelection.every_group()),
                          ("default (fleet + first 1000)", GroupSelection())):
        r = run(args.groups, select, label)
        for phase in ("cold", "warm"):
            wall, cpu, body, text = r[phase]
            print(f"{label:30} {phase}: {wall:6.3f} s wall {cpu:6.3f} s CPU, "
                  f"{text / 1e6:7.1f} MB text -> {body / 1e6:6.2f} MB gzip")


if __name__ == "__main__":
    main()
