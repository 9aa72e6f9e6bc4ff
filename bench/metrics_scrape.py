"""One /metrics scrape at fleet size, no broker: a synthetic reducer state of N groups
(classic and consumer, two members each, a rebalance each), then scrapes over HTTP from
the watch's own server (MetricsServer on loopback, gzip as Prometheus asks, and the plain
text): cold (every group's lines built), warm (1 % of the groups, spread over the fleet,
changed since the last scrape) and steady (the same 1 % changed again: they now share
blocks), with the per-group series of every group on, and with the default selection
(fleet-level series + DEFAULT_LIMIT groups). Beside each, its floor: the same bytes
written through a loopback socket to a reader that drops them, and the time a full
collection of the cyclic GC took in it (the watch freezes its fleet once told and its
scrape built: startup.settled; here after the cold scrape). The groups' lines are built
as their events come (not timed here: the fleet's making).

    .venv/bin/python bench/metrics_scrape.py --groups 100000
"""
from __future__ import annotations

import argparse
import gc
import os
import socket
import threading
import time
import urllib.request

from groupctl.events import envelope
from groupctl.observe.sinks.metrics import WatchMetrics
from groupctl.observe.sinks.metrics_fleet import GroupSelection
from groupctl.observe.sinks.metrics_server import MetricsServer
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


class FullCollections:
    """Seconds the cyclic GC spent in full collections (generation 2) since `since()`:
    at 100,000 groups one walks 1.5 million objects, 1 s or more, wherever it lands."""

    def __init__(self) -> None:
        self.total, self._start = 0.0, 0.0
        gc.callbacks.append(self._on)

    def _on(self, phase: str, info: dict) -> None:
        if info["generation"] == 2:
            if phase == "start":
                self._start = time.perf_counter()
            else:
                self.total += time.perf_counter() - self._start


GC = FullCollections()


def scrape(url: str, gzip: bool) -> tuple[float, float, int, float]:
    """(wall s, this process's CPU s, body bytes, s of full collections) of one scrape
    over HTTP."""
    headers = {"Accept-Encoding": "gzip"} if gzip else {}
    w, c, g = time.perf_counter(), time.process_time(), GC.total
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=600) as r:
        n = 0
        while chunk := r.read(1 << 20):
            n += len(chunk)
    return time.perf_counter() - w, time.process_time() - c, n, GC.total - g


def loopback_floor(size: int) -> float:
    """Seconds to write `size` bytes through a loopback TCP socket to a reader."""
    data = memoryview(b"x" * (1 << 20))
    with socket.create_server(("127.0.0.1", 0)) as srv:
        def drain() -> None:
            conn, _ = srv.accept()
            with conn:
                while conn.recv(1 << 20):
                    pass
        t = threading.Thread(target=drain)
        t.start()
        start = time.perf_counter()
        with socket.create_connection(srv.getsockname()) as out:
            left = size
            while left > 0:
                out.sendall(data[:min(left, len(data))])
                left -= len(data)
        t.join()
        return time.perf_counter() - start


def churn(reducer: Reducer, metrics: WatchMetrics, n: int, every: int, at: float) -> None:
    for i in range(0, n, every):
        group = f"fleet-{i:06d}"
        e = envelope({"event": "state", "state": "PreparingRebalance", "previous": "Stable"},
                     group=group, cluster="c1", source="records", at=at)
        reducer.apply(e)
        metrics.event(e)


def run(n: int, select: GroupSelection, label: str) -> list[str]:
    reducer, metrics = fleet(n, select)
    server = MetricsServer(metrics, "127.0.0.1", 0)
    server.start()
    url = "http://%s:%d/metrics" % server.address
    out = []
    try:
        for phase, change in (("cold", None), ("warm", T0 + 10), ("steady", T0 + 20)):
            if change is not None:
                gc.freeze()   # as the watch once its fleet's scrape is built (startup.settled)
                churn(reducer, metrics, n, 100, change)
            wall, cpu, body, collect = scrape(url, gzip=True)
            twall, _, text, _ = scrape(url, gzip=False)   # nothing changed: kept blocks
            out.append(f"{label:30} {phase:6}: gzip {wall:6.3f} s ({body / 1e6:6.2f} MB; "
                       f"{cpu:.3f} s CPU, of which full GC {collect:.2f} s), "
                       f"text {twall:6.3f} s ({text / 1e6:7.1f} MB; loopback floor "
                       f"{loopback_floor(text):.3f} s)")
    finally:
        server.close()
        gc.unfreeze()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--groups", type=int, default=100_000)
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; "
          f"{args.groups} groups; target: one scrape <= {TARGET} s with per-group series on")
    for label, select in (("per-group on (every group)", GroupSelection.every_group()),
                          ("default (fleet + first 1000)", GroupSelection())):
        for line in run(args.groups, select, label):
            print(line, flush=True)
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
