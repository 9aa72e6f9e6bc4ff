"""A fleet of consumer groups on one lab broker, then groupctl measured on it, one run.

The fleet (groupctl's own client, requests batched per coordinator through
client/sharded.py, all groups in flight at once; no process per group):
- classic groups `fleet-c…`: one member each joins (JoinGroup twice: KIP-394's member id),
  syncs its assignment, commits its offsets with its generation, and leaves;
- KIP-848 groups `fleet-k…`: one member heartbeats in (epoch 0) until it holds its
  assignment, commits, and leaves (epoch -1);
- commit-only groups `fleet-o…` (most of a real fleet): offsets committed, no member;
every group commits all PARTITIONS partitions of one topic (10 commits a group: a million
at 100,000 groups). Then a churn of `--churn` rounds a second: a classic group of the
fleet gets a member that joins, syncs and leaves (two generations a round).

Measured, each beside its target (issue 34, at 100,000 groups) and its floor:
- `watch --all --source records`: time from start until every classic and KIP-848 group is
  told (catch-up; floor: Kafka's console consumer reading __consumer_offsets from the start,
  its bytes on disk beside it); its CPU (% of a core) and RSS during the churn;
- rounds told: the watch's rebalance events of churned groups, matched by (group,
  generation) against the broker's own log lines (Stabilized / is now empty);
- a gzipped /metrics scrape of that watch with the per-group series of every group on;
- a lag round (observe.sources.lag.fetch_lag) against librdkafka's AdminClient (bench/lag.py's
  peer), same groups, same figures checked, ratio;
- `describe --all` against the franz-go kadm peer (bench/describe_fleet.py builds it),
  wall, CPU and RSS, ratio;
- `describe` of one fleet group against its import floor (bench/describe_one.py), ratio.

    .venv/bin/python bench/fleet.py --groups 2000,20000,100000 [--churn 20] [--seconds 20]

Each size of `--groups` on a fresh lab of its own, one after the other, in one run; the
tables printed as each ends and again together at the end. With -b, one size.
"""
from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import uuid
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
from describe_fleet import PEER, build_peer, groupctl_cmd, run_measured  # noqa: E402
from fleet_requests import Fleet  # noqa: E402

TOPIC = "fleet-topic"
PARTITIONS = 10
TARGETS = {"catch_up_s": 30.0, "cpu_core": 0.5, "rss_mb": 1024.0, "scrape_s": 1.0,
           "describe_ratio": 1.5, "describe_one_ratio": 1.25}


def kinds(n: int) -> dict[str, list[str]]:
    """The fleet's groups by kind: 10 % classic, 10 % KIP-848, the rest commit-only."""
    c = k = max(1, n // 10)
    return {"classic": [f"fleet-c{i:06d}" for i in range(c)],
            "consumer": [f"fleet-k{i:06d}" for i in range(k)],
            "commits": [f"fleet-o{i:06d}" for i in range(n - c - k)]}


def produce(bootstrap: str) -> None:
    from confluent_kafka import Producer

    from groupctl.lab.workload import create_topic

    create_topic(bootstrap, TOPIC, PARTITIONS, exist_ok=True)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for i in range(2000):
        producer.produce(TOPIC, b"x" * 20, partition=i % PARTITIONS)
    assert producer.flush(30) == 0


class Watch:
    """`groupctl -o ndjson watch --all --source records --metrics-port 0` in a process of
    its own; its events read as they come."""

    def __init__(self, bootstrap: str, wanted: set[str], every_group: bool = True):
        self.out = tempfile.NamedTemporaryFile("w+", suffix=".ndjson")
        self.err = tempfile.NamedTemporaryFile("w+", suffix=".err")
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            [*groupctl_cmd(), "-b", bootstrap, "-o", "ndjson", "watch", "--all", "--source",
             "records", "--metrics-port", "0",
             *(["--metrics-regex", ".*"] if every_group else [])],
            stdout=self.out, stderr=self.err, stdin=subprocess.DEVNULL)
        self.wanted, self.told, self.events = wanted, set(), []
        self._pos = 0

    def read(self) -> None:
        with open(self.out.name) as f:
            f.seek(self._pos)
            data = f.read()
        lines = data.split("\n")
        self._pos += len(data) - len(lines[-1])
        now = time.monotonic()
        for line in lines[:-1]:   # orjson, and only rebalances kept: the bench's own CPU
            if line.startswith("{"):   # and memory stay small beside the watch's
                e = orjson.loads(line)
                if e.get("event") == "rebalance":
                    self.events.append((now, {"event": "rebalance", "group": e.get("group"),
                                              "to_generation": e.get("to_generation")}))
                if e.get("group"):
                    self.told.add(e["group"])

    def caught_up(self, timeout: float) -> float | None:
        """Seconds from start until every wanted group was told; None by the timeout."""
        while time.monotonic() - self.started < timeout:
            self.read()
            if self.wanted <= self.told:
                return time.monotonic() - self.started
            if self.proc.poll() is not None:
                raise SystemExit(f"watch ended: {Path(self.err.name).read_text()[-2000:]}")
            time.sleep(0.1)
        return None

    def cpu_s(self) -> float:
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def rss_mb(self) -> tuple[float, float]:
        status = Path(f"/proc/{self.proc.pid}/status").read_text()
        kb = {k: int(v.split()[0]) for k, v in re.findall(r"^(VmRSS|VmHWM):\s+(.*)$", status, re.M)}
        return kb["VmRSS"] / 1024, kb["VmHWM"] / 1024

    def metrics_url(self) -> str:
        m = re.search(r"serving metrics on (http://\S+/metrics)", Path(self.err.name).read_text())
        if m is None:
            raise SystemExit("the watch does not say where its metrics are")
        return m.group(1)

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(30)


def scrape(url: str) -> tuple[float, int, int]:
    """(seconds, gzipped bytes, text bytes) of one /metrics scrape as Prometheus asks it."""
    req = urllib.request.Request(url, headers={"Accept-Encoding": "gzip"})
    start = time.perf_counter()
    with urllib.request.urlopen(req, timeout=120) as r:
        body = r.read()
    took = time.perf_counter() - start
    return took, len(body), len(gzip.decompress(body))


def broker_generations(log: Path, groups: set[str], since: int) -> set[tuple[str, int]]:
    """(group, generation) of every round the broker's log tells, from byte `since`."""
    out = set()
    pattern = re.compile(r"(?:Stabilized group (\S+) generation (\d+)"
                         r"|Group (\S+) with generation (\d+) is now empty)")
    with open(log, errors="replace") as f:
        f.seek(since)
        for line in f:
            m = pattern.search(line)
            if m:
                group, gen = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
                if group in groups:
                    out.add((group, int(gen)))
    return out


def console_floor(bootstrap: str, data_dir: Path | None) -> dict:
    """Kafka's console consumer reading __consumer_offsets from the start (its idle
    timeout taken off), and the partitions' bytes on disk."""
    from groupctl.lab.dist import java_cmd, kafka_libs
    from groupctl.lab.tools import TOOL_JVM_OPTS, classpath

    idle = 3.0
    start = time.perf_counter()
    proc = subprocess.run(   # its output is the records' raw bytes: counted, not kept
        [java_cmd(), *TOOL_JVM_OPTS, "-cp", classpath(kafka_libs()),
         "org.apache.kafka.tools.consumer.ConsoleConsumer", "--bootstrap-server", bootstrap,
         "--topic", "__consumer_offsets", "--from-beginning", "--timeout-ms",
         str(int(idle * 1000)), "--consumer-property", "exclude.internal.topics=false"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        timeout=600)
    took = time.perf_counter() - start - idle
    total = re.search(rb"Processed a total of (\d+) messages", proc.stderr)
    on_disk = read_s = None
    if data_dir is not None:
        logs = [f for d in data_dir.glob("__consumer_offsets-*") for f in d.glob("*.log")]
        on_disk = sum(f.stat().st_size for f in logs)
        start = time.perf_counter()   # the segments' bytes read (from the page cache, as
        for f in logs:                # the broker's own reads after the fleet was made)
            with open(f, "rb", buffering=0) as fh:
                while fh.read(1 << 20):
                    pass
        read_s = time.perf_counter() - start
    return {"console_consumer_s": round(took, 2), "records": int(total.group(1)) if total else None,
            "offsets_topic_mb": None if on_disk is None else round(on_disk / 1e6, 1),
            "segments_read_s": None if read_s is None else round(read_s, 3)}


def describe_vs_peer(bootstrap: str, fleet: set[str], runs: int) -> dict:
    me = [*groupctl_cmd(), "-b", bootstrap, "--timeout", "300", "-o", "json", "describe", "--all"]
    tools = {"groupctl": me, "kadm": [str(PEER), "-b", bootstrap, "--all"]}
    got: dict[str, list] = {k: [] for k in tools}
    for cmd in tools.values():   # warm: the page cache, the broker
        run_measured(cmd)
    for _ in range(runs):
        for name, cmd in tools.items():
            wall, cpu, mb, code, out, err = run_measured(cmd)
            if code != 0:
                raise SystemExit(f"{name} describe failed ({code}): {err[-2000:]}")
            seen = {g["group"] for g in json.loads(out)}
            if not fleet <= seen:
                raise SystemExit(f"{name}: {len(fleet - seen)} fleet groups missing")
            got[name].append((wall, cpu, mb))
    med = {k: (statistics.median(w for w, _, _ in v), statistics.median(c for _, c, _ in v),
               max(m for _, _, m in v)) for k, v in got.items()}
    (w, c, m), (pw, pc, pm) = med["groupctl"], med["kadm"]
    return {"wall_s": round(w, 3), "cpu_s": round(c, 3), "rss_mb": round(m),
            "peer_wall_s": round(pw, 3), "peer_cpu_s": round(pc, 3), "peer_rss_mb": round(pm),
            "ratio": round(w / pw, 2), "cpu_ratio": round(c / pc, 2)}


def describe_one_vs_floor(bootstrap: str, group: str, runs: int) -> dict:
    """`describe GROUP` (table and -o json) against `python -c 'import typer, rich,
    asyncio, ssl'`, alternated (bench/describe_one.py's measure)."""
    from describe_one import alternated

    me = [*groupctl_cmd(), "-b", bootstrap]
    med = alternated({"floor": [sys.executable, "-c", "import typer, rich, asyncio, ssl"],
                      "table": [*me, "describe", group],
                      "json": [*me, "-o", "json", "describe", group]}, runs)
    fw, fc = med["floor"]
    return {"floor_ms": round(fw * 1000, 1), **{
        f"{k}_{what}": round(v, 2) for k in ("table", "json")
        for what, v in (("ratio", med[k][0] / fw), ("cpu_ratio", med[k][1] / fc))}}


def lag_vs_librdkafka(bootstrap: str, groups: list[str], runs: int) -> dict:
    from lag import Peer, ours  # bench/lag.py

    from groupctl.client import Cluster

    peer, mine, theirs = Peer(bootstrap, timeout=600), [], []

    async def main():
        async with Cluster(bootstrap.split(","), timeout=120) as cluster:
            await ours(cluster, groups)
            peer.lags(groups)
            for _ in range(runs):
                start = time.perf_counter()
                a = await ours(cluster, groups)
                mine.append(time.perf_counter() - start)
                start = time.perf_counter()
                b = peer.lags(groups)
                theirs.append(time.perf_counter() - start)
                if a != b:
                    raise SystemExit("groupctl and librdkafka disagree on the lag")
    asyncio.run(main())
    m, t = statistics.median(mine), statistics.median(theirs)
    return {"groupctl_s": round(m, 3), "librdkafka_s": round(t, 3), "ratio": round(m / t, 2)}


class Figures(dict):
    """The run's figures, each printed with the load average as it is measured (a long
    run on a shared machine is not lost to a later phase's failure)."""

    def __setitem__(self, key, value) -> None:
        super().__setitem__(key, value)
        print(f"{key}: {json.dumps(value)} (load {os.getloadavg()[0]:.1f})", flush=True)


def run(bootstrap: str, n: int, churn: float, seconds: float, runs: int,
        log: Path | None, data_dir: Path | None, made: bool = False,
        skip: frozenset[str] = frozenset(), per_group: str = "all") -> dict:
    out: dict = Figures(groups=n, load_before=os.getloadavg())
    by_kind = kinds(n)
    if made:
        out["made"] = "the fleet was made by an earlier run"
    else:
        produce(bootstrap)
        out["made"] = asyncio.run(Fleet(bootstrap, TOPIC, PARTITIONS).make(by_kind))

    members = set(by_kind["classic"]) | set(by_kind["consumer"])
    watch = Watch(bootstrap, members, every_group=per_group == "all")
    out["per_group_series"] = per_group
    try:
        took = watch.caught_up(timeout=900)
        out["catch_up_members_s"] = None if took is None else round(took, 2)
        watch.wanted = members | set(by_kind["commits"])   # every group told as it stands
        took = watch.caught_up(timeout=900)
        out["catch_up_s"] = None if took is None else round(took, 2)
        out["catch_up_watch_cpu_s"] = round(watch.cpu_s(), 2)
        out["catch_up_rss_mb"] = round(watch.rss_mb()[0])
        out["commit_only_told"] = len(watch.told & set(by_kind["commits"]))
        # at rest before the churn: the metrics server builds its first scrape ahead once
        # the first looks are told (its CPU is the start's, not the churn's)
        settled, last = time.monotonic(), watch.cpu_s()
        while time.monotonic() - settled < 120:
            time.sleep(1)
            now = watch.cpu_s()
            if now - last < 0.2:
                break
            last = now
        out["at_rest_after_s"] = round(time.monotonic() - settled, 1)
        log_at = log.stat().st_size if log is not None else 0
        cpu0, t0 = watch.cpu_s(), time.monotonic()
        stop = threading.Event()
        churned = by_kind["classic"][: max(1, min(len(by_kind["classic"]), int(churn * 5)))]
        rounds = threading.Thread(target=lambda: asyncio.run(
            Fleet(bootstrap, TOPIC, PARTITIONS).churn(churned, churn, stop)), daemon=True)
        rounds.start()
        time.sleep(seconds)
        stop.set()
        rounds.join(60)
        t1 = time.monotonic()
        cpu1 = watch.cpu_s()
        out["steady_cpu_core"] = round((cpu1 - cpu0) / (t1 - t0), 3)
        out["rss_mb"], out["peak_rss_mb"] = (round(x) for x in watch.rss_mb())
        cpu_before = watch.cpu_s()
        scrapes = [scrape(watch.metrics_url()) for _ in range(3)]
        out["scrape_first_s"] = round(scrapes[0][0], 3)
        out["scrape_s"] = round(statistics.median(s[0] for s in scrapes[1:]), 3)
        out["scrape_watch_cpu_s"] = round(watch.cpu_s() - cpu_before, 3)
        out["scrape_gzip_mb"] = round(scrapes[-1][1] / 1e6, 2)
        out["scrape_text_mb"] = round(scrapes[-1][2] / 1e6, 2)
        out["rss_after_scrapes_mb"] = round(watch.rss_mb()[0])
        time.sleep(3)   # the last rounds' records reach the watch
        watch.read()
        told = {(e["group"], e.get("to_generation")) for at, e in watch.events
                if at >= t0 and e.get("event") == "rebalance" and e.get("group") in set(churned)}
        if log is not None:
            broker = broker_generations(log, set(churned), log_at)
            out["rounds_broker"] = len(broker)
            out["rounds_told"] = len(told & broker)
            out["rounds_told_not_in_broker_log"] = len(told - broker)
        else:
            out["rounds_told"] = len(told)
    finally:
        watch.stop()
    out["floor"] = console_floor(bootstrap, data_dir)
    for name, measure in (
            ("lag", lambda: lag_vs_librdkafka(bootstrap, by_kind["commits"] + by_kind["classic"],
                                              runs)),
            ("describe", lambda: describe_vs_peer(bootstrap, set(sum(by_kind.values(), [])),
                                                  runs)),
            ("describe_one", lambda: describe_one_vs_floor(bootstrap, by_kind["classic"][0],
                                                          max(runs, 9)))):
        if name in skip:
            out[name] = {"error": "skipped"}
            continue
        try:
            out[name] = measure()
        except Exception as exc:   # one figure failed: the others still printed
            out[name] = {"error": f"{type(exc).__name__}: {exc}"}
    out["load_after"] = os.getloadavg()
    return out


def table(r: dict) -> str:
    t, f, d, lag, one = TARGETS, r["floor"], r["describe"], r["lag"], r["describe_one"]
    if "error" in one:
        one = dict.fromkeys(("floor_ms", "table_ratio", "table_cpu_ratio", "json_ratio",
                             "json_cpu_ratio"), one["error"])
    if "error" in lag:
        lag = dict.fromkeys(("groupctl_s", "librdkafka_s", "ratio"), lag["error"])
    if "error" in d:
        d = dict.fromkeys(("wall_s", "cpu_s", "rss_mb", "peer_wall_s", "peer_cpu_s",
                           "peer_rss_mb", "ratio", "cpu_ratio"), d["error"])
    rows = [
        ("records watch catch-up", f"{r['catch_up_s']} s ({r['catch_up_watch_cpu_s']} s CPU; "
         f"member groups {r['catch_up_members_s']} s)", f"<= {t['catch_up_s']} s at 100k",
         f"console consumer {f['console_consumer_s']} s over {f['records']} records, "
         f"{f['offsets_topic_mb']} MB on disk read in {f.get('segments_read_s')} s"),
        ("commit-only groups told", f"{r['commit_only_told']}", "every group", ""),
        ("steady CPU (churn)", f"{r['steady_cpu_core'] * 100:.1f} % of a core",
         f"<= {t['cpu_core'] * 100:.0f} % at 100 rounds/s", ""),
        ("RSS (peak)", f"{r['rss_mb']} MB ({r['peak_rss_mb']} MB)", f"<= {t['rss_mb']:.0f} MB", ""),
        ("rounds told / broker", f"{r.get('rounds_told')} / {r.get('rounds_broker')}",
         "every round", f"told, not in the broker log: {r.get('rounds_told_not_in_broker_log')}"),
        ("scrape (per-group on)", f"{r['scrape_s']} s (first {r['scrape_first_s']} s), "
         f"{r['scrape_gzip_mb']} MB gzip ({r['scrape_text_mb']} MB text)",
         f"<= {t['scrape_s']} s", f"watch CPU over 3 scrapes {r['scrape_watch_cpu_s']} s"),
        ("lag round", f"{lag['groupctl_s']} s", "ratio vs librdkafka",
         f"AdminClient {lag['librdkafka_s']} s: ratio {lag['ratio']}"),
        ("describe --all", f"{d['wall_s']} s, {d['cpu_s']} s CPU, {d['rss_mb']} MB",
         f"<= {t['describe_ratio']}x kadm, RSS <= kadm's",
         f"kadm {d['peer_wall_s']} s, {d['peer_cpu_s']} s CPU, {d['peer_rss_mb']} MB: "
         f"{d['ratio']}x wall, {d['cpu_ratio']}x CPU"),
        ("describe one group", f"table {one['table_ratio']}x wall ({one['table_cpu_ratio']}x "
         f"CPU), json {one['json_ratio']}x ({one['json_cpu_ratio']}x)",
         f"<= {t['describe_one_ratio']}x the import floor",
         f"python -c 'import typer, rich, asyncio, ssl' {one['floor_ms']} ms"),
    ]
    head = (f"{r['groups']} groups; load {r['load_before'][0]:.1f} before, "
            f"{r['load_after'][0]:.1f} after, on {os.cpu_count()} cores")
    return head + "\n" + "\n".join(f"  {a:26} {b:44} {c:32} {d_}" for a, b, c, d_ in rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--groups", default="2000",
                    help="sizes, comma-separated (default 2000): each on a fresh lab")
    ap.add_argument("--churn", type=float, default=20, help="rounds a second (default 20)")
    ap.add_argument("--seconds", type=float, default=20, help="of churn (default 20)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("-b", "--bootstrap-server", help="use this cluster instead of a fresh lab")
    ap.add_argument("--broker-log", type=Path, help="with -b: its server.log (rounds counted)")
    ap.add_argument("--data-dir", type=Path, help="with -b: its log.dirs (bytes on disk)")
    ap.add_argument("--made", action="store_true",
                    help="with -b: the fleet is there already (an earlier run made it)")
    ap.add_argument("--skip", action="append", default=[], choices=("lag", "describe", "describe_one"),
                    help="leave this figure out (repeatable)")
    ap.add_argument("--per-group", choices=("all", "default"), default="all",
                    help="the watch's per-group series: every group (--metrics-regex '.*', "
                    "the default here) or the watch's default selection")
    args = ap.parse_args()
    sizes = [int(n) for n in args.groups.split(",")]
    if args.bootstrap_server and len(sizes) > 1:
        raise SystemExit("with -b: one size (a fleet is made once on a cluster)")
    build_peer(PEER)
    tables = []
    for size in sizes:
        if args.bootstrap_server:
            r = run(args.bootstrap_server, size, args.churn, args.seconds, args.runs,
                    args.broker_log, args.data_dir, args.made, frozenset(args.skip),
                    args.per_group)
        else:
            from groupctl.lab.cluster import throwaway

            with throwaway(f"bench-fleet-{uuid.uuid4().hex[:6]}") as lab:
                r = run(lab.bootstrap, size, args.churn, args.seconds, args.runs,
                        lab.log_file, Path(lab.nodes[0].data_dir), skip=frozenset(args.skip),
                        per_group=args.per_group)
        print(json.dumps(r), flush=True)
        tables.append(table(r))
        print(tables[-1], flush=True)
    if len(tables) > 1:
        print("\n" + "\n\n".join(tables))


if __name__ == "__main__":
    main()
