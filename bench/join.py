"""Time to Stable membership: the groupctl probe vs a librdkafka consumer, same broker, same run.

Each round creates a fresh (empty) group for each side and measures, in this process,
from "start" (before the client connects to the cluster) to "a synced member of a Stable
generation":

  probe      Cluster bootstrap, DescribeGroups, FindCoordinator, JoinGroup (twice: KIP-394
             MEMBER_ID_REQUIRED), the leader's assignment (Metadata + range assignor),
             SyncGroup; stops when join_once has its result (before the leave).
  librdkafka confluent_kafka.Consumer created, subscribe(topic), poll until on_assign
             fires (librdkafka calls it after its SyncGroup); then close.

Both subscribe the same one-partition topic with the range assignor, so both do the same
protocol work. The two alternate (probe first in even rounds, librdkafka first in odd
ones) so drift hits both alike. Prints each side's median and the ratio probe/librdkafka
(target <= 1.0).

--protocol consumer (KIP-848; `both`, the default, runs classic then consumer): the probe
joins a fresh group with ConsumerGroupHeartbeat (epoch 0, subscribed to the topic), is
given the partition by the broker's assignor, reconciles, acknowledges, and takes one
ConsumerGroupDescribe for the epochs it prints; stops when join_once has its result. The
librdkafka consumer has group.protocol=consumer; stops at its on_assign.

    . .venv/bin/activate && python bench/join.py [--runs 9] [-b HOST:PORT] [--protocol P]
"""
from __future__ import annotations

import argparse
import asyncio
import statistics
import time
import uuid

from groupctl.client import Cluster
from groupctl.coordinator.probe import Probe, ProbeSettings
from groupctl.lab.workload import create_topic


def probe_join(bootstrap: str, topic: str, protocol: str = "classic") -> float:
    group = f"bench-probe-{uuid.uuid4().hex[:8]}"
    assignor = "range" if protocol == "classic" else None

    async def main() -> float:
        start = time.perf_counter()
        async with Cluster([bootstrap], timeout=30) as cluster:
            probe = Probe(cluster, ProbeSettings(group=group, topics=[topic], assignor=assignor,
                                                 protocol=protocol))
            await probe.join_once(deadline_s=30)
            return time.perf_counter() - start  # the leave afterwards is not counted

    elapsed = asyncio.run(main())
    return elapsed


def librdkafka_join(bootstrap: str, topic: str, protocol: str = "classic") -> float:
    from confluent_kafka import Consumer

    group = f"bench-rdkafka-{uuid.uuid4().hex[:8]}"
    assigned: list[float] = []
    config = {"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False}
    if protocol == "classic":
        config.update({"partition.assignment.strategy": "range", "session.timeout.ms": 10000,
                       "heartbeat.interval.ms": 1000})
    else:
        config["group.protocol"] = "consumer"
    start = time.perf_counter()
    consumer = Consumer(config)
    consumer.subscribe([topic], on_assign=lambda c, p: assigned.append(time.perf_counter()))
    deadline = start + 30
    while not assigned and time.perf_counter() < deadline:
        consumer.poll(0.01)
    consumer.close()
    if not assigned:
        raise RuntimeError("librdkafka consumer got no assignment in 30 s")
    return assigned[0] - start


def measure(bootstrap: str, topic: str, protocol: str, runs: int) -> None:
    probe_join(bootstrap, topic, protocol)  # warm-up: imports, __consumer_offsets leadership
    librdkafka_join(bootstrap, topic, protocol)
    probe_s, rdkafka_s = [], []
    for i in range(runs):
        sides = [(probe_join, probe_s), (librdkafka_join, rdkafka_s)]
        for fn, out in (sides if i % 2 == 0 else sides[::-1]):
            out.append(fn(bootstrap, topic, protocol))
    p, r = statistics.median(probe_s), statistics.median(rdkafka_s)
    print(f"[{protocol}] runs {runs}: probe median {p * 1000:.1f} ms "
          f"(min {min(probe_s) * 1000:.1f}), librdkafka median {r * 1000:.1f} ms "
          f"(min {min(rdkafka_s) * 1000:.1f})")
    print(f"[{protocol}] ratio probe/librdkafka = {p / r:.3f} (target <= 1.0)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("-b", "--bootstrap-server", default=None)
    ap.add_argument("--protocol", choices=("classic", "consumer", "both"), default="both")
    args = ap.parse_args()
    lab = None
    bootstrap = args.bootstrap_server
    if bootstrap is None:
        from groupctl.lab.cluster import Lab

        lab = Lab.up(name=f"bench-join-{uuid.uuid4().hex[:6]}", brokers=1)
        bootstrap = lab.bootstrap
    try:
        topic = f"bench-join-{uuid.uuid4().hex[:8]}"
        create_topic(bootstrap, topic, 1, 1, None)
        protocols = ["classic", "consumer"] if args.protocol == "both" else [args.protocol]
        for protocol in protocols:
            measure(bootstrap, topic, protocol, args.runs)
    finally:
        if lab is not None:
            lab.down()


if __name__ == "__main__":
    main()
