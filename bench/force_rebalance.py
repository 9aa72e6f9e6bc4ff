"""What a forced rebalance costs a group, against the same group's natural rebalance when a
consumer joins, same run.

Set-up (on a fresh one-node lab, or on -b): a topic with 6 partitions and a classic group of
3 real librdkafka consumers (--assignor, default range; heartbeat interval 1 s, as the
lab's consumers use). Then, alternating the two so that drift hits both alike, ROUNDS times:

  natural  a 4th librdkafka consumer starts; time from its start() to the first
           DescribeGroups that shows the group Stable with 4 members. Then it leaves again
           (that rebalance is not measured) and the group is Stable with 3.
  forced   groupctl's force-rebalance driver (the code behind the command, in-process, so
           no interpreter start-up is counted); time from its call to its return, which is
           the first snapshot that shows the group Stable again with its 3 members.

Both are observed the same way (the group polled every 20 ms), and both include the
joiner's own set-up (FindCoordinator, connections, the MEMBER_ID_REQUIRED round).
Reports each round, the medians and the ratio forced / natural. Target (issue 9): <= 1.2,
forcing costs no more than a member joining.

--protocol consumer: the same with a consumer (KIP-848) group of 3 librdkafka consumers
with group.protocol=consumer (the broker's uniform assignor). natural: a 4th such consumer
starts; time to the first ConsumerGroupDescribe showing the group Stable with 4 members
and its assignment epoch caught up with a group epoch past the one before. forced: the
driver (a transient ConsumerMember joins and leaves, which bumps the group epoch) until it
returns, which is the first snapshot of the same condition with the 3 members.

    . .venv/bin/activate && python bench/force_rebalance.py [--rounds 7] [-b HOST:PORT]
        [--protocol classic|consumer]
"""
from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time

from groupctl.client import Cluster
from groupctl.coordinator.steer.force_rebalance import force_rebalance
from groupctl.lab.consumer import LabConsumer, wait_balanced
from groupctl.lab.workload import create_topic
from groupctl.coordinator.steer.common import STABLE_POLL_S
from groupctl.observe.reads.snapshot import group_snapshot
from groupctl.observe.sources.poller import DescribePoller, looks

PARTITIONS = 6
POLL_S = 0.02


def settled(desc, members: int, past_epoch: int | None) -> bool:
    """Stable with `members` members; a consumer group also with its assignment epoch caught
    up with a group epoch past `past_epoch` (the assignor ran and every member reconciled)."""
    if desc is None or desc.state != "Stable" or len(desc.members) != members:
        return False
    if desc.type != "consumer":
        return True
    return (desc.group_epoch is not None and desc.assignment_epoch == desc.group_epoch
            and desc.group_epoch > (past_epoch if past_epoch is not None else -1))


async def until_stable(cluster, group: str, members: int, timeout: float = 60.0,
                       past_epoch: int | None = None) -> float:
    """Poll until the group is settled (above) with `members` members; the monotonic time
    seen."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        desc = await group_snapshot(cluster, group)
        if settled(desc, members, past_epoch):
            return time.monotonic()
        await asyncio.sleep(POLL_S)
    raise SystemExit(f"bench: {group} not Stable with {members} members within {timeout:g}s")


def consumer_kwargs(protocol: str, assignor: str) -> dict:
    return {"protocol": "consumer"} if protocol == "consumer" else {"assignor": assignor}


async def natural(cluster, bootstrap: str, group: str, topic: str, assignor: str,
                  protocol: str) -> float:
    before = await group_snapshot(cluster, group)
    start = time.monotonic()
    joiner = LabConsumer(bootstrap, group, [topic], name="bench-joiner",
                         **consumer_kwargs(protocol, assignor)).start()
    try:
        end = await until_stable(cluster, group, 4, past_epoch=before.group_epoch)
    finally:
        await asyncio.to_thread(joiner.close)
    await until_stable(cluster, group, 3)
    return end - start


async def forced(cluster, group: str, trips: list[float]) -> float:
    """The forced rebalance's time to settled; appends the time from its "joining" phase to
    its "left" phase (groupctl's own join-and-leave round, without the wait) to `trips`."""
    before = await group_snapshot(cluster, group)
    phases: dict[str, float] = {}
    start = time.monotonic()
    report = await force_rebalance(cluster, before, "groupctl force-rebalance: bench",
                                   snapshot=looks(DescribePoller(
                                       cluster, [group], interval=STABLE_POLL_S,
                                       types={group: before.type}, deadline=cluster.deadline(60))),
                                   deadline=60,
                                   on_phase=lambda name, info: phases.setdefault(
                                       name, time.monotonic()))
    end = time.monotonic()
    clean = report.same_members and (
        # KIP-848: the transient member's join and its leave each bump the epoch
        report.group_epoch_after == before.group_epoch + 2 and not report.moved_partitions
        if before.type == "consumer" else report.new_generations == 1)
    if not clean:
        raise SystemExit(f"bench: the forced rebalance was not one clean generation "
                         f"(or join + leave epoch bumps): {report.to_dict()}")
    trips.append(phases["left"] - phases["joining"])
    return end - start


async def run(bootstrap: str, rounds: int, assignor: str, protocol: str = "classic") -> int:
    suffix = time.strftime("%H%M%S")
    topic, group = f"bench-fr-{suffix}", f"bench-fr-{suffix}"
    create_topic(bootstrap, topic, PARTITIONS)
    members = [LabConsumer(bootstrap, group, [topic], name=f"bench-{i}",
                           **consumer_kwargs(protocol, assignor)).start() for i in range(3)]
    try:
        wait_balanced(members, [(topic, p) for p in range(PARTITIONS)])
        results: dict[str, list[float]] = {"natural": [], "forced": []}
        trips: list[float] = []
        async with Cluster([bootstrap], timeout=30) as cluster:
            await until_stable(cluster, group, 3)
            for i in range(rounds):
                order = ("natural", "forced") if i % 2 == 0 else ("forced", "natural")
                for kind in order:
                    took = await (natural(cluster, bootstrap, group, topic, assignor, protocol)
                                  if kind == "natural" else forced(cluster, group, trips))
                    results[kind].append(took)
                print(f"round {i + 1}: natural {results['natural'][-1] * 1000:.0f} ms, "
                      f"forced {results['forced'][-1] * 1000:.0f} ms", flush=True)
    finally:
        for m in members:
            m.begin_close()
        for m in members:
            m.close()
    nat, frc = (statistics.median(results[k]) for k in ("natural", "forced"))
    ratio = frc / nat
    kind = "consumer protocol (KIP-848)" if protocol == "consumer" else assignor
    print(f"\nmedian over {rounds} rounds ({kind}, 3 librdkafka consumers, "
          f"{PARTITIONS} partitions):")
    print(f"  natural rebalance (a consumer joins) {nat * 1000:.0f} ms")
    print(f"  forced rebalance (force-rebalance)   {frc * 1000:.0f} ms")
    print(f"  ratio forced / natural               {ratio:.2f}   (target <= 1.2)")
    print(f"  groupctl's own join+leave (joining -> left phase) "
          f"{statistics.median(trips) * 1000:.1f} ms")
    return 0 if ratio <= 1.2 else 1


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-b", "--bootstrap-server")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--assignor", default="range", help="classic groups' assignor")
    parser.add_argument("--protocol", choices=("classic", "consumer"), default="classic",
                        help="the group's protocol (consumer: KIP-848, group.protocol=consumer)")
    args = parser.parse_args(argv)
    if args.bootstrap_server:
        return asyncio.run(run(args.bootstrap_server, args.rounds, args.assignor,
                               args.protocol))
    from groupctl.lab.cluster import throwaway

    with throwaway("bench-force-rebalance") as lab:
        return asyncio.run(run(lab.bootstrap, args.rounds, args.assignor, args.protocol))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
