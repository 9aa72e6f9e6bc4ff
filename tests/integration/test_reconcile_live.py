"""KIP-848 reconciliation member by member, told live by both observers through the one
story (observe/story/story.py + observe/story/convergence.py): the passive `groupctl watch` and the
probe's `join --watch`.

Scenario (lab broker, librdkafka consumers with group.protocol=consumer): consumers a and c
share 6 partitions; b joins. The broker's uniform assignor gives each 2, so a and c each
revoke one and b waits for both. a's revoke callback is held: it waits until the observer
has told a away from its target, then holds HOLD_S more. So the group stays Reconciling,
deterministically, and the broker's own ConsumerGroupDescribe, read raw at that moment,
says so. Then:

- the observer tells Reconciling -> Stable, each member's current vs target as it moves,
  and a `rebalance` once all are at their targets;
- a's reconciliation time (`reconciled_ms`) is at least the hold, and so is b's (b waits
  for a's partition); c's is short (it revoked at once) or null (no snapshot caught it);
- every member's last assignment equals its target and its consumer's own callbacks.
"""
from __future__ import annotations

import threading
import time

import pytest
from probe_support import ProbeThread
from test_probe_consumer import cg_describe, owned
from watch_support import WatchProcess

from groupctl.lab.consumer import LabConsumer, wait_balanced

pytestmark = pytest.mark.broker

HOLD_S = 4.0


class HeldRevoke(LabConsumer):
    """A consumer whose first revoke callback once `armed` waits until `seen` is set (the
    observer told this member away from its target), then holds HOLD_S more: a slow revoke
    (committing, flushing state) whose length is known."""

    def __post_init__(self):
        super().__post_init__()
        self.armed = threading.Event()
        self.seen = threading.Event()
        self.held: tuple[float, float] | None = None   # monotonic: hold start, end

    def _on_revoke(self, consumer, partitions):
        if partitions and self.armed.is_set() and self.held is None:
            self.seen.wait(60)
            start = time.monotonic()
            threading.Event().wait(HOLD_S)   # the slow revoke itself, not a synchronisation
            self.held = (start, time.monotonic())
        super()._on_revoke(consumer, partitions)


class Observer:
    """The passive watch (a process) or the probe (a thread), read the same way."""

    def __init__(self, kind: str, kafka, group: str):
        self.kind = kind
        if kind == "watch":
            self.obs = WatchProcess(kafka, group, "--interval", "0.2")
        else:
            self.obs = ProbeThread(kafka, group).start()

    @property
    def events(self) -> list[dict]:
        return list(self.obs.events)

    def wait(self, predicate, what: str, timeout: float = 40) -> dict:
        if self.kind == "watch":
            return self.obs.wait_event(predicate, timeout, what)[1]
        return self.obs.wait_event(predicate, timeout, what)

    def stop(self) -> None:
        if self.kind == "watch":
            assert self.obs.stop() == 0, self.obs.stderr()
        else:
            self.obs.stop()


def _tps(items) -> frozenset:
    return frozenset((i["topic"], p) for i in items or () for p in i["partitions"])


@pytest.mark.parametrize("kind", ["watch", "probe"])
def test_each_member_reconciles_on_its_own_time(kind, kafka, topic_factory, consumer_factory,
                                                unique_group):
    g = unique_group
    topic = topic_factory(6)
    every = [(topic, p) for p in range(6)]
    a = HeldRevoke(kafka.bootstrap, g, [topic], protocol="consumer", name=f"{g}-a").start()
    observer = None
    try:
        c = consumer_factory(g, topic, protocol="consumer", name=f"{g}-c")
        wait_balanced([a, c], every)
        observer = Observer(kind, kafka, g)
        observer.wait(lambda e: e["event"] == "state" and e["state"] == "Stable" or
                      e["event"] == "probe" and e["action"] == "acknowledged", "the first look")
        if kind == "probe":   # its own first snapshot (it tells itself joined)
            me = observer.obs.member_id
            observer.wait(lambda e: e["event"] == "member_joined" and e["member_id"] == me,
                          "the probe's first snapshot")
        start = len(observer.events)
        calls = {a.member_id: len(a.events), c.member_id: len(c.events)}
        a.armed.set()
        b = consumer_factory(g, topic, protocol="consumer", name=f"{g}-b")

        # a is told away from its target while its revoke callback is held
        away = observer.wait(lambda e: e["event"] == "assignment" and e["member_id"] == a.member_id
                             and "target" in e and _tps(e["target"]) != _tps(e["assigned"]),
                             "a away from its target")
        raw = cg_describe(kafka, g)          # the broker's word at the same time
        a.seen.set()
        assert raw["group_state"] == "Reconciling"
        (ra,) = [m for m in raw["members"] if m["member_id"] == a.member_id]
        assert owned(ra, "target_assignment") == _tps(away["target"])
        assert owned(ra) == _tps(away["assigned"]) == a.assignment   # still holding all 3
        assert len(owned(ra)) == 3 and owned(ra, "target_assignment") < owned(ra)
        assert ra["member_epoch"] < raw["assignment_epoch"]          # not acknowledged yet
        assert a.held is None   # still holding

        final = observer.wait(lambda e: e["event"] == "rebalance" and b.member_id in
                              (e.get("members_after") or ()), "the rebalance b joined", 60)
        wait_balanced([a, b, c], every)
        holds = {x.member_id: x.assignment for x in (a, b, c)}   # before a closes
        ended = time.time()
        assert a.held is not None and a.held[1] - a.held[0] >= HOLD_S
    finally:
        a.seen.set()
        if observer is not None:
            observer.stop()
        a.close()

    round_ = observer.events[start:]
    real = {a.member_id: a, b.member_id: b, c.member_id: c}
    probe = set(final["members_after"]) - set(real)
    assert probe == (set() if kind == "watch" else {me})

    # Reconciling -> Stable, the rebalance after it
    states = [(e["previous"], e["state"]) for e in round_ if e["event"] == "state"]
    assert ("Reconciling", "Stable") == states[-1] and states[0][1] in ("Assigning", "Reconciling")
    assert round_.index(final) > max(i for i, e in enumerate(round_) if e["event"] == "state"
                                     and e["state"] == "Reconciling")
    assert [e["member_id"] for e in round_ if e["event"] == "member_joined"] == [b.member_id]

    # each member's story: its last assignment is its target and its consumer's callbacks
    told = {}
    for e in round_:
        if e["event"] == "assignment" and "target" in e:
            told.setdefault(e["member_id"], []).append(e)
    assert set(told) == set(real)   # the probe's assignment never moved: nothing told
    for mid in real:
        last = told[mid][-1]
        assert _tps(last["assigned"]) == _tps(last["target"]) == holds[mid], mid
        assert final["assignments"][mid] == last["assigned"]
        assert len(holds[mid]) == 2
    # what each gave up and took, told as it happened, equals its callbacks in this round
    for mid, consumer in real.items():
        since = [e for e in consumer.events[calls.get(mid, 0):] if e.ts <= ended]
        for kind_, key in (("revoke", "revoked"), ("assign", "added")):
            assert frozenset().union(*(_tps(e[key]) for e in told[mid])) == frozenset().union(
                *(e.partitions for e in since if e.kind == kind_)), (mid, kind_)
    assert len(_tps(told[a.member_id][-1]["revoked"])) == 1 or sum(
        len(_tps(e["revoked"])) for e in told[a.member_id]) == 1

    # reconciliation times: a held its revoke HOLD_S after it was seen away; b waited for it
    ms = {mid: told[mid][-1]["reconciled_ms"] for mid in real}
    assert ms[a.member_id] >= HOLD_S * 1000, ms
    assert ms[b.member_id] >= HOLD_S * 1000, ms
    assert ms[c.member_id] is None or ms[c.member_id] < HOLD_S * 1000, ms
    assert all(e["reconciled_ms"] is None for e in told[a.member_id][:-1])   # steps before
