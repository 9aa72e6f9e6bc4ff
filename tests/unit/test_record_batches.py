"""Record batches v2 and the coordinator's records: every codec, CRC-32C, control batches,
damaged and truncated bytes (reported with their offset, never a crash), unknown record
types and newer value versions (kept raw with their type and version)."""
from __future__ import annotations

import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groupctl.observe.reads.records import coordinator_records
from groupctl.protocol.records.batch import Batch, BatchError, encode_batch, read_batches
from groupctl.protocol.records.compression import CODECS, XERIAL_MAGIC, compress, decompress
from groupctl.protocol.records.coordinator import CoordinatorRecord, decode_record
from groupctl.protocol.types import DecodeError, Writer


def key(rtype: int, *strings: str) -> bytes:
    w = Writer()
    w.int16(rtype)
    for s in strings:
        w.string(s)
    return w.getvalue()


def consumer_group_metadata(epoch: int, version: int = 0, extra: bytes = b"") -> bytes:
    # ConsumerGroupMetadataValue v0 (flexible): Epoch int32, tagged MetadataHash (tag 0)
    w = Writer()
    w.int16(version)
    w.int32(epoch)
    w.uvarint(0)
    return w.getvalue() + extra


def group_metadata_v3(generation: int) -> bytes:
    from groupctl.protocol.consumer import (
        Assignment, Subscription, TopicPartitions, encode_assignment, encode_subscription)

    w = Writer()
    w.int16(3)
    w.string("consumer")
    w.int32(generation)
    w.string("range")
    w.string("m1")
    w.int64(1000)
    w.int32(1)                       # one member
    w.string("m1")
    w.string(None)                   # group instance id (v3+)
    w.string("c1")
    w.string("/127.0.0.1")
    w.int32(300000)
    w.int32(10000)
    w.bytes(encode_subscription(Subscription(topics=["t"])))
    w.bytes(encode_assignment(Assignment(assigned_partitions=[TopicPartitions("t", [0, 1])])))
    return w.getvalue()


RECORDS = [
    (0, key(3, "g"), consumer_group_metadata(7)),
    (5, key(2, "g"), group_metadata_v3(4)),
    (9, key(1, "g", "t") + struct.pack(">i", 0), None),        # a tombstone
]


@pytest.mark.parametrize("codec", sorted(CODECS))
def test_every_codec_round_trips_through_a_batch(codec):
    data = encode_batch(RECORDS, base_offset=100, base_timestamp=1_700_000_000_000, codec=codec)
    (batch,) = list(read_batches(data))
    assert isinstance(batch, Batch), batch
    assert batch.codec == codec and (batch.base_offset, batch.last_offset) == (100, 102)
    assert [(r.offset, r.timestamp, r.key, r.value) for r in batch.records] == [
        (100 + i, 1_700_000_000_000 + ts, k, v) for i, (ts, k, v) in enumerate(RECORDS)]


def test_java_xerial_snappy_framing_with_several_blocks():
    import cramjam

    parts = [b"a" * 70000, b"b" * 10]
    framed = XERIAL_MAGIC + struct.pack(">ii", 1, 1)
    for p in parts:
        block = bytes(cramjam.snappy.compress_raw(p))
        framed += struct.pack(">i", len(block)) + block
    assert decompress(2, framed) == b"".join(parts)
    assert decompress(2, bytes(cramjam.snappy.compress_raw(b"raw"))) == b"raw"  # librdkafka's


def test_decoded_records():
    data = encode_batch(RECORDS, base_timestamp=5000)
    recs = list(coordinator_records(read_batches(data)))
    assert [(r.offset, r.type, r.name, r.key, r.version) for r in recs] == [
        (0, 3, "ConsumerGroupMetadata", {"group_id": "g"}, 0),
        (1, 2, "GroupMetadata", {"group": "g"}, 3),
        (2, 1, "OffsetCommit", {"group": "g", "topic": "t", "partition": 0}, None)]
    assert recs[0].value == {"epoch": 7, "metadata_hash": 0} and recs[0].timestamp == 5000
    member = recs[1].value["members"][0]
    assert recs[1].value["generation"] == 4 and member["member_id"] == "m1"
    assert member["subscription"]["topics"] == ["t"]
    assert member["assignment"]["assigned_partitions"] == [{"topic": "t", "partitions": [0, 1]}]
    assert recs[2].tombstone and recs[2].value is None and recs[2].error is None


def test_offset_commits_skipped_on_the_key_type_and_group_filter():
    data = encode_batch(RECORDS + [(10, key(3, "other"), consumer_group_metadata(1))])
    kept = list(coordinator_records(read_batches(data), skip_offset_commits=True, group="g"))
    assert [r.type for r in kept] == [3, 2]


def test_control_batches_are_skipped():
    data = encode_batch([(0, b"\x00\x00\x00\x00", b"\x00\x00\x00\x00")], control=True)
    data += encode_batch(RECORDS[:1], base_offset=1)
    assert [r.offset for r in coordinator_records(read_batches(data))] == [1]


def test_unknown_type_and_newer_version_are_kept_raw():
    unknown = decode_record(3, 0, key(24, "g"), b"\x00\x02abc")
    assert (unknown.type, unknown.version, unknown.value) == (24, 2, None)
    assert unknown.raw_key == key(24, "g") and unknown.raw_value == b"\x00\x02abc"
    assert "unknown record type 24" in unknown.error
    newer = decode_record(4, 0, key(3, "g"), consumer_group_metadata(1, version=1))
    assert (newer.type, newer.name, newer.key, newer.version) == (3, "ConsumerGroupMetadata",
                                                                    {"group_id": "g"}, 1)
    assert newer.value is None and newer.raw_value and "version 1" in newer.error
    d = newer.to_dict()
    assert d["raw_value"] == newer.raw_value.hex() and d["record"] == "ConsumerGroupMetadata"


def test_bad_crc_is_reported_with_the_offset_and_the_next_batch_still_read():
    first = bytearray(encode_batch(RECORDS, base_offset=10))
    first[-1] ^= 0xFF
    data = bytes(first) + encode_batch(RECORDS[:1], base_offset=13)
    out = list(read_batches(data))
    assert isinstance(out[0], BatchError) and out[0].offset == 10 and "CRC-32C" in out[0].reason
    assert isinstance(out[1], Batch) and out[1].base_offset == 13


def test_truncated_segment_reports_the_partial_batch():
    data = encode_batch(RECORDS, base_offset=10) + encode_batch(RECORDS, base_offset=13)[:40]
    out = list(read_batches(data))
    assert isinstance(out[0], Batch)
    assert isinstance(out[1], BatchError) and out[1].offset == 13 and "truncated" in out[1].reason
    assert list(read_batches(data, partial_tail=True))[1:] == []   # a Fetch's cut-off tail


def test_zero_tail_of_a_preallocated_segment_is_the_end():
    data = encode_batch(RECORDS) + bytes(4096)
    assert [type(b) for b in read_batches(data)] == [Batch]


@pytest.mark.parametrize("codec", [1, 2, 3, 4])
def test_damaged_compressed_data_is_a_decode_error(codec):
    with pytest.raises(DecodeError):
        decompress(codec, b"\x00garbage-not-compressed" * 3)


def _all_outputs(data: bytes) -> list:
    out = []
    for item in coordinator_records(read_batches(data, check_crc=False)):
        assert isinstance(item, (CoordinatorRecord, BatchError))
        if isinstance(item, CoordinatorRecord):
            item.to_dict()
        out.append(item)
    return out


SEGMENT = b"".join(encode_batch(RECORDS, base_offset=i * 3, codec=c)
                   for i, c in enumerate(sorted(CODECS)))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cut=st.integers(0, len(SEGMENT)))
def test_any_truncation_never_crashes(cut):
    _all_outputs(SEGMENT[:cut])


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pos=st.integers(0, len(SEGMENT) - 1), byte=st.integers(0, 255),
       check_crc=st.booleans())
def test_any_corrupted_byte_never_crashes(pos, byte, check_crc):
    data = bytearray(SEGMENT)
    data[pos] = byte
    for item in read_batches(bytes(data), check_crc=check_crc):
        assert isinstance(item, (Batch, BatchError))
    _all_outputs(bytes(data))


@settings(max_examples=300, deadline=None)
@given(k=st.binary(max_size=40), v=st.one_of(st.none(), st.binary(max_size=80)),
       rtype=st.integers(-2, 30))
def test_any_key_and_value_bytes_never_crash(k, v, rtype):
    rec = decode_record(0, 0, struct.pack(">h", rtype) + k, v)
    rec.to_dict()
    assert rec.value is None or rec.error is None


def test_compress_rejects_an_unknown_codec():
    with pytest.raises(ValueError):
        compress(7, b"")
    with pytest.raises(DecodeError, match="unknown compression codec 5"):
        decompress(5, b"")


@pytest.mark.parametrize("classic", [None, {"session_timeout_ms": 45000, "supported_protocols": [
    {"name": "range", "metadata": b"\x00\x03"}]}])
def test_tagged_nullable_struct_round_trips_with_a_varint_marker(classic):
    """ConsumerGroupMemberMetadataValue.ClassicMemberMetadata: a tagged nullable struct.
    Kafka marks it with a varint (0 null) inside the tag, not the int8 of other places;
    the bytes the lab broker wrote for a consumer-protocol member end `01 00 01 00`."""
    from tests.spec_encoder import compile_encoder
    from groupctl.protocol.records.schemas import RECORD_TYPES

    value = {"client_id": "c", "client_host": "/h", "subscribed_topic_names": ["t"],
             "rebalance_timeout_ms": 1, "classic_member_metadata": classic}
    w = Writer()
    w.int16(0)
    compile_encoder(RECORD_TYPES[5].value, 0, True)(w, value)
    data = w.getvalue()
    if classic is None:
        assert data.endswith(b"\x01\x00\x01\x00")
    rec = decode_record(0, 0, key(5, "g", "m"), data)
    assert rec.error is None and rec.value["classic_member_metadata"] == classic


def test_skipped_keys_are_passed_over_but_counted():
    data = encode_batch(RECORDS)
    (batch,) = read_batches(data, skip_keys=frozenset({b"\x00\x01"}))
    assert [r.offset for r in batch.records] == [0, 1] and batch.count == 3
