"""The lab's one question to a running cluster: which brokers does Metadata list?

Kept behind this one function so it can move to groupctl's own client
(``groupctl.client.cluster.Cluster(...).metadata()``) once that lands; until then it asks
librdkafka (confluent-kafka), which also does the ApiVersions handshake first.
"""
from __future__ import annotations


def metadata_brokers(bootstrap: str, timeout: float = 2.0) -> list[int] | None:
    """Broker ids listed by a Metadata response from `bootstrap`, or None when no broker
    answered within `timeout` seconds. Never raises for an unreachable cluster."""
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({
        "bootstrap.servers": bootstrap,
        "log_level": 0,  # connection refused while starting is expected: keep stderr quiet
        "reconnect.backoff.ms": 50,
        "reconnect.backoff.max.ms": 200,
        "socket.connection.setup.timeout.ms": max(1000, int(timeout * 1000)),
    })
    try:
        md = admin.list_topics(timeout=timeout)
    except Exception:  # KafkaException(_TRANSPORT / _TIMED_OUT): not ready yet
        return None
    return sorted(md.brokers)
