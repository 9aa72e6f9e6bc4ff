"""Shared by the coordinator-records tests: a workload of every kind of group whose records
the tests read back, and a snapshot of a lab's __consumer_offsets segment files.

    workload(lab, tag)     classic eager (range) and cooperative-sticky groups, a consumer
                           (KIP-848) group, a share group: each joins two members, then
                           one leaves; returns {kind: Run} with the groups and the
                           consumers' own assignment callbacks (LabConsumer.events)
    snapshot(lab, dest)    every __consumer_offsets-*/*.log of every node copied to dest
                           (a live segment is appended to: both decoders read the copy)
"""
from __future__ import annotations

import glob
import os
import shutil
from dataclasses import dataclass, field

from groupctl.lab.consumer import LabConsumer, wait_balanced
from groupctl.lab.workload import create_topic

PARTITIONS = 4


@dataclass
class Run:
    group: str
    topic: str
    consumers: list = field(default_factory=list)   # LabConsumers, closed


def _members(lab, group: str, topic: str, protocol: str, assignor: str | None) -> Run:
    run = Run(group, topic)
    tps = [(topic, p) for p in range(PARTITIONS)]
    for i in range(2):
        c = LabConsumer(lab.bootstrap, group, [topic], protocol=protocol, assignor=assignor,
                        name=f"{group}-{i + 1}").start()
        run.consumers.append(c)
        wait_balanced(run.consumers, tps, timeout=90)
    if protocol != "share":   # each commits what it consumed (auto commit; on close)
        from describe_support import produce

        produce(lab.bootstrap, topic, {p: 2 for p in range(PARTITIONS)})
        for c in run.consumers:
            c.wait_for(lambda c: c.messages > 0, 60, "a consumed message")
    run.consumers[1].close()
    wait_balanced(run.consumers[:1], tps, timeout=90)
    run.consumers[0].close()
    return run


def workload(lab, tag: str, share: bool = True) -> dict[str, Run]:
    topic = f"records-{tag}"
    create_topic(lab.bootstrap, topic, PARTITIONS, 1, None, exist_ok=True)
    runs = {
        "eager": _members(lab, f"rec-eager-{tag}", topic, "classic", "range"),
        "cooperative": _members(lab, f"rec-coop-{tag}", topic, "classic", "cooperative-sticky"),
        "consumer": _members(lab, f"rec-848-{tag}", topic, "consumer", None),
    }
    if share:
        from group_types_support import ShareMembers

        group = f"rec-share-{tag}"
        members = ShareMembers(lab.bootstrap, group, topic, n=2)
        try:
            _wait_share_members(lab, group, 2)
        finally:
            members.close()
        runs["share"] = Run(group, topic)
    return runs


def _wait_share_members(lab, group: str, n: int, timeout: float = 90) -> None:
    """Until Kafka's ShareGroupCommand lists `n` members with an assignment."""
    import time

    deadline = time.monotonic() + timeout
    last = ""
    while time.monotonic() < deadline:
        proc = lab.share_group_command("--describe", "--group", group, "--members")
        last = proc.stdout
        rows = [line for line in last.splitlines() if line.startswith(group)]
        if len(rows) >= n and all(":" in r for r in rows):
            return
        time.sleep(0.5)
    raise AssertionError(f"share group {group} never showed {n} members: {last}")


def snapshot(lab, dest: str) -> list[str]:
    """Copies of every __consumer_offsets segment of every node (dest/node-N/..-P/X.log)."""
    copies = []
    for node in lab.nodes:
        for path in sorted(glob.glob(os.path.join(node.data_dir, "__consumer_offsets-*", "*.log"))):
            target = os.path.join(dest, f"node-{node.node_id}", os.path.basename(os.path.dirname(path)))
            os.makedirs(target, exist_ok=True)
            shutil.copy(path, target)
            copies.append(os.path.join(target, os.path.basename(path)))
    return copies
