"""A Kafka cluster as seen from groupctl: bootstrap, metadata, a pool of broker connections,
and (coordinators.py) group coordinator lookup and routing.

    async with Cluster(["h1:9092", "h2:9092"], timeout=10) as cluster:
        md = await cluster.metadata()                    # all topics
        conn = await cluster.broker(md.controller_id)    # pooled, connected lazily
        coord = await cluster.find_coordinators(["g1", "g2"])
        resp = await cluster.send_to_coordinator("g1", DESCRIBE_GROUPS, {...})
        per_node = await cluster.for_each_broker(LIST_GROUPS, {})

Bootstrap connects to every bootstrap server at once; the first to finish the handshake
wins (the others are closed). When none does, it tries again with back-off until the
deadline, except servers that proved not to be Kafka (or failed TLS): then
UnreachableError listing every server and why. Any other error (AuthError, a bad TLS
file, no common ApiVersions) ends bootstrap at once.

`timeout` is the default budget of each operation (bootstrap, metadata, a coordinator
lookup, a coordinator request with its retries); every method also takes `deadline=` (a
retry.Deadline, or seconds) to share one budget across calls.
"""
from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Union

from ..config import PLAINTEXT, SecurityConfig, split_host_port
from ..errors import GroupctlError, OutOfDescriptors, UnreachableError
from ..protocol.messages import METADATA
from ..protocol.spec import R, Api
from .connection import DEFAULT_REQUEST_TIMEOUT, BrokerConnection
from .dial import format_address, is_permanent
from .coordinators import CoordinatorMixin
from .errors import kafka_error
from .metadata import BrokerInfo, ClusterMetadata, parse_metadata
from .retry import TRANSIENT, Backoff, Deadline, retry, sleep_within
from .trace import Tracer, current_tracer

Body = Union[dict, Callable[[BrokerConnection], dict]]
DEFAULT_CONNECT_TIMEOUT = 10.0
SLOW_BOOTSTRAP_NOTICE = 1.0  # seconds without a connection before on_slow_bootstrap
FAN_OUT = 8   # brokers for_each_broker asks at once


class Cluster(CoordinatorMixin):
    def __init__(self, bootstrap: list[str], *, timeout: float, client_id: str = "groupctl",
                 security: SecurityConfig | None = None, trace: Tracer | None = None,
                 request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
                 connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
                 on_slow_bootstrap: Callable[[list[str], float, str | None], None]
                 | None = None):
        if not bootstrap:
            raise UnreachableError("no bootstrap servers given")
        self.bootstrap = list(bootstrap)
        self._bootstrap_addrs = [split_host_port(s) for s in self.bootstrap]
        self.timeout = timeout
        self.client_id = client_id
        self.security = security or PLAINTEXT
        self.trace = trace if trace is not None else current_tracer()
        self.request_timeout = request_timeout
        self.connect_timeout = connect_timeout
        # called once when bootstrap has not connected: at its first round's failures
        # (why: the errors, "connection refused"), else after SLOW_BOOTSTRAP_NOTICE s
        # without an answer (why: None); with the servers and the seconds it retries for
        # (the CLI tells a terminal user)
        self.on_slow_bootstrap = on_slow_bootstrap
        self.nodes: dict[int, BrokerInfo] = {}       # the node registry
        self.cluster_id: str | None = None
        self.controller_id: int | None = None
        self.last_metadata: ClusterMetadata | None = None
        self._conns: dict[int, BrokerConnection] = {}
        self._connecting: dict[int, asyncio.Task] = {}
        self._seed: BrokerConnection | None = None  # bootstrap connection not (yet) a node's
        self._extra: list[BrokerConnection] = []    # dedicated connections, closed with us
        self._background: set[asyncio.Task] = set()  # closes of dropped connections
        self._closed = False
        CoordinatorMixin.__init__(self)

    async def __aenter__(self) -> Cluster:
        await self.connect()
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    def deadline(self, deadline: Deadline | float | None = None) -> Deadline:
        """A Deadline from `deadline` (seconds or a Deadline), default `timeout` seconds."""
        return Deadline.of(deadline, self.timeout)

    # ---- bootstrap ----------------------------------------------------------------------
    async def connect(self, deadline: Deadline | float | None = None) -> None:
        """Bootstrap and fetch the broker list (Metadata without topics)."""
        d = self.deadline(deadline)
        await self._bootstrap(d)
        await self.metadata([], deadline=d)

    async def _bootstrap(self, deadline: Deadline) -> BrokerConnection:
        notice = None
        said: list[bool] = []

        def say(why: str | None = None) -> None:
            if not said and self.on_slow_bootstrap is not None:
                said.append(True)
                self.on_slow_bootstrap(self.bootstrap, deadline.seconds, why)

        if self.on_slow_bootstrap is not None:
            notice = asyncio.get_running_loop().call_later(SLOW_BOOTSTRAP_NOTICE, say)
        try:
            return await self._bootstrap_rounds(deadline, say)
        finally:
            if notice is not None:
                notice.cancel()

    async def _bootstrap_rounds(self, deadline: Deadline,
                                say: Callable[[str], None] = lambda why: None
                                ) -> BrokerConnection:
        errors: dict[str, GroupctlError] = {}
        given_up: set[tuple[str, int]] = set()
        backoff = Backoff(0.05, 1.0)
        rounds = 0
        while True:
            rounds += 1
            todo = [a for a in self._bootstrap_addrs if a not in given_up]
            conn, failed = await self._race(todo, deadline)
            if conn is not None:
                self._seed = conn
                return conn
            for addr, exc in failed:
                errors[format_address(*addr)] = exc
                if not isinstance(exc, UnreachableError):
                    raise exc  # auth, bad TLS files, no common version: retrying won't help
                if is_permanent(exc):
                    given_up.add(addr)
            if len(given_up) == len(self._bootstrap_addrs):
                break
            if rounds == 1 and failed:   # the first failure is said at once, as it is
                say("; ".join(str(e) for e in errors.values()))
            if not await sleep_within(deadline, backoff.next()):
                break
        if len(errors) == 1 and is_permanent(next(iter(errors.values()))):
            raise next(iter(errors.values()))  # "... is not a Kafka broker: ..."
        why = "; ".join(str(e) for e in errors.values())
        tried = f"{rounds} round{'s' if rounds != 1 else ''} in {deadline.seconds:.1f} s"
        raise UnreachableError(f"no Kafka broker reachable ({tried}): {why}")

    async def _race(self, addrs: list[tuple[str, int]], deadline: Deadline,
                    node_ids: Sequence[int | None] | None = None):
        """Connect to all `addrs` at once; (first connection, [(addr, error)...])."""
        tasks = {}
        for i, addr in enumerate(addrs):
            node_id = node_ids[i] if node_ids else None
            tasks[asyncio.ensure_future(self._open(addr[0], addr[1], node_id, deadline))] = addr
        failed, winner, pending = [], None, set(tasks)
        try:
            while pending and winner is None:
                done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
                unexpected = None   # raised once every task done is read (none unretrieved)
                for t in done:
                    exc = t.exception()
                    if exc is None:
                        if winner is None:
                            winner = t.result()
                        else:
                            await t.result().close()
                    elif isinstance(exc, GroupctlError):
                        failed.append((tasks[t], exc))
                    else:
                        unexpected = unexpected or exc
                if unexpected is not None:
                    if winner is not None:
                        await winner.close()
                    raise unexpected
        finally:
            for t in pending:
                t.cancel()
            for t in pending:
                try:
                    conn = await t
                    await conn.close()
                except BaseException:  # noqa: BLE001 - losers of the race
                    pass
        return winner, failed

    async def _open(self, host: str, port: int, node_id: int | None,
                    deadline: Deadline) -> BrokerConnection:
        conn = BrokerConnection(host, port, node_id=node_id, client_id=self.client_id,
                                security=self.security, trace=self.trace,
                                request_timeout=self.request_timeout)
        return await conn.connect(deadline.cap(self.connect_timeout))

    # ---- connections --------------------------------------------------------------------
    async def broker(self, node_id: int, *, deadline: Deadline | float | None = None
                     ) -> BrokerConnection:
        """The pooled connection to broker `node_id`, connected on first use (one connect
        shared by concurrent callers); a dead one is replaced."""
        self._check_open()
        conn = self._conns.get(node_id)
        if conn is not None and conn.usable:
            return conn
        if conn is not None:
            self._drop(conn)
        d = self.deadline(deadline)
        task = self._connecting.get(node_id)
        if task is None:
            info = await self._node_info(node_id, d)
            task = asyncio.ensure_future(self._open_pooled(info, d))
            self._connecting[node_id] = task
            task.add_done_callback(lambda t: self._forget_connect(node_id, t))
        return await asyncio.shield(task)

    def _forget_connect(self, node_id: int, task: asyncio.Task) -> None:
        if self._connecting.get(node_id) is task:
            del self._connecting[node_id]
        if not task.cancelled():
            task.exception()  # retrieved: a failure nobody awaited is not "never retrieved"

    async def _open_pooled(self, info: BrokerInfo, deadline: Deadline) -> BrokerConnection:
        conn = await self._open(info.host, info.port, info.node_id, deadline)
        if self._closed:
            await conn.close()
            raise UnreachableError("the cluster client is closed")
        self._conns[info.node_id] = conn
        return conn

    async def _node_info(self, node_id: int, deadline: Deadline) -> BrokerInfo:
        info = self.nodes.get(node_id)
        if info is None:
            await self.metadata([], deadline=deadline)
            info = self.nodes.get(node_id)
        if info is None:
            known = ", ".join(str(n) for n in sorted(self.nodes)) or "none"
            raise UnreachableError(f"broker {node_id} is not in the cluster's metadata "
                                   f"(brokers: {known})")
        return info

    async def open_connection(self, node_id: int, *, deadline: Deadline | float | None = None
                              ) -> BrokerConnection:
        """A dedicated (not pooled) connection to `node_id`, e.g. to send a LeaveGroup
        while a JoinGroup is parked on the pooled one. Closed with the cluster at the
        latest; the caller may close it earlier."""
        d = self.deadline(deadline)
        info = await self._node_info(node_id, d)
        conn = await self._open(info.host, info.port, info.node_id, d)
        self._extra = [c for c in self._extra if not c.closed] + [conn]
        return conn

    async def any_broker(self, *, deadline: Deadline | float | None = None) -> BrokerConnection:
        """A usable connection to some broker: an open one if there is one, else the
        first known broker to answer, else a fresh bootstrap."""
        self._check_open()
        for conn in [self._seed, *self._conns.values()]:
            if conn is not None and conn.usable:
                return conn
        d = self.deadline(deadline)
        if self.nodes:  # a few known brokers at once, not the whole cluster
            import random  # here, not at the top: rarely needed, and ~1 ms to import

            ids = random.sample(sorted(self.nodes), min(3, len(self.nodes)))
            conn, _ = await self._race([(self.nodes[i].host, self.nodes[i].port) for i in ids],
                                       d, ids)
            if conn is not None:
                self._conns[conn.node_id] = conn
                return conn
        return await self._bootstrap(d)

    def _drop(self, conn: BrokerConnection) -> None:
        """Forget a connection (dead, or failed a request) and close it in the background."""
        if conn.node_id is not None and self._conns.get(conn.node_id) is conn:
            del self._conns[conn.node_id]
        if self._seed is conn:
            self._seed = None
        if not conn.closed:
            task = asyncio.ensure_future(conn.close())
            self._background.add(task)
            task.add_done_callback(self._background.discard)

    def _check_open(self) -> None:
        if self._closed:
            raise UnreachableError("the cluster client is closed")

    async def close(self) -> None:
        """Close every connection; pending requests fail with ConnectionLostError."""
        self._closed = True
        for task in list(self._connecting.values()):
            task.cancel()
        conns = {id(c): c for c in [self._seed, *self._conns.values(), *self._extra] if c}
        self._conns.clear()
        self._extra.clear()
        self._seed = None
        await asyncio.gather(*(c.close() for c in conns.values()), *self._background,
                             return_exceptions=True)

    # ---- requests -----------------------------------------------------------------------
    async def request(self, api: Api[R], body: Body, *, node_id: int | None = None,
                      version: int | None = None, min_version: int = 0,
                      timeout: float | None = None,
                      deadline: Deadline | float | None = None) -> R:
        """One request to broker `node_id` (or any broker), retried on connection loss
        and request timeouts until the deadline. Error codes in the response are the
        caller's to read."""
        d = self.deadline(deadline)

        async def once() -> R:
            conn = await (self.broker(node_id, deadline=d) if node_id is not None
                          else self.any_broker(deadline=d))
            try:
                return await conn.request(api, body(conn) if callable(body) else body, version,
                                          min_version=min_version,
                                          timeout=d.cap(timeout or self.request_timeout))
            except TRANSIENT:
                self._drop(conn)
                raise

        return await retry(once, deadline=d, what=f"{api.name} request",
                           retriable=lambda e: isinstance(e, TRANSIENT))

    async def metadata(self, topics: list[str] | None = None, *,
                       deadline: Deadline | float | None = None) -> ClusterMetadata:
        """Metadata for `topics` (None: every topic; []: none, just brokers and the
        controller). Updates the node registry. Topic-level errors (e.g. an unknown topic:
        UNKNOWN_TOPIC_OR_PARTITION) are left in TopicInfo.error_code for the caller."""
        def body(conn: BrokerConnection) -> dict:
            wanted = topics
            if wanted is None and conn.version_for(METADATA) == 0:
                wanted = []  # v0: an empty list means every topic
            return {"topics": None if wanted is None else [{"name": t} for t in wanted],
                    "allow_auto_topic_creation": False,
                    "include_topic_authorized_operations": False}

        resp = await self.request(METADATA, body, deadline=deadline)
        if resp.get("error_code"):
            raise kafka_error("Metadata", resp["error_code"])
        md = parse_metadata(resp)
        self._update_nodes(md)
        return md

    def _update_nodes(self, md: ClusterMetadata) -> None:
        self.nodes = dict(md.brokers)
        self.cluster_id = md.cluster_id
        self.controller_id = md.controller_id
        self.last_metadata = md
        for node_id, conn in list(self._conns.items()):  # a node that moved or left
            info = self.nodes.get(node_id)
            if info is None or (info.host, info.port) != (conn.host, conn.port):
                self._drop(conn)
        seed = self._seed
        if seed is not None and seed.node_id is None:  # the bootstrap server is a node
            for info in self.nodes.values():
                if (info.host, info.port) == (seed.host, seed.port) and info.node_id not in self._conns:
                    seed.node_id = info.node_id
                    self._conns[info.node_id] = seed
                    break

    async def for_each_broker(self, api: Api, body: Body, *, version: int | None = None,
                              min_version: int = 0, deadline: Deadline | float | None = None
                              ) -> dict[int, dict | GroupctlError]:
        """Send `api` to every broker of the cluster at once (after a fresh broker list):
        {node_id: response, or the GroupctlError that broker failed with}."""
        d = self.deadline(deadline)
        await self.metadata([], deadline=d)
        ids = sorted(self.nodes)
        # at most FAN_OUT brokers at once: the cluster says how many brokers there are,
        # and each answer is held until all are in (150 advertised brokers x a hostile
        # answer each took gigabytes)
        gate = asyncio.Semaphore(FAN_OUT)

        async def one(node_id: int):
            try:
                async with gate:
                    return await self.request(api, body, node_id=node_id, version=version,
                                              min_version=min_version, deadline=d)
            except OutOfDescriptors:
                raise   # the machine's limit: no broker's fault, said once for the command
            except GroupctlError as exc:
                return exc

        results = await asyncio.gather(*(one(n) for n in ids))
        return dict(zip(ids, results))
