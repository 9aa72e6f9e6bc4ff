"""`groupctl history GROUP` end to end on a lab broker whose group partition holds COMMITS
offset commits (other groups' and the group's own) and the group's own records: the
issue's figure is <= 2 s for 1M commits and ~1,000 group records (commits are skipped on
their key type before anything else is decoded).

Workload: a throwaway lab broker with offsets.topic.num.partitions=1 (every group in one
partition); a classic group of one librdkafka consumer that rejoins ROUNDS times (two
GroupMetadata records a round, plus its commits); COMMITS offset commits written with
OffsetCommit by standalone committers (confluent-kafka Consumer.commit with explicit
offsets, 200 partitions a request). Then `python -m groupctl -o ndjson history GROUP`,
timed (wall, the minimum of --repeat runs); its generations must be the rounds'.

    .venv/bin/python bench/records_history.py [--commits 1000000] [--rounds 20]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--commits", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    from confluent_kafka import Consumer, TopicPartition

    from groupctl.lab.cluster import Lab
    from groupctl.lab.consumer import LabConsumer
    from groupctl.lab.workload import create_topic

    with tempfile.TemporaryDirectory(prefix="groupctl-bench-history-") as root:
        lab = Lab.up(name=f"bench-history-{os.getpid()}", root=root, tie_to_parent=True,
                     extra_config={"offsets.topic.num.partitions": "1"})
        try:
            topic, parts = "bench-history", 200
            create_topic(lab.bootstrap, topic, parts, 1, None)
            group = "bench-history-group"
            start = time.perf_counter()
            for _ in range(args.rounds):
                c = LabConsumer(lab.bootstrap, group, [topic]).start()
                c.wait_assigned(60)
                c.close()
            rounds_s = time.perf_counter() - start
            committer = Consumer({"bootstrap.servers": lab.bootstrap, "group.id": "bench-committer",
                                  "enable.auto.commit": False})
            start = time.perf_counter()
            for i in range(args.commits // parts):
                committer.commit(offsets=[TopicPartition(topic, p, i + 1) for p in range(parts)],
                                 asynchronous=False)
            committer.close()
            commit_s = time.perf_counter() - start
            print(f"{args.rounds} rounds in {rounds_s:.0f} s, {args.commits:,} commits in "
                  f"{commit_s:.0f} s")
            cmd = [sys.executable, "-m", "groupctl", "-b", lab.bootstrap, "--timeout", "120",
                   "-o", "ndjson", "history", group]
            best, out = None, None
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                proc = subprocess.run(cmd, capture_output=True, text=True, check=True)
                took = time.perf_counter() - t0
                best, out = min(best or took, took), proc
            gens = [json.loads(x)["generation"] for x in out.stdout.splitlines()
                    if json.loads(x)["event"] == "generation"]
            print(out.stderr.strip())
            print(f"history: {best:.2f} s wall (target <= 2 s), {len(gens)} generations "
                  f"(rounds {args.rounds}: {2 * args.rounds} expected with the empty ones)")
        finally:
            lab.down()


if __name__ == "__main__":
    main()
