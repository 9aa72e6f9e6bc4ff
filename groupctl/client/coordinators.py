"""Group coordinator lookup and routing, as methods of Cluster.

- `find_coordinators(groups)`: one batched FindCoordinator (v4+, CoordinatorKeys) for all
  groups not in the cache, or one request per group on older brokers; per-group
  COORDINATOR_NOT_AVAILABLE / COORDINATOR_LOAD_IN_PROGRESS (a fresh cluster is still
  creating __consumer_offsets) are retried with back-off until the deadline.
- `send_to_coordinator(group, api, body)`: sends to the group's coordinator and handles
  exactly the errors that are about the coordinator itself, found in the top-level
  `error_code` or in the `groups[]` entry whose `group_id` is this group (never per-member
  or per-partition codes): NOT_COORDINATOR / COORDINATOR_NOT_AVAILABLE drop the
  cached coordinator, rediscover and retry; COORDINATOR_LOAD_IN_PROGRESS backs off
  and retries the same coordinator. A coordinator that cannot be reached (connection
  refused, lost, timed out) is rediscovered too. Every other code is the caller's.
- Out of time: DeadlineError (exit 6) naming the last error, or UnreachableError (exit 3)
  when that was an unreachable broker (see retry.py).
"""
from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..errors import GroupctlError, UnreachableError
from ..protocol.errors import ErrorCode, error_for
from ..protocol.messages import FIND_COORDINATOR
from ..protocol.spec import R, Api
from .errors import kafka_error
from .metadata import BrokerInfo
from .retry import TRANSIENT, Backoff, Deadline, gave_up, sleep_within

if TYPE_CHECKING:  # pragma: no cover
    from .connection import BrokerConnection

REDISCOVER = frozenset({ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.NOT_COORDINATOR})
WAIT = frozenset({ErrorCode.COORDINATOR_LOAD_IN_PROGRESS})
GROUP_KEY = 0  # FindCoordinator key type of a consumer group


# A batched FindCoordinator answer repeats each key with its coordinator's host: some
# 30 bytes a group beside its name, so 100,000 groups answer in ~3 MB, over the 1 MiB the
# connection reads of FindCoordinator (connection.FRAME_LIMITS). Keys go in requests whose
# answers stay near a quarter of that, sent together on the one connection.
ANSWER_BUDGET = 256 << 10
ANSWER_PER_KEY = 300   # beside the key: a host name of up to 255 bytes, ids, codes


def key_batches(keys: list[str]) -> list[list[str]]:
    """`keys` in order, cut where an answer could pass ANSWER_BUDGET bytes."""
    out: list[list[str]] = [[]]
    size = 0
    for key in keys:
        cost = len(key.encode()) + ANSWER_PER_KEY
        if out[-1] and size + cost > ANSWER_BUDGET:
            out.append([])
            size = 0
        out[-1].append(key)
        size += cost
    return out


async def coordinators_each(cluster, groups: list[str], deadline,
                            refused: Callable[[str, GroupctlError], None]
                            ) -> dict[str, BrokerInfo]:
    """{group: its coordinator} for many groups at once; a group whose lookup fails for
    good (not authorized, an invalid id: the error names the group) goes to `refused` and
    the others are looked up without it."""
    from ..errors import KafkaError
    from .errors import KafkaAuthError

    groups = list(groups)
    while groups:
        try:
            return await cluster.find_coordinators(groups, deadline=deadline)
        except (KafkaAuthError, KafkaError) as exc:
            group = getattr(exc, "group", None)
            if group not in groups:
                raise
            refused(group, exc)
            groups.remove(group)
    return {}


def coordinator_error(resp: Mapping[str, Any], group: str) -> int:
    """The error code of `resp` that is about `group` as a whole: the top-level
    `error_code`, else the one of its entry in `groups[]` (matched by `group_id`)."""
    code = resp.get("error_code") or 0
    if code:
        return code
    for entry in resp.get("groups") or ():
        if isinstance(entry, dict) and entry.get("group_id") == group:
            return entry.get("error_code") or 0
    return 0


class CoordinatorMixin:
    """Coordinator methods of Cluster (they use its broker pool and node registry)."""

    if TYPE_CHECKING:  # pragma: no cover - what the mixin uses of Cluster
        nodes: dict[int, BrokerInfo]
        request_timeout: float

        def deadline(self, deadline: Deadline | float | None = None) -> Deadline: ...
        async def any_broker(self, *, deadline: Deadline | float | None = None
                             ) -> BrokerConnection: ...
        async def broker(self, node_id: int, *, deadline: Deadline | float | None = None
                         ) -> BrokerConnection: ...
        def _drop(self, conn: BrokerConnection) -> None: ...

    def __init__(self) -> None:
        self._coordinators: dict[str, int] = {}  # group -> node id

    # ---- lookup -------------------------------------------------------------------------
    def invalidate_coordinator(self, group: str) -> None:
        """Forget the cached coordinator of `group` (it moved, or is unreachable)."""
        self._coordinators.pop(group, None)

    def cached_coordinator(self, group: str) -> BrokerInfo | None:
        node_id = self._coordinators.get(group)
        return self.nodes.get(node_id) if node_id is not None else None

    async def find_coordinator(self, group: str, *, refresh: bool = False,
                               deadline: Deadline | float | None = None) -> BrokerInfo:
        return (await self.find_coordinators([group], refresh=refresh, deadline=deadline))[group]

    async def find_coordinators(self, groups, *, refresh: bool = False,
                                deadline: Deadline | float | None = None
                                ) -> dict[str, BrokerInfo]:
        """{group: its coordinator}, from the cache or FindCoordinator. Raises
        KafkaError/KafkaAuthError for a group whose lookup fails for good (e.g.
        GROUP_AUTHORIZATION_FAILED, INVALID_GROUP_ID)."""
        d = self.deadline(deadline)
        wanted = list(dict.fromkeys(groups))
        found: dict[str, BrokerInfo] = {}
        for g in wanted:
            info = None if refresh else self.cached_coordinator(g)
            if info is not None:
                found[g] = info
        missing = [g for g in wanted if g not in found]
        backoff = Backoff()
        last: GroupctlError | None = None
        attempts = 0
        while missing:
            attempts += 1
            try:
                answers = await self._lookup(missing, d)
            except TRANSIENT as exc:
                last = exc
            else:
                for g, (node, code, message) in answers.items():
                    if code == ErrorCode.NONE:
                        self._coordinators[g] = node.node_id
                        known = self.nodes.get(node.node_id)
                        if known is None or (known.host, known.port) != (node.host, node.port):
                            self.nodes[node.node_id] = node
                        found[g] = self.nodes[node.node_id]
                    elif error_for(code).retriable:
                        last = kafka_error("FindCoordinator", code, f"group {g!r}")
                    else:
                        failed = kafka_error("FindCoordinator", code,
                                             f"group {g!r}" + (f": {message}" if message else ""))
                        failed.group = g  # which of the groups asked for (callers report per group)
                        raise failed
                missing = [g for g in missing if g not in found]
            if missing and not await sleep_within(d, backoff.next()):
                some = ", ".join(repr(g) for g in missing[:3]) + (" ..." if len(missing) > 3 else "")
                raise gave_up(f"FindCoordinator for {some}", attempts, d, last) from last
        return {g: found[g] for g in wanted}

    async def _lookup(self, groups: list[str], d: Deadline) -> dict:
        """{group: (BrokerInfo, error code, message)} from one broker."""
        conn = await self.any_broker(deadline=d)
        timeout = d.cap(self.request_timeout)
        try:
            if conn.supports(FIND_COORDINATOR, 4):
                resps = await asyncio.gather(*(conn.request(
                    FIND_COORDINATOR, {"key_type": GROUP_KEY, "coordinator_keys": keys},
                    timeout=timeout) for keys in key_batches(groups)))
                brokers: dict[tuple, BrokerInfo] = {}   # one per broker, not per group
                return {c["key"]: (_broker(brokers, c["node_id"], c["host"], c["port"]),
                                   c["error_code"], c.get("error_message"))
                        for resp in resps for c in resp["coordinators"] or []}
            resps = await asyncio.gather(*(conn.request(
                FIND_COORDINATOR, {"key": g, "key_type": GROUP_KEY}, timeout=timeout)
                for g in groups))
        except TRANSIENT:
            self._drop(conn)
            raise
        return {g: (BrokerInfo(r["node_id"], r["host"], r["port"]), r["error_code"],
                    r.get("error_message")) for g, r in zip(groups, resps)}

    async def coordinators_grouped(self, groups, *, deadline: Deadline | float | None = None
                                   ) -> dict[int, list[str]]:
        """{coordinator node id: [groups]}, to batch DescribeGroups & co per coordinator."""
        out: dict[int, list[str]] = {}
        for g, info in (await self.find_coordinators(groups, deadline=deadline)).items():
            out.setdefault(info.node_id, []).append(g)
        return out

    async def coordinator(self, group: str, *, deadline: Deadline | float | None = None
                          ) -> BrokerConnection:
        """The (pooled) connection to `group`'s coordinator."""
        d = self.deadline(deadline)
        info = await self.find_coordinator(group, deadline=d)
        return await self.broker(info.node_id, deadline=d)

    # ---- routing ------------------------------------------------------------------------
    async def send_to_coordinator(self, group: str, api: Api[R], body: dict, *,
                                  version: int | None = None, min_version: int = 0,
                                  timeout: float | None = None,
                                  deadline: Deadline | float | None = None) -> R:
        """Send to `group`'s coordinator, following it when it moves (see module doc).
        Returns the response; error codes other than those of REDISCOVER and WAIT are the caller's."""
        d = self.deadline(deadline)
        backoff = Backoff()
        last: GroupctlError | None = None
        attempts = 0
        while True:
            attempts += 1
            conn = None
            try:
                info = await self.find_coordinator(group, deadline=d)
                conn = await self.broker(info.node_id, deadline=d)
                resp = await conn.request(api, body, version, min_version=min_version,
                                          timeout=d.cap(timeout or self.request_timeout))
            except (*TRANSIENT, UnreachableError) as exc:
                if getattr(exc, "permanent", False):
                    raise
                last = exc
                self.invalidate_coordinator(group)
                if conn is not None:
                    self._drop(conn)
            else:
                code = coordinator_error(resp, group)
                if code in REDISCOVER:
                    self.invalidate_coordinator(group)
                elif code not in WAIT:
                    return resp
                last = kafka_error(api.name, code, f"group {group!r}")
            if not await sleep_within(d, backoff.next()):
                raise gave_up(f"{api.name} for group {group!r}", attempts, d, last) from last


def _broker(known: dict[tuple, BrokerInfo], node_id: int, host: str, port: int) -> BrokerInfo:
    info = known.get((node_id, host, port))
    if info is None:
        info = known[(node_id, host, port)] = BrokerInfo(node_id, host, port)
    return info
