"""Routes of a group member's requests, and the connections that carry them.

A member's request names its route (groupctl.coordinator.members.interface.Outgoing.route):

    ROUTE_ANY      any broker (FindCoordinator).
    ROUTE_JOIN     the group coordinator, on a connection of its own: JoinGroup and
                   SyncGroup may be parked at the broker for a whole rebalance timeout.
    ROUTE_CONTROL  the group coordinator, on another connection: a broker answers one
                   connection's requests in order, so a heartbeat or a leave must never
                   wait behind a parked join.

`MemberLinks` keeps one dedicated connection per coordinator route. When the member's
coordinator changes (or is forgotten after an error) the connections to the old one are
closed and reopened to the new one on next use.
"""
from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from ..errors import KafkaError, UnreachableError
from ..protocol.errors import ErrorCode

if TYPE_CHECKING:  # pragma: no cover
    from .connection import BrokerConnection
    from .interface import ClusterLike

ROUTE_ANY = "any"
ROUTE_JOIN = "join"
ROUTE_CONTROL = "control"
COORDINATOR_ROUTES = (ROUTE_JOIN, ROUTE_CONTROL)


class MemberLinks:
    """The connections of one group member, keyed by route."""

    def __init__(self, cluster: ClusterLike):
        self.cluster = cluster
        self._conns: dict[str, BrokerConnection] = {}
        self._locks = {route: asyncio.Lock() for route in COORDINATOR_ROUTES}

    async def send(self, spec, body: dict, *, route: str, node_id: int | None,
                   min_version: int = 0, timeout: float | None = None) -> dict:
        """Send on `route` (to coordinator `node_id` for the coordinator routes); the
        decoded response. FindCoordinator for a group goes through the cluster's lookup (its
        cache is the one every other request uses) and comes back as a response body, its
        errors as error codes."""
        if route == ROUTE_ANY:
            from ..protocol.messages import FIND_COORDINATOR

            if spec is FIND_COORDINATOR and body.get("key_type", 0) == 0:
                return await self._find_coordinator(body["key"])
            return await self.cluster.request(spec, body, min_version=min_version,
                                              timeout=timeout)
        conn = await self._connection(route, node_id)
        return await conn.request(spec, body, negotiated_version(conn, spec, min_version),
                                  min_version=min_version,
                                  timeout=timeout or getattr(self.cluster, "request_timeout", None))

    async def open(self, node_id: int, routes=COORDINATOR_ROUTES) -> None:
        """Open the coordinator routes' connections now rather than at their first
        request (force-rebalance's trigger must not spend its short window connecting)."""
        for route in routes:
            await self._connection(route, node_id)

    def follow(self, node_id: int | None) -> list:
        """Forget the connections that are not to `node_id` (None: all of them); the
        coroutines that close them, for the caller to run."""
        closing = []
        for route, conn in list(self._conns.items()):
            if node_id is None or conn.node_id != node_id:
                del self._conns[route]
                closing.append(conn.close())
        return closing

    async def close(self) -> None:
        conns, self._conns = list(self._conns.values()), {}
        await asyncio.gather(*(c.close() for c in conns), return_exceptions=True)

    async def _find_coordinator(self, group: str) -> dict:
        from .errors import KafkaAuthError

        try:
            info = await self.cluster.find_coordinator(group, refresh=True)
        except (KafkaError, KafkaAuthError) as exc:
            return {"coordinators": [{"key": group, "error_code": exc.code, "node_id": -1,
                                      "host": "", "port": -1, "error_message": str(exc)}]}
        return {"coordinators": [{"key": group, "error_code": ErrorCode.NONE,
                                  "node_id": info.node_id, "host": info.host,
                                  "port": info.port}]}

    async def _connection(self, route: str, node_id: int | None):
        if route not in self._locks:
            raise ValueError(f"unknown route {route!r}")
        async with self._locks[route]:
            if node_id is None:
                raise UnreachableError("the coordinator is not known")
            conn = self._conns.get(route)
            if conn is not None and conn.usable and conn.node_id == node_id:
                return conn
            if conn is not None:
                await conn.close()
            conn = await self.cluster.open_connection(node_id)
            self._conns[route] = conn
            return conn


def negotiated_version(conn, api, min_version: int) -> int:
    """The highest version both speak; for a broker without flexible ApiVersions (v3+,
    KIP-511, Kafka 2.4) no flexible version at all: flexible versions came with it, and
    librdkafka's mock cluster, which lists JoinGroup v6 with ApiVersions v2, closes the
    connection on a flexible JoinGroup."""
    from ..protocol.messages import API_VERSIONS

    version = conn.version_for(api, min_version)
    api_versions = conn.broker_versions.get(API_VERSIONS.key, (0, 3))
    if api_versions[1] < 3 and api.flexible_from is not None and version >= api.flexible_from:
        version = max(min_version, api.flexible_from - 1)
    return version
