"""LabConsumer: a real librdkafka consumer (confluent-kafka) that records its rebalance
callbacks; tests use it as ground truth, `groupctl lab workload` runs several:

    c = LabConsumer(bootstrap, "g", ["t"]).start()
    c.wait_assigned(timeout=30)
    c.assignment           # frozenset of (topic, partition), as the callbacks left it
    c.events               # every assign / revoke / lost callback, timestamped
    c.close()              # leaves the group (LeaveGroup), waits for the thread

Each LabConsumer owns its confluent_kafka.Consumer on its own thread: poll(), the
rebalance callbacks and close() all run there (a Consumer is not safe to share between
threads); other threads read the recorded state under a lock.
"""
from __future__ import annotations

import datetime as _dt
import itertools
import json
import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from ..errors import DeadlineError, LabError, UsageError
from .librdkafka import JoinAnswers, group_generation

PROTOCOLS = ("classic", "consumer")
ASSIGNORS = ("range", "roundrobin", "cooperative-sticky")
TP = tuple  # (topic, partition)
_ids = itertools.count(1)


def _iso(ts: float) -> str:
    return (_dt.datetime.fromtimestamp(ts, _dt.timezone.utc)
            .isoformat(timespec="milliseconds").replace("+00:00", "Z"))


def tp_list(tps: Iterable[TP]) -> list[dict]:
    """[(t, p), ...] as docs/reference/json-fields.md's [{"topic": t, "partitions": [...]}], sorted."""
    by_topic: dict[str, list[int]] = {}
    for t, p in sorted(tps):
        by_topic.setdefault(t, []).append(p)
    return [{"topic": t, "partitions": ps} for t, ps in by_topic.items()]


def tp_text(tps: Iterable[TP]) -> str:
    return ",".join(f"{t}-{p}" for t, p in sorted(tps)) or "-"


@dataclass(frozen=True)
class RebalanceEvent:
    """One rebalance callback as the consumer saw it."""

    ts: float                      # time.time() when the callback ran
    monotonic: float               # time.monotonic(), for durations
    kind: str                      # "assign", "revoke" or "lost"
    partitions: frozenset          # the callback's partitions (incremental ones for
                                   # cooperative-sticky and group.protocol=consumer)
    assignment: frozenset          # the consumer's assignment after the callback
    member_id: str | None


@dataclass
class LabConsumer:
    """A real consumer in a background thread that records its rebalance callbacks."""

    bootstrap: str
    group: str
    topics: list[str]
    protocol: str = "classic"
    assignor: str | None = None        # classic only; default "range" (librdkafka's)
    name: str | None = None            # client.id; default "lab-consumer-N"
    instance_id: str | None = None     # group.instance.id (static membership)
    config: dict = field(default_factory=dict)  # extra librdkafka settings, win over ours
    on_event: Callable[[dict], None] | None = None  # "assignment" events (docs/reference/events.md)
    # classic: (time, member id, generation) of each JoinGroup answer (librdkafka's
    # debug=cgrp line), also of a generation cut short before any assign; consumer
    # protocol: (time, member id, member epoch) of each ConsumerGroupHeartbeat answer
    on_generation: Callable[[float, str | None, int], None] | None = None
    stats_interval_ms: int = 0         # >0: keep librdkafka statistics in .stats
    poll_timeout: float = 0.1

    def __post_init__(self):
        if self.protocol not in PROTOCOLS:
            raise UsageError(f"protocol must be one of {', '.join(PROTOCOLS)}, not {self.protocol!r}")
        if self.protocol == "consumer" and self.assignor:
            raise UsageError("group.protocol=consumer has no client-side assignor "
                             "(the broker assigns); leave the assignor out")
        if self.assignor and self.assignor not in ASSIGNORS:
            raise UsageError(f"assignor must be one of {', '.join(ASSIGNORS)}, not {self.assignor!r}")
        if isinstance(self.topics, str):
            self.topics = [self.topics]
        self.name = self.name or f"lab-consumer-{next(_ids)}"
        self.events: list[RebalanceEvent] = []
        self.errors: list[str] = []
        self.messages = 0
        self.member_id: str | None = None
        self.stats: dict | None = None
        self._assignment: set[TP] = set()
        self._cond = threading.Condition()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._started = False
        self._closed = False
        self._failure: BaseException | None = None

    # --- configuration ---------------------------------------------------------
    @property
    def eager(self) -> bool:
        """Eager protocol: every assign is the full assignment, every revoke all of it."""
        strategy = self.config.get("partition.assignment.strategy", self.assignor or "range")
        return self.protocol == "classic" and "cooperative" not in str(strategy)

    def consumer_config(self) -> dict:
        conf: dict[str, Any] = {
            "bootstrap.servers": self.bootstrap,
            "group.id": self.group,
            "client.id": self.name,
            "group.protocol": self.protocol,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": True,
            "auto.commit.interval.ms": 1000,
            "topic.metadata.refresh.interval.ms": 5000,
            "reconnect.backoff.max.ms": 1000,
            "error_cb": self._on_error,
        }
        if self.protocol == "classic":
            conf.update({
                "partition.assignment.strategy": self.assignor or "range",
                "session.timeout.ms": 10000,  # the broker's minimum is 6000
                "heartbeat.interval.ms": 1000,
            })
        if self.instance_id:
            conf["group.instance.id"] = self.instance_id
        if self.on_generation is not None:
            conf["debug"], conf["logger"] = "cgrp", self._join_logger()
        if self.stats_interval_ms:
            conf["statistics.interval.ms"] = self.stats_interval_ms
            conf["stats_cb"] = self._on_stats
        conf.update(self.config)
        return conf

    # --- lifecycle ---------------------------------------------------------------
    def start(self) -> "LabConsumer":
        if self._started:
            raise LabError(f"{self.name} was already started")
        self._started = True
        ready = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(ready,), daemon=True,
                                        name=f"LabConsumer-{self.name}")
        self._thread.start()
        ready.wait(30)  # creating the Consumer is quick; its failure is raised below
        self._raise_failure()
        return self

    def begin_close(self) -> None:
        """Ask the consumer thread to close, without waiting (close() waits). Closing
        several consumers at once: begin_close() on each, then close() on each."""
        self._stop.set()

    def close(self, timeout: float = 30.0) -> None:
        """Leave the group (the consumer's close(): revoke callback, LeaveGroup) and wait
        for the thread. Idempotent."""
        self._stop.set()
        if self._thread is not None and self._thread.is_alive():
            self._thread.join(timeout)
            if self._thread.is_alive():
                raise DeadlineError(f"{self.name} did not close within {timeout:g}s")
        self._closed = True

    def __enter__(self) -> "LabConsumer":
        return self if self._started else self.start()

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def _run(self, ready: threading.Event) -> None:
        try:
            from confluent_kafka import Consumer

            consumer = Consumer(self.consumer_config())
            consumer.subscribe(self.topics, on_assign=self._on_assign,
                               on_revoke=self._on_revoke, on_lost=self._on_lost)
        except BaseException as exc:  # bad config: reported by start()
            self._failure = exc
            ready.set()
            return
        ready.set()
        try:
            while not self._stop.is_set():
                msg = consumer.poll(self.poll_timeout)
                if msg is None:
                    continue
                if msg.error():
                    with self._cond:
                        self.errors.append(str(msg.error()))
                    continue
                with self._cond:
                    self.messages += 1
        except BaseException as exc:
            self._failure = exc
        finally:
            try:
                consumer.close()  # runs the final revoke callback, sends LeaveGroup
            except Exception as exc:  # already closed, or a broker error on leave
                with self._cond:
                    self.errors.append(f"close: {exc}")
            with self._cond:
                self._cond.notify_all()

    def _join_logger(self) -> logging.Logger:
        """A logger of this consumer's own (not propagated): librdkafka's lines go to it,
        served by poll() on the consumer's thread; the JoinGroup (classic) or heartbeat
        (consumer protocol) answers are told."""
        logger = logging.getLogger(f"groupctl.lab.consumer.{id(self)}")
        logger.propagate, logger.handlers = False, [JoinAnswers(self)]
        logger.setLevel(logging.DEBUG)
        return logger

    # --- callbacks (consumer thread) -------------------------------------------
    def _record(self, consumer, kind: str, partitions) -> None:
        tps = frozenset((tp.topic, tp.partition) for tp in partitions)
        try:
            member_id = consumer.memberid() or None
        except Exception:
            member_id = None
        # the generation an assign comes with (consumer protocol: the member epoch, kept
        # in its place by librdkafka: its heartbeat answers' epoch, checked on the lab)
        number = group_generation(consumer) if kind == "assign" else None
        with self._cond:
            if member_id:
                self.member_id = member_id
            if kind == "assign":
                if self.eager:
                    self._assignment = set(tps)
                else:
                    self._assignment |= tps
            else:
                self._assignment -= tps
            event = RebalanceEvent(time.time(), time.monotonic(), kind, tps,
                                   frozenset(self._assignment), self.member_id)
            self.events.append(event)
            self._cond.notify_all()
        if self.on_event:
            added = tps if kind == "assign" else frozenset()
            revoked = tps if kind != "assign" else frozenset()
            self.on_event({
                "v": 1, "ts": _iso(event.ts), "source": "workload", "group": self.group,
                "event": "assignment", "member_id": event.member_id, "client_id": self.name,
                "instance_id": self.instance_id, "callback": kind,
                **({"generation": number} if self.protocol == "classic"
                   else {"generation": None, "member_epoch": number}),   # as events.md
                "assigned": tp_list(event.assignment), "added": tp_list(added),
                "revoked": tp_list(revoked),
            })

    def _on_assign(self, consumer, partitions):
        self._record(consumer, "assign", partitions)

    def _on_revoke(self, consumer, partitions):
        self._record(consumer, "revoke", partitions)

    def _on_lost(self, consumer, partitions):
        self._record(consumer, "lost", partitions)

    def _on_error(self, err):
        with self._cond:
            self.errors.append(str(err))

    def _on_stats(self, text: str):
        try:
            stats = json.loads(text)
        except ValueError:
            return
        with self._cond:
            self.stats = stats
            self._cond.notify_all()

    # --- what tests read ----------------------------------------------------------
    @property
    def assignment(self) -> frozenset:
        with self._cond:
            return frozenset(self._assignment)

    @property
    def rebalance_count(self) -> int | None:
        """librdkafka's cgrp.rebalance_cnt from the latest statistics (stats_interval_ms)."""
        with self._cond:
            cgrp = (self.stats or {}).get("cgrp") or {}
            return cgrp.get("rebalance_cnt")

    def assigns(self) -> list[RebalanceEvent]:
        with self._cond:
            return [e for e in self.events if e.kind == "assign"]

    def wait_for(self, predicate: Callable[["LabConsumer"], bool], timeout: float = 30.0,
                 what: str = "a condition") -> None:
        """Wait until predicate(self) holds (re-checked on every callback and at least every
        0.2 s); DeadlineError after `timeout` seconds or if the consumer thread died."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while not predicate(self):
                self._raise_failure()
                if self._started and not self.running:
                    raise LabError(f"{self.name} stopped while waiting for {what}")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise DeadlineError(
                        f"{self.name} ({self.group}): no {what} within {timeout:g}s; "
                        f"assignment {tp_text(self._assignment)}, {len(self.events)} callbacks"
                        + (f", errors: {self.errors[-3:]}" if self.errors else ""))
                self._cond.wait(min(left, 0.2))

    def wait_assigned(self, timeout: float = 30.0, partitions: Iterable[TP] | None = None,
                      count: int | None = None) -> frozenset:
        """Wait for a non-empty assignment (or exactly `partitions`, or `count` of them)."""
        want = frozenset(partitions) if partitions is not None else None
        if want is not None:
            cond = lambda c: c._assignment == want  # noqa: E731
            what = f"assignment {tp_text(want)}"
        elif count is not None:
            cond = lambda c: len(c._assignment) == count  # noqa: E731
            what = f"assignment of {count} partitions"
        else:
            cond = lambda c: bool(c._assignment)  # noqa: E731
            what = "assignment"
        self.wait_for(cond, timeout, what)
        return self.assignment

    def wait_events(self, count: int, kind: str | None = None, timeout: float = 30.0) -> list:
        """Wait until at least `count` callbacks (of `kind`) were recorded; returns them."""
        match = (lambda e: True) if kind is None else (lambda e: e.kind == kind)
        self.wait_for(lambda c: sum(1 for e in c.events if match(e)) >= count, timeout,
                      f"{count} {kind or 'rebalance'} callbacks")
        with self._cond:
            return [e for e in self.events if match(e)]

    def _raise_failure(self) -> None:
        if self._failure is not None:
            raise LabError(f"{self.name}: consumer failed: {self._failure}") from self._failure


def wait_balanced(consumers: list[LabConsumer], partitions: Iterable[TP],
                  timeout: float = 60.0, min_each: int | None = None
                  ) -> dict[str | None, frozenset]:
    """Wait until the consumers' assignments, as their callbacks left them, cover
    `partitions` with each partition assigned exactly once, and each consumer holds at least
    `min_each` (default: 1 when there are enough partitions to go round, else 0).
    Returns {name: assignment}."""
    want = sorted(partitions)
    if min_each is None:
        min_each = 1 if len(want) >= len(consumers) else 0
    deadline = time.monotonic() + timeout
    while True:
        got = {c.name: c.assignment for c in consumers}
        owned = sorted(tp for a in got.values() for tp in a)
        if owned == want and all(len(a) >= min_each for a in got.values()):
            return got
        for c in consumers:
            c._raise_failure()
        if time.monotonic() >= deadline:
            raise DeadlineError(
                f"partitions not assigned exactly once (at least {min_each} each) within "
                f"{timeout:g}s: " + "; ".join(f"{n}={tp_text(a)}" for n, a in got.items()))
        time.sleep(0.1)
