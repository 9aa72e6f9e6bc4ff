"""The probe's links to its group coordinator: FindCoordinator through the Cluster, and two
dedicated connections to the coordinator.

"join" carries JoinGroup and SyncGroup: both may be parked at the broker for up to the
rebalance timeout, and a broker answers one connection's requests in order. "control"
carries Heartbeat and LeaveGroup, so a leave is never stuck behind a parked JoinGroup.
When the member's coordinator changes (or is forgotten after an error) both are closed and
reopened to the new one on next use.

Request timeouts: JoinGroup / SyncGroup the rebalance timeout plus 5 s; Heartbeat the
session timeout; LeaveGroup the leave budget.
"""
from __future__ import annotations

import asyncio

from ..errors import KafkaError, UnreachableError
from . import classic as C

ROLE = {C.JOIN_GROUP: "join", C.SYNC_GROUP: "join", C.HEARTBEAT: "control",
        C.LEAVE_GROUP: "control"}


class CoordinatorLinks:
    def __init__(self, cluster, settings, leave_seconds: float):
        self.cluster = cluster
        self.settings = settings
        self.leave_seconds = leave_seconds
        self._conns: dict[str, object] = {}
        self._locks = {"join": asyncio.Lock(), "control": asyncio.Lock()}

    async def find_coordinator(self, group: str) -> dict:
        """A FindCoordinator response body for the member (errors as error codes)."""
        from ..client.errors import KafkaAuthError

        try:
            info = await self.cluster.find_coordinator(group, refresh=True)
        except (KafkaError, KafkaAuthError) as exc:
            return {"coordinators": [{"key": group, "error_code": exc.code, "node_id": -1,
                                      "host": "", "port": -1, "error_message": str(exc)}]}
        return {"coordinators": [{"key": group, "error_code": 0, "node_id": info.node_id,
                                  "host": info.host, "port": info.port}]}

    async def send(self, out: C.Outgoing, coordinator) -> dict:
        conn = await self._connection(ROLE[out.api], coordinator)
        api = _API[out.api]
        return await conn.request(api, out.body, _version(conn, api, out.min_version),
                                  min_version=out.min_version, timeout=self._timeout_s(out))

    def follow(self, coordinator, spawn) -> None:
        """Drop the connections that are not to `coordinator` (None: all of them)."""
        for role, conn in list(self._conns.items()):
            if coordinator is None or conn.node_id != coordinator.node_id:
                del self._conns[role]
                spawn(conn.close())

    async def close(self) -> None:
        conns, self._conns = list(self._conns.values()), {}
        await asyncio.gather(*(c.close() for c in conns), return_exceptions=True)

    async def _connection(self, role: str, coordinator):
        async with self._locks[role]:
            if coordinator is None:
                raise UnreachableError("the coordinator is not known")
            conn = self._conns.get(role)
            if conn is not None and conn.usable and conn.node_id == coordinator.node_id:
                return conn
            if conn is not None:
                await conn.close()
            conn = await self.cluster.open_connection(coordinator.node_id)
            self._conns[role] = conn
            return conn

    def _timeout_s(self, out: C.Outgoing) -> float:
        s = self.settings
        if out.api in (C.JOIN_GROUP, C.SYNC_GROUP):
            return s.rebalance_timeout_ms / 1000 + 5.0
        if out.api == C.LEAVE_GROUP:
            return self.leave_seconds
        return s.session_timeout_ms / 1000


def _version(conn, api, min_version: int) -> int:
    """The highest version both speak; for a broker without flexible ApiVersions (v3+,
    KIP-511, Kafka 2.4) no flexible version at all: flexible versions came with it, and
    librdkafka's mock cluster, which lists JoinGroup v6 with ApiVersions v2, closes the
    connection on a flexible JoinGroup."""
    version = conn.version_for(api, min_version)
    api_versions = conn.broker_versions.get(18, (0, 3))
    if api_versions[1] < 3 and api.flexible_from is not None and version >= api.flexible_from:
        version = max(min_version, api.flexible_from - 1)
    return version


def _api_specs() -> dict:
    from ..protocol import messages as M

    return {C.JOIN_GROUP: M.JOIN_GROUP, C.SYNC_GROUP: M.SYNC_GROUP, C.HEARTBEAT: M.HEARTBEAT,
            C.LEAVE_GROUP: M.LEAVE_GROUP}


_API = _api_specs()
