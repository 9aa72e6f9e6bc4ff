"""Which canary groups to run: one per broker that coordinates groups, per protocol.

A broker coordinates the groups whose `__consumer_offsets` partition it leads; Kafka places
a group on partition `partitionFor(group)` = abs(String.hashCode(group)) % partitions
(observe.reads.model.coordinator_partition). So a canary of broker B is a group name with
B's canary prefix and a counter, the first counter whose partition B leads:

    groupctl-canary-classic-2-0, -1, -2, ...   until partitionFor lands on one of 2's

The search starts at 0 every time, so the same leaders give the same names run after run
(one group per broker and protocol, reused, never a new group per run). Classic and
KIP-848 canaries are separate groups: one group of each type, so neither converts the
other. Pure functions of Metadata; the round checks the placement with FindCoordinator.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping

from ...errors import GroupctlError
from ...observe.reads.model import coordinator_partition

PROTOCOLS = ("classic", "consumer")
DEFAULT_PREFIX = "groupctl-canary-"
MAX_TRIES = 1_000_000   # a broker leading one of 50 partitions is found in ~50 on average


@dataclass(frozen=True)
class Canary:
    """One canary group: its name, protocol, the broker it was placed on (`broker`) and
    its `__consumer_offsets` partition."""

    group: str
    protocol: str
    broker: int
    partition: int


def leaders(partition_leaders: Mapping[int, int | None]) -> dict[int, set[int]]:
    """{broker: the `__consumer_offsets` partitions it leads} (partitions without a leader
    are nobody's)."""
    out: dict[int, set[int]] = {}
    for partition, leader in partition_leaders.items():
        if leader is not None:
            out.setdefault(leader, set()).add(partition)
    return out


def group_name(prefix: str, protocol: str, broker: int, n: int) -> str:
    return f"{prefix}{protocol}-{broker}-{n}"


def place(prefix: str, protocol: str, broker: int, led: set[int], partitions: int) -> Canary:
    """The first canary name of `broker` whose partition it leads (see the module doc)."""
    if not led:
        raise ValueError(f"broker {broker} leads no partition of __consumer_offsets")
    for n in range(MAX_TRIES):
        name = group_name(prefix, protocol, broker, n)
        p = coordinator_partition(name, partitions)
        if p in led:
            return Canary(name, protocol, broker, p)
    raise GroupctlError(f"no canary name for broker {broker} in {MAX_TRIES} tries")


def plan(prefix: str, protocols: Iterable[str], partition_leaders: Mapping[int, int | None],
         kept: Iterable[Canary] = ()) -> list[Canary]:
    """The canaries for this placement of `__consumer_offsets`: per broker that leads a
    partition and per protocol, a canary on one of its partitions. A canary of `kept` stays
    while its broker still leads its partition, or leads none (it then follows its group
    to the new coordinator: the failover is what it measures); it is placed again when its
    broker leads partitions but no longer this one."""
    partitions = len(partition_leaders)
    led = leaders(partition_leaders)
    out: dict[tuple[int, str], Canary] = {}
    for c in kept:
        if c.protocol in protocols and (c.broker not in led or c.partition in led[c.broker]):
            out[(c.broker, c.protocol)] = c
    for broker in sorted(led):
        for protocol in protocols:
            if (broker, protocol) not in out:
                out[(broker, protocol)] = place(prefix, protocol, broker, led[broker],
                                                partitions)
    return sorted(out.values(), key=lambda c: (c.broker, PROTOCOLS.index(c.protocol)))
