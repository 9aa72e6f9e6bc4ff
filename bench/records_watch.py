"""How late `watch --source records` tells a rebalance, against the describe watch at 1 s,
same run (issue 18's figure: median <= 100 ms; the describe watch at 1 s: ~800 ms).

A group of 2 librdkafka consumers (classic range by default; `--protocol consumer`: a
KIP-848 group) watched at once, in this process, by two Watchers (observe/watch.py): one
with the records source (long-poll Fetch of __consumer_offsets), one polling describe every
1 s. ROUNDS times a third consumer joins, then leaves; for each join: from the joiner's
on_assign callback (its wall time) to the `rebalance` event that shows it among the
members, per observer (the wall time the event reached the sink). Negative: the event came
first (the coordinator writes the record before it answers the member). Reported as a
distribution (min, median, p90, max) in ms and the ratio of the medians, with the machine's
load average before and after.

    PYTHONPATH=. .venv/bin/python bench/records_watch.py [--rounds 20]
                                        [--protocol classic|consumer] [-b HOST:PORT]
"""
from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path

from groupctl.client import Cluster
from groupctl.lab.consumer import LabConsumer, wait_balanced
from groupctl.lab.workload import create_topic
from groupctl.observe.watch import Watcher, WatchSettings

sys.path.insert(0, str(Path(__file__).resolve().parent))
from watch import PARTITIONS, Seen, dist  # noqa: E402  (bench/watch.py: the same observer)


async def latency(bootstrap: str, rounds: int, protocol: str) -> dict[str, list[float]]:
    suffix = time.strftime("%H%M%S")
    topic = group = f"bench-records-watch-{protocol}-{suffix}"
    create_topic(bootstrap, topic, PARTITIONS)
    members = [LabConsumer(bootstrap, group, [topic], protocol=protocol,
                           name=f"bench-{i}").start() for i in range(2)]
    observers = {"records": (Seen(), "records"), "describe 1 s": (Seen(), "describe")}
    out: dict[str, list[float]] = {k: [] for k in observers}
    try:
        wait_balanced(members, [(topic, p) for p in range(PARTITIONS)], timeout=120)
        async with Cluster([bootstrap], timeout=30) as cluster:
            tasks = [asyncio.create_task(Watcher(
                cluster, WatchSettings(groups=[group], interval=1.0, source=source),
                emit=seen).run()) for seen, source in observers.values()]
            await asyncio.sleep(5)  # both watchers past their first look
            for i in range(rounds):
                joiner = LabConsumer(bootstrap, group, [topic], protocol=protocol,
                                     name=f"bench-joiner-{i}").start()
                await asyncio.to_thread(joiner.wait_assigned, 120)
                assigned_at = joiner.assigns()[-1].ts
                mid = joiner.member_id
                for name, (seen, _) in observers.items():
                    at = await seen.first_with(mid, assigned_at - 5)
                    out[name].append((at - assigned_at) * 1000)
                await asyncio.to_thread(joiner.close)
                await asyncio.to_thread(wait_balanced, members,
                                        [(topic, p) for p in range(PARTITIONS)], 120)
                await asyncio.sleep(1.5)   # the describe watch past the leave
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


async def run(bootstrap: str, rounds: int, protocol: str) -> int:
    load_before = os.getloadavg()
    lat = await latency(bootstrap, rounds, protocol)
    load_after = os.getloadavg()
    print(f"\n{protocol} group, on_assign -> rebalance event, ms, over {rounds} joins:")
    for name, values in lat.items():
        print(f"  {name:14s} {dist(values)}")
    records, describe = (statistics.median(lat[k]) for k in ("records", "describe 1 s"))
    print(f"  median records {records:.0f} ms vs describe at 1 s {describe:.0f} ms "
          f"(difference {describe - records:.0f} ms)")
    print(f"load average (1, 5, 15 min) before {load_before}, after {load_after}; "
          f"{os.cpu_count()} CPUs")
    return 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-b", "--bootstrap-server")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--protocol", choices=["classic", "consumer"], default="classic")
    args = parser.parse_args(argv)
    if args.bootstrap_server:
        return asyncio.run(run(args.bootstrap_server, args.rounds, args.protocol))
    from groupctl.lab.cluster import throwaway

    with throwaway("bench-records-watch") as lab:
        return asyncio.run(run(lab.bootstrap, args.rounds, args.protocol))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
