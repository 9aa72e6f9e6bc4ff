"""Kafka's own decoder of `__consumer_offsets` segments, as a peer for tests and benches:
`DumpLogSegments --offsets-decoder --print-data-log` run from the lab's jars (the class is
org.apache.kafka.tools' from Kafka 4.0, kafka.tools' before),
its output parsed back into one dict per record, and groupctl's records brought to the
same shape (`canonical`) so the two compare record by record.

Kafka prints a record as
    | offset: 4 CreateTime: 1795499486407 ... key: {"type":"8","data":{...}} payload: {...}
with camelCase field names, bytes as base64, `payload: <DELETE>` for a tombstone, and a
GroupMetadata member's consumer-protocol subscription/assignment decoded. Kafka 3.7's
(the Scala formatter's) lines are terser, and `parse` reads them too:
    | offset: 2 ... key: offset_commit::group=wl,partition=t1-1 payload: offset=5
    | offset: 0 ... key: group_metadata::group=wl payload: {"protocolType":...,"generationId":1,...}
"""
from __future__ import annotations

import base64
import json
import re
import subprocess

from . import dist, tools

_RECORD = re.compile(r"^\| offset: (\d+) (?:CreateTime|LogAppendTime): (-?\d+) .*? key: (.*?) payload: (.*)$")
_LEGACY_KEY = re.compile(r"^(group_metadata|offset_commit)::(.*)$")
_LEGACY_TYPES = {"offset_commit": 1, "group_metadata": 2}
_CAMEL = re.compile(r"([A-Z]+)([A-Z][a-z])|([a-z0-9])([A-Z])")


def run(files: list[str], timeout: float = 600, libs=None) -> str:
    """DumpLogSegments' output for `files` (the jars of `libs`, else the default lab's)."""
    libs = libs or dist.kafka_libs()
    cmd = [dist.java_cmd(), "-cp", f"{libs}/*", tools.tool_class(libs, "DumpLogSegments"),
           "--offsets-decoder", "--print-data-log", "--files", ",".join(files)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"DumpLogSegments failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return proc.stdout


def parse(text: str) -> list[dict]:
    """One dict per record line: offset, timestamp (ms), type, key, version, value (None
    for a tombstone), with snake_case field names."""
    out = []
    for line in text.splitlines():
        m = _RECORD.match(line)
        if not m:
            continue
        legacy = _LEGACY_KEY.match(m.group(3))
        if legacy:
            out.append(_legacy(int(m.group(1)), int(m.group(2)), legacy, m.group(4)))
            continue
        key = json.loads(m.group(3))
        payload = m.group(4)
        value = None if payload == "<DELETE>" else json.loads(payload)
        out.append({"offset": int(m.group(1)), "timestamp": int(m.group(2)),
                    "type": int(key["type"]), "key": snake_keys(key["data"]),
                    "version": None if value is None else int(value["version"]),
                    "value": None if value is None else snake_keys(value["data"])})
    return out


def _legacy(offset: int, timestamp: int, key, payload: str) -> dict:
    """A Kafka 3.7 line: the key's kind as its type (1 offset commit, 2 group metadata; the
    key version is not printed), its fields, and the value as printed (a commit's
    "offset=N" as committed_offset; the record version is not printed either)."""
    fields: dict = {}
    rest = key.group(2)
    if key.group(1) == "offset_commit":
        group, _, tp = rest.partition(",partition=")
        topic, _, partition = tp.rpartition("-")
        fields = {"group": group.removeprefix("group="), "topic": topic,
                  "partition": int(partition)}
    else:
        fields = {"group": rest.removeprefix("group=")}
    value: dict | None
    if payload in ("<DELETE>", "NULL"):
        value = None
    elif payload.startswith("{"):
        value = snake_keys(json.loads(payload))
    else:
        value = {"committed_offset": int(payload.split("offset=", 1)[1].split(",")[0])}
    return {"offset": offset, "timestamp": timestamp, "type": _LEGACY_TYPES[key.group(1)],
            "key": fields, "version": None, "value": value, "legacy": True}


def snake(name: str) -> str:
    return _CAMEL.sub(lambda m: f"{m.group(1) or m.group(3)}_{m.group(2) or m.group(4)}",
                      name).lower()


def snake_keys(value):
    if isinstance(value, dict):
        return {snake(k): snake_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [snake_keys(v) for v in value]
    return value


def canonical(record) -> dict:
    """A record of a batch (protocol.records.batch.Record) as groupctl decodes it, in the
    shape `parse` gives Kafka's: bytes as base64, a GroupMetadata member's consumer-protocol
    bytes decoded into Kafka's field names (the version's fields only)."""
    from ..protocol.records.coordinator import decode_record

    rec = decode_record(record.offset, record.timestamp, record.key, record.value,
                        consumer_protocol=False)
    value = rec.value
    if value is not None:
        if rec.type == 2 and value.get("protocol_type") == "consumer":
            for m in value.get("members") or ():
                m["subscription"] = _decoded_or_bytes(_subscription, m["subscription"])
                m["assignment"] = _decoded_or_bytes(_assignment, m["assignment"])
        from ..protocol.records.schemas import RECORD_TYPES

        assert rec.type is not None and rec.version is not None   # a value was decoded
        schema = RECORD_TYPES[rec.type]
        _drop_tagged_defaults(schema.value, value, schema.value_flexible(rec.version))
        value = _kafka_bytes(value)
    return {"offset": rec.offset, "timestamp": rec.timestamp, "type": rec.type,
            "key": rec.key, "version": rec.version, "value": value,
            **({"error": rec.error} if rec.error else {})}


def _drop_tagged_defaults(struct, value: dict, flexible: bool) -> None:
    """Kafka's JSON leaves out a tagged field that holds its default."""
    from ..protocol.schema import Array, Struct

    for f in struct.fields:
        if f.name not in value:
            continue
        v = value[f.name]
        if flexible and f.tag is not None and v == f.default:
            del value[f.name]
        elif isinstance(f.type, Struct) and isinstance(v, dict):
            _drop_tagged_defaults(f.type, v, flexible)
        elif isinstance(f.type, Array) and f.type.is_struct and v:
            for item in v:
                _drop_tagged_defaults(f.type.item, item, flexible)


def _kafka_bytes(value):
    if isinstance(value, dict):
        return {k: _kafka_bytes(v) for k, v in value.items() if not k.startswith("_")}
    if isinstance(value, list):
        return [_kafka_bytes(v) for v in value]
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(bytes(value)).decode()
    return value


def _tps(items) -> list[dict]:
    return [{"topic": tp.topic, "partitions": list(tp.partitions)} for tp in items]


def _subscription(data: bytes):
    from ..protocol.consumer import decode_subscription

    sub = decode_subscription(data)
    out: dict[str, object] = {"topics": list(sub.topics), "user_data": sub.user_data}
    if sub.version >= 1:
        out["owned_partitions"] = _tps(sub.owned_partitions)
    if sub.version >= 2:
        out["generation_id"] = sub.generation_id
    if sub.version >= 3:
        out["rack_id"] = sub.rack_id
    return out


def _decoded_or_bytes(decode, data: bytes):
    """As DumpLogSegments does: the consumer-protocol bytes decoded, or kept as they are when
    they do not decode (a member written before its first SyncGroup has an empty
    assignment)."""
    from ..protocol.types import DecodeError

    try:
        return decode(data)
    except DecodeError:
        return data


def _assignment(data: bytes):
    from ..protocol.consumer import decode_assignment

    asg = decode_assignment(data)
    return {"assigned_partitions": _tps(asg.assigned_partitions), "user_data": asg.user_data}
