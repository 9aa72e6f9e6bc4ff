"""What the passive watch costs and how late it tells a rebalance, same run.

latency  A classic group of 2 librdkafka consumers (range), watched at once by the passive
         Watcher (observe/watch.py, in-process, --interval 1 s and 0.2 s) and by the probe
         (join --watch's Probe, in-process, a member of the group). ROUNDS times a third
         consumer joins, then leaves; for each join: from the joiner's on_assign callback
         (its wall time) to the `rebalance` event that shows it among the members, for
         each observer. Reported as a distribution (min, median, p90, max) in ms; the
         probe's figure is the peer (it is told by the coordinator, not by polling).
cpu      GROUPS Empty groups (offsets committed by confluent-kafka's AdminClient), the
         Watcher with --all at 1 s for SECONDS; CPU seconds of this process per minute
         of watching (time.process_time; the broker's CPU is not counted).

    . .venv/bin/activate && python bench/watch.py [--rounds 20] [--groups 500]
                                                  [--seconds 60] [-b HOST:PORT]
                                                  [--only latency|cpu]

The cpu part's groups are named after a fixed topic (bench-watch-cpu-gNNNN) and committing
again is harmless, so runs on one cluster (-b) follow the same GROUPS groups: to compare two
trees, alternate `PYTHONPATH=TREE python bench/watch.py -b HOST:PORT --only cpu` between them.
"""
from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time

from groupctl.client import Cluster
from groupctl.coordinator.probe import Probe, ProbeSettings
from groupctl.lab.consumer import LabConsumer, wait_balanced
from groupctl.lab.workload import create_topic
from groupctl.observe.watch import Watcher, WatchSettings

PARTITIONS = 6


class Seen:
    """Rebalance events of one observer, with the wall time each arrived."""

    def __init__(self):
        self.events: list[tuple[float, dict]] = []

    def __call__(self, event: dict) -> None:
        if event["event"] == "rebalance":
            self.events.append((time.time(), event))

    async def first_with(self, member: str, after: float, timeout: float = 60) -> float:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            for at, e in self.events:
                if at >= after and member in (e.get("members_after") or ()):
                    return at
            await asyncio.sleep(0.01)
        raise SystemExit(f"bench: no rebalance with {member} within {timeout:g}s")


async def latency(bootstrap: str, rounds: int) -> dict[str, list[float]]:
    suffix = time.strftime("%H%M%S")
    topic = group = f"bench-watch-{suffix}"
    create_topic(bootstrap, topic, PARTITIONS)
    members = [LabConsumer(bootstrap, group, [topic], name=f"bench-{i}").start() for i in range(2)]
    observers = {"passive 1 s": (Seen(), 1.0), "passive 0.2 s": (Seen(), 0.2), "probe": (Seen(), None)}
    out: dict[str, list[float]] = {k: [] for k in observers}
    try:
        wait_balanced(members, [(topic, p) for p in range(PARTITIONS)])
        async with Cluster([bootstrap], timeout=30) as cluster:
            tasks = []
            for seen, interval in observers.values():
                if interval is None:
                    probe = Probe(cluster, ProbeSettings(group=group), emit=seen)
                    tasks.append(asyncio.create_task(probe.watch(duration_s=None)))
                else:
                    w = Watcher(cluster, WatchSettings(groups=[group], interval=interval), emit=seen)
                    tasks.append(asyncio.create_task(w.run()))
            await asyncio.sleep(5)  # the probe in, the watchers past their first look
            for i in range(rounds):
                joiner = LabConsumer(bootstrap, group, [topic], name=f"bench-joiner-{i}").start()
                await asyncio.to_thread(joiner.wait_assigned, 60)
                assigned_at = joiner.assigns()[-1].ts
                mid = joiner.member_id
                for name, (seen, _) in observers.items():
                    at = await seen.first_with(mid, assigned_at - 5)
                    out[name].append((at - assigned_at) * 1000)
                await asyncio.to_thread(joiner.close)
                await asyncio.sleep(2)
                print(f"round {i + 1}: " + ", ".join(f"{k} {v[-1]:.0f} ms" for k, v in out.items()),
                      flush=True)
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
    finally:
        for m in members:
            m.begin_close()
        for m in members:
            m.close()
    return out


def make_empty_groups(bootstrap: str, n: int, topic: str) -> list[str]:
    from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap})
    names = [f"{topic}-g{i:04d}" for i in range(n)]
    for name in names:  # one group per call (the API takes one)
        fut = admin.alter_consumer_group_offsets(
            [ConsumerGroupTopicPartitions(name, [TopicPartition(topic, 0, 1)])])
        for f in fut.values():
            f.result(30)
    return names


async def cpu(bootstrap: str, groups: int, seconds: float) -> float:
    topic = "bench-watch-cpu"
    create_topic(bootstrap, topic, 1, exist_ok=True)
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": bootstrap})
    p.produce(topic, b"x")
    p.flush(30)
    names = await asyncio.to_thread(make_empty_groups, bootstrap, groups, topic)
    seen: list[dict] = []
    async with Cluster([bootstrap], timeout=30) as cluster:
        w = Watcher(cluster, WatchSettings(all_groups=True, interval=1.0, duration=seconds),
                    emit=seen.append)
        started = time.process_time()
        await w.run()
        used = time.process_time() - started
    watched = sum(1 for g in names if g in w.stories)
    print(f"watched {watched} of {groups} groups (+{len(w.stories) - watched} others), "
          f"{len(seen)} events", flush=True)
    return used / seconds * 60


def dist(values: list[float]) -> str:
    v = sorted(values)
    p90 = v[min(len(v) - 1, int(round(0.9 * (len(v) - 1))))]
    return f"min {v[0]:.0f}  median {statistics.median(v):.0f}  p90 {p90:.0f}  max {v[-1]:.0f}"


async def run(bootstrap: str, rounds: int, groups: int, seconds: float,
              only: str | None = None) -> int:
    if only == "cpu":
        per_minute = await cpu(bootstrap, groups, seconds)
        print(f"\ncpu: {per_minute:.2f} CPU s per minute watching {groups} groups at 1 s (--all)")
        return 0
    lat = await latency(bootstrap, rounds)
    if only == "latency":
        print(f"\nlatency on_assign -> rebalance event, ms, over {rounds} joins:")
        for name, values in lat.items():
            print(f"  {name:14s} {dist(values)}")
        return 0
    per_minute = await cpu(bootstrap, groups, seconds)
    print(f"\nlatency on_assign -> rebalance event, ms, over {rounds} joins:")
    for name, values in lat.items():
        print(f"  {name:14s} {dist(values)}")
    probe = statistics.median(lat["probe"])
    for name in ("passive 1 s", "passive 0.2 s"):
        print(f"  ratio {name} / probe (medians)  {statistics.median(lat[name]) / probe:.2f}")
    print(f"\ncpu: {per_minute:.2f} CPU s per minute watching {groups} groups at 1 s (--all)")
    return 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-b", "--bootstrap-server")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--groups", type=int, default=500)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--only", choices=("latency", "cpu"))
    args = parser.parse_args(argv)
    if args.bootstrap_server:
        return asyncio.run(run(args.bootstrap_server, args.rounds, args.groups, args.seconds,
                               args.only))
    from groupctl.lab.cluster import throwaway

    with throwaway("bench-watch") as lab:
        return asyncio.run(run(lab.bootstrap, args.rounds, args.groups, args.seconds, args.only))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
