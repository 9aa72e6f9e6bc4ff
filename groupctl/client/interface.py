"""ClusterLike: what observe/, coordinator/ and the steering commands need of a cluster.

`Cluster` (cluster.py) is the implementation; the `cluster` parameters of the layers above
are typed with this protocol, so mypy checks every call against it, and a test's fake
cluster needs only these members.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # pragma: no cover
    from ..protocol.spec import R, Api
    from .connection import BrokerConnection
    from .metadata import BrokerInfo, ClusterMetadata
    from .retry import Deadline


class ClusterLike(Protocol):
    nodes: dict[int, BrokerInfo]        # the node registry, refreshed by metadata()
    request_timeout: float

    def deadline(self, deadline: Deadline | float | None = None) -> Deadline: ...

    async def request(self, api: Api[R], body: Any, *, node_id: int | None = None,
                      version: int | None = None, min_version: int = 0,
                      timeout: float | None = None,
                      deadline: Deadline | float | None = None) -> R: ...

    async def send_to_coordinator(self, group: str, api: Api[R], body: dict, *,
                                  version: int | None = None, min_version: int = 0,
                                  timeout: float | None = None,
                                  deadline: Deadline | float | None = None) -> R: ...

    async def for_each_broker(self, api: Api, body: Any, *, version: int | None = None,
                              min_version: int = 0, deadline: Deadline | float | None = None
                              ) -> dict[int, Any]: ...

    async def metadata(self, topics: list[str] | None = None, *,
                       deadline: Deadline | float | None = None) -> ClusterMetadata: ...

    async def find_coordinator(self, group: str, *, refresh: bool = False,
                               deadline: Deadline | float | None = None) -> BrokerInfo: ...

    async def find_coordinators(self, groups: Any, *, refresh: bool = False,
                                deadline: Deadline | float | None = None
                                ) -> dict[str, BrokerInfo]: ...

    def invalidate_coordinator(self, group: str) -> None: ...

    async def broker(self, node_id: int, *, deadline: Deadline | float | None = None
                     ) -> BrokerConnection: ...

    async def open_connection(self, node_id: int, *, deadline: Deadline | float | None = None
                              ) -> BrokerConnection: ...


if TYPE_CHECKING:  # pragma: no cover - mypy checks that Cluster is a ClusterLike
    from .cluster import Cluster

    def _cluster_is_cluster_like(cluster: Cluster) -> ClusterLike:
        return cluster
