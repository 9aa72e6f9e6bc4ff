"""client/sharded.py on a fake router: keys sharded by broker, asked at once, only the
failed keys asked again after rerouting, until the deadline or the attempts run out."""
from __future__ import annotations

import asyncio

from groupctl.client.errors import ConnectionLostError, kafka_error
from groupctl.client.retry import Backoff, Deadline
from groupctl.client.sharded import Retry, request_sharded
from groupctl.errors import DeadlineError, GroupctlError
from groupctl.protocol.errors import ErrorCode


class Router:
    """Keys to brokers from a table that tests move; records every send."""

    def __init__(self, table: dict[str, int]):
        self.table = dict(table)
        self.sent: list[tuple[int, list[str]]] = []
        self.forgotten: list[str] = []
        self.routes = 0
        self.in_flight = 0
        self.most_in_flight = 0

    async def route(self, keys, attempt):
        self.routes += 1
        return {k: self.table[k] for k in keys if k in self.table}, {
            k: GroupctlError(f"{k} refused") for k in keys if k not in self.table}

    def forget(self, key):
        self.forgotten.append(key)


def fast() -> Backoff:
    return Backoff(base=0.001, cap=0.002)


def run(coro):
    return asyncio.run(coro)


def test_keys_are_sharded_by_broker_batched_and_asked_at_once():
    router = Router({"a": 1, "b": 1, "c": 1, "d": 2, "e": 3})

    async def send(node, keys):
        router.sent.append((node, list(keys)))
        router.in_flight += 1
        router.most_in_flight = max(router.most_in_flight, router.in_flight)
        await asyncio.sleep(0.01)
        router.in_flight -= 1
        return {k: f"{k}@{node}" for k in keys}

    async def main():
        return await request_sharded(list("abcdex"), route=router.route, send=send,
                                     deadline=Deadline(5), what="test of", batch=2)
    got = run(main())
    assert got.results == {"a": "a@1", "b": "b@1", "c": "c@1", "d": "d@2", "e": "e@3"}
    assert list(got.errors) == ["x"] and "x refused" in str(got.errors["x"])
    assert sorted(router.sent) == [(1, ["a", "b"]), (1, ["c"]), (2, ["d"]), (3, ["e"])]
    assert router.most_in_flight == 4      # every request at once, not one after another
    assert router.routes == 1 and got.shards_asked == 4 and not got.nothing_answered


def test_only_the_failed_keys_are_asked_again_after_rerouting():
    router = Router({"a": 1, "b": 1, "c": 2})
    moved = kafka_error("OffsetFetch", ErrorCode.NOT_COORDINATOR, "group 'b'")
    loading = kafka_error("OffsetFetch", ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, "group 'c'")
    answers = {(1, "b"): [Retry(moved)], (2, "c"): [Retry(loading, reroute=False)]}

    async def send(node, keys):
        router.sent.append((node, list(keys)))
        out = {}
        for k in keys:
            queued = answers.get((node, k))
            out[k] = queued.pop(0) if queued else f"{k}@{node}"
        if node == 1 and "b" in keys:
            router.table["b"] = 3     # the coordinator moved to broker 3
        return out

    async def main():
        return await request_sharded(["a", "b", "c"], route=router.route, send=send,
                                     deadline=Deadline(5), what="test of",
                                     forget=router.forget, backoff=fast())
    got = run(main())
    assert got.results == {"a": "a@1", "b": "b@3", "c": "c@2"} and not got.errors
    assert router.forgotten == ["b"]       # rerouted; c's coordinator kept (it is loading)
    assert sorted(router.sent) == [(1, ["a", "b"]), (2, ["c"]), (2, ["c"]), (3, ["b"])]


def test_a_lost_connection_retries_its_keys_and_a_final_error_is_theirs_only():
    router = Router({"a": 1, "b": 2, "c": 3})
    failures = {1: [ConnectionLostError("broker 1 lost")]}

    async def send(node, keys):
        router.sent.append((node, list(keys)))
        if failures.get(node):
            raise failures[node].pop(0)
        if node == 3:
            raise GroupctlError("not authorized")      # not transient: no second try
        return {k: node for k in keys}

    async def main():
        return await request_sharded(["a", "b", "c"], route=router.route, send=send,
                                     deadline=Deadline(5), what="test of",
                                     forget=router.forget, backoff=fast())
    got = run(main())
    assert got.results == {"a": 1, "b": 2}
    assert str(got.errors["c"]) == "not authorized"
    assert router.forgotten == ["a"] and [n for n, _ in router.sent].count(3) == 1
    assert (got.shards_asked, got.shards_failed) == (4, 2)


def test_keys_still_failing_at_the_deadline_give_up_with_their_last_error():
    router = Router({"a": 1, "b": 2})

    async def send(node, keys):
        if node == 2:
            return {k: Retry(kafka_error("X", ErrorCode.COORDINATOR_NOT_AVAILABLE, k)) for k in keys}
        return {k: "ok" for k in keys}

    async def main():
        return await request_sharded(["a", "b"], route=router.route, send=send,
                                     deadline=Deadline(0.05), what="test of", backoff=fast())
    got = run(main())
    assert got.results == {"a": "ok"}
    err = got.errors["b"]
    assert isinstance(err, DeadlineError) and "test of 'b': gave up after" in str(err)
    assert "COORDINATOR_NOT_AVAILABLE" in str(err)


def test_one_attempt_leaves_the_retry_to_the_caller_and_nothing_answered_is_told():
    router = Router({"a": 1, "b": 2})

    async def send(node, keys):
        raise ConnectionLostError(f"broker {node} lost")

    async def main():
        return await request_sharded(["a", "b"], route=router.route, send=send,
                                     deadline=None, what="test of", attempts=1,
                                     forget=router.forget)
    got = run(main())
    assert {k: str(e) for k, e in got.errors.items()} == {"a": "broker 1 lost",
                                                           "b": "broker 2 lost"}
    assert got.nothing_answered and router.routes == 1 and sorted(router.forgotten) == ["a", "b"]


def test_a_key_without_a_broker_now_is_routed_again():
    router = Router({"a": 1})
    leaders = iter([{}, {"b": 2}])

    async def route(keys, attempt):
        return next(leaders), {}

    async def send(node, keys):
        return {k: node for k in keys}

    got = run(request_sharded(["b"], route=route, send=send, deadline=None, what="test of",
                              attempts=2))
    assert got.results == {"b": 2} and not got.errors and router.sent == []
