"""One way to ask many brokers: shard the keys by broker, ask every broker at once, ask
again only for the keys that failed, after routing them afresh (franz-go's
RequestSharded, which serves all of kadm).

    got = await request_sharded(groups, route=coordinator_route(cluster), send=fetch,
                                deadline=d, what="OffsetFetch", forget=cluster.invalidate_coordinator)
    got.results   # {key: value}
    got.errors    # {key: GroupctlError}: refused, or still failing at the deadline

`route(keys, attempt)` -> ({key: shard}, {key: its error}): where each key goes (a node
id, or any hashable the sender understands; attempt 0 first) and the keys that cannot be
routed for good. `send(shard, keys)` -> {key: a value, a GroupctlError (final), or
Retry(error)}: one shard's answer, keys of at most `batch` at a time. A send that raises
a transient failure (connection lost, timed out, broker unreachable) retries all its keys
(each forgotten first: its broker may be the wrong one); any other exception is every one
of its keys' error. A Retry key is forgotten too when `reroute` (NOT_COORDINATOR, a moved
leader), asked again as is when not (COORDINATOR_LOAD_IN_PROGRESS).

Keys are retried with back-off until the deadline or `attempts` rounds (a poller whose
next round is the retry asks once); what is left then has its last error (see retry.py
gave_up) in `errors`, never a value.
"""
from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable, Iterable, Mapping
from typing import Any, Generic, TypeVar

from ..errors import GroupctlError, OutOfDescriptors, UnreachableError
from ..records import Record
from .retry import TRANSIENT, Backoff, Deadline, gave_up, sleep_within

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

Route = Callable[[list, int], Awaitable[tuple[Mapping[Any, Hashable], Mapping[Any, GroupctlError]]]]
Send = Callable[[Any, list], Awaitable[Mapping[Any, Any]]]


class Retry:
    """A key's answer that may succeed if asked again (after rerouting when `reroute`)."""

    __slots__ = ("error", "reroute")

    def __init__(self, error: GroupctlError, reroute: bool = True):
        self.error = error
        self.reroute = reroute

    def __repr__(self) -> str:
        return f"Retry({self.error!r}, reroute={self.reroute})"


class Sharded(Record, Generic[K, V]):
    _fields = ("results", "errors", "shards_asked", "shards_failed", "last")

    def __init__(self, results: dict[K, V] | None = None,
                 errors: dict[K, GroupctlError] | None = None, shards_asked: int = 0,
                 shards_failed: int = 0, last: GroupctlError | None = None):
        self.results: dict[K, V] = {} if results is None else results
        self.errors: dict[K, GroupctlError] = {} if errors is None else errors
        self.shards_asked = shards_asked     # requests (shard, batch) sent over all attempts
        self.shards_failed = shards_failed   # of them, those that raised
        self.last = last                     # the last failure of a whole request

    @property
    def nothing_answered(self) -> bool:
        """Every request sent raised (no broker answered at all)."""
        return self.shards_asked > 0 and self.shards_failed == self.shards_asked


def transient(exc: BaseException) -> bool:
    """A whole request's failure that asking again, elsewhere, may cure."""
    return isinstance(exc, (*TRANSIENT, UnreachableError)) and not getattr(exc, "permanent", False)


async def request_sharded(keys: Iterable[K], *, route: Route, send: Send,
                          deadline: Deadline | None, what: str, batch: int | None = None,
                          attempts: int | None = None,
                          forget: Callable[[K], None] | None = None,
                          backoff: Backoff | None = None,
                          on_batch: Callable[[list, Mapping], None] | None = None
                          ) -> Sharded[K, Any]:
    """Ask for every key of `keys` (see the module doc). `on_batch(keys, answer)`: one
    request's keys and answer as soon as it is in (a progress bar moves with them)."""
    out: Sharded[K, Any] = Sharded()
    pending = list(dict.fromkeys(keys))
    backoff = backoff or Backoff()
    why: dict = {}   # key -> its last retriable error
    tried = 0
    while pending:
        routed, refused = await route(pending, tried)
        tried += 1
        out.errors.update(refused)
        shards: dict[Hashable, list] = {}
        for key in pending:
            if key in routed:
                shards.setdefault(routed[key], []).append(key)
        requests = [(shard, ks[i:i + batch] if batch else ks) for shard, ks in shards.items()
                    for i in range(0, len(ks), batch or max(1, len(ks)))]
        out.shards_asked += len(requests)
        answers = await asyncio.gather(*(_send(send, shard, ks, on_batch)
                                         for shard, ks in requests))
        again: list = []
        for (_shard, ks), answer in zip(requests, answers):
            if isinstance(answer, GroupctlError):
                out.shards_failed += 1
                out.last = answer
                answer = {k: Retry(answer) if transient(answer) else answer for k in ks}
            for k in ks:
                item = answer.get(k, _MISSING)
                if item is _MISSING:   # a broker that did not answer for a key: ask again
                    item = Retry(GroupctlError(f"{what} {k!r}: no answer"), reroute=False)
                if isinstance(item, Retry):
                    why[k] = item.error
                    if item.reroute and forget is not None:
                        forget(k)
                    again.append(k)
                elif isinstance(item, GroupctlError):
                    out.errors[k] = item
                else:
                    out.results[k] = item
        for k in pending:
            if k not in routed and k not in refused:   # no broker for it now (an election)
                why[k] = GroupctlError(f"{what} {k!r}: no broker to ask")
                again.append(k)
        pending = again
        if not pending:
            break
        if (attempts is not None and tried >= attempts) or (attempts is None and deadline is None):
            out.errors.update((k, why[k]) for k in pending)   # the caller's next round retries
            break
        if deadline is not None and not await sleep_within(deadline, backoff.next()):
            out.errors.update((k, gave_up(f"{what} {k!r}", tried, deadline, why[k]))
                              for k in pending)
            break
    return out


_MISSING = object()


async def _send(send: Send, shard, keys: list, on_batch) -> Mapping | GroupctlError:
    try:
        answer = await send(shard, keys)
    except OutOfDescriptors:
        raise   # the machine's limit, said once for the command: no key's own failure
    except GroupctlError as exc:
        return exc
    if on_batch is not None:
        on_batch(keys, answer)
    return answer


# ---- routers ------------------------------------------------------------------------------

def coordinator_route(cluster, deadline: Deadline | None,
                      refused: Callable[[Any, GroupctlError], GroupctlError] | None = None
                      ) -> Route:
    """Route groups to their coordinators (one batched FindCoordinator for those not
    cached); a group whose lookup fails for good is refused with that error (or what
    `refused(group, error)` makes of it)."""
    async def route(groups: list, attempt: int):
        from .coordinators import coordinators_each

        bad: dict = {}

        def refuse(group, exc):
            bad[group] = refused(group, exc) if refused is not None else exc

        found = await coordinators_each(cluster, groups, deadline, refuse)
        return {g: info.node_id for g, info in found.items()}, bad
    return route


def leader_route(cluster, metadata, deadline: Deadline | None) -> Route:
    """Route (topic, partition) keys to their leaders: from `metadata` first, from fresh
    metadata of their topics when asked again (the leader moved). A partition without a
    leader is asked again (elections end) until the attempts or deadline run out."""
    async def route(partitions: list, attempt: int):
        nonlocal metadata
        if attempt:
            metadata = await cluster.metadata(sorted({t for t, _ in partitions}), deadline=deadline)
        routed = {}
        for tp in partitions:
            leader = metadata.leader_of(*tp)
            if leader is not None:
                routed[tp] = leader
        return routed, {}
    return route
