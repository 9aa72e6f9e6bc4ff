"""`groupctl history` through the hard cases, against what groupctl did not write: the
broker's own log lines, the consumers' own member ids and callbacks, Kafka's Java KIP-848
consumer's own "transitioned from S1 to S2" lines, and a describe watch that looked once
a second.

- classic (librdkafka): a static member restarted (group.instance.id: its member id is
  replaced, no new generation) and a member SIGKILLed (its session expires): the
  generations with members equal the broker log's "Stabilized group G generation N with M
  members" lines, member counts included; the members of each generation are the
  consumers' own member ids; the restart is a leave and a join of the same instance id
  with no generation between;
- a classic group whose member is replaced by a KIP-848 member online (the broker's
  group.consumer.migration.policy is bidirectional by default in Kafka 4.3): history tells
  the type change at the broker's "Converted the classic group G to a consumer group" line,
  and the epochs after it equal its "Bumped group epoch" lines;
- a Kafka Streams application (streams group): group epochs = the broker's epoch lines;
- Kafka's Java consumer on the classic protocol: generations = Stabilized lines, members =
  the ids the clients themselves synced in each generation;
- Kafka's Java KIP-848 consumer (the lab jars' console consumer): member ids, epochs and
  the order of its own "transitioned from S1 to S2" lines against the records (which of
  its transitions no record can know is said in the test);
- an epoch a 1 s describe watch missed (two members joining within milliseconds) is in
  history, with the member epochs that went with it.
"""
from __future__ import annotations

from cli_runner import run_cli
import re
import time

from test_records_history import history
from waiting import wait_until
from watch_support import KillableConsumer, stabilized


def cli(lab, *args: str) -> tuple[int, str, str]:
    return run_cli(*args, bootstrap=lab.bootstrap)


def log_text(lab) -> str:
    return "".join(p.read_text(errors="replace") for p in lab.log_files)


def wait_log(lab, predicate, timeout: float, what: str):
    """Until `predicate(broker log text)` is true (returned), within `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        found = predicate(log_text(lab))
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"no {what} in the broker log within {timeout:g}s")
        time.sleep(0.2)


def wait_stabilized(lab, group: str, after: int, members: int, timeout: float = 60) -> int:
    """The first generation above `after` the broker stabilized with `members` members."""
    def found(_text):
        gens = [g for g, n in stabilized(lab, group).items() if g > after and n == members]
        return min(gens) if gens else None

    return wait_log(lab, found, timeout, f"Stabilized line of {group} with {members} members")


def generations(events: list[dict]) -> list[tuple[int, list[str]]]:
    return [(e["generation"], sorted(e["members"])) for e in events
            if e["event"] == "generation" and e["members"]]


def test_classic_static_restart_and_sigkill_generations_are_the_broker_logs(
        kafka, topic_factory, consumer_factory, unique_group):
    g, topic = unique_group, topic_factory(4)
    a = consumer_factory(g, topic, name=f"{g}-a")
    a.wait_assigned(timeout=30)
    g1 = wait_stabilized(kafka, g, 0, 1)
    k = KillableConsumer(kafka.bootstrap, g, topic, f"{g}-k", session_ms=6000)
    try:
        k.wait_assigned(60)
        g2 = wait_stabilized(kafka, g, g1, 2)
        s = consumer_factory(g, topic, name=f"{g}-s", instance_id=f"{g}-static")
        s.wait_assigned(timeout=30)
        g3 = wait_stabilized(kafka, g, g2, 3)
        old_s = s.member_id
        s.close()          # a static member does not leave: its member id is replaced
        s2 = consumer_factory(g, topic, name=f"{g}-s", instance_id=f"{g}-static")
        s2.wait_assigned(timeout=30)
        assert s2.member_id != old_s
        wait_log(kafka, lambda t: re.search(
            rf"joins group {re.escape(g)} in Stable state. Replacing previously mapped member "
            rf"{re.escape(old_s)} ", t), 30, "the static member's replacement")
        k_id = k.member_id
        k.kill()           # SIGKILL: no LeaveGroup; the broker expires it after 6 s
        g4 = wait_stabilized(kafka, g, g3, 2, timeout=60)
    finally:
        k.kill()

    def told_g4():   # the Stabilized line ends the join phase; the record follows the sync
        run = history(kafka, g)
        assert run[0] == 0, run[2]
        return run if g4 in [gen for gen, _ in generations(run[1])] else None
    code, events, err = wait_until(told_g4, 30, f"history telling generation {g4}")
    logged = stabilized(kafka, g)
    told = generations(events)
    # every generation with members, in order, with the broker's member count
    assert [(gen, len(ms)) for gen, ms in told] == sorted(logged.items())
    by_gen = dict(told)
    assert by_gen[g1] == [a.member_id]
    assert by_gen[g2] == sorted([a.member_id, k_id])
    assert by_gen[g3] == sorted([a.member_id, k_id, old_s])
    assert by_gen[g4] == sorted([a.member_id, s2.member_id])
    # the restart: the old member id leaves, the new one joins with the same instance id,
    # with no generation between (the broker persisted the group at generation g3)
    i = next(n for n, e in enumerate(events) if e["event"] == "member_left"
             and e["member_id"] == old_s)
    j = next(n for n, e in enumerate(events) if e["event"] == "member_joined"
             and e["member_id"] == s2.member_id)
    assert events[j]["instance_id"] == f"{g}-static" and events[i]["instance_id"] == f"{g}-static"
    assert not [e for e in events[min(i, j):max(i, j) + 1] if e["event"] == "generation"]
    # the killed member leaves with the generation that expired it (the story tells the
    # generation, then who left and the assignments, then the rebalance)
    start = next(n for n, e in enumerate(events) if e["event"] == "generation"
                 and e["generation"] == g4)
    end = next(n for n, e in enumerate(events) if n > start and e["event"] == "rebalance")
    assert [e["member_id"] for e in events[start:end] if e["event"] == "member_left"] == [k_id]


def bumped(lab, group: str) -> list[int]:
    return sorted({int(n) for n in re.findall(
        rf"\[GroupId {re.escape(group)}\] Bumped group epoch to (\d+)", log_text(lab))})


def test_classic_to_consumer_conversion_is_told_where_the_broker_converted(
        kafka, topic_factory, consumer_factory, unique_group):
    g, topic = unique_group, topic_factory(4)
    c1 = consumer_factory(g, topic, protocol="classic", name=f"{g}-c1")
    c1.wait_assigned(timeout=30)
    gen = wait_stabilized(kafka, g, 0, 1)
    n = consumer_factory(g, topic, protocol="consumer", name=f"{g}-n")
    n.wait_assigned(timeout=60)
    converted = rf"\[GroupId {re.escape(g)}\] Converted the classic group to a consumer group"
    wait_log(kafka, lambda t: re.search(converted, t), 30, "the conversion")
    c1_id = c1.member_id
    c1.close()       # the classic member leaves: the group stays a consumer group
    n.wait_for(lambda c: len(c.assignment) == 4, 60, "n holding every partition")
    wait_log(kafka, lambda t: len(bumped(kafka, g)) >= 2 and
             f"[GroupId {g}] Computed a new target assignment for epoch {bumped(kafka, g)[-1]}" in t,
             60, "the target after the classic member left")
    code, events, err = history(kafka, g)
    assert code == 0, err
    (change,) = [e for e in events if e["event"] == "type_changed"]
    assert (change["type"], change["previous"]) == ("consumer", "classic")
    i = events.index(change)
    # before it: classic generations (the broker's Stabilized lines); after it: the
    # consumer group's epochs, starting at the classic generation it converted from,
    # each bump one of the broker's Bumped lines
    assert [x for x, _ in generations(events[:i])] == sorted(stabilized(kafka, g)) == [gen]
    epochs = sorted({e["group_epoch"] for e in events[i:] if e["event"] == "epoch"})
    assert epochs[0] == gen and epochs[1:] == bumped(kafka, g)
    joined = {e["client_id"]: e["member_id"] for e in events if e["event"] == "member_joined"}
    assert joined == {f"{g}-c1": c1_id, f"{g}-n": n.member_id}
    assert [e["member_id"] for e in events[i:] if e["event"] == "member_left"] == [c1_id]
    assert not [e for e in events[i:] if e["event"] == "generation"]


def streams_bumps(lab, group: str) -> dict[int, str]:
    """{epoch: member id} of the broker's "Bumped streams group epoch" lines, and of its
    "Member M left the streams group" lines: the coordinator bumps the epoch by one when a
    member leaves (GroupMetadataManager.streamsGroupFenceMember writes a StreamsGroupMetadata
    record at groupEpoch + 1) but logs no Bumped line for it."""
    g = re.escape(group)
    out: dict[int, str] = {}
    epoch = 0
    for m in re.finditer(rf"\[GroupId {g}\]\[MemberId (\S+)\] (?:Bumped streams group epoch "
                         rf"to (\d+)|Member \S+ left the streams group)", log_text(lab)):
        epoch = int(m.group(2)) if m.group(2) else epoch + 1
        out[epoch] = m.group(1)
    return out


def test_streams_group_epochs_are_the_broker_logs(kafka, tmp_path):
    """A real Kafka Streams application (tests/java/StreamsGroupApp, group.protocol=streams):
    two instances join, one leaves; history's group epochs are the broker's "Bumped streams
    group epoch" lines and one per "left the streams group" line, its members the ones
    those lines name, and the tasks it ends with those Kafka's StreamsGroupCommand shows."""
    import uuid

    from group_types_support import StreamsApp
    from groupctl.lab.workload import create_topic
    from test_watch_group_types import EVERY_TASK, STREAMS_PARTITIONS, _streams_view, _task_view

    tag = uuid.uuid4().hex[:8]
    app_id, source, sink = f"rec-streams-{tag}", f"rec-sin-{tag}", f"rec-sout-{tag}"
    for topic in (source, sink):
        create_topic(kafka.bootstrap, topic, STREAMS_PARTITIONS, 1, None)
    apps = [StreamsApp(kafka.bootstrap, app_id, source, sink, tmp_path / f"state-{i}",
                       f"localhost:{7400 + i}") for i in (1, 2)]
    try:
        for app in apps:
            app.wait_running()
        wait_log(kafka, lambda t: len(set(streams_bumps(kafka, app_id).values())) >= 2, 90,
                 "both instances' epoch bumps")
        apps[1].close()         # KafkaStreams.close(): the instance leaves the group
        kept = wait_log(kafka, lambda t: (lambda v: len(v) == 1 and v)(
            {m: tasks for m, tasks in _streams_view(kafka, app_id).items()
             if tasks.get("ACTIVE") == EVERY_TASK}), 120, "one member with every task")
        code, events, err = history(kafka, app_id)
        logged = streams_bumps(kafka, app_id)   # before the last instance leaves too
    finally:
        for app in apps:
            app.close()
    assert code == 0, err
    epochs = sorted({e["group_epoch"] for e in events if e["event"] == "epoch"})
    assert epochs == sorted(logged), (epochs, logged)
    joined = [e["member_id"] for e in events if e["event"] == "member_joined"]
    assert sorted(joined) == sorted(set(logged.values())), "\n".join(
        f'{e["event"]} {e.get("group_epoch")} {e.get("member_id")} {e.get("state")} {e.get("members")}'
        for e in events)
    (member,) = kept
    last = [e for e in events if e["event"] == "rebalance"][-1]
    assert last["members_after"] == [member]
    assert _task_view(last["tasks"][member]) == {"ACTIVE": EVERY_TASK}


# ---- Kafka's Java KIP-848 consumer's own transitions ----------------------------------------

JAVA_LOG4J = """<?xml version="1.0" encoding="UTF-8"?>
<Configuration status="WARN">
  <Appenders>
    <File name="member" fileName="{path}"><PatternLayout pattern="%d{{UNIX_MILLIS}} %m%n"/></File>
  </Appenders>
  <Loggers>
    <Root level="WARN"><AppenderRef ref="member"/></Root>
    <Logger name="org.apache.kafka.clients.consumer.internals.ConsumerMembershipManager"
            level="DEBUG"/>
    <Logger name="org.apache.kafka.clients.consumer.internals.ConsumerCoordinator"
            level="INFO"/>
  </Loggers>
</Configuration>
"""
TRANSITION = re.compile(r"^(\d+) .*Member (\S+) with epoch (-?\d+) transitioned from (\w+) to "
                        r"(\w+)\.$", re.M)
# the classic Java consumer's AbstractCoordinator (its logger named for the subclass,
# ConsumerCoordinator): "Successfully synced group in generation
# Generation{generationId=N, memberId='M', protocol='range'}"
SYNCED = re.compile(r"Successfully synced group in generation Generation\{generationId=(\d+), "
                    r"memberId='([^']+)'")


class JavaConsumer:
    """Kafka's console consumer from the lab's jars (group.protocol=consumer, or classic):
    its ConsumerMembershipManager's (or AbstractCoordinator's) lines, with the JVM's
    epoch-ms clock, in its own file."""

    def __init__(self, lab, tmp_path, group: str, topic: str, name: str,
                 protocol: str = "consumer"):
        import subprocess

        from groupctl.lab.dist import java_cmd

        self.log = tmp_path / f"{name}.log"
        config = tmp_path / f"{name}-log4j2.xml"
        config.write_text(JAVA_LOG4J.format(path=self.log))
        self.proc = subprocess.Popen(
            [java_cmd(), "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
             f"-Dlog4j2.configurationFile={config}", "-cp", f"{lab.libs}/*",
             "org.apache.kafka.tools.consumer.ConsoleConsumer", "--bootstrap-server",
             lab.bootstrap, "--topic", topic, "--group", group,
             "--consumer-property", f"group.protocol={protocol}",
             "--consumer-property", f"client.id={name}"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def transitions(self) -> list[tuple[int, str, int, str, str]]:
        """(epoch ms, member id, member epoch, from, to) of each "transitioned" line."""
        text = self.log.read_text() if self.log.exists() else ""
        return [(int(t), m, int(e), a, b) for t, m, e, a, b in TRANSITION.findall(text)]

    def synced(self) -> list[tuple[int, str]]:
        """(generation, member id) of each classic SyncGroup the client completed."""
        text = self.log.read_text() if self.log.exists() else ""
        return [(int(n), m) for n, m in SYNCED.findall(text)]

    def wait(self, predicate, timeout: float, what: str):
        deadline = time.monotonic() + timeout
        while not predicate(self.transitions()):
            assert self.proc.poll() is None, f"the Java consumer exited: {self.transitions()}"
            if time.monotonic() > deadline:
                raise AssertionError(f"no {what} within {timeout:g}s: {self.transitions()}")
            time.sleep(0.2)

    def stop(self) -> None:
        """SIGTERM: the console consumer's shutdown hook closes it (it leaves the group)."""
        if self.proc.poll() is None:
            self.proc.terminate()
        self.proc.wait(60)


def stable_count(transitions) -> int:
    return sum(1 for t in transitions if t[4] == "STABLE")


def test_java_classic_consumer_generations_are_the_broker_logs_and_its_own(
        kafka, topic_factory, unique_group, tmp_path):
    """Kafka's Java consumer on the classic protocol (the console consumer): j1 alone, j2
    joins, j2 leaves. history's generations with their member counts are the broker's
    "Stabilized group G generation N with M members" lines, and the members of each are
    the member ids the clients themselves synced in that generation."""
    g, topic = unique_group, topic_factory(4)
    j1 = JavaConsumer(kafka, tmp_path, g, topic, f"{g}-j1", protocol="classic")
    j2 = None
    try:
        first = wait_stabilized(kafka, g, 0, 1, timeout=90)
        j2 = JavaConsumer(kafka, tmp_path, g, topic, f"{g}-j2", protocol="classic")
        both = wait_stabilized(kafka, g, first, 2, timeout=90)
        j2.wait(lambda _t: any(n == both for n, _ in j2.synced()), 60, "j2 synced")
        j2.stop()
        alone = wait_stabilized(kafka, g, both, 1, timeout=90)
        j1.wait(lambda _t: any(n == alone for n, _ in j1.synced()), 60, "j1 synced alone")
        code, events, err = history(kafka, g)
    finally:
        for j in (j1, j2):
            if j is not None:
                j.stop()
    assert code == 0, err
    told = generations(events)
    assert [(n, len(m)) for n, m in told] == sorted(stabilized(kafka, g).items())
    clients: dict[int, set] = {}
    for j in (j1, j2):
        for n, member in j.synced():
            clients.setdefault(n, set()).add(member)
    for n, members in told:
        if n in clients:   # a generation every client synced in: the same ids
            assert set(members) == clients[n], (n, members, clients)
    assert {first, both, alone} <= set(clients)


def test_member_transitions_agree_with_the_java_consumers_own_lines(
        kafka, topic_factory, unique_group, tmp_path):
    """Two Java KIP-848 consumers: j1 alone, j2 joins (j1 revokes half), j2 leaves (j1 takes
    all). What the records can know agrees with the clients' own lines:
    - the member ids are the clients' own;
    - every member epoch a client logs (from 1 on) is one of the member's epochs in history;
    - each move of a client into RECONCILING (from JOINING or STABLE) follows (in time,
      the same clock) its own record of that member at the epoch the client logs, a later
      record than the previous move's: the broker wrote it before answering the heartbeat;
    - after a client's RECONCILING -> ACKNOWLEDGING, the member is STABLE in the records:
      already (nothing to wait for) or in a record written after it (the broker learns of
      it on the acknowledging heartbeat).
    Client-only (no record holds them): UNSUBSCRIBED, JOINING, RECONCILING vs ACKNOWLEDGING
    (the client's own reconciliation), PREPARE_LEAVING / LEAVING (the records show the
    leave as the member's tombstones: member_left)."""
    g, topic = unique_group, topic_factory(4)
    j1 = JavaConsumer(kafka, tmp_path, g, topic, f"{g}-j1")
    j2 = None
    try:
        j1.wait(lambda t: stable_count(t) >= 1, 90, "j1 STABLE")
        j2 = JavaConsumer(kafka, tmp_path, g, topic, f"{g}-j2")
        j2.wait(lambda t: stable_count(t) >= 1, 90, "j2 STABLE")
        j1.wait(lambda t: stable_count(t) >= 2, 60, "j1 STABLE after giving up half")
        code, _, err = cli(kafka, "wait", g, "--state", "Stable", "--members", "2",
                           "--timeout", "60")   # j2 holding what j1 gave up
        assert code == 0, err
        j2.stop()
        j1.wait(lambda t: stable_count(t) >= 3, 60, "j1 STABLE with every partition")
        code, events, err = history(kafka, g)
    finally:
        for j in (j1, j2):
            if j is not None:
                j.stop()
    assert code == 0, err
    ids = {}
    for j in (j1, j2):
        assert j is not None
        (mid,) = {t[1] for t in j.transitions()}
        ids[mid] = j.transitions()
    joined = [e["member_id"] for e in events if e["event"] == "member_joined"]
    assert sorted(joined) == sorted(ids)
    for mid, lines in ids.items():
        told = [e for e in events if e["event"] == "assignment" and e["member_id"] == mid]
        at = [(_ms(e["ts"]), e["member_epoch"], e["member_state"]) for e in told]
        epochs = [e for _, e, _ in at]
        assert epochs == sorted(epochs), at
        assert {e for _, _, e, _, _ in lines if e > 0} <= set(epochs), (lines, at)
        used = -1   # the record that set the client's previous reconciliation going
        for t, _, epoch, old, new in lines:
            if new == "RECONCILING":
                # the record that set it reconciling: a later one than the previous
                # reconciliation's, written before this line, at the epoch the client has
                cause = [i for i, (ts, e, _) in enumerate(at) if i > used and ts <= t
                         and e == epoch]
                assert cause, (t, old, epoch, at)
                used = cause[0]
            if old == "RECONCILING" and new == "ACKNOWLEDGING":
                # done with its part: the broker has it (already, or on the acknowledging
                # heartbeat) at that epoch STABLE, or UNRELEASED_PARTITIONS: waiting for
                # partitions another member still holds, which the client, STABLE with what
                # it has, cannot know
                last = [(e, state) for ts, e, state in at if ts <= t][-1:]
                after = [(e, state) for ts, e, state in at if ts >= t][:1]
                assert any(e >= epoch and state in ("STABLE", "UNRELEASED_PARTITIONS")
                           for e, state in last + after), (t, epoch, at)
    # the revocation: j1 was told to give up partitions at its epoch (UNREVOKED_PARTITIONS)
    j1_id = next(iter(ids))
    assert any(e["member_state"] == "UNREVOKED_PARTITIONS" for e in events
               if e["event"] == "assignment" and e["member_id"] == j1_id)
    assert [e["member_id"] for e in events if e["event"] == "member_left"] == [
        m for m in ids if m != j1_id]


def _ms(ts: str) -> int:
    from datetime import datetime

    return round(datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp() * 1000)


# ---- what a describe watch cannot see -------------------------------------------------------

def test_an_epoch_a_1s_describe_watch_missed_is_in_history(
        kafka, topic_factory, consumer_factory, unique_group):
    """Two KIP-848 members join (and later leave) within milliseconds: the group epoch
    passes through a value for a few milliseconds, and the joining member holds its first
    member epoch only until its next heartbeat. `watch --interval 1` (describe) sees the
    epochs around it; history has every epoch the broker's Bumped lines name, the one the
    watch missed among them, and the member epoch that went with it. (A describe that
    happens to land inside those milliseconds sees it: the pair is tried again, a few
    times, until the watch misses one.)"""
    from groupctl.lab.consumer import wait_balanced
    from watch_support import WatchProcess

    g, topic = unique_group, topic_factory(6)
    tps = [(topic, p) for p in range(6)]
    watch = WatchProcess(kafka, g, "--interval", "1")
    missed: set[int] = set()
    members = []
    try:
        watch.wait_event(lambda e: e["event"] == "state" and e["state"] == "Dead", 60,
                         "the missing group's Dead state")   # the watch looks from now on
        m1 = consumer_factory(g, topic, protocol="consumer", name=f"{g}-m1")
        m1.wait_assigned(timeout=30)
        members = [m1]

        def watch_caught_up():   # the watch saw the group as the broker left it (Stable)
            last = bumped(kafka, g)[-1]
            watch.wait_event(lambda e: e["event"] in ("epoch", "snapshot")
                             and e["group_epoch"] == last and e["assignment_epoch"] == last,
                             30, f"epoch {last}")

        for attempt in range(4):
            pair = [consumer_factory(g, topic, protocol="consumer", name=f"{g}-{attempt}-{i}",
                                     start=False) for i in (1, 2)]
            for c in pair:
                c.start()
            members = [m1, *pair]
            wait_balanced(members, tps, timeout=60)
            watch_caught_up()
            for c in pair:
                c.begin_close()
            for c in pair:
                c.close()
            members = [m1]
            wait_balanced(members, tps, timeout=60)
            watch_caught_up()
            seen = {e["group_epoch"] for e in watch.events if e["event"] in ("epoch", "snapshot")}
            missed = set(bumped(kafka, g)) - seen
            if missed:
                break
        code, events, err = history(kafka, g)
    finally:
        assert watch.stop() == 0, watch.stderr()
    assert missed, "the describe watch saw every epoch four times over"
    assert code == 0, err
    told = {e["group_epoch"] for e in events if e["event"] == "epoch"}
    assert told == set(bumped(kafka, g)) and missed <= told
    # member epochs the records hold at the missed epochs (the joining members' first
    # ones, held until their next heartbeat); none is in anything the watch wrote
    at_missed = {(e["member_id"], e["member_epoch"]) for e in events
                 if e["event"] == "assignment" and e["member_epoch"] in missed}
    assert at_missed, [(e["event"], e.get("member_epoch")) for e in events]
    assert not at_missed & member_epochs(watch.events)


def member_epochs(found) -> set[tuple[str, int]]:
    """Every (member_id, member_epoch) pair anywhere in `found` (events, nested members)."""
    out: set[tuple[str, int]] = set()
    if isinstance(found, dict):
        if found.get("member_id") and found.get("member_epoch") is not None:
            out.add((found["member_id"], found["member_epoch"]))
        found = list(found.values())
    if isinstance(found, list):
        for item in found:
            out |= member_epochs(item)
    return out
