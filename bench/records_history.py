"""`groupctl history GROUP` end to end on a lab broker whose group partition holds COMMITS
offset commits and GROUP_RECORDS of the group's own records: the issue's figure is <= 2 s
for 1M commits and 1,000 group records.

Workload (a throwaway lab broker with offsets.topic.num.partitions=1: every group in one
partition): a KIP-848 consumer group GROUP (librdkafka, group.protocol=consumer) whose
members join and leave in rounds of three until the partition holds GROUP_RECORDS records
that are not offset commits (epoch bumps, member metadata, target and current
assignments, their tombstones); COMMITS offset commits of the same group (the worst case:
every commit key names the group) written in four chunks between the rounds, with
OffsetCommit by a standalone committer (confluent-kafka Consumer.commit with explicit
offsets, 200 partitions a request, while the group is empty).

Timed: `python -m groupctl -o ndjson history GROUP` (wall, the best of --repeat), beside two
floors measured in the same run: `python -m groupctl --version` (interpreter start and
imports) and kafka-console-consumer reading the same partition to its end (Kafka's own
client, JVM start included, printing nothing: a peer that reads the same bytes). Its
group epochs must be the broker log's "Bumped group epoch" lines.

    .venv/bin/python bench/records_history.py [--commits 1000000] [--group-records 1000]
    .venv/bin/python bench/records_history.py --serve          # build, print, keep the lab
    .venv/bin/python bench/records_history.py --bootstrap B     # time an existing load
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

GROUP = "bench-history-group"
COMMIT_TOPIC, COMMIT_PARTS = "bench-history", 200
CHURN_TOPIC = "bench-history-in"
CHUNKS = 4


def partition_end(bootstrap: str) -> int:
    from confluent_kafka import Consumer, KafkaException, TopicPartition

    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "bench-history-watermark"})
    try:
        return c.get_watermark_offsets(TopicPartition("__consumer_offsets", 0), timeout=30)[1]
    except KafkaException:   # no group yet: the topic is created with the first one
        return 0
    finally:
        c.close()


def churn(bootstrap: str, records: int, commits_so_far: int) -> int:
    """Rounds of three KIP-848 members joining and leaving until the partition holds
    `records` group records (its end offset less the commits); returns the rounds."""
    from groupctl.lab.consumer import LabConsumer, wait_balanced

    tps = [(CHURN_TOPIC, p) for p in range(6)]
    rounds = 0
    while partition_end(bootstrap) - commits_so_far < records:
        members = [LabConsumer(bootstrap, GROUP, [CHURN_TOPIC], protocol="consumer",
                               name=f"bench-history-{rounds}-{i}").start() for i in range(3)]
        wait_balanced(members, tps, timeout=90)
        for m in members:
            m.begin_close()
        for m in members:
            m.close()
        rounds += 1
    return rounds


def commit(bootstrap: str, commits: int, first: int) -> None:
    from confluent_kafka import Consumer, TopicPartition

    committer = Consumer({"bootstrap.servers": bootstrap, "group.id": GROUP,
                          "enable.auto.commit": False})
    try:
        for i in range(commits // COMMIT_PARTS):
            committer.commit(offsets=[TopicPartition(COMMIT_TOPIC, p, first + i + 1)
                                      for p in range(COMMIT_PARTS)], asynchronous=False)
    finally:
        committer.close()


def build(bootstrap: str, commits: int, group_records: int) -> None:
    from groupctl.lab.workload import create_topic

    create_topic(bootstrap, COMMIT_TOPIC, COMMIT_PARTS, 1, None, exist_ok=True)
    create_topic(bootstrap, CHURN_TOPIC, 6, 1, None, exist_ok=True)
    start, rounds, per_chunk = time.perf_counter(), 0, commits // CHUNKS
    for chunk in range(CHUNKS):
        rounds += churn(bootstrap, group_records * (chunk + 1) // CHUNKS, per_chunk * chunk)
        commit(bootstrap, per_chunk, per_chunk * chunk)
    end = partition_end(bootstrap)
    print(f"built in {time.perf_counter() - start:.0f} s: {rounds} rounds of 3 members, "
          f"{per_chunk * CHUNKS:,} commits; partition end offset {end:,} "
          f"({end - per_chunk * CHUNKS:,} records that are not commits)")


CPU: dict[str, float] = {}   # command -> CPU seconds (user + sys) of its fastest run


def best_of(cmd: list[str], repeat: int, env=None) -> tuple[float, subprocess.CompletedProcess]:
    """The best wall time of `repeat` runs (and its CPU time in CPU, which a loaded
    machine inflates far less than the wall time)."""
    import resource

    best, out = None, None
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
        took = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if proc.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)}: exit {proc.returncode}\n{proc.stderr}")
        if best is None or took < best:
            best, out = took, proc
            CPU[cmd[-1]] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    assert best is not None and out is not None
    return best, out


def time_history(bootstrap: str, repeat: int, log_files=()) -> None:
    py = [sys.executable, "-m", "groupctl"]
    startup, _ = best_of(py + ["--version"], repeat)
    took, out = best_of(py + ["-b", bootstrap, "--timeout", "120", "-o", "ndjson", "history",
                              GROUP], repeat)
    events = [json.loads(x) for x in out.stdout.splitlines()]
    epochs = sorted({e["group_epoch"] for e in events if e["event"] == "epoch"})
    print(out.stderr.strip())
    peer = console_consumer(bootstrap, repeat)
    print(f"load: {os.getloadavg()[0]:.2f} (1 min), {os.cpu_count()} cores")
    print(f"history: {took:.2f} s wall (target <= 2 s), {CPU[GROUP]:.2f} s CPU, "
          f"{len(events):,} events, {len(epochs)} group epochs")
    print(f"  floors in this run: groupctl --version {startup:.2f} s wall "
          f"({CPU['--version']:.2f} s CPU); kafka-console-consumer reading the partition to "
          f"its end {peer:.2f} s (history/console ratio {took / peer:.2f})")
    if log_files:
        text = "".join(open(p).read() for p in log_files)
        logged = sorted(int(n) for n in re.findall(
            rf"\[GroupId {re.escape(GROUP)}\] Bumped group epoch to (\d+)", text))
        print(f"  group epochs = the broker log's Bumped lines: {epochs == logged} "
              f"({len(logged)} lines)")


def console_consumer(bootstrap: str, repeat: int) -> float:
    """Kafka's console consumer over __consumer_offsets-0 from the start to the end
    offset, output discarded: the same bytes read by Kafka's own Java client."""
    from groupctl.lab.dist import java_cmd, kafka_libs

    end = partition_end(bootstrap)
    cmd = [java_cmd(), "-Xmx512m", "-cp", f"{kafka_libs()}/*",
           "org.apache.kafka.tools.consumer.ConsoleConsumer", "--bootstrap-server", bootstrap,
           "--topic", "__consumer_offsets", "--partition", "0", "--offset", "earliest",
           "--max-messages", str(end), "--consumer-property", "exclude.internal.topics=false",
           "--consumer-property", "fetch.max.bytes=16777216",
           "--consumer-property", "max.partition.fetch.bytes=16777216",
           "--formatter", "org.apache.kafka.tools.consumer.NoOpMessageFormatter"]
    took, _ = best_of(cmd, repeat)
    return took


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--commits", type=int, default=1_000_000)
    ap.add_argument("--group-records", type=int, default=1_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--serve", action="store_true",
                    help="after building, print the bootstrap and keep the lab until stdin closes")
    ap.add_argument("--bootstrap", help="time an existing load (built by --serve)")
    args = ap.parse_args()
    if args.bootstrap:
        time_history(args.bootstrap, args.repeat)
        return
    from groupctl.lab.cluster import Lab

    with tempfile.TemporaryDirectory(prefix="groupctl-bench-history-") as root:
        lab = Lab.up(name=f"bench-history-{os.getpid()}", root=root, tie_to_parent=True,
                     extra_config={"offsets.topic.num.partitions": "1"})
        try:
            build(lab.bootstrap, args.commits, args.group_records)
            time_history(lab.bootstrap, args.repeat, lab.log_files)
            if args.serve:
                print(f"serving: --bootstrap {lab.bootstrap} (close stdin to stop)", flush=True)
                sys.stdin.read()
        finally:
            lab.down()


if __name__ == "__main__":
    main()
