"""lab/dump_log.py puts groupctl's records into DumpLogSegments' shape for the comparison
test (tests/integration/test_records_decode.py). A GroupMetadata member written before its
first SyncGroup holds an empty assignment: Kafka's formatter fails to read it and keeps the
bytes as they are (its `replace` swallows the error), so the peer's shape must too."""
from __future__ import annotations

from groupctl.lab import dump_log
from groupctl.protocol import consumer as cp


def test_an_empty_assignment_is_kept_as_bytes_as_dump_log_segments_keeps_it():
    assert dump_log._decoded_or_bytes(dump_log._assignment, b"") == b""
    assert dump_log._kafka_bytes({"assignment": b""}) == {"assignment": ""}


def test_a_real_assignment_is_decoded():
    data = cp.encode_assignment(cp.Assignment(
        assigned_partitions=[cp.TopicPartitions("orders", [0, 1])], user_data=None))
    assert dump_log._decoded_or_bytes(dump_log._assignment, data) == {
        "assigned_partitions": [{"topic": "orders", "partitions": [0, 1]}], "user_data": None}


def test_null_and_empty_user_data_stay_apart_as_kafkas_json_keeps_them():
    # groupctl's probe sends a null user_data, librdkafka an empty one: Kafka prints null / ""
    for user_data in (None, b""):
        sub = cp.encode_subscription(cp.Subscription(topics=[], user_data=user_data,
                                                     owned_partitions=[], generation_id=-1))
        assert dump_log._subscription(sub)["user_data"] == user_data
