"""Wall time of `groupctl describe` against Kafka's ConsumerGroupCommand, same broker, same run.

Set-up (on a fresh one-node lab, or on -b): a topic with 10 partitions and 1,000 records,
a live group of 10 real librdkafka consumers that have committed offsets, and 200 more
groups with committed offsets on it (Empty groups, as `describe --all` meets them on a
real cluster). Then, alternating the two tools so that drift hits both alike:

  single   `groupctl -o json describe G`       vs  kafka-consumer-groups --describe --group G
  all      `groupctl -o json describe --all`   vs  kafka-consumer-groups --describe --all-groups
  help     `groupctl --help`                   (target: under 300 ms)

Each command runs as a user runs it: a fresh process, wall time to exit. The peer is
ConsumerGroupCommand from the lab's jars, started with the lab's tool JVM options and a
class-data-sharing archive (faster than the stock kafka-consumer-groups.sh). Reports the
median of RUNS and the ratio groupctl / ConsumerGroupCommand (< 1: groupctl is faster).
Targets (issue 3): single <= 0.20, all <= 0.33.

    . .venv/bin/activate && python bench/describe.py [--runs 5] [-b HOST:PORT]
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from groupctl.lab import dist
from groupctl.lab import tools
from installed import byte_compile_groupctl  # bench/installed.py
from groupctl.lab.consumer import LabConsumer, wait_balanced
from groupctl.lab.workload import create_topic, wait_topic

PARTITIONS = 10
MEMBERS = 10
EXTRA_GROUPS = 200
RECORDS = 1_000


def groupctl_cmd() -> list[str]:
    script = Path(sys.executable).with_name("groupctl")
    return [str(script)] if script.exists() else [sys.executable, "-m", "groupctl"]


def timed(cmd: list[str]) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    return time.perf_counter() - start, proc


def produce(bootstrap: str, topic: str) -> None:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for i in range(RECORDS):
        producer.produce(topic, value=b"x" * 20, partition=i % PARTITIONS)
    producer.flush(30)


def commit_groups(bootstrap: str, topic: str, groups: list[str]) -> None:
    """Committed offsets for `groups` without joining them (Empty groups with offsets)."""
    from confluent_kafka import Consumer, KafkaException, TopicPartition

    for group in groups:
        consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group,
                             "enable.auto.commit": False})
        offsets = [TopicPartition(topic, p, 10 + p) for p in range(PARTITIONS)]
        deadline = time.monotonic() + 60
        while True:  # a fresh lab's __consumer_offsets may still be loading
            try:
                consumer.commit(offsets=offsets, asynchronous=False)
                break
            except KafkaException:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)  # backoff before retrying, e.g. NOT_COORDINATOR
        consumer.close()


def start_live_group(bootstrap: str, topic: str, group: str) -> list[LabConsumer]:
    consumers = [LabConsumer(bootstrap, group, [topic], name=f"bench-{i}").start()
                 for i in range(MEMBERS)]
    wait_balanced(consumers, [(topic, p) for p in range(PARTITIONS)], timeout=120)
    return consumers


def measure(runs: int, ours: list[str], theirs: list[str], check) -> dict:
    """Alternate the two commands `runs` times; `check(ours_proc, theirs_proc)` validates."""
    mine, peer = [], []
    for _ in range(runs):
        t_ours, p_ours = timed(ours)
        t_theirs, p_theirs = timed(theirs)
        check(p_ours, p_theirs)
        mine.append(t_ours)
        peer.append(t_theirs)
    ours_s, theirs_s = statistics.median(mine), statistics.median(peer)
    return {"groupctl_s": round(ours_s, 3), "consumer_group_command_s": round(theirs_s, 3),
            "ratio": round(ours_s / theirs_s, 3)}


def cgc_cmd(libs: Path, bootstrap: str, *args: str) -> list[str]:
    cds_flags, _ = tools.cds_options(libs, "tool")
    return [dist.java_cmd(), *tools.TOOL_JVM_OPTS, *cds_flags, "-cp", tools.classpath(libs),
            tools.CONSUMER_GROUP_COMMAND, "--bootstrap-server", bootstrap, *args]


def _ok(p_ours, p_theirs) -> None:
    for name, proc in (("groupctl", p_ours), ("ConsumerGroupCommand", p_theirs)):
        if proc.returncode != 0:
            raise SystemExit(f"{name} failed ({proc.returncode}): {proc.stderr[-2000:]}")


def run(bootstrap: str, libs: Path, runs: int) -> dict:
    stamp = time.strftime("%H%M%S")
    topic, group = f"bench-describe-{stamp}", f"bench-live-{stamp}"
    create_topic(bootstrap, topic, PARTITIONS, exist_ok=True)
    wait_topic(bootstrap, topic, PARTITIONS)
    produce(bootstrap, topic)
    extra = [f"bench-empty-{stamp}-{i:03d}" for i in range(EXTRA_GROUPS)]
    commit_groups(bootstrap, topic, extra)
    consumers = start_live_group(bootstrap, topic, group)
    try:
        # warm both (CDS archive, page cache) before measuring
        timed(cgc_cmd(libs, bootstrap, "--describe", "--group", group))
        me = groupctl_cmd()

        def check_single(p_ours, p_theirs):
            _ok(p_ours, p_theirs)
            data = json.loads(p_ours.stdout)
            assert len(data[0]["members"]) == MEMBERS, data[0]["members"]

        def check_all(p_ours, p_theirs):
            _ok(p_ours, p_theirs)
            names = {g["group"] for g in json.loads(p_ours.stdout)}
            assert set(extra) <= names and group in names, len(names)

        results = {
            "single": measure(runs, [*me, "-b", bootstrap, "-o", "json", "describe", group],
                              cgc_cmd(libs, bootstrap, "--describe", "--group", group),
                              check_single),
            "all": measure(runs, [*me, "-b", bootstrap, "-o", "json", "describe", "--all"],
                           cgc_cmd(libs, bootstrap, "--describe", "--all-groups"), check_all),
        }
        help_times = [timed([*me, "--help"])[0] for _ in range(max(runs, 10))]
        results["help_s"] = round(statistics.median(help_times), 3)
        results["groups_on_cluster"] = EXTRA_GROUPS + 1
        return results
    finally:
        for c in consumers:
            c.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("-b", "--bootstrap-server", help="use this cluster instead of a fresh lab")
    args = parser.parse_args()
    byte_compile_groupctl()
    libs = Path(dist.kafka_libs())
    if args.bootstrap_server:
        results = run(args.bootstrap_server, libs, args.runs)
    else:
        from groupctl.lab.cluster import throwaway

        with throwaway("bench-describe") as lab:
            results = run(lab.bootstrap, libs, args.runs)
    print(json.dumps(results, indent=2))
    for key, target in (("single", 0.20), ("all", 0.33)):
        r = results[key]
        verdict = "meets" if r["ratio"] <= target else "MISSES"
        print(f"{key}: groupctl {r['groupctl_s']}s vs ConsumerGroupCommand "
              f"{r['consumer_group_command_s']}s -> ratio {r['ratio']} ({verdict} target {target})")
    print(f"groupctl --help: {results['help_s'] * 1000:.0f} ms (target < 300 ms)")


if __name__ == "__main__":
    main()
