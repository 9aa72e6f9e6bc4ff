"""One `watch --lag` round over many groups against a librdkafka peer, same broker, same run.

Set-up (a fresh one-node lab, or -b): a topic with 10 partitions and 1,000 records, and
GROUPS groups (default 500) with committed offsets on it (AdminClient
alter_consumer_group_offsets: Empty groups with offsets, no consumer started).

  groupctl  observe.sources.lag.fetch_lag(all groups): FindCoordinator batched, OffsetFetch for
            up to 200 groups per request, one Metadata, ListOffsets per leader
  peer      librdkafka's AdminClient (confluent-kafka), what a Python lag exporter on it
            does: list_consumer_group_offsets per group (its API takes one group per
            request; WINDOW in flight at once: a fleet's all at once time out in its
            queue), then one list_offsets(latest) for the partitions

Both run in this process on warm clients (connections open: the monitor's steady state),
alternating so that drift hits both alike; each round's figures are checked equal. Reports
the median of RUNS, the ratio groupctl / peer (< 1: groupctl is faster), and the load
average it ran under (the machine is shared: rerun on a quiet one for a figure to quote).

    PYTHONPATH=. python bench/lag.py [--groups 500] [--runs 7] [-b HOST:PORT]
"""
from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import statistics
import time

PARTITIONS = 10
RECORDS = 1_000
WINDOW = 1_000   # the peer's requests in flight at once


def setup(bootstrap: str, topic: str, groups: list[str]) -> None:
    from confluent_kafka import ConsumerGroupTopicPartitions, Producer, TopicPartition
    from confluent_kafka.admin import AdminClient

    from groupctl.lab.workload import create_topic

    create_topic(bootstrap, topic, PARTITIONS, 1, None, exist_ok=True)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for i in range(RECORDS):
        producer.produce(topic, value=b"x" * 20, partition=i % PARTITIONS)
    assert producer.flush(30) == 0
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for i, group in enumerate(groups):   # lags differ from group to group
        offsets = [TopicPartition(topic, p, (i + p) % 100) for p in range(PARTITIONS)]
        deadline = time.monotonic() + 60
        while True:   # a fresh lab's __consumer_offsets may still be loading
            try:
                admin.alter_consumer_group_offsets(
                    [ConsumerGroupTopicPartitions(group, offsets)])[group].result(30)
                break
            except Exception:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)


class Peer:
    def __init__(self, bootstrap: str, timeout: float = 30, window: int = WINDOW):
        from confluent_kafka.admin import AdminClient

        self.admin = AdminClient({"bootstrap.servers": bootstrap})
        self.timeout = timeout   # per request
        self.window = window     # requests in flight at once

    def committed(self, groups: list[str]) -> dict[str, dict[tuple[str, int], int]]:
        """Each group's committed offsets, one request a group (the API's), at most
        `window` in flight: a fleet's all at once (90,000) queue up in librdkafka past
        any timeout, which is no figure of it."""
        from concurrent.futures import FIRST_COMPLETED, wait

        from confluent_kafka import ConsumerGroupTopicPartitions

        out: dict[str, dict[tuple[str, int], int]] = {}
        pending: dict = {}
        left = iter(groups)

        def send(g: str) -> None:
            pending[self.admin.list_consumer_group_offsets(
                [ConsumerGroupTopicPartitions(g)], request_timeout=self.timeout)[g]] = g

        for g in itertools.islice(left, self.window):
            send(g)
        while pending:
            done, _ = wait(list(pending), return_when=FIRST_COMPLETED)
            for f in done:
                g = pending.pop(f)
                out[g] = {(tp.topic, tp.partition): tp.offset
                          for tp in f.result().topic_partitions if tp.offset >= 0}
                nxt = next(left, None)
                if nxt is not None:
                    send(nxt)
        return out

    def lags(self, groups: list[str]) -> dict[str, int]:
        from confluent_kafka import TopicPartition
        from confluent_kafka.admin import OffsetSpec

        committed = self.committed(groups)
        wanted = {tp for c in committed.values() for tp in c}
        ends = self.admin.list_offsets({TopicPartition(t, p): OffsetSpec.latest()
                                        for t, p in wanted}, request_timeout=self.timeout)
        log_end = {(tp.topic, tp.partition): f.result().offset for tp, f in ends.items()}
        return {g: sum(max(0, log_end[tp] - off) for tp, off in c.items())
                for g, c in committed.items()}


async def ours(cluster, groups: list[str]) -> dict[str, int]:
    from groupctl.observe.sources.lag import fetch_lag

    lags = await fetch_lag(cluster, groups, deadline=cluster.deadline(60))
    return {g: lag.total or 0 for g, lag in lags.items()}


def run(bootstrap: str, n: int, runs: int) -> dict:
    from groupctl.client import Cluster

    topic = "bench-lag"
    groups = [f"bench-lag-{i:05d}" for i in range(n)]
    setup(bootstrap, topic, groups)
    peer = Peer(bootstrap)
    mine, theirs = [], []

    async def main():
        async with Cluster(bootstrap.split(","), timeout=60) as cluster:
            await ours(cluster, groups)   # warm: connections, coordinators
            peer.lags(groups)
            for _ in range(runs):
                start = time.perf_counter()
                a = await ours(cluster, groups)
                mine.append(time.perf_counter() - start)
                start = time.perf_counter()
                b = peer.lags(groups)
                theirs.append(time.perf_counter() - start)
                assert a == b, "groupctl and librdkafka disagree on the lag"
    asyncio.run(main())
    m, t = statistics.median(mine), statistics.median(theirs)
    return {"groups": n, "runs": runs, "groupctl_s": round(m, 4), "librdkafka_admin_s": round(t, 4),
            "ratio": round(m / t, 3), "load_average": os.getloadavg()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", type=int, default=500)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("-b", "--bootstrap-server", help="use this cluster instead of a fresh lab")
    args = parser.parse_args()
    if args.bootstrap_server:
        result = run(args.bootstrap_server, args.groups, args.runs)
    else:
        from groupctl.lab.cluster import throwaway

        with throwaway("bench-lag") as lab:
            result = run(lab.bootstrap, args.groups, args.runs)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
