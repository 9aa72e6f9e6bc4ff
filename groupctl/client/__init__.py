"""groupctl's asyncio Kafka client: connections (ApiVersions negotiation, pipelining, TLS,
SASL), the cluster (bootstrap, metadata, broker pool, coordinator lookup and routing),
retries with deadlines, and the --debug protocol trace.

    from groupctl.client import Cluster
    async with Cluster(["127.0.0.1:9092"], timeout=10) as cluster:
        md = await cluster.metadata()
"""
from .cluster import Cluster
from .connection import BrokerConnection, open_connection
from .coordinators import coordinator_error
from .errors import (
                     ConnectionLostError,
                     KafkaAuthError,
                     NotKafkaError,
                     ProtocolError,
                     RequestTimeoutError,
                     UnsupportedVersionError,
                     failure_kind,
                     kafka_error,
)
from .metadata import BrokerInfo, ClusterMetadata, PartitionInfo, TopicInfo
from .retry import Backoff, Deadline, is_retriable, retry
from .trace import Tracer, current_tracer, use_tracer

__all__ = [
                     "Backoff",
                     "BrokerConnection",
                     "BrokerInfo",
                     "Cluster",
                     "ClusterMetadata",
                     "ConnectionLostError",
                     "Deadline",
                     "KafkaAuthError",
                     "NotKafkaError",
                     "PartitionInfo",
                     "ProtocolError",
                     "RequestTimeoutError",
                     "TopicInfo",
                     "Tracer",
                     "UnsupportedVersionError",
                     "coordinator_error",
                     "current_tracer",
                     "failure_kind",
                     "is_retriable",
                     "kafka_error",
                     "open_connection",
                     "retry",
                     "use_tracer",
]
