"""Encode -> decode round trips for every API, every version, request and response, with
bodies generated from the specs themselves (every field present in a version gets a
non-default value, nested arrays, struct fields and tagged fields included); leniency
(unknown tagged fields, trailing bytes); truncated and garbage input (DecodeError, never
another exception); and request/response header framing (groupctl.protocol.frame).

A round trip only proves our encoder and decoder agree. Field order, types and versions
are checked against Kafka's JSON specs in test_conformance.py, and a few golden frames
at the bottom were produced by kafka-clients 4.3.1 itself.
"""
from __future__ import annotations

import copy
import itertools
import re

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from groupctl.protocol import frame
from groupctl.protocol.messages import (
    API_VERSIONS, APIS, CONSUMER_GROUP_DESCRIBE, CONSUMER_GROUP_HEARTBEAT, DESCRIBE_GROUPS,
    HEARTBEAT, JOIN_GROUP, METADATA, OFFSET_FETCH, SYNC_GROUP,
)
from groupctl.protocol.spec import Api, Array, Field, Struct, Type
from groupctl.protocol.types import DecodeError, Writer, uuid_to_str

CASES = [(api, v, d) for api in APIS.values()
         for v in range(api.min_version, api.max_version + 1)
         for d in ("request", "response")]
CASE_IDS = [f"{api.name}-v{v}-{d}" for api, v, d in CASES]
VERSIONS = [(api, v) for api in APIS.values() for v in range(api.min_version, api.max_version + 1)]
VERSION_IDS = [f"{api.name}-v{v}" for api, v in VERSIONS]


# ---- bodies generated from the spec ---------------------------------------------------

class Sample:
    """Builds a body for (struct, version): every present field non-default, distinct
    values so a swapped pair of fields would show; absent fields at their default (what
    the decoder returns for them). With nulls=True, nullable fields are None instead."""

    def __init__(self, nulls: bool = False):
        self.counter = itertools.count(1)
        self.nulls = nulls

    def struct(self, s: Struct, version: int) -> dict:
        out = {}
        for f in s.fields:
            if not f.present(version):
                out[f.name] = copy.deepcopy(f.default)
            elif self.nulls and f.nullable_in(version):
                out[f.name] = None
            else:
                out[f.name] = self.value(f, f.type, version)
        return out

    def value(self, f: Field, t, version: int):
        if isinstance(t, Struct):
            return self.struct(t, version)
        if isinstance(t, Array):
            if isinstance(t.item, Struct):
                return [self.struct(t.item, version) for _ in range(2)]
            return [self.primitive(f, t.item) for _ in range(3)]
        return self.primitive(f, t)

    def primitive(self, f: Field, t: Type):
        n = next(self.counter)
        default = f.default
        if t.name == "int8":
            v = n % 100 + 1
        elif t.name == "int16":
            v = -(1000 + n) if n % 2 else 1000 + n
        elif t.name == "uint16":
            v = 60000 + n % 5000
        elif t.name == "int32":
            v = -(100_000 + n) if n % 2 else 100_000 + n
        elif t.name == "int64":
            v = 2**40 + n
        elif t.name == "float64":
            v = n + 0.5
        elif t.name == "bool":
            return not default if isinstance(default, bool) else True
        elif t.name == "uuid":
            return uuid_to_str(bytes([n % 255 + 1]) * 8 + bytes(range(8)))
        elif t.name == "string":
            return f"{f.name}-{n}-é"
        elif t.name in ("bytes", "records"):
            return bytes([n % 256, 0, 255]) * 2
        else:  # pragma: no cover - a new primitive type needs a sample here
            raise AssertionError(f"no sample for {t.name}")
        return v + 1 if v == default else v


def struct_of(api: Api, direction: str) -> Struct:
    return api.request if direction == "request" else api.response


def encode(api: Api, version: int, direction: str, body: dict) -> bytes:
    if direction == "request":
        return api.encode_request(version, body)
    return api.encode_response(version, body)


def decode(api: Api, version: int, direction: str, data: bytes) -> dict:
    if direction == "request":
        return api.decode_request(version, data)
    return api.decode_response(version, data)


def project(s: Struct, version: int, body: dict) -> dict:
    """What decoding an encoding of `body` at `version` must give: fields absent in the
    version at their default, nested structs likewise."""
    out = {}
    for f in s.fields:
        if not f.present(version):
            out[f.name] = copy.deepcopy(f.default)
            continue
        v = body[f.name]
        t = f.type
        if isinstance(t, Struct) and v is not None:
            v = project(t, version, v)
        elif isinstance(t, Array) and isinstance(t.item, Struct) and v is not None:
            v = [project(t.item, version, item) for item in v]
        out[f.name] = v
    return out


def all_fields(s: Struct):
    for f in s.fields:
        yield f
        t = f.type.item if isinstance(f.type, Array) else f.type
        if isinstance(t, Struct):
            yield from all_fields(t)


# ---- round trips --------------------------------------------------------------------------

@pytest.mark.parametrize("api,version,direction", CASES, ids=CASE_IDS)
def test_roundtrip_every_field(api, version, direction):
    body = Sample().struct(struct_of(api, direction), version)
    data = encode(api, version, direction, body)
    assert decode(api, version, direction, data) == body
    # and the bytes are stable through a second round
    assert encode(api, version, direction, decode(api, version, direction, data)) == data


@pytest.mark.parametrize("api,version,direction", CASES, ids=CASE_IDS)
def test_roundtrip_nulls(api, version, direction):
    body = Sample(nulls=True).struct(struct_of(api, direction), version)
    assert decode(api, version, direction, encode(api, version, direction, body)) == body


@pytest.mark.parametrize("api,version,direction", CASES, ids=CASE_IDS)
def test_fields_absent_in_version_come_back_as_defaults(api, version, direction):
    """A body filled for the newest version, encoded at an older one: fields the older
    version lacks are dropped on the wire and decode as their defaults."""
    s = struct_of(api, direction)
    newest = Sample().struct(s, api.max_version)
    decoded = decode(api, version, direction, encode(api, version, direction, newest))
    assert decoded == project(s, version, newest)


@pytest.mark.parametrize("api,version,direction", CASES, ids=CASE_IDS)
def test_empty_body_encodes_defaults(api, version, direction):
    s = struct_of(api, direction)
    decoded = decode(api, version, direction, encode(api, version, direction, {}))
    assert decoded == s.defaults()


def test_none_for_a_non_nullable_field_encodes_its_default():
    data = HEARTBEAT.encode_request(4, {"group_id": None, "generation_id": 3, "member_id": None})
    assert HEARTBEAT.decode_request(4, data) == {
        "group_id": "", "generation_id": 3, "member_id": "", "group_instance_id": None}


def test_samples_cover_every_field_kind():
    """Guards the generator: the specs exercise tagged fields, struct-valued fields
    (nullable and not), primitive and struct arrays, and every primitive we use."""
    fields = [f for api in APIS.values() for s in (api.request, api.response)
              for f in all_fields(s)]
    assert any(f.tag is not None for f in fields)
    assert any(isinstance(f.type, Struct) and f.nullable is not None for f in fields)
    assert any(isinstance(f.type, Struct) and f.nullable is None for f in fields)
    assert any(isinstance(f.type, Array) and isinstance(f.type.item, Struct) for f in fields)
    assert any(isinstance(f.type, Array) and isinstance(f.type.item, Type) for f in fields)
    names = {f.type.name for f in fields if isinstance(f.type, Type)}
    assert {"int8", "int16", "int32", "int64", "bool", "string", "bytes", "uuid"} <= names


# ---- leniency ------------------------------------------------------------------------------

def _tag_section(*tags: tuple[int, bytes]) -> bytes:
    w = Writer()
    w.uvarint(len(tags))
    for tag, raw in tags:
        w.uvarint(tag)
        w.uvarint(len(raw))
        w.raw(raw)
    return w.getvalue()


def test_unknown_tagged_fields_are_kept():
    body = {"group_id": "g", "generation_id": 7, "member_id": "m", "group_instance_id": None}
    data = HEARTBEAT.encode_request(4, body)
    assert data.endswith(b"\x00")  # the empty tag section closes a flexible struct
    tagged = data[:-1] + _tag_section((5, b"\x01\x02"), (300, b"xyz"))
    decoded = HEARTBEAT.decode_request(4, tagged)
    assert decoded == {**body, "_unknown_tags": {5: b"\x01\x02", 300: b"xyz"}}
    # re-encoding writes them back, as Java does with its unknown tagged fields
    assert HEARTBEAT.encode_request(4, decoded) == tagged


def test_unknown_tags_next_to_known_ones():
    """ApiVersions v3 has tags 0-3; tag 9 is unknown and must not disturb the others."""
    body = Sample().struct(API_VERSIONS.response, 3)
    data = API_VERSIONS.encode_response(3, {**body, "_unknown_tags": {9: b"\xaa"}})
    decoded = API_VERSIONS.decode_response(3, data)
    assert decoded.pop("_unknown_tags") == {9: b"\xaa"}
    assert decoded == body


def test_unknown_tags_in_nested_structs():
    body = Sample().struct(CONSUMER_GROUP_DESCRIBE.response, 1)
    body["groups"][0]["members"][1]["assignment"]["_unknown_tags"] = {42: b"nested"}
    data = CONSUMER_GROUP_DESCRIBE.encode_response(1, body)
    decoded = CONSUMER_GROUP_DESCRIBE.decode_response(1, data)
    assert decoded["groups"][0]["members"][1]["assignment"]["_unknown_tags"] == {42: b"nested"}
    assert decoded == body


def _offset_fetch_v9(partition: dict) -> dict:
    return {"throttle_time_ms": 0, "groups": [{"group_id": "g", "error_code": 0, "topics": [
        {"name": "t", "partitions": [{"partition_index": 3, "committed_offset": 42,
                                      "committed_leader_epoch": 1, "error_code": 0,
                                      **partition}]}]}]}


@pytest.mark.parametrize("metadata", ["", None, "m", "é" * 200])
def test_compact_strings_empty_null_and_long(metadata):
    """An empty compact string (length byte 1) is read without a slice: '' stays '',
    distinct from null (length byte 0), beside one- and two-byte lengths."""
    body = _offset_fetch_v9({"metadata": metadata})
    decoded = OFFSET_FETCH.decode_response(9, OFFSET_FETCH.encode_response(9, body))
    got = decoded["groups"][0]["topics"][0]["partitions"][0]["metadata"]
    assert got == metadata and type(got) is type(metadata)


@pytest.mark.parametrize("assignment", [b"", b"\x00\x01"])
def test_compact_bytes_empty(assignment):
    body = {"throttle_time_ms": 0, "error_code": 0, "protocol_type": "consumer",
            "protocol_name": "range", "assignment": assignment}
    decoded = SYNC_GROUP.decode_response(5, SYNC_GROUP.encode_response(5, body))
    assert decoded["assignment"] == assignment and type(decoded["assignment"]) is bytes


def test_unknown_tags_after_fixed_width_fields():
    """A struct ending in fixed-width fields reads its tag count in the same unpack: an
    unknown tag there (an offset's partition, its group) is kept and the rest follows."""
    body = _offset_fetch_v9({"metadata": "", "_unknown_tags": {7: b"p"}})
    body["groups"][0]["_unknown_tags"] = {8: b"group"}
    body["groups"].append({"group_id": "h", "error_code": 16, "topics": []})
    data = OFFSET_FETCH.encode_response(9, body)
    decoded = OFFSET_FETCH.decode_response(9, data)
    assert decoded["groups"][0]["topics"][0]["partitions"][0]["_unknown_tags"] == {7: b"p"}
    assert decoded["groups"][0]["_unknown_tags"] == {8: b"group"}
    assert decoded["groups"][1] == {"group_id": "h", "error_code": 16, "topics": []}
    assert OFFSET_FETCH.encode_response(9, decoded) == data


def test_trailing_bytes_are_kept():
    body = Sample().struct(JOIN_GROUP.response, 9)
    data = JOIN_GROUP.encode_response(9, body) + b"\x01\x02\x03"
    assert JOIN_GROUP.decode_response(9, data) == {**body, "_trailing": b"\x01\x02\x03"}


def test_tagged_field_at_its_default_is_not_written():
    body = API_VERSIONS.response.defaults()
    data = API_VERSIONS.encode_response(3, body)
    assert data.endswith(b"\x00")  # no tagged field
    body["finalized_features_epoch"] = 5
    data = API_VERSIONS.encode_response(3, body)
    assert data.endswith(_tag_section((1, (5).to_bytes(8, "big"))))


def test_nullable_struct_field_marker():
    """Kafka writes a nullable struct field as int8 -1 (null) or 1 then the struct."""
    body = CONSUMER_GROUP_HEARTBEAT.response.defaults()
    assert body["assignment"] is None
    null = CONSUMER_GROUP_HEARTBEAT.encode_response(1, body)
    assert null.endswith(b"\xff\x00")  # marker -1, then the response's tag section
    body["assignment"] = {"topic_partitions": []}
    present = CONSUMER_GROUP_HEARTBEAT.encode_response(1, body)
    assert present.endswith(b"\x01\x01\x00\x00")  # marker 1, empty array, 2 tag sections
    assert CONSUMER_GROUP_HEARTBEAT.decode_response(1, null)["assignment"] is None
    assert CONSUMER_GROUP_HEARTBEAT.decode_response(1, present)["assignment"] == {
        "topic_partitions": []}


# ---- truncated and foreign input --------------------------------------------------------

@pytest.mark.parametrize("api,version,direction", CASES, ids=CASE_IDS)
def test_truncated_input_raises_decode_error(api, version, direction):
    data = encode(api, version, direction, Sample().struct(struct_of(api, direction), version))
    for cut in range(len(data)):
        with pytest.raises(DecodeError):
            decode(api, version, direction, data[:cut])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=st.sampled_from(CASES), data=st.binary(max_size=200))
def test_garbage_raises_only_decode_error(case, data):
    api, version, direction = case
    try:
        decode(api, version, direction, data)
    except DecodeError:
        pass


@settings(max_examples=300, deadline=None)
@given(case=st.sampled_from(CASES), flips=st.lists(st.tuples(st.integers(0, 10_000),
                                                              st.integers(0, 255)),
                                                    min_size=1, max_size=4))
def test_corrupted_frames_raise_only_decode_error(case, flips):
    api, version, direction = case
    data = bytearray(encode(api, version, direction,
                            Sample().struct(struct_of(api, direction), version)))
    if not data:  # e.g. ApiVersions v0-2 requests have no fields
        return
    for pos, byte in flips:
        data[pos % len(data)] = byte
    try:
        decode(api, version, direction, bytes(data))
    except DecodeError:
        pass


@pytest.mark.parametrize("size", [126, 127, 128, 16_383, 16_384, 2_097_152])
def test_long_compact_lengths(size):
    """Compact lengths of 1 to 4 varint bytes (length+1 crosses 2^7, 2^14, 2^21)."""
    from groupctl.protocol.messages import SASL_AUTHENTICATE
    blob = bytes(range(256)) * (size // 256) + bytes(size % 256)
    body = {"auth_bytes": blob}
    data = SASL_AUTHENTICATE.encode_request(2, body)
    assert SASL_AUTHENTICATE.decode_request(2, data) == body
    with pytest.raises(DecodeError):
        SASL_AUTHENTICATE.decode_request(2, data[:-2])


def test_varint_longer_than_ten_bytes_is_rejected():
    from groupctl.protocol.messages import SASL_AUTHENTICATE
    with pytest.raises(DecodeError, match="varint"):
        SASL_AUTHENTICATE.decode_request(2, b"\xff" * 11 + b"\x01")


@pytest.mark.parametrize("kind", [bytearray, memoryview])
def test_decoding_other_buffer_types(kind):
    body = Sample().struct(DESCRIBE_GROUPS.response, 5)
    data = DESCRIBE_GROUPS.encode_response(5, body)
    decoded = DESCRIBE_GROUPS.decode_response(5, kind(data + b"\x07"))
    assert decoded == {**body, "_trailing": b"\x07"}
    assert all(type(m["member_metadata"]) is bytes
               for g in decoded["groups"] for m in g["members"])


def test_generated_decoder_source_is_inspectable():
    """The decoders are plain functions of the message modules: inspect finds their
    source, and a traceback points into it."""
    import inspect
    read = DESCRIBE_GROUPS._codec(6)[3]
    source = inspect.getsource(read)
    assert source.startswith("def decode_response_v6(buf, pos):")
    assert "# throttle_time_ms" in source and "# groups" in source
    assert inspect.getsourcefile(read).endswith("messages/m15_describe_groups.py")


def test_structs_inside_a_struct_are_read_inline():
    """OffsetFetch v9: groups -> topics -> partitions in the one generated function (no
    call per partition), giving what the wire holds."""
    import inspect

    from groupctl.protocol.messages import OFFSET_FETCH
    source = inspect.getsource(OFFSET_FETCH._codec(9)[3])
    assert source.count("def ") == 1
    assert not re.search(r"[^f] decode_\w+\(buf", source)  # a nested struct's reader, called
    body = {"throttle_time_ms": 0, "error_code": 0, "topics": [], "groups": [
        {"group_id": f"g{g}", "error_code": g, "topics": [
            {"name": "t", "partitions": [{"partition_index": p, "committed_offset": 10 * g + p,
                                          "committed_leader_epoch": -1, "metadata": "m" * p,
                                          "error_code": 0} for p in range(3)]}]}
        for g in range(3)]}
    decoded = OFFSET_FETCH.decode_response(9, OFFSET_FETCH.encode_response(9, body))
    assert [[(p["partition_index"], p["committed_offset"], p["metadata"])
             for t in g["topics"] for p in t["partitions"]] for g in decoded["groups"]] == [
        [(p, 10 * g + p, "m" * p) for p in range(3)] for g in range(3)]
    assert [g["error_code"] for g in decoded["groups"]] == [0, 1, 2]


def test_huge_array_length_is_rejected_without_allocating():
    data = (2**31 - 1).to_bytes(4, "big")  # DescribeGroups v0 request: groups[] length
    with pytest.raises(DecodeError):
        DESCRIBE_GROUPS.decode_request(0, data)


# ---- header framing ------------------------------------------------------------------------

@pytest.mark.parametrize("api,version", VERSIONS, ids=VERSION_IDS)
def test_request_frame(api, version):
    body = Sample().struct(api.request, version)
    raw = frame.encode_request(api, version, 1234, "groupctl-é", body)
    assert int.from_bytes(raw[:4], "big", signed=True) == len(raw) - 4
    assert frame.frame_size(raw[:4]) == len(raw) - 4
    data = raw[4:]
    key, ver, corr, client_id, offset = frame.decode_request_header(data)
    assert (key, ver, corr, client_id) == (api.key, version, 1234, "groupctl-é")
    # client_id keeps its INT16 length in header v2 too
    cid = "groupctl-é".encode()
    assert data[8:10 + len(cid)] == len(cid).to_bytes(2, "big") + cid
    flexible = api.flexible_from is not None and version >= api.flexible_from
    assert api.request_header_version(version) == (2 if flexible else 1)
    if flexible:
        assert data[offset] == 0  # empty header tag section
        offset = frame.skip_header_tags(data, offset)
    assert data[offset:] == api.encode_request(version, body)
    assert api.decode_request(version, data[offset:]) == body


@pytest.mark.parametrize("api,version", VERSIONS, ids=VERSION_IDS)
def test_response_frame(api, version):
    body = Sample().struct(api.response, version)
    raw = frame.encode_response(api, version, -77, body)
    assert frame.frame_size(raw[:4]) == len(raw) - 4
    data = raw[4:]
    assert frame.peek_correlation_id(data) == -77
    flexible = api.flexible_from is not None and version >= api.flexible_from
    header = api.response_header_version(version)
    if api.key == 18:
        assert header == 0  # ApiVersions responses always use header v0
    else:
        assert header == (1 if flexible else 0)
    assert data[4:] == (b"\x00" if header == 1 else b"") + api.encode_response(version, body)
    assert frame.decode_response(api, version, data) == body


def test_request_header_v2_null_client_id():
    raw = frame.encode_request(HEARTBEAT, 4, 1, None, {})
    assert raw[4 + 8:4 + 11] == b"\xff\xff\x00"  # INT16 -1, then the empty tag section
    key, ver, corr, client_id, offset = frame.decode_request_header(raw[4:])
    assert (key, ver, corr, client_id, offset) == (12, 4, 1, None, 10)


def test_response_header_tags_are_skipped():
    body = Sample().struct(HEARTBEAT.response, 4)
    data = (5).to_bytes(4, "big") + _tag_section((0, b"abc")) + HEARTBEAT.encode_response(4, body)
    assert frame.decode_response(HEARTBEAT, 4, data) == body


def test_api_versions_v3_response_header_has_no_tag_section():
    """A v0 header even for flexible v3/v4: the body (error_code) follows the id."""
    body = {"error_code": 35, "api_keys": [{"api_key": 18, "min_version": 0, "max_version": 4}]}
    raw = frame.encode_response(API_VERSIONS, 3, 9, body)
    assert raw[4:8] == (9).to_bytes(4, "big") and raw[8:10] == (35).to_bytes(2, "big")
    assert frame.decode_response(API_VERSIONS, 3, raw[4:])["api_keys"] == body["api_keys"]


@pytest.mark.parametrize("prefix", [b"\x00\x00\x00\x00", b"\xff\xff\xff\xff",
                                    (200 * 1024 * 1024).to_bytes(4, "big"), b"HTTP"])
def test_implausible_frame_sizes(prefix):
    with pytest.raises(DecodeError):
        frame.frame_size(prefix)


def test_short_response_header():
    with pytest.raises(DecodeError):
        frame.peek_correlation_id(b"\x00\x01")
    with pytest.raises(DecodeError):
        frame.decode_response(HEARTBEAT, 4, b"\x00\x00\x00\x01")


def test_version_outside_range():
    with pytest.raises(ValueError, match="outside the versions"):
        METADATA.encode_request(14, {})


# ---- golden bytes from kafka-clients 4.3.1 ----------------------------------------------
# Printed once by a small Java program (MessageUtil.toByteBufferAccessor(message, version))
# for the message objects the dicts below describe; Uuid(0x0102030405060708L,
# 0x090a0b0c0d0e0f10L) is T1. Encoding our dict must give Kafka's bytes, and decoding
# Kafka's bytes must give our dict (with every field of the spec).

T1 = uuid_to_str(bytes(range(1, 17)))

GOLDEN = [
    ("ConsumerGroupHeartbeat", 1, "response",
     "00000005000000046d2d31000000030000138801020102030405060708090a0b0c0d0e0f10"
     "030000000000000002000000",
     {"throttle_time_ms": 5, "error_code": 0, "error_message": None, "member_id": "m-1",
      "member_epoch": 3, "heartbeat_interval_ms": 5000,
      "assignment": {"topic_partitions": [{"topic_id": T1, "partitions": [0, 2]}]}}),
    ("ConsumerGroupHeartbeat", 1, "response",
     "00000005000000046d2d310000000300001388ff00",
     {"throttle_time_ms": 5, "error_code": 0, "error_message": None, "member_id": "m-1",
      "member_epoch": 3, "heartbeat_interval_ms": 5000, "assignment": None}),
    ("ApiVersions", 3, "response",
     "0000020012000000040000000000030014020e67726f75702e76657273696f6e000000010001080000"
     "0000000000070214020e67726f75702e76657273696f6e0001000100",
     {"error_code": 0, "api_keys": [{"api_key": 18, "min_version": 0, "max_version": 4}],
      "throttle_time_ms": 0,
      "supported_features": [{"name": "group.version", "min_version": 0, "max_version": 1}],
      "finalized_features_epoch": 7,
      "finalized_features": [{"name": "group.version", "max_version_level": 1,
                              "min_version_level": 1}],
      "zk_migration_ready": False}),
    ("JoinGroup", 9, "response",
     "0000000100000000000409636f6e73756d65720672616e6765046d2d3101046d2d3202046d2d3104692d"
     "310300030000",
     {"throttle_time_ms": 1, "error_code": 0, "generation_id": 4, "protocol_type": "consumer",
      "protocol_name": "range", "leader": "m-1", "skip_assignment": True, "member_id": "m-2",
      "members": [{"member_id": "m-1", "group_instance_id": "i-1", "metadata": b"\x00\x03"}]}),
    ("JoinGroup", 5, "response",
     "00000001000000000004000572616e676500036d2d3100036d2d320000000100036d2d310003692d3100"
     "0000020003",
     {"throttle_time_ms": 1, "error_code": 0, "generation_id": 4, "protocol_type": None,
      "protocol_name": "range", "leader": "m-1", "skip_assignment": False, "member_id": "m-2",
      "members": [{"member_id": "m-1", "group_instance_id": "i-1", "metadata": b"\x00\x03"}]}),
    ("ConsumerGroupDescribe", 1, "response",
     "0000000002000000026707537461626c65000000050000000508756e69666f726d02026d000000000005"
     "02630b2f3132372e302e302e3102027400020102030405060708090a0b0c0d0e0f1002740200000001"
     "000001000100800000000000",
     {"throttle_time_ms": 0, "groups": [{
         "error_code": 0, "error_message": None, "group_id": "g", "group_state": "Stable",
         "group_epoch": 5, "assignment_epoch": 5, "assignor_name": "uniform",
         "members": [{
             "member_id": "m", "instance_id": None, "rack_id": None, "member_epoch": 5,
             "client_id": "c", "client_host": "/127.0.0.1", "subscribed_topic_names": ["t"],
             "subscribed_topic_regex": None,
             "assignment": {"topic_partitions": [
                 {"topic_id": T1, "topic_name": "t", "partitions": [1]}]},
             "target_assignment": {"topic_partitions": []}, "member_type": 1}],
         "authorized_operations": -2147483648}]}),
    ("Metadata", 12, "request",
     "020102030405060708090a0b0c0d0e0f100000000100",
     {"topics": [{"topic_id": T1, "name": None}], "allow_auto_topic_creation": False,
      "include_cluster_authorized_operations": False,
      "include_topic_authorized_operations": True}),
    ("OffsetFetch", 10, "request",
     "02026700ffffffff020102030405060708090a0b0c0d0e0f1003000000000000000100000100",
     {"group_id": "", "topics": [], "require_stable": True, "groups": [{
         "group_id": "g", "member_id": None, "member_epoch": -1,
         "topics": [{"name": "", "topic_id": T1, "partition_indexes": [0, 1]}]}]}),
    ("OffsetFetch", 7, "request", "0267000100",
     {"group_id": "g", "topics": None, "groups": [], "require_stable": True}),
    ("LeaveGroup", 5, "request", "0267020104692d31046279650000",
     {"group_id": "g", "member_id": "",
      "members": [{"member_id": "", "group_instance_id": "i-1", "reason": "bye"}]}),
    ("DescribeGroups", 0, "response",
     "0000000100000001670006537461626c650008636f6e73756d6572000572616e67650000000100016d"
     "00016300022f680000000101000000020203",
     {"throttle_time_ms": 0, "groups": [{
         "error_code": 0, "error_message": None, "group_id": "g", "group_state": "Stable",
         "protocol_type": "consumer", "protocol_data": "range",
         "members": [{"member_id": "m", "group_instance_id": None, "client_id": "c",
                      "client_host": "/h", "member_metadata": b"\x01",
                      "member_assignment": b"\x02\x03"}],
         "authorized_operations": -2147483648}]}),
    ("ConsumerGroupHeartbeat", 1, "request", "0267026d0000000000000000753002027400000100",
     {"group_id": "g", "member_id": "m", "member_epoch": 0, "instance_id": None,
      "rack_id": None, "rebalance_timeout_ms": 30000, "subscribed_topic_names": ["t"],
      "subscribed_topic_regex": None, "server_assignor": None, "topic_partitions": []}),
]


@pytest.mark.parametrize("name,version,direction,hexdata,body", GOLDEN,
                         ids=[f"{g[0]}-v{g[1]}-{g[2]}-{i}" for i, g in enumerate(GOLDEN)])
def test_golden_bytes_from_kafka(name, version, direction, hexdata, body):
    api = next(a for a in APIS.values() if a.name == name)
    data = bytes.fromhex(hexdata)
    assert decode(api, version, direction, data) == body
    assert encode(api, version, direction, body).hex() == hexdata


def test_truncated_headers_raise_decode_error():
    raw = frame.encode_request(HEARTBEAT, 4, 1, "client", {})[4:]
    for cut in range(14):  # inside api_key, version, correlation id or client id
        with pytest.raises(DecodeError):
            frame.decode_request_header(raw[:cut])
    with pytest.raises(DecodeError):
        frame.skip_header_tags(b"\x01\x05", 0)  # one tag announced, cut in its size
    with pytest.raises(DecodeError):
        frame.decode_response(HEARTBEAT, 4, (1).to_bytes(4, "big") + b"\x02")
