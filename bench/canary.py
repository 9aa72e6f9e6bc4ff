"""What the canary measures is what a client sees: its rounds vs librdkafka's own joins of
fresh groups on the same coordinator, in one run.

Per run, on the lab (a throwaway 1-node lab unless -b) and per protocol:

  canary      one `groupctl canary` round (coordinator/canary/rounds.run_round) of its own
              group, on a connected cluster: find_coordinator + join + sync (classic) or
              find_coordinator + join + reconcile (KIP-848), "to member" below, then the
              rest of the round (heartbeat, leave) for `round`.
  librdkafka  confluent_kafka.Consumer of a fresh group placed on the same coordinator
              (plan.place: the same partitionFor), subscribed to a one-partition topic:
              from Consumer() to the first on_assign callback ("to member": bootstrap,
              FindCoordinator, JoinGroup x2, SyncGroup; KIP-848: group.protocol=consumer,
              heartbeats until assigned), then close() ("round": to member + close).

librdkafka's "to member" includes its own bootstrap (a new client: Metadata, ApiVersions),
which the canary's round does not (its connections are open, as in a monitor); so a ratio
below 1 is expected of the connection reuse alone. The two alternate (canary first in even
runs) so drift hits both alike; medians and the ratios canary / librdkafka are printed.

    .venv/bin/python bench/canary.py [--runs 9] [-b HOST:PORT] [--protocol both]
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import time
import uuid

from groupctl.client import Cluster
from groupctl.clock import SYSTEM_CLOCK
from groupctl.coordinator.canary.plan import place
from groupctl.coordinator.canary.rounds import RoundSettings, run_round
from groupctl.coordinator.canary.runner import CanaryRunner, CanarySettings
from groupctl.lab.workload import create_topic

TO_MEMBER = {"classic": ("find_coordinator", "join", "sync"),
             "consumer": ("find_coordinator", "join", "reconcile")}


async def canary_round(cluster, runner: CanaryRunner, protocol: str) -> tuple[float, float]:
    c = next(c for c in runner.canaries if c.protocol == protocol)
    r = await run_round(cluster, c, RoundSettings(), SYSTEM_CLOCK)
    if not r.ok or r.round_ms is None:
        raise RuntimeError(f"canary round failed: {r.error} on {r.failed_step}")
    return sum(r.steps[s] or 0.0 for s in TO_MEMBER[protocol]), r.round_ms


def librdkafka_round(bootstrap: str, group: str, topic: str, protocol: str
                     ) -> tuple[float, float]:
    from confluent_kafka import Consumer

    config = {"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False}
    if protocol == "classic":
        config.update({"partition.assignment.strategy": "range", "session.timeout.ms": 10000})
    else:
        config["group.protocol"] = "consumer"
    assigned: list[float] = []
    start = time.perf_counter()
    consumer = Consumer(config)
    consumer.subscribe([topic], on_assign=lambda c, p: assigned.append(time.perf_counter()))
    while not assigned and time.perf_counter() < start + 30:
        consumer.poll(0.005)
    consumer.close()
    closed = time.perf_counter()
    if not assigned:
        raise RuntimeError("librdkafka consumer got no assignment in 30 s")
    return (assigned[0] - start) * 1000, (closed - start) * 1000


def measure(bootstrap: str, protocol: str, runs: int, topic: str) -> None:
    async def main() -> None:
        async with Cluster([bootstrap], timeout=30) as cluster:
            prefix = f"bench-canary-{uuid.uuid4().hex[:6]}-"
            runner = CanaryRunner(cluster, CanarySettings(prefix=prefix, protocols=(protocol,)))
            await runner.place()
            c = next(c for c in runner.canaries if c.protocol == protocol)
            led = {p for p, b in runner.leaders.items() if b == c.broker}
            canary_s: list[tuple[float, float]] = []
            rdkafka_s: list[tuple[float, float]] = []

            def fresh_group() -> str:   # a new group each run, on the canary's coordinator
                return place(f"bench-rdkafka-{uuid.uuid4().hex[:8]}-", protocol, c.broker, led,
                             len(runner.leaders)).group

            await canary_round(cluster, runner, protocol)   # warm-up, both sides
            await asyncio.to_thread(librdkafka_round, bootstrap, fresh_group(), topic, protocol)
            for i in range(runs):
                order = ("canary", "librdkafka") if i % 2 == 0 else ("librdkafka", "canary")
                for side in order:
                    if side == "canary":
                        canary_s.append(await canary_round(cluster, runner, protocol))
                    else:
                        rdkafka_s.append(await asyncio.to_thread(
                            librdkafka_round, bootstrap, fresh_group(), topic, protocol))
            cm = statistics.median(x for x, _ in canary_s)
            cr = statistics.median(y for _, y in canary_s)
            rm = statistics.median(x for x, _ in rdkafka_s)
            rr = statistics.median(y for _, y in rdkafka_s)
            print(f"[{protocol}] coordinator {c.broker}, runs {runs}: to member: canary median "
                  f"{cm:.1f} ms (min {min(x for x, _ in canary_s):.1f}), librdkafka median "
                  f"{rm:.1f} ms (min {min(x for x, _ in rdkafka_s):.1f}); ratio {cm / rm:.3f}")
            print(f"[{protocol}] whole round (leave / close included): canary median {cr:.1f} "
                  f"ms, librdkafka median {rr:.1f} ms; ratio {cr / rr:.3f}")

    asyncio.run(main())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("-b", "--bootstrap-server", default=None)
    ap.add_argument("--protocol", choices=("classic", "consumer", "both"), default="both")
    args = ap.parse_args()
    with contextlib.ExitStack() as stack:
        bootstrap = args.bootstrap_server
        if bootstrap is None:
            from groupctl.lab.cluster import throwaway

            lab = stack.enter_context(throwaway(f"bench-canary-{uuid.uuid4().hex[:6]}"))
            bootstrap = lab.bootstrap
        topic = f"bench-canary-{uuid.uuid4().hex[:8]}"
        create_topic(bootstrap, topic, 1, 1, None)
        for protocol in (["classic", "consumer"] if args.protocol == "both" else [args.protocol]):
            measure(bootstrap, protocol, args.runs, topic)


if __name__ == "__main__":
    main()
