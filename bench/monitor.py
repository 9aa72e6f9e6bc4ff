"""What `groupctl watch --all --metrics-port` costs as a fleet monitor, same run.

monitor  GROUPS groups with committed offsets (Empty: as a monitor meets most groups of a
         real cluster) and CHURN classic groups whose librdkafka consumer joins and leaves
         every few seconds (so groups change between scrapes). `groupctl watch --all
         --interval 1 --metrics-port 0 -o ndjson` runs as a process for SECONDS after a
         warm-up, scraped every SCRAPE s as Prometheus scrapes it (Accept-Encoding: gzip):
         the process's CPU (utime + stime from /proc, % of one core), its peak RSS
         (VmHWM), each scrape's duration (request to last byte). Peer, same run: the same
         watch without --metrics-port (what serving the metrics adds).
         Targets (issue 22): CPU <= 10 % of a core, RSS <= 200 MB, a scrape <= 50 ms.
render   In-process, the worst case for a scrape: GROUPS groups that have all rebalanced
         (every series there: reason kinds, a histogram each), one group changing before
         every scrape, so the group section is built and compressed again each time:
         groupctl's text + gzip vs prometheus_client's generate_latest() + gzip over the same
         samples through its custom collector API (the way the brief's first idea would
         build it); the ratio.

    . .venv/bin/activate && python bench/monitor.py [--groups 2000] [--churn 4]
                                                    [--seconds 60] [-b HOST:PORT]

Report the machine's load (printed, from /proc/loadavg) with the figures: on a shared
machine CPU and scrape times grow with it.
"""
from __future__ import annotations

import argparse
import gzip
import os
import re
import statistics
import subprocess
import sys
import threading
import time
import urllib.request

from groupctl.lab.consumer import LabConsumer
from groupctl.lab.workload import create_topic

SCRAPE = 1.0      # s between scrapes (Prometheus's shortest usual interval)
WARM_UP = 20.0    # s: the first round and ListGroups of every group, the first scrapes
TICK = os.sysconf("SC_CLK_TCK")


def load() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


# ---- set-up -------------------------------------------------------------------------------
def make_groups(bootstrap: str, n: int, topic: str) -> list[str]:
    """n groups with an offset committed each (AdminClient; one group per call, all the
    calls in flight at once; again for those refused while __consumer_offsets comes up)."""
    from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap})
    names = [f"{topic}-g{i:05d}" for i in range(n)]
    todo, deadline, errors = list(names), time.monotonic() + 120, []
    while todo and time.monotonic() < deadline:
        calls = {name: admin.alter_consumer_group_offsets([ConsumerGroupTopicPartitions(
            name, [TopicPartition(topic, 0, 1)])]) for name in todo}
        todo, errors = [], []
        for name, futures in calls.items():
            for f in futures.values():
                refused = [tp.error for tp in f.result(60).topic_partitions if tp.error]
                if refused:
                    todo.append(name)
                    errors = refused
        if todo:
            time.sleep(1)
    if todo:
        raise SystemExit(f"bench: {len(todo)} groups without offsets: {errors[:1]}")
    return names


class Churn:
    """CHURN classic groups, each with one steady consumer; a second one joins and leaves
    in turn, one group every `every` seconds (a rebalance each time)."""

    def __init__(self, bootstrap: str, topic: str, groups: int, every: float = 3.0):
        self.bootstrap, self.topic, self.every = bootstrap, topic, every
        self.groups = [f"{topic}-churn{i}" for i in range(groups)]
        self.steady = [LabConsumer(bootstrap, g, [topic], name=f"{g}-steady").start()
                       for g in self.groups]
        self.stop = threading.Event()
        self.changes = 0
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        extra: dict[str, LabConsumer] = {}
        i = 0
        while not self.stop.wait(self.every) and self.groups:
            g = self.groups[i % len(self.groups)]
            if g in extra:
                extra.pop(g).close()
            else:
                extra[g] = LabConsumer(self.bootstrap, g, [self.topic], name=f"{g}-x{i}").start()
            self.changes += 1
            i += 1
        for c in extra.values():
            c.close()

    def close(self) -> None:
        self.stop.set()
        if self.thread.is_alive():
            self.thread.join(60)
        for c in self.steady:
            c.begin_close()
        for c in self.steady:
            c.close()


# ---- one watch process ----------------------------------------------------------------------
def _cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK   # utime, stime


def _status_kb(pid: int, key: str) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def _scrape(url: str) -> tuple[float, bytes]:
    req = urllib.request.Request(url, headers={"Accept-Encoding": "gzip"})
    start = time.perf_counter()
    with urllib.request.urlopen(req, timeout=30) as r:
        body = r.read()
    return time.perf_counter() - start, body


def _rounds(url: str) -> tuple[float, float]:
    """groupctl's describe rounds so far: (count, seconds in all)."""
    text = gzip.decompress(_scrape(url)[1]).decode()
    found = dict(re.findall(r"^groupctl_describe_round_duration_seconds_(count|sum) (\S+)$",
                            text, re.M))
    return float(found["count"]), float(found["sum"])


def watch(bootstrap: str, seconds: float, metrics: bool, groups: int) -> dict:
    cmd = [sys.executable, "-m", "groupctl", "-b", bootstrap, "-o", "ndjson", "watch", "--all",
           "--interval", "1", *(["--metrics-port", "0"] if metrics else [])]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        url = None
        if metrics:
            line = proc.stderr.readline()
            url = re.search(r"(http://\S+/metrics)", line).group(1)
        warm_end = time.monotonic() + WARM_UP
        followed, first_ms = 0, 0.0
        while time.monotonic() < warm_end:   # Prometheus scrapes through the warm-up too
            if url:
                took, body = _scrape(url)
                first_ms = max(first_ms, took * 1000)   # every group's lines built once
                m = re.search(rb"^groupctl_groups_followed (\S+)$", gzip.decompress(body), re.M)
                followed = int(float(m.group(1))) if m else 0
            time.sleep(SCRAPE)
        rounds0 = _rounds(url) if url else (0.0, 0.0)
        cpu0, t0 = _cpu_seconds(proc.pid), time.monotonic()
        scrapes: list[float] = []
        sizes: list[tuple[int, int]] = []
        end = t0 + seconds
        while time.monotonic() < end:
            if url:
                took, body = _scrape(url)
                scrapes.append(took * 1000)
                sizes.append((len(body), len(gzip.decompress(body))))
            time.sleep(SCRAPE)
        cpu = (_cpu_seconds(proc.pid) - cpu0) / (time.monotonic() - t0) * 100
        rounds1 = _rounds(url) if url else (0.0, 0.0)
        out = {"cpu_pct": cpu, "rss_peak_mb": _status_kb(proc.pid, "VmHWM") / 1024,
               "rss_mb": _status_kb(proc.pid, "VmRSS") / 1024, "scrapes_ms": scrapes,
               "sizes": sizes, "followed": followed, "first_ms": first_ms,
               "rounds": rounds1[0] - rounds0[0], "round_s": rounds1[1] - rounds0[1]}
        if proc.poll() is not None:
            raise SystemExit(f"bench: the watch ended early: {proc.stderr.read()}")
        return out
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()


# ---- in-process: the worst case of one scrape -----------------------------------------------
def fleet(n: int):
    """A WatchMetrics over n groups that have each rebalanced twice (half classic, half
    consumer groups with three members)."""
    from groupctl.events import envelope
    from groupctl.observe.sinks.metrics import WatchMetrics
    from groupctl.observe.state.reducer import Reducer

    reducer = Reducer()
    metrics = WatchMetrics(reducer, followed=lambda: len(reducer.groups))

    def feed(body: dict, group: str, at: float) -> None:
        e = envelope(body, group=group, cluster="MkU3OEVBNTcwNTJENDM2Qk", source="describe", at=at)
        reducer.apply(e)
        metrics.event(e)

    t0 = time.time() - 3600
    for i in range(n):
        g, kind = f"orders-service-{i:05d}", ("classic", "consumer")[i % 2]
        asg = [{"topic": "orders", "partitions": [j]} for j in range(3)]
        members = [{"member_id": f"m{j}", "client_id": f"c{j}", "assignment": [asg[j]],
                    "target_assignment": [asg[j]] if kind == "consumer" else None}
                   for j in range(3)]
        epoch = 3 if kind == "consumer" else None
        feed({"event": "snapshot", "state": "Stable", "type": kind, "group_epoch": epoch,
              "assignment_epoch": epoch, "generation": 3 if kind == "classic" else None,
              "members": members}, g, t0)
        for k, reason in enumerate(("member m2 (client c2) joined", "member m9 left or expired")):
            feed({"event": "rebalance", "from_generation": 3 + k, "to_generation": 4 + k,
                  "duration_ms": 300 * (k + 1), "members_before": ["m0"],
                  "members_after": ["m0", "m1", "m2"], "reason": reason}, g, t0 + k)
    return metrics, feed


def peer_registry(metrics):
    """prometheus_client over the same samples: a custom collector building its metric
    families at scrape time (generate_latest writes them)."""
    from prometheus_client import CollectorRegistry
    from prometheus_client.core import Metric

    from groupctl.observe.sinks.metrics_groups import GROUP_FAMILIES, GroupCounts, GroupView, _type

    class Same:
        def collect(self):
            for g in GROUP_FAMILIES:
                fam = Metric(g.family.name, g.family.help, g.family.kind)
                for name, status in list(metrics.reducer.groups.items()):
                    view = GroupView(status, metrics.counts.get(name) or GroupCounts(),
                                     _type(status))
                    base = {"cluster": metrics.cluster, "group": name}
                    for suffix, pairs, value in g.samples(view):
                        fam.add_sample(g.family.name + suffix, {**base, **dict(pairs)}, value)
                yield fam

    registry = CollectorRegistry(auto_describe=False)
    registry.register(Same())
    return registry


def render(n: int, runs: int = 15) -> dict:
    from prometheus_client import generate_latest

    from groupctl.observe.sinks.metrics_gzip import GZIP_LEVEL
    from groupctl.observe.sinks.metrics_server import _Gzip

    metrics, feed = fleet(n)
    zipper = _Gzip()
    zipper.body(metrics.scrape())   # every group's lines built and compressed once, at start
    ours, theirs, changed, cpu = [], [], 0, []

    def one_change() -> None:
        nonlocal changed
        changed += 1
        feed({"event": "member_joined", "member_id": f"x{changed}"}, "orders-service-00001",
             time.time())

    for _ in range(runs):
        one_change()
        start, cpu0 = time.perf_counter(), time.process_time()
        body = zipper.body(metrics.scrape())
        ours.append((time.perf_counter() - start) * 1000)
        cpu.append((time.process_time() - cpu0) * 1000)
    registry = peer_registry(metrics)
    for _ in range(max(3, runs // 3)):
        one_change()
        start = time.perf_counter()
        peer = gzip.compress(generate_latest(registry), compresslevel=GZIP_LEVEL)
        theirs.append((time.perf_counter() - start) * 1000)
    unchanged = []
    for _ in range(runs):
        start = time.perf_counter()
        zipper.body(metrics.scrape())
        unchanged.append((time.perf_counter() - start) * 1000)
    text = metrics.scrape().text()
    return {"ours_ms": ours, "ours_cpu_ms": cpu, "peer_ms": theirs, "unchanged_ms": unchanged,
            "bytes": len(text), "gzip_bytes": len(body), "peer_gzip_bytes": len(peer),
            "lines": text.count(b"\n")}


# ---- report -----------------------------------------------------------------------------------
def dist(values: list[float]) -> str:
    v = sorted(values)
    p90 = v[min(len(v) - 1, int(round(0.9 * (len(v) - 1))))]
    return f"median {statistics.median(v):.1f}  p90 {p90:.1f}  max {v[-1]:.1f}"


def run(bootstrap: str, groups: int, churn: int, seconds: float) -> int:
    print(f"load before: {load()}", flush=True)
    r = render(groups)
    print(f"\nrender (in-process, {groups} groups all rebalanced, {r['lines']} lines, "
          f"{r['bytes'] / 1e6:.1f} MB, gzip {r['gzip_bytes'] / 1e3:.0f} kB), ms per scrape:")
    print(f"  groupctl, one group changed      {dist(r['ours_ms'])}   "
          f"(CPU time: {dist(r['ours_cpu_ms'])})")
    print(f"  groupctl, nothing changed        {dist(r['unchanged_ms'])}")
    print(f"  prometheus_client (same samples) {dist(r['peer_ms'])}")
    print(f"  ratio groupctl / prometheus_client (medians, one changed)  "
          f"{statistics.median(r['ours_ms']) / statistics.median(r['peer_ms']):.3f}", flush=True)

    topic = f"bench-monitor-{time.strftime('%H%M%S')}"
    create_topic(bootstrap, topic, 1)
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap})
    producer.produce(topic, b"x")   # a record, so that offset 1 can be committed
    producer.flush(30)
    started = time.monotonic()
    make_groups(bootstrap, groups, topic)
    print(f"\n{groups} groups with offsets in {time.monotonic() - started:.0f} s", flush=True)
    churner = Churn(bootstrap, topic, churn) if churn else None
    try:
        if churner:
            churner.thread.start()
        results = {}
        for metrics in (True, False):
            results[metrics] = watch(bootstrap, seconds, metrics, groups)
            print(f"  {'with' if metrics else 'without'} --metrics-port: done, load {load()}",
                  flush=True)
    finally:
        if churner:
            churner.close()
    on, off = results[True], results[False]
    gz, text = (statistics.median(x) for x in zip(*on["sizes"]))
    print(f"\nmonitor: watch --all --interval 1 over {on['followed']} groups "
          f"({churn} churning, {churner.changes if churner else 0} changes), {seconds:g} s, "
          f"load {load()}")
    print(f"  CPU % of a core   with metrics {on['cpu_pct']:.1f}   without {off['cpu_pct']:.1f}   "
          f"ratio {on['cpu_pct'] / max(off['cpu_pct'], 0.01):.2f}")
    print(f"  peak RSS MB       with metrics {on['rss_peak_mb']:.0f}   "
          f"without {off['rss_peak_mb']:.0f}")
    print(f"  scrape ms ({len(on['scrapes_ms'])})     {dist(on['scrapes_ms'])}   "
          f"(body {gz / 1e3:.0f} kB gzip, {text / 1e6:.2f} MB text)")
    if on["rounds"]:
        print(f"  describe rounds   {on['rounds']:.0f} in {seconds:g} s, mean "
              f"{on['round_s'] / on['rounds'] * 1000:.0f} ms (with metrics)")
    print(f"  slowest warm-up scrape (every group's lines built once) {on['first_ms']:.0f} ms")
    return 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-b", "--bootstrap-server")
    parser.add_argument("--groups", type=int, default=2000)
    parser.add_argument("--churn", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=60)
    args = parser.parse_args(argv)
    if args.bootstrap_server:
        return run(args.bootstrap_server, args.groups, args.churn, args.seconds)
    from groupctl.lab.cluster import throwaway

    with throwaway("bench-monitor") as lab:
        return run(lab.bootstrap, args.groups, args.churn, args.seconds)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
