"""`groupctl lab workload`: real librdkafka consumers that join, consume, leave and rejoin,
a producer writing a steady trickle, and the topic helpers the tests use too.

    create_topic(bootstrap, "t", partitions=4)      # waits until Metadata shows it
    run_workload(bootstrap, group="g", topic="t", consumers=3, churn=10, duration=60)
"""
from __future__ import annotations

import threading
import time
from typing import Callable

from ..errors import DeadlineError, KafkaError, LabError, UsageError
from .consumer import (ASSIGNORS, PROTOCOLS, LabConsumer, RebalanceEvent, tp_list,  # noqa: F401
                       tp_text, wait_balanced)
from .rounds import WorkloadRounds


# --- topics and producing ------------------------------------------------------------

def client_properties(security) -> dict[str, str]:
    """librdkafka's properties for a groupctl SecurityConfig (a context's or
    --command-config's), so the workload's clients reach the cluster every command does."""
    if security is None or security.protocol == "PLAINTEXT":
        return {}
    conf = {"security.protocol": security.protocol}
    named = {"sasl.mechanism": security.sasl_mechanism,
             "sasl.username": security.sasl_username,
             "sasl.password": security.sasl_password,
             "ssl.ca.location": security.ssl_cafile, "ssl.ca.pem": security.ssl_cadata,
             "ssl.certificate.location": security.ssl_certfile,
             "ssl.key.location": security.ssl_keyfile,
             "ssl.certificate.pem": security.ssl_cert_pem, "ssl.key.pem": security.ssl_key_pem,
             "ssl.key.password": security.ssl_key_password}
    conf.update({k: v for k, v in named.items() if v})
    if security.tls and not security.ssl_check_hostname:
        conf["ssl.endpoint.identification.algorithm"] = "none"
    if security.tls and not security.ssl_verify:
        conf["enable.ssl.certificate.verification"] = "false"
    return conf


def _admin(bootstrap: str, client_config: dict | None = None):
    from confluent_kafka.admin import AdminClient

    return AdminClient({"bootstrap.servers": bootstrap, "log_level": 3, **(client_config or {})})


def create_topic(bootstrap: str, name: str, partitions: int = 1, replication: int = 1,
                 config: dict | None = None, timeout: float = 30.0,
                 exist_ok: bool = False, client_config: dict | None = None) -> None:
    """Create `name` and wait until Metadata shows all its partitions with leaders. The
    broker refusing it (a bad name, too many partitions, no permission) is a KafkaError
    (exit 7) with the broker's error; no answer within `timeout` is a DeadlineError."""
    from concurrent.futures import TimeoutError as FuturesTimeout

    from confluent_kafka import KafkaError as RdKafkaError
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import NewTopic

    admin = _admin(bootstrap, client_config)
    fut = admin.create_topics([NewTopic(name, partitions, replication, config=config or {})],
                              operation_timeout=timeout, request_timeout=timeout)[name]
    no_answer = DeadlineError(f"topic {name!r}: no answer from {bootstrap} within "
                              f"{timeout:g} s (raise --timeout?)")
    try:
        fut.result(timeout)
    except FuturesTimeout:  # librdkafka got no answer: no broker, or a hung one
        raise no_answer from None
    except KafkaException as exc:
        err = exc.args[0]
        if err.code() == RdKafkaError._TIMED_OUT:  # the same, librdkafka's timer first
            raise no_answer from None
        if exist_ok and err.code() == RdKafkaError.TOPIC_ALREADY_EXISTS:
            pass
        elif err.code() > 0:  # a broker error code (librdkafka's own are negative)
            raise KafkaError("CreateTopics", err.code(), f"topic {name!r}: {err.str()}") from None
        else:
            raise LabError(f"cannot create topic {name!r}: {err.str()}") from None
    wait_topic(bootstrap, name, None if exist_ok else partitions, timeout, admin)


def wait_topic(bootstrap: str, name: str, partitions: int | None = None,
               timeout: float = 30.0, admin=None, client_config: dict | None = None) -> int:
    """Wait until Metadata lists `name` (with `partitions` partitions, if given), every
    partition with a leader. Returns the partition count."""
    if admin is None:  # not `admin or`: a client with an empty queue has len() 0
        admin = _admin(bootstrap, client_config)
    deadline = time.monotonic() + timeout
    last = "not listed"
    while True:
        try:
            md = admin.list_topics(topic=name, timeout=max(0.5, min(5.0, deadline - time.monotonic())))
            t = md.topics.get(name)
            if t is not None and t.error is None and t.partitions and \
                    all(p.leader >= 0 for p in t.partitions.values()) and \
                    (partitions is None or len(t.partitions) == partitions):
                return len(t.partitions)
            last = f"{len(t.partitions)} partitions, error {t.error}" if t else "not listed"
        except Exception as exc:
            last = str(exc)
        if time.monotonic() >= deadline:
            raise DeadlineError(f"topic {name!r} not ready within {timeout:g}s ({last})")
        time.sleep(0.1)


class TrickleProducer:
    """Writes `rate` small records per second to `topic` from a background thread."""

    def __init__(self, bootstrap: str, topic: str, rate: float = 10.0,
                 client_config: dict | None = None):
        self.bootstrap, self.topic, self.rate = bootstrap, topic, rate
        self.client_config = dict(client_config or {})
        self.sent = 0
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="TrickleProducer")

    def start(self) -> "TrickleProducer":
        self._thread.start()
        return self

    def _run(self) -> None:
        from confluent_kafka import Producer

        producer = Producer({"bootstrap.servers": self.bootstrap, "linger.ms": 5,
                             "client.id": "groupctl-lab-producer",
                             "error_cb": lambda e: self.errors.append(str(e)),
                             **self.client_config})
        interval = 1.0 / self.rate if self.rate > 0 else None
        n = 0
        while interval and not self._stop.wait(interval):
            try:
                producer.produce(self.topic, key=str(n).encode(),
                                 value=f"groupctl lab {n} {time.time():.3f}".encode())
                n += 1
                self.sent = n
            except BufferError:
                pass
            producer.poll(0)
        producer.flush(5)

    def close(self, timeout: float = 10.0) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout)


def check_options(consumers: int, partitions: int | None, protocol: str,
                  assignor: str | None, churn: float | None, duration: float | None) -> None:
    """The workload's options, checked before anything touches a cluster (UsageError)."""
    if consumers < 1:
        raise UsageError("--consumers must be at least 1")
    if partitions is not None and partitions < 1:
        raise UsageError("--partitions must be at least 1")
    if churn is not None and not churn > 0:  # nan too
        raise UsageError("--churn must be a positive number of seconds")
    if duration is not None and not duration > 0:  # nan too
        raise UsageError("--duration must be a positive number of seconds")
    if protocol == "consumer" and assignor:
        raise UsageError("--assignor is for --protocol classic; with --protocol consumer "
                         "the broker assigns (group.consumer.assignors)")


def run_workload(bootstrap: str, group: str, topic: str, consumers: int = 3,
                 partitions: int | None = None, protocol: str = "classic",
                 assignor: str | None = None, churn: float | None = None,
                 duration: float | None = None, rate: float = 10.0,
                 log: Callable[[str], None] = print,
                 on_event: Callable[[dict], None] | None = None,
                 on_round: Callable[[dict], None] | None = None,
                 stop: threading.Event | None = None,
                 churn_gate: Callable[[], float | None] | None = None,
                 client_config: dict | None = None, setup_timeout: float = 30.0) -> dict:
    """Run `consumers` LabConsumers in `group` on `topic` (created with `partitions` if
    missing) and a TrickleProducer. With `churn`, every `churn` seconds one consumer leaves
    the group, and at the next tick it rejoins as a new member. Runs for `duration` seconds,
    until `stop` is set, or until KeyboardInterrupt; always closes every consumer (each
    leaves the group). `churn_gate`, when given, is asked for the churn period on every
    tick instead (None: no churn yet), so a caller can start churn later. `client_config`:
    librdkafka properties every client gets (security: client_properties()).
    `on_round`: each round the members went through (a classic generation, a consumer
    group's epoch), as a `rebalance` event (lab.rounds), once it is over.
    `setup_timeout`: seconds for creating the topic and seeing it in Metadata (the CLI's
    --timeout). Returns a summary."""
    check_options(consumers, partitions, protocol, assignor, churn, duration)
    stop = stop or threading.Event()
    create_topic(bootstrap, topic, partitions or max(consumers, 1), exist_ok=True,
                 client_config=client_config, timeout=setup_timeout)
    n_parts = wait_topic(bootstrap, topic, client_config=client_config, timeout=setup_timeout)
    log(f"workload: group {group}, topic {topic} ({n_parts} partitions), {consumers} "
        f"consumer(s), protocol {protocol}" + (f", assignor {assignor}" if assignor else "")
        + (f", churn every {churn:g}s" if churn else ""))

    rounds, rounds_lock = WorkloadRounds(group, protocol), threading.Lock()

    def tell_rounds(records: list[dict]) -> None:
        if on_round is not None:
            for record in records:
                on_round(record)

    def on_assignment(event: dict) -> None:
        with rounds_lock:
            ended = rounds.take(event)
        verb = {"assign": "assigned", "revoke": "revoked", "lost": "lost"}[event["callback"]]
        changed = event["added"] if event["callback"] == "assign" else event["revoked"]
        log(f"{event['ts']} {event['client_id']} ({event['member_id'] or '?'}) {verb} "
            f"{_fmt(changed)}; now {_fmt(event['assigned'])}")
        if on_event:
            on_event(event)
        tell_rounds(ended)

    def on_generation(ts: float, member: str | None, generation: int) -> None:
        with rounds_lock:
            ended = rounds.joined(ts, member, generation)
        tell_rounds(ended)

    def new_consumer(name: str) -> LabConsumer:
        with rounds_lock:
            rounds.joining(time.time())
        return LabConsumer(bootstrap, group, [topic], protocol=protocol, assignor=assignor,
                           name=name, on_event=on_assignment,
                           on_generation=on_generation if on_round else None,
                           config=dict(client_config or {})).start()

    producer = TrickleProducer(bootstrap, topic, rate, client_config).start()
    running: dict[str, LabConsumer] = {}
    left: list[str] = []
    closed: list[LabConsumer] = []
    started = time.monotonic()
    try:
        for i in range(consumers):
            running[f"c{i + 1}"] = new_consumer(f"c{i + 1}")
        last_tick = time.monotonic()
        while not stop.is_set():
            period = churn_gate() if churn_gate else churn
            now = time.monotonic()
            next_tick = last_tick + period if period else None
            end = started + duration if duration is not None else None
            # with a gate, look again every half second: churn may be switched on
            poll = now + (0.5 if churn_gate else 3600)
            wake = min(t for t in (next_tick, end, poll) if t is not None)
            if stop.wait(max(0.0, wake - now)):
                break
            if end is not None and time.monotonic() >= end:
                break
            if not period:
                last_tick = time.monotonic()
            elif time.monotonic() >= last_tick + period:
                last_tick = time.monotonic()
                if left:
                    name = left.pop(0)
                    log(f"churn: {name} rejoins")
                    running[name] = new_consumer(name)
                elif running:
                    name = next(iter(running))
                    log(f"churn: {name} leaves")
                    c = running.pop(name)
                    with rounds_lock:
                        rounds.leaving(time.time())
                    c.close()
                    closed.append(c)
                    left.append(name)
    finally:
        for c in running.values():
            with rounds_lock:
                rounds.leaving(time.time())
            c.close()
        closed.extend(running.values())
        producer.close()
        with rounds_lock:
            ended = rounds.flush()
        tell_rounds(ended)
    summary = {
        "group": group, "topic": topic, "partitions": n_parts, "protocol": protocol,
        "assignor": assignor, "seconds": round(time.monotonic() - started, 1),
        "produced": producer.sent,
        "consumed": sum(c.messages for c in closed),
        "callbacks": sum(len(c.events) for c in closed),
        "members": len(closed),
        "errors": sorted({e for c in closed for e in c.errors}),
    }
    log(f"workload: done after {summary['seconds']}s: {summary['produced']} produced, "
        f"{summary['consumed']} consumed, {summary['callbacks']} rebalance callbacks over "
        f"{summary['members']} member sessions")
    return summary


def _fmt(tps: list[dict]) -> str:
    return ",".join(f"{t['topic']}-{p}" for t in tps for p in t["partitions"]) or "-"
