"""`describe --all` at fleet scale against a compiled franz-go kadm peer, same broker, same run.

Set-up (on a fresh one-node lab, or on -b): one topic of 10 partitions with records, and
groups `fleet-gNNNNN` with committed offsets on every partition (Empty groups, as most of a
real fleet's groups are), topped up to each size asked. Then, per size, alternating the two
tools so that drift hits both alike, each a fresh process timed to its exit:

  groupctl -o json describe --all     (and -o ndjson, the streaming form)
  kadm-describe --all                 (../shared/peers/kadm-describe, built with Go: its README)

Reports per size and tool the median wall time and CPU time (user + sys: steadier than
wall on a busy machine), the largest max RSS (GNU time's %M),
and the ratio groupctl / kadm-describe of the medians. Targets (issue 22): ratio <= 2.0 at
2,000 and 20,000 groups; groupctl's max RSS <= 300 MB at 20,000. Every run's output is
checked (exit 0; every fleet group present).

    . .venv/bin/activate && python bench/describe_fleet.py [--sizes 2000,20000] [--runs 5]
                                          [-b HOST:PORT] [--peer PATH] [--before TREE]

Run it from outside a checkout (python -m puts the current directory first on sys.path):
`--before /path/to/main` times that tree's groupctl in the same alternation (its modules
byte-compiled first, as the timed tree's are: under PYTHONDONTWRITEBYTECODE=1 a stale .pyc
is recompiled on every run, 30-40 ms of a 2,000-group describe).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from installed import byte_compile_groupctl  # bench/installed.py

PARTITIONS = 10
TOPIC = "fleet-topic"
TIME = "/usr/bin/time"  # GNU time (Debian package `time`)
PEER = Path.home() / ".cache/groupctl-peers/kadm-describe"
PEER_SRC = Path(__file__).resolve().parents[2] / "shared/peers/kadm-describe"


def group_name(i: int) -> str:
    return f"fleet-g{i:05d}"


def groupctl_cmd() -> list[str]:
    script = Path(sys.executable).with_name("groupctl")
    return [str(script)] if script.exists() else [sys.executable, "-m", "groupctl"]


def run_measured(cmd: list[str], env: dict | None = None
                 ) -> tuple[float, float, float, int, str, str]:
    """(wall s, CPU s (user + sys), max RSS MB, exit code, stdout, stderr) of one fresh
    process. Its max RSS through /usr/bin/time (forked from a small process): a child
    forked from this Python starts with this process's pages in its high-water mark."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile("r") as rss:
        start = time.perf_counter()
        proc = subprocess.Popen([TIME, "-f", "%M", "-o", rss.name, *cmd], stdout=out,
                                stderr=err, stdin=subprocess.DEVNULL, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        max_kb = int(rss.read().split()[-1])
        return (wall, usage.ru_utime + usage.ru_stime, max_kb / 1024, proc.returncode,
                out.read().decode(), err.read().decode())


def ensure_groups(bootstrap: str, n: int) -> None:
    """Groups fleet-g00000 .. fleet-g{n-1} with offsets on every partition of TOPIC; only
    those missing are created (many commits in flight at once through the AdminClient)."""
    from confluent_kafka.admin import AdminClient

    from groupctl.lab.workload import create_topic, wait_topic

    create_topic(bootstrap, TOPIC, PARTITIONS, exist_ok=True)
    wait_topic(bootstrap, TOPIC, PARTITIONS)
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for _ in range(5):  # a commit the broker took before its offsets partition loaded: again
        listed = admin.list_consumer_groups().result(60)
        have = {g.group_id for g in listed.valid}
        missing = [group_name(i) for i in range(n) if group_name(i) not in have]
        if not missing:
            return
        _commit(bootstrap, admin, missing)
    raise SystemExit(f"bench: {len(missing)} groups could not be created")


def _commit(bootstrap: str, admin, missing: list[str]) -> None:
    from confluent_kafka import ConsumerGroupTopicPartitions, Producer, TopicPartition

    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for i in range(1000):
        producer.produce(TOPIC, b"x" * 20, partition=i % PARTITIONS)
    producer.flush(30)
    offsets = [TopicPartition(TOPIC, p, 10 + p) for p in range(PARTITIONS)]
    started, window = time.monotonic(), 500
    for i in range(0, len(missing), window):
        futures = []
        for name in missing[i:i + window]:
            futures += admin.alter_consumer_group_offsets(
                [ConsumerGroupTopicPartitions(name, offsets)]).values()
        for f in futures:
            f.result(120)
        print(f"  groups: {i + len(futures)}/{len(missing)} created "
              f"({time.monotonic() - started:.0f} s)", file=sys.stderr, flush=True)


def measure(bootstrap: str, n: int, runs: int, peer: Path, before: Path | None = None) -> dict:
    me = groupctl_cmd()
    envs: dict[str, dict] = {}
    tools = {
        "groupctl json": [*me, "-b", bootstrap, "--timeout", "120", "-o", "json", "describe",
                          "--all"],
        "groupctl ndjson": [*me, "-b", bootstrap, "--timeout", "120", "-o", "ndjson",
                            "describe", "--all"],
        "kadm-describe": [str(peer), "-b", bootstrap, "--all"],
    }
    if before is not None:  # the same command on another tree (PYTHONPATH), e.g. main
        tools["before json"] = tools["groupctl json"]
        envs["before json"] = dict(os.environ, PYTHONPATH=str(before))
    wanted = {group_name(i) for i in range(n)}
    walls: dict[str, list[float]] = {k: [] for k in tools}
    cpus: dict[str, list[float]] = {k: [] for k in tools}
    rss: dict[str, float] = {k: 0.0 for k in tools}
    for name, cmd in tools.items():  # warm the page cache and the broker
        run_measured(cmd, envs.get(name))
    for _ in range(runs):
        for name, cmd in tools.items():
            wall, cpu, mb, code, out, err = run_measured(cmd, envs.get(name))
            if code != 0:
                raise SystemExit(f"{name} failed ({code}): {err[-2000:]}")
            if name.endswith("ndjson"):
                seen = {json.loads(line)["group"] for line in out.splitlines() if line}
            else:
                seen = {g["group"] for g in json.loads(out)}
            if not wanted <= seen:
                raise SystemExit(f"{name}: {len(wanted - seen)} fleet groups missing")
            walls[name].append(wall)
            cpus[name].append(cpu)
            rss[name] = max(rss[name], mb)
    peer_s = statistics.median(walls["kadm-describe"])
    peer_cpu = statistics.median(cpus["kadm-describe"])
    out = {"groups": n}
    for name in tools:
        med = statistics.median(walls[name])
        out[name] = {"wall_s": round(med, 3), "min_s": round(min(walls[name]), 3),
                     "cpu_s": round(statistics.median(cpus[name]), 3),
                     "max_rss_mb": round(rss[name], 1), "ratio": round(med / peer_s, 2),
                     "cpu_ratio": round(statistics.median(cpus[name]) / peer_cpu, 2)}
    return out


def build_peer(peer: Path) -> None:
    if peer.exists():
        return
    go = "/usr/local/go/bin/go" if Path("/usr/local/go/bin/go").exists() else "go"
    peer.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([go, "build", "-o", str(peer), "."], cwd=PEER_SRC, check=True)


def run(bootstrap: str, sizes: list[int], runs: int, peer: Path,
        before: Path | None = None) -> list[dict]:
    results = []
    for n in sizes:
        ensure_groups(bootstrap, n)
        r = measure(bootstrap, n, runs, peer, before)
        print(json.dumps(r), flush=True)
        results.append(r)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="2000,20000",
                        help="group counts, comma-separated, ascending (topped up in turn)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--peer", type=Path, default=PEER)
    parser.add_argument("-b", "--bootstrap-server", help="use this cluster instead of a fresh lab")
    parser.add_argument("--before", type=Path, metavar="TREE",
                        help="also time groupctl from this checkout (PYTHONPATH=TREE)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    byte_compile_groupctl()
    if args.before is not None:
        byte_compile_groupctl(args.before)
    build_peer(args.peer)
    print(f"load: {os.getloadavg()}", flush=True)
    if args.bootstrap_server:
        results = run(args.bootstrap_server, sizes, args.runs, args.peer, args.before)
    else:
        from groupctl.lab.cluster import throwaway

        with throwaway("bench-fleet") as lab:
            results = run(lab.bootstrap, sizes, args.runs, args.peer, args.before)
    print(f"load: {os.getloadavg()}")
    for r in results:
        for name in [k for k in r if k.endswith("json")]:
            g = r[name]
            ok = g["ratio"] <= 2.0 and (r["groups"] < 20000 or g["max_rss_mb"] <= 300)
            print(f"{r['groups']:>6} groups  {name:16s} {g['wall_s']:6.2f} s  "
                  f"{g['max_rss_mb']:6.0f} MB  vs kadm {r['kadm-describe']['wall_s']:.2f} s "
                  f"{r['kadm-describe']['max_rss_mb']:.0f} MB  ratio {g['ratio']:.2f} "
                  f"(CPU {g['cpu_s']:.2f} s vs {r['kadm-describe']['cpu_s']:.2f} s: "
                  f"{g['cpu_ratio']:.2f}) "
                  f"({'meets' if ok else 'MISSES'} <= 2.0x, <= 300 MB at 20k)")


if __name__ == "__main__":
    main()
