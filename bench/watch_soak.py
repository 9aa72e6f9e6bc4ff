"""Issue 21's long run: `watch --all` over many groups for a long time, with churn, broker
restarts and `/metrics` scraped. Not a test (it takes half an hour); a soak that prints
what it measured and exits 1 when a promise broke.

A one-node lab of its own (restartable): GROUPS Empty groups (committed offsets), CHURN
live classic groups of two librdkafka consumers each where a third member joins and leaves
every CYCLE seconds. `groupctl -o ndjson watch --all --interval 1 --metrics-port P
--duration SECONDS` runs as a user runs it (a subprocess). The broker is stopped and
started RESTARTS times, evenly spread. Every 5 s: `/metrics` scraped, the watch's RSS read
from /proc.

Promises checked, against what groupctl did not write:
  rss       flat after warm-up: the last two thirds of the samples within 25 % (and 30 MB)
            of their first value
  counters  no `*_total` sample of `/metrics` ever goes down (restarts included)
  told once each `rebalance` of a churn group matches one Stabilized line of the broker's
            log inside the span the watch saw the round in (DescribeGroups gives no
            generation number); one with no line of its own was told twice or invented
  not lost  every generation the broker log says a churn group stabilized (after the
            watch's first look) that lived >= 2 intervals is told; shorter-lived ones (two
            rebalances inside one describe interval, e.g. right after a restart) are listed
            apart: a 1 s describe cannot see them (`--source records` can)

    PYTHONPATH=. python bench/watch_soak.py [--minutes 30] [--groups 500] [--restarts 2]
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from watch import make_empty_groups  # noqa: E402  (bench/watch.py: its Empty groups)

STABILIZED = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\].*Stabilized group (\S+) "
                        r"generation (\d+) ", re.M)
SAMPLE = re.compile(r"^(\w+_total)(\{[^}]*\})? ([0-9.eE+-]+)$", re.M)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_mb(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def scrape(port: int) -> dict[str, float] | None:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
            text = r.read().decode()
    except OSError:
        return None
    return {m.group(1) + (m.group(2) or ""): float(m.group(3)) for m in SAMPLE.finditer(text)}


def stabilized(lab, groups: set[str]) -> dict[str, list[tuple[float, int]]]:
    """Each churn group's (log time, generation) Stabilized lines, every node's log files."""
    out: dict[str, list[tuple[float, int]]] = {g: [] for g in groups}
    for log in lab.log_files:
        for path in sorted(Path(log).parent.glob(Path(log).name + "*")):
            text = path.read_text(encoding="utf-8", errors="replace")
            for m in STABILIZED.finditer(text):
                if m.group(2) in out:
                    at = dt.datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S,%f").timestamp()
                    out[m.group(2)].append((at, int(m.group(3))))
    return {g: sorted(set(v)) for g, v in out.items()}


class Churn(threading.Thread):
    """A third consumer joins each churn group and leaves again, every `cycle` seconds."""

    def __init__(self, bootstrap: str, groups: list[str], topic: str, cycle: float):
        super().__init__(daemon=True, name="churn")
        self.bootstrap, self.groups, self.topic, self.cycle = bootstrap, groups, topic, cycle
        self.stop = threading.Event()
        self.cycles = 0

    def run(self) -> None:
        from groupctl.lab.consumer import LabConsumer

        while not self.stop.wait(self.cycle / 2):
            joiners = [LabConsumer(self.bootstrap, g, [self.topic], name=f"{g}-j{self.cycles}")
                       .start() for g in self.groups]
            if self.stop.wait(self.cycle / 2):
                joiners_close(joiners)
                return
            joiners_close(joiners)
            self.cycles += 1


def joiners_close(joiners) -> None:
    for j in joiners:
        j.begin_close()
    for j in joiners:
        j.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=30)
    ap.add_argument("--groups", type=int, default=500)
    ap.add_argument("--churn", type=int, default=3)
    ap.add_argument("--cycle", type=float, default=40)
    ap.add_argument("--restarts", type=int, default=2)
    args = ap.parse_args()
    from groupctl.lab.cluster import Lab
    from groupctl.lab.consumer import LabConsumer
    from groupctl.lab.workload import create_topic

    lab = Lab.up(name=f"watch-soak-{os.getpid()}", brokers=1,
                 root=Path(tempfile.mkdtemp(prefix="watch-soak-")), tie_to_parent=True)
    keepers: list = []
    try:
        return soak(args, lab, keepers, LabConsumer, create_topic)
    finally:
        joiners_close(keepers)
        lab.down()


def soak(args, lab, keepers: list, LabConsumer, create_topic) -> int:
    bootstrap = lab.bootstrap
    topic = f"soak-{time.strftime('%H%M%S')}"
    create_topic(bootstrap, topic, 4)
    print(f"making {args.groups} Empty groups ...", flush=True)
    make_empty_groups(bootstrap, args.groups, topic)
    churn_groups = [f"{topic}-live{i}" for i in range(args.churn)]
    for g in churn_groups:
        keepers += [LabConsumer(bootstrap, g, [topic], name=f"{g}-k{i}").start() for i in (0, 1)]
    for k in keepers:
        k.wait_assigned(timeout=120)
    port, seconds = free_port(), args.minutes * 60
    out = Path(tempfile.mkdtemp(prefix="watch-soak-out-")) / "events.ndjson"
    with open(out, "wb") as sink, open(out.with_suffix(".err"), "wb") as err:
        watch = subprocess.Popen(
            [sys.executable, "-m", "groupctl", "-b", bootstrap, "-o", "ndjson", "watch", "--all",
             "--interval", "1", "--metrics-port", str(port), "--duration", str(seconds)],
            stdout=sink, stderr=err, stdin=subprocess.DEVNULL,
            env={**os.environ, "NO_COLOR": "1", "GROUPCTL_CONFIG": os.devnull})
    t0 = time.monotonic()
    first_look = time.time()
    churn = Churn(bootstrap, churn_groups, topic, args.cycle)
    churn.start()
    restarts_at = [seconds * (i + 1) / (args.restarts + 1) for i in range(args.restarts)]
    rss: list[float] = []
    last: dict[str, float] = {}
    went_down: list[str] = []
    while watch.poll() is None:
        elapsed = time.monotonic() - t0
        if restarts_at and elapsed >= restarts_at[0]:
            restarts_at.pop(0)
            print(f"{elapsed:6.0f} s  broker restart", flush=True)
            lab.stop_node(1)
            lab.start_node(1)
        sample = scrape(port)
        if sample is not None:
            for key, value in sample.items():
                if value < last.get(key, value):
                    went_down.append(f"{key}: {last[key]} -> {value}")
                last[key] = value
        r = rss_mb(watch.pid)
        if r is not None:
            rss.append(r)
        if len(rss) % 24 == 1:
            print(f"{elapsed:6.0f} s  rss {r or 0:.0f} MB  churn cycles {churn.cycles}  "
                  f"counters {len(last)}", flush=True)
        try:
            watch.wait(timeout=5)   # the sampling period (the watch ending cuts it short)
        except subprocess.TimeoutExpired:
            pass
    churn.stop.set()
    churn.join(timeout=120)
    return verdict(lab, out, churn_groups, first_look, rss, went_down, watch.returncode)


def _epoch(iso: str) -> float:
    return dt.datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


def verdict(lab, out: Path, churn_groups: list[str], first_look: float, rss: list[float],
            went_down: list[str], code: int) -> int:
    events = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
    broken = []
    if code != 0:
        broken.append(f"watch exited {code}: {out.with_suffix('.err').read_text()[-500:]}")
    warm = rss[len(rss) // 3:]
    if warm and (max(warm) > warm[0] * 1.25 and max(warm) - warm[0] > 30):
        broken.append(f"rss grew after warm-up: {warm[0]:.0f} -> {max(warm):.0f} MB")
    if went_down:
        broken.append(f"counters went down: {went_down[:5]}")
    log = stabilized(lab, set(churn_groups))
    for g in churn_groups:
        # classic groups: DescribeGroups has no generation number, so each rebalance event
        # is matched to the last Stabilized line inside the span the watch saw it in (from
        # its first look at the round, or 3 s before its end, to its end): a round that
        # spanned a broker restart ends when the broker answers again
        told = sorted((_epoch(e["ended"]), _epoch(e["started"]) if e.get("started") else None)
                      for e in events if e.get("group") == g and e.get("event") == "rebalance"
                      and e.get("ended"))
        lines = [(at, n) for at, n in log[g] if at > first_look + 5]
        lived = {n: (nxt[0] - at) for (at, n), nxt in zip(lines, lines[1:] + [(time.time(), 0)])}
        matched: set[int] = set()
        extra = []
        for t, began in told:
            low = min(t - 3.0, began - 1.0) if began is not None else t - 3.0
            line = next(((at, n) for at, n in reversed(lines)
                         if low <= at <= t + 0.5 and n not in matched), None)
            if line is not None:
                matched.add(line[1])
            elif t > first_look + 5:
                extra.append(t)
        missed = [n for _, n in lines if n not in matched]
        lost = [n for n in missed if lived[n] >= 2.0]
        brief = [n for n in missed if lived[n] < 2.0]
        print(f"{g}: broker stabilized {len(lines)}, rebalances told {len(told)}, "
              f"told with no Stabilized line (repeated or phantom) {len(extra)}, "
              f"lost {lost}, too brief for a 1 s describe {brief}")
        if extra or lost:
            broken.append(f"{g}: {len(extra)} told with no Stabilized line, lost {lost}")
    print(f"rss MB: first {rss[0] if rss else 0:.0f}  after warm-up {warm[0] if warm else 0:.0f}"
          f"  max {max(rss) if rss else 0:.0f}  last {rss[-1] if rss else 0:.0f}")
    print(f"events {len(events)}; output {out}")
    for b in broken:
        print(f"BROKEN: {b}")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
