"""The records tail (client/topic_tail.py, observe/sources/records_tail.py) against a fake cluster
whose partitions are lists of record batches and whose leaders can move, fail or refuse:
every batch handed out once and in order, whatever the faults; the story starts from the
state at the start and tells only what came after; named groups without records are
Missing; a classic group's creation record is not a rebalance; `--all` follows a group
created meanwhile; no READ on the topic is exit 4."""
from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import pytest

from groupctl.client.errors import ConnectionLostError
from groupctl.client.metadata import PartitionInfo, TopicInfo
from groupctl.client.partition_reader import TopicAuthorizationError
from groupctl.client.topic_tail import Chunk, Restart, Resumed, Stalled, TopicTail
from groupctl.exitcodes import ExitCode
from groupctl.observe.reads.model import coordinator_partition
from groupctl.observe.sources.observations import Appeared, ContactLost, ContactRegained, Seen
from groupctl.observe.sources.records_tail import RecordsTail
from groupctl.protocol.errors import ErrorCode
from groupctl.protocol.records.batch import encode_batch
from test_record_batches import group_metadata_v3, key
from waiting import wait_until_async

TOPIC = "__consumer_offsets"


@dataclass
class Broker:
    """The fake cluster's state: partitions (lists of (base offset, batch bytes)), leaders,
    and the faults to inject."""

    partitions: dict[int, list[tuple[int, bytes]]]
    leaders: dict[int, int]
    fail_next: dict[int, int] = field(default_factory=dict)       # leader -> failures to give
    not_leader: set = field(default_factory=set)                  # (leader, partition)
    code: int = 0                                                 # a code for every answer
    fetches: list = field(default_factory=list)                   # (leader, {p: offset})

    def end(self, p: int) -> int:
        return self.partitions[p][-1][0] + 1 if self.partitions[p] else 0

    def append(self, p: int, batch_key: bytes, value: bytes | None, ts: int = 1000) -> None:
        offset = self.end(p)
        self.partitions[p].append((offset, encode_batch([(0, batch_key, value)],
                                                        base_offset=offset, base_timestamp=ts)))


class Conn:
    def __init__(self, broker: Broker, node: int):
        self.broker, self.node, self.closed = broker, node, False

    def version_for(self, api) -> int:
        return 16

    async def request(self, api, body, timeout=None):
        b = self.broker
        if b.fail_next.get(self.node):
            b.fail_next[self.node] -= 1
            self.closed = True
            raise ConnectionLostError(f"node {self.node}: the broker closed the connection")
        asked = {p["partition"]: p["fetch_offset"] for p in body["topics"][0]["partitions"]}
        b.fetches.append((self.node, asked))
        for _ in range(50):   # a long poll: answer as soon as there is something
            if any(b.end(p) > o for p, o in asked.items()) or b.code:
                break
            await asyncio.sleep(0.002)
        parts = []
        for p, o in asked.items():
            code = b.code or (ErrorCode.NOT_LEADER_OR_FOLLOWER
                              if (self.node, p) in b.not_leader or b.leaders[p] != self.node else
                              ErrorCode.OFFSET_OUT_OF_RANGE if o > b.end(p) else 0)
            data = b"".join(batch for base, batch in b.partitions[p] if base >= o)
            parts.append({"partition_index": p, "error_code": code, "high_watermark": b.end(p),
                          "log_start_offset": 0, "records": None if code else data})
        return {"error_code": 0, "responses": [{"topic_id": "tid", "partitions": parts}]}

    async def close(self):
        self.closed = True


class Cluster:
    cluster_id = "c"

    def __init__(self, broker: Broker, count: int):
        self.broker, self.count = broker, count
        self.denied = False

    async def metadata(self, topics, deadline=None):
        from groupctl.client.metadata import ClusterMetadata

        code = ErrorCode.TOPIC_AUTHORIZATION_FAILED if self.denied else 0
        parts = {p: PartitionInfo(p, self.broker.leaders.get(p, 1), 0) for p in range(self.count)}
        return ClusterMetadata("c", 1, {}, {TOPIC: TopicInfo(TOPIC, "tid", True, code, parts)})

    async def request(self, api, body, node_id=None, deadline=None):
        parts = body["topics"][0]["partitions"]
        return {"topics": [{"partitions": [
            {"partition_index": p["partition_index"], "error_code": 0,
             "offset": 0 if p["timestamp"] == -2 else self.broker.end(p["partition_index"])}
            for p in parts]}]}

    async def open_connection(self, node, deadline=None):
        return Conn(self.broker, node)

    async def find_coordinators(self, groups, deadline=None):
        return {}


def raw(p: int, n: int) -> list[tuple[int, bytes]]:
    return [(o, encode_batch([(0, b"k%d" % o, b"v")], base_offset=o)) for o in range(n)]


async def collect(tail: TopicTail, want: int, seconds: float = 5.0) -> list:
    items = []
    loop = asyncio.get_running_loop()
    async for item in tail.items(until=loop.time() + seconds):
        items.append(item)
        if sum(len(i.batches) for i in items if isinstance(i, Chunk)) >= want:
            break
    return items


def offsets_told(items) -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for i in items:
        if isinstance(i, Chunk):
            out.setdefault(i.partition, []).extend(b.base_offset for b in i.batches)
    return out


def test_every_batch_once_in_order_from_two_leaders():
    async def main():
        broker = Broker({0: raw(0, 3), 1: raw(1, 2)}, {0: 1, 1: 2})
        tail = TopicTail(Cluster(broker, 2), TOPIC, [0, 1], timeout=2)
        await tail.locate()
        tail.offsets = {0: 1, 1: 0}
        items = await collect(tail, 4)
        assert offsets_told(items) == {0: [1, 2], 1: [0, 1]}
        assert {leader for leader, _ in broker.fetches} == {1, 2}   # one request per leader
    asyncio.run(main())


def test_a_lost_leader_stalls_once_and_resumes_at_the_same_offset():
    async def main():
        broker = Broker({0: raw(0, 2)}, {0: 1}, fail_next={1: 3})
        tail = TopicTail(Cluster(broker, 1), TOPIC, [0], timeout=2)
        await tail.locate()
        tail.offsets = {0: 0}
        items = await collect(tail, 2)
        kinds = [type(i) for i in items]
        assert kinds.count(Stalled) == 1 and kinds.count(Resumed) == 1
        assert kinds.index(Stalled) < kinds.index(Resumed)
        assert "closed the connection" in str(items[0].error)
        assert offsets_told(items) == {0: [0, 1]}
        # then the leader moves: NOT_LEADER_OR_FOLLOWER, looked up again, nothing repeated
        broker.leaders[0] = 2
        broker.append(0, b"k2", b"v")
        more = await collect(tail, 1)
        assert offsets_told(more) == {0: [2]}
        assert broker.fetches[-1][0] == 2 and all(o == 2 for _, a in broker.fetches[-1:]
                                                  for o in a.values())
    asyncio.run(main())


def test_an_answer_asked_at_an_older_offset_is_dropped():
    async def main():
        broker = Broker({0: raw(0, 2)}, {0: 1})
        tail = TopicTail(Cluster(broker, 1), TOPIC, [0], timeout=2)
        await tail.locate()
        tail.offsets = {0: 1}
        stale = {"error_code": 0, "responses": [{"partitions": [{
            "partition_index": 0, "error_code": 0, "high_watermark": 2,
            "records": b"".join(b for _, b in broker.partitions[0])}]}]}
        assert list(tail._take({0: 0}, stale)) == []          # asked at 0, the tail is at 1
        told = list(tail._take({0: 1}, stale))
        assert [b.base_offset for c in told for b in c.batches] == [1]
        assert tail.offsets == {0: 2}
    asyncio.run(main())


def test_out_of_range_restarts_the_partition_and_no_read_is_exit_4():
    async def main():
        broker = Broker({0: raw(0, 1)}, {0: 1})
        tail = TopicTail(Cluster(broker, 1), TOPIC, [0], timeout=2)
        await tail.locate()
        tail.offsets = {0: 5}
        answer = {"error_code": 0, "responses": [{"partitions": [{
            "partition_index": 0, "error_code": ErrorCode.OFFSET_OUT_OF_RANGE,
            "high_watermark": -1, "records": None}]}]}
        assert list(tail._take({0: 5}, answer)) == [Restart(0, -2)] and tail.offsets == {}
        tail.offsets = {0: 0}
        broker.code = ErrorCode.TOPIC_AUTHORIZATION_FAILED
        with pytest.raises(TopicAuthorizationError) as err:
            await collect(tail, 1)
        assert err.value.exit_code == ExitCode.AUTH and "--operation Read" in str(err.value)
    asyncio.run(main())


def test_until_ends_a_long_poll_in_flight():
    async def main():
        broker = Broker({0: []}, {0: 1})

        async def never(*a, **k):
            await asyncio.sleep(60)
        tail = TopicTail(Cluster(broker, 1), TOPIC, [0], timeout=2)
        await tail.locate()
        tail.offsets = {0: 0}
        conn = Conn(broker, 1)
        conn.request = never
        tail._conns[1] = conn
        loop = asyncio.get_running_loop()
        started = loop.time()
        assert [i async for i in tail.items(until=started + 0.3)] == []
        assert loop.time() - started < 1.0
    asyncio.run(main())


# ---- the source ----------------------------------------------------------------------------

COUNT = 4


def classic_group(broker: Broker, group: str, generation: int, ts: int) -> None:
    broker.append(coordinator_partition(group, COUNT), key(2, group),
                  group_metadata_v3(generation), ts)


def empty_group(broker: Broker, group: str, ts: int) -> None:
    """A classic group's creation record: Empty, generation 0, no members."""
    from groupctl.protocol.types import Writer

    w = Writer()
    w.int16(3)
    w.string("consumer")
    w.int32(0)
    w.string(None)
    w.string(None)
    w.int64(ts)
    w.int32(0)
    broker.append(coordinator_partition(group, COUNT), key(2, group), w.getvalue(), ts)


async def observe(source: RecordsTail, broker: Broker, then=None, seconds: float = 0.5) -> list:
    out = []
    loop = asyncio.get_running_loop()

    async def run():
        async for o in source.observations(until=loop.time() + seconds):
            out.append(o)
    task = asyncio.create_task(run())
    await wait_until_async(lambda: source._looked or task.done(), what="the first look")
    if then is not None:
        then()
    await task
    return out


def test_the_first_look_is_the_state_at_the_start_then_each_change():
    async def main():
        broker = Broker({p: [] for p in range(COUNT)}, {p: 1 for p in range(COUNT)})
        for gen in (1, 2, 3):
            classic_group(broker, "g", gen, 1000 * gen)
        source = RecordsTail(Cluster(broker, COUNT), ["g", "nobody"], timeout=2)
        got = await observe(source, broker, lambda: classic_group(broker, "g", 4, 9000))
        seen = [(type(o).__name__, o.group, getattr(o, "desc", None) and o.desc.generation)
                for o in got]
        assert seen == [("Seen", "g", 3), ("Missing", "nobody", None), ("Seen", "g", 4)]
        assert got[-1].at == 9.0 and got[-1].source == "records"   # the record's timestamp
        fetched = {p for _, asked in broker.fetches for p in asked}
        assert fetched == {coordinator_partition(g, COUNT) for g in ("g", "nobody")}
    asyncio.run(main())


def test_a_group_created_is_told_from_its_first_members_and_all_follows_it():
    async def main():
        broker = Broker({p: [] for p in range(COUNT)}, {p: 1 for p in range(COUNT)})
        classic_group(broker, "old", 5, 500)
        source = RecordsTail(Cluster(broker, COUNT), all_groups=True, timeout=2)

        def create():
            empty_group(broker, "new", 1000)
            classic_group(broker, "new", 1, 1100)
        got = await observe(source, broker, create)
        assert [(type(o), o.group) for o in got] == [
            (Seen, "old"), (Appeared, "new"), (Seen, "new")]
        assert got[-1].desc.generation == 1 and source.follows("new")
    asyncio.run(main())


def test_a_broker_lost_is_said_but_nothing_is_missed_or_repeated():
    async def main():
        broker = Broker({p: [] for p in range(COUNT)}, {p: 1 for p in range(COUNT)})
        classic_group(broker, "g", 1, 1000)
        source = RecordsTail(Cluster(broker, COUNT), ["g"], timeout=2)

        def churn():
            broker.fail_next[1] = 2
            classic_group(broker, "g", 2, 2000)
            classic_group(broker, "g", 3, 3000)
        got = await observe(source, broker, churn, seconds=1.0)
        kinds = [type(o) for o in got]
        assert kinds.count(ContactLost) == 1 and kinds.count(ContactRegained) == 1
        assert [o.desc.generation for o in got if isinstance(o, Seen)] == [1, 2, 3]
    asyncio.run(main())


def test_a_truncated_log_is_read_again_and_only_what_differs_is_told():
    async def main():
        broker = Broker({p: [] for p in range(COUNT)}, {p: 1 for p in range(COUNT)})
        classic_group(broker, "g", 1, 1000)
        classic_group(broker, "g", 2, 2000)
        classic_group(broker, "other", 7, 2000)
        source = RecordsTail(Cluster(broker, COUNT), ["g"], timeout=2)

        def truncate():   # an unclean leader lost generation 2 (and wrote nothing else)
            p = coordinator_partition("g", COUNT)
            broker.partitions[p] = [b for b in broker.partitions[p] if b[0] == 0]
        got = await observe(source, broker, truncate)
        assert [o.desc.generation for o in got if isinstance(o, Seen)] == [2, 1]
        assert {o.group for o in got} == {"g"}
    asyncio.run(main())


def test_no_describe_on_the_topic_is_exit_4():
    async def main():
        broker = Broker({0: []}, {0: 1})
        cluster = Cluster(broker, 1)
        cluster.denied = True
        with pytest.raises(TopicAuthorizationError) as err:
            await observe(RecordsTail(cluster, ["g"], timeout=2), broker)
        assert err.value.exit_code == ExitCode.AUTH
    asyncio.run(main())


@pytest.mark.parametrize("args, says", [
    (["--source", "records", "--interval", "1", "g"], "--interval is for --source auto or describe"),
    (["--source", "logs", "g"], "--source must be auto, describe or records"),
])
def test_records_watch_usage_errors_are_exit_2_before_any_work(args, says):
    import io

    from groupctl.cli.app import invoke
    from groupctl.cli.env import Env

    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    code = invoke(["-b", "127.0.0.1:1", "watch", *args], env)
    err = env.stderr.getvalue()
    assert code == ExitCode.USAGE and says in err and err.count("\n") == 1, err


def test_the_watcher_tells_records_as_history_does_and_a_fault_blinds_nothing():
    from groupctl.observe.watch import Watcher, WatchSettings

    async def main():
        broker = Broker({p: [] for p in range(COUNT)}, {p: 1 for p in range(COUNT)})
        classic_group(broker, "g", 1, 1000)
        events, notices = [], []
        watcher = Watcher(Cluster(broker, COUNT), WatchSettings(
            groups=["g"], duration=1.0, source="records"), emit=events.append,
            notice=notices.append, poll_deadline=2)

        async def churn():
            await wait_until_async(lambda: watcher.source._looked, what="the first look")
            broker.fail_next[1] = 1
            # the contact lost before the next record is written
            await wait_until_async(lambda: notices, what="the contact-lost notice")
            classic_group(broker, "g", 2, 2000)
        await asyncio.gather(watcher.run(), churn())
        kinds = [e["event"] for e in events]
        assert kinds.count("snapshot") == 1   # the first look only: the fault blinded nothing
        rebalance = next(e for e in events if e["event"] == "rebalance")
        assert (rebalance["from_generation"], rebalance["to_generation"]) == (1, 2)
        assert rebalance["started"] is None and rebalance["duration_ms"] is None
        assert rebalance["ended"] == "1970-01-01T00:00:02.000Z"   # the record's timestamp
        assert {e["source"] for e in events} == {"records"}
        assert [n.split(" (")[0] for n in notices] == [
            "lost contact with the records' partition leader",
            "reconnected; resuming at the first record not read yet"]
    asyncio.run(main())


def test_list_offsets_waits_for_a_leader_not_ready_yet_within_the_timeout():
    async def main():
        broker = Broker({0: raw(0, 3)}, {0: 1})
        cluster = Cluster(broker, 1)
        answer, refusals = cluster.request, [3]

        async def not_ready_at_first(api, body, node_id=None, deadline=None):
            if refusals[0]:
                refusals[0] -= 1
                return {"topics": [{"partitions": [{"partition_index": 0, "offset": -1,
                                                    "error_code": ErrorCode.NOT_LEADER_OR_FOLLOWER}]}]}
            return await answer(api, body, node_id=node_id, deadline=deadline)
        cluster.request = not_ready_at_first
        tail = TopicTail(cluster, TOPIC, [0], timeout=5)
        await tail.locate()
        assert await tail.offsets_at(-1) == {0: 3} and refusals == [0]
        refusals[0] = 10 ** 6   # never ready: the broker's error, after the timeout
        tail.timeout = 0.3
        with pytest.raises(Exception) as err:
            await tail.offsets_at(-1)
        assert "NOT_LEADER_OR_FOLLOWER" in str(err.value) and "within 0.3 s" in str(err.value)
    asyncio.run(main())


# ---- issue 30 / 32: what a watch started meanwhile tells ---------------------------------

def test_a_record_written_while_the_watch_starts_is_told_not_folded_into_the_first_look():
    """Generation 4 is written after the start's ListOffsets (the end to replay up to) and
    before the first Fetch answer: it is news, told after the first look, not read as the
    state at the start (the first look was generation 4 and no rebalance was told)."""
    async def main():
        broker = Broker({p: [] for p in range(COUNT)}, {p: 1 for p in range(COUNT)})
        classic_group(broker, "g", 3, 3000)
        cluster = Cluster(broker, COUNT)
        answer = cluster.request

        async def then_generation_4(api, body, node_id=None, deadline=None):
            resp = await answer(api, body, node_id=node_id, deadline=deadline)
            if body["topics"][0]["partitions"][0]["timestamp"] == -1:   # LATEST: the end
                classic_group(broker, "g", 4, 9000)
            return resp
        cluster.request = then_generation_4
        got = await observe(RecordsTail(cluster, ["g"], timeout=2), broker)
        assert [(type(o).__name__, o.desc.generation) for o in got] == [("Seen", 3), ("Seen", 4)]
        assert got[-1].at == 9.0
    asyncio.run(main())


def test_a_watch_started_before_the_topic_existed_tells_the_first_generation():
    """No __consumer_offsets at the start (no group was ever coordinated): everything the
    topic holds once it appears was written after the start, so the group's creation is
    told from nothing (Missing, then generation 1), not taken as its state at the start."""
    async def main():
        from groupctl.client.metadata import ClusterMetadata

        broker = Broker({p: [] for p in range(COUNT)}, {p: 1 for p in range(COUNT)})
        cluster = Cluster(broker, COUNT)
        metadata, asked = cluster.metadata, []

        async def not_yet(topics, deadline=None):
            asked.append(topics)
            if len(asked) == 1:   # the consumers create it meanwhile, and the group
                empty_group(broker, "g", 1000)
                classic_group(broker, "g", 1, 1100)
                return ClusterMetadata("c", 1, {}, {})
            return await metadata(topics, deadline=deadline)
        cluster.metadata = not_yet
        got = await observe(RecordsTail(cluster, ["g"], timeout=2), broker)
        assert [(type(o).__name__, getattr(o, "desc", None) and o.desc.generation)
                for o in got] == [("Missing", None), ("Seen", 1)]
    asyncio.run(main())


def commit(broker: Broker, group: str, ts: int, value: bytes | None = b"\x00\x03offset") -> None:
    import struct

    broker.append(coordinator_partition(group, COUNT), key(1, group, "t") + struct.pack(">i", 0),
                  value, ts)


def test_groups_that_only_committed_offsets_are_told_once_as_they_stand():
    """Issue 32: most groups of a fleet only commit offsets (no GroupMetadata record): each
    is told once, Empty, classic, no protocol type, as describe --all shows it; one that
    commits for the first time during the watch appears; one deleted (its tombstones)
    is gone; one that later gets members is told from nothing."""
    async def main():
        broker = Broker({p: [] for p in range(COUNT)}, {p: 1 for p in range(COUNT)})
        for g in ("c1", "c2", "c3"):
            commit(broker, g, 500)
        commit(broker, "c2", 600)
        source = RecordsTail(Cluster(broker, COUNT), all_groups=True, timeout=2)

        def meanwhile():
            commit(broker, "c4", 1000)
            commit(broker, "c1", 1100)   # nothing new: told already
            commit(broker, "c3", 1200, value=None)   # DeleteGroups: offsets' tombstones ...
            broker.append(coordinator_partition("c3", COUNT), key(2, "c3"), None, 1200)
            empty_group(broker, "c2", 1300)   # a member joins c2: its creation, generation 1
            classic_group(broker, "c2", 1, 1400)
        got = await observe(source, broker, meanwhile)
        told = [(type(o).__name__, o.group, getattr(o, "desc", None) and
                 (o.desc.type, o.desc.state, o.desc.protocol_type, o.desc.generation))
                for o in got]
        first = [t for t in told[:3]]
        assert sorted(first) == [("Seen", g, ("classic", "Empty", None, None))
                                 for g in ("c1", "c2", "c3")]
        assert sorted(told[3:], key=lambda t: (t[1], t[0])) == [
            ("Seen", "c2", ("classic", "Stable", "consumer", 1)),
            ("Missing", "c3", None),
            ("Appeared", "c4", None), ("Seen", "c4", ("classic", "Empty", None, None))]
    asyncio.run(main())


def test_a_named_group_that_only_committed_offsets_exists():
    async def main():
        broker = Broker({p: [] for p in range(COUNT)}, {p: 1 for p in range(COUNT)})
        commit(broker, "c1", 500)
        got = await observe(RecordsTail(Cluster(broker, COUNT), ["c1", "nobody"], timeout=2),
                            broker)
        assert [(type(o).__name__, o.group, getattr(o, "desc", None) and o.desc.state)
                for o in got] == [("Seen", "c1", "Empty"), ("Missing", "nobody", None)]
    asyncio.run(main())


def test_the_first_look_brings_the_rebalances_the_records_held_before_the_watch():
    """Issue 32 (screen): the records watch replays every group's history before its first
    look; the live view started with `last rebalance -` and an empty timeline all the same.
    The first look's snapshot carries the past rounds (as history tells them), which fill
    the timeline without counting as rebalances of the watch."""
    from groupctl.observe.watch import Watcher, WatchSettings
    from groupctl.render.watch import WatchModel, header_text

    async def main():
        broker = Broker({p: [] for p in range(COUNT)}, {p: 1 for p in range(COUNT)})
        empty_group(broker, "g", 1000)
        for gen in (1, 2, 3):
            classic_group(broker, "g", gen, 1000 * gen + 500)
        events: list[dict] = []
        watcher = Watcher(Cluster(broker, COUNT), WatchSettings(
            groups=["g"], duration=0.5, source="records"), emit=events.append, poll_deadline=2)
        await watcher.run()
        return watcher, events
    watcher, events = asyncio.run(main())
    assert events[0]["event"] == "snapshot" and "rebalance" not in [e["event"] for e in events]
    recent = events[0]["recent_rebalances"]
    assert [(r["from_generation"], r["to_generation"], r["source"]) for r in recent] == [
        (0, 1, "records"), (1, 2, "records"), (2, 3, "records")]
    assert recent[-1]["ended"] == "1970-01-01T00:00:03.500Z" and recent[-1]["duration_ms"] is None
    status = watcher.reducer.groups["g"]
    assert status.rebalances == 0 and len(status.timeline) == 3
    model = WatchModel()
    for e in events:
        model.apply(e)
    assert "last rebalance 10 s ago" in header_text(model, now=13.5)


def test_two_generations_in_one_batch_are_each_told():
    """The coordinator lingers before it appends: two writes of a group may share a batch
    (as history cuts them: replay.Write); each generation is told, not only the last."""
    async def main():
        broker = Broker({p: [] for p in range(COUNT)}, {p: 1 for p in range(COUNT)})
        classic_group(broker, "g", 1, 1000)
        source = RecordsTail(Cluster(broker, COUNT), ["g"], timeout=2)

        def two_at_once():
            p = coordinator_partition("g", COUNT)
            offset = broker.end(p)
            broker.partitions[p].append((offset, encode_batch(
                [(0, key(2, "g"), group_metadata_v3(2)), (2, key(2, "g"), group_metadata_v3(3))],
                base_offset=offset, base_timestamp=2000)))
        got = await observe(source, broker, two_at_once)
        assert [(o.desc.generation, o.at) for o in got] == [(1, got[0].at), (2, 2.0), (3, 2.002)]
    asyncio.run(main())


@pytest.mark.parametrize("all_groups, told", [(False, 10), (True, 1)])
def test_the_past_costs_the_last_writes_only(all_groups, told):
    """A group with 150 generations before the watch: its first look brings the last 10
    rebalances (the live view's timeline), `--all` the last one (the top view's column);
    the story runs over the last writes kept, not the whole history."""
    async def main():
        broker = Broker({p: [] for p in range(COUNT)}, {p: 1 for p in range(COUNT)})
        for gen in range(1, 151):
            classic_group(broker, "g", gen, 1000 * gen)
        source = RecordsTail(Cluster(broker, COUNT), ["g"] if not all_groups else (),
                             all_groups=all_groups, timeout=2)
        got = await observe(source, broker)
        assert [o.desc.generation for o in got] == [150]
        event = source.amend({"event": "snapshot", "group": "g"}, got[0].desc)
        return event["recent_rebalances"]
    recent = asyncio.run(main())
    assert [r["to_generation"] for r in recent] == list(range(151 - told, 151))


def test_the_past_of_a_group_whose_first_write_has_members_starts_from_nothing():
    """As history tells it: a group's first record on a partition read with no gap is its
    creation, so a first write that already holds members (a consumer group's join and
    assignment in one write; a classic group on a broker that wrote no creation record)
    is a rebalance from nothing."""
    async def main():
        broker = Broker({p: [] for p in range(COUNT)}, {p: 1 for p in range(COUNT)})
        classic_group(broker, "g", 1, 1000)
        classic_group(broker, "g", 2, 2000)
        source = RecordsTail(Cluster(broker, COUNT), ["g"], timeout=2)
        got = await observe(source, broker)
        return source.amend({"event": "snapshot", "group": "g"}, got[0].desc)
    recent = asyncio.run(main())["recent_rebalances"]
    assert [(r["from_generation"], r["to_generation"]) for r in recent] == [(0, 1), (1, 2)]
