"""The group coordinator's records in `__consumer_offsets`: key and value decoding.

A key is an int16 record type followed by that type's key fields (version 0, never
flexible); a value is an int16 version followed by the value's fields at that version
(flexible from the type's first flexible version); a null value is a tombstone. The
schemas are data (schemas.py, generated from and tested against Kafka's JSON specs).

Never a crash: a record type this Kafka does not know, a value version newer than the
schema, or bytes that do not parse come back as a CoordinatorRecord with the type and
version that were readable, the raw bytes, and `error` saying why. A record that does not
decode with today's schema but does with the layout an early-access broker wrote under
the same version (Kafka 3.7's KIP-848, 4.0's share groups: early_access.py) is said to be
that, with `early_access` naming the release, and is not decoded further.

GroupMetadata members' subscription and assignment bytes are decoded with the consumer
protocol when the group's protocol type is "consumer" (as DumpLogSegments does); the raw
bytes are kept (hex) for other protocol types or when they do not decode.
"""
from __future__ import annotations

import re
import struct
from collections.abc import Iterable
from dataclasses import dataclass

from ..types import DecodeError
from ..wire import guarded
from . import codecs
from .early_access import EARLY_ACCESS
from .schemas import RECORD_TYPES, RecordSchema

OFFSET_COMMIT_TYPES = frozenset({0, 1})   # one record per committed partition: most records
GROUP_METADATA = 2
_I16 = struct.Struct(">h").unpack_from


@dataclass(slots=True)
class CoordinatorRecord:
    offset: int
    timestamp: int                        # ms, the broker's record timestamp
    type: int | None                      # None: the key was not even 2 bytes
    key: dict | None
    version: int | None                   # the value's version; None for a tombstone
    value: dict | None                    # None: a tombstone, or not decodable (see error)
    tombstone: bool
    raw_key: bytes | None = None          # kept when the key did not decode
    raw_value: bytes | None = None        # kept when the value did not decode
    error: str | None = None
    early_access: str | None = None       # "Kafka 3.7": written in that broker's layout

    @property
    def name(self) -> str | None:
        schema = RECORD_TYPES.get(self.type) if self.type is not None else None
        if schema is None and self.early_access:
            schema = EARLY_ACCESS[self.type][1]  # type: ignore[index]
        return schema.name if schema else None

    @property
    def group(self) -> str | None:
        if not self.key:
            return None
        return self.key.get("group_id", self.key.get("group"))

    def to_dict(self) -> dict:
        out = {"offset": self.offset, "timestamp_ms": self.timestamp, "type": self.type,
               "record": self.name, "key": self.key, "version": self.version,
               "value": self.value}   # bytes inside: the writer's to hex (render.records)
        if self.raw_key is not None:
            out["raw_key"] = self.raw_key.hex()
        if self.raw_value is not None:
            out["raw_value"] = self.raw_value.hex()
        if self.error is not None:
            out["error"] = self.error
        if self.early_access is not None:
            out["early_access"] = self.early_access
        return out


def record_type(key: bytes | None) -> int | None:
    """The record type of a key, without decoding anything else (to skip offset commits)."""
    if key is None or len(key) < 2:
        return None
    return _I16(key, 0)[0]


def group_keys_pattern(groups: Iterable[str]) -> re.Pattern[bytes]:
    """What the key of every record of these groups other than an offset commit holds: its
    int16 record type (2 or more) followed by the group id as the key's first field (an
    int16-length UTF-8 string, as every key of types 2-23 begins). A record batch with no
    match holds none of the groups' records (false matches, e.g. inside a value, only cost
    a read). The group id's bytes are the literal prefix (a fast scan; its length's high
    byte, a zero, would stop the scan at every zero of the batch); its length and the type
    are checked behind it, so the offset commits of the group itself (types 0 and 1) do
    not match."""
    alternatives = []
    for group in groups:
        alternatives.append(re.escape(group.encode()) + rb"(?<=" + _TYPE_2_OR_MORE
                            + re.escape(_string(group)) + rb")")
    return re.compile(b"|".join(alternatives) or rb"(?!)")


_TYPE_2_OR_MORE = rb"(?:\x00[\x02-\xff]|[\x01-\x7f][\x00-\xff])"   # an int16 >= 2


def _string(text: str) -> bytes:
    data = text.encode()
    return struct.pack(">h", len(data)) + data


_BAD_INPUT = (IndexError, struct.error, UnicodeDecodeError, DecodeError, ValueError)


def _read(read, data: bytes, pos: int) -> dict:
    try:
        out, end = read(data, pos)
    except _BAD_INPUT:
        out, end = guarded(read, data, pos)   # raises DecodeError with the reason
    if end < len(data):
        out["_trailing"] = data[end:]
    return out


_keys: dict[bytes, tuple] = {}   # a partition repeats its keys (a compacted topic's keys)


def decode_key(key: bytes | None) -> tuple[int | None, dict | None, str | None]:
    """(record type, key fields, error). The key fields are shared between records with
    the same key bytes: treat them as read-only."""
    if key is not None:
        hit = _keys.get(key)
        if hit is not None:
            return hit
        if len(_keys) >= 200_000:
            _keys.clear()
        hit = _keys[key] = _decode_key(key)
        return hit
    return _decode_key(key)


def _decode_key(key: bytes | None) -> tuple[int | None, dict | None, str | None]:
    rtype = record_type(key)
    if rtype is None or key is None:
        return None, None, "key shorter than its 2-byte record type" if key is not None else "null key"
    schema = RECORD_TYPES.get(rtype)
    if schema is None:
        return rtype, None, f"unknown record type {rtype}"
    try:
        return rtype, _read(codecs.KEYS[rtype], key, 2), None
    except DecodeError as exc:
        return rtype, None, f"key: {exc}"


def decode_value(schema: RecordSchema, value: bytes, *, consumer_protocol: bool = True,
                 early_access: bool = False) -> tuple[int | None, dict | None, str | None]:
    """(value version, value fields, error). `consumer_protocol=False`: GroupMetadata
    members' subscription and assignment stay bytes. `early_access=True`: read with the
    layout an early-access broker wrote (`schema` is then one of early_access.py's)."""
    if len(value) < 2:
        return None, None, "value shorter than its 2-byte version"
    version = _I16(value, 0)[0]
    lo, hi = schema.value_versions
    if not lo <= version <= hi:
        return version, None, (f"{schema.name} value version {version} is not one this "
                               f"schema knows ({lo}-{hi})")
    try:
        read = (codecs.EARLY_VALUES if early_access else codecs.VALUES)[schema.type, version]
        out = _read(read, value, 2)
        _prune(schema.value, version, out)
    except DecodeError as exc:
        return version, None, f"value: {exc}"
    if schema.type == GROUP_METADATA and consumer_protocol:
        _decode_members(out)
    return version, out, None


_PRUNERS: dict = {}


def _prune(struct_, version: int, value: dict) -> None:
    """Drop the fields the value's version does not have (the codec fills every field of
    the spec with its default; a record shows what its version holds, as Kafka's JSON).
    A non-nullable string, bytes or array that came as null is a DecodeError, as in
    Kafka's readers ("non-nullable field X was serialized as null"): the codec reads a
    length of -1 as null whatever the spec says."""
    key = (id(struct_), version)
    plan = _PRUNERS.get(key)
    if plan is None:
        from ..schema import Array, Struct

        absent = [f.name for f in struct_.fields if not f.present(version)]
        nested = [(f.name, f.type if isinstance(f.type, Struct) else f.type.item)
                  for f in struct_.fields if f.present(version) and (
                      isinstance(f.type, Struct) or isinstance(f.type, Array) and f.type.is_struct)]
        required = [f.name for f in struct_.fields
                    if f.present(version) and f.tag is None and not f.nullable_in(version)
                    and (isinstance(f.type, Array) or getattr(f.type, "name", None) in
                         ("string", "bytes"))]
        plan = _PRUNERS[key] = (absent, nested, required)
    absent, nested, required = plan
    for name in absent:
        value.pop(name, None)
    for name in required:
        if value.get(name, False) is None:
            raise DecodeError(f"non-nullable field {name} was serialized as null")
    for name, sub in nested:
        v = value.get(name)
        if isinstance(v, dict):
            _prune(sub, version, v)
        elif v:
            for item in v:
                _prune(sub, version, item)


def decode_record(offset: int, timestamp: int, key: bytes | None,
                  value: bytes | None, *, consumer_protocol: bool = True) -> CoordinatorRecord:
    rtype, key_fields, error = decode_key(key)
    tombstone = value is None
    rec = CoordinatorRecord(offset, timestamp, rtype, key_fields, None, None, tombstone)
    if error is not None:
        rec.raw_key, rec.raw_value, rec.error = key, value, error
        if rtype is not None and value is not None and len(value) >= 2:
            rec.version = _I16(value, 0)[0]   # unknown type: its version is still readable
        if rtype in EARLY_ACCESS and rtype not in RECORD_TYPES:
            _early_access(rec, key, value)
        return rec
    if value is None:   # a tombstone
        return rec
    assert rtype is not None   # decode_key gives a type whenever it gives no error
    rec.version, rec.value, error = decode_value(RECORD_TYPES[rtype], value,
                                                 consumer_protocol=consumer_protocol)
    if error is not None:
        rec.raw_value, rec.error = value, error
        if rtype in EARLY_ACCESS:
            _early_access(rec, None, value)
    return rec


def _early_access(rec: CoordinatorRecord, key: bytes | None, value: bytes | None) -> None:
    """`rec` did not decode: if its bytes are exactly the layout an early-access broker
    wrote for its type (a key of a type since removed, when `key` is given; the value),
    say so instead of the decoding error. Its fields stay undecoded: that layout was a
    preview, and no later broker reads it."""
    assert rec.type is not None
    release, schema = EARLY_ACCESS[rec.type]
    try:
        fields = _read(codecs.EARLY_KEYS[rec.type], key, 2) if key is not None else rec.key
        if fields is None or "_trailing" in fields:
            return
        if value is not None:
            version, out, error = decode_value(schema, value, consumer_protocol=False,
                                               early_access=True)
            if error is not None or "_trailing" in (out or {}):
                return
    except DecodeError:
        return
    rec.key = fields   # the raw bytes stay: the fields are not decoded
    rec.early_access = release
    rec.error = f"written by an early-access broker ({release}): not decoded"


def _decode_members(value: dict) -> None:
    """GroupMetadata: consumer-protocol subscription and assignment bytes decoded in place
    (as `subscription` / `assignment` dicts); the bytes stay when they are not that."""
    if value.get("protocol_type") != "consumer":
        return
    from ..consumer import decode_assignment, decode_subscription

    for m in value.get("members") or ():
        try:
            m["subscription"] = decode_subscription(m["subscription"]).to_dict(
                assignor=value.get("protocol"))
        except DecodeError as exc:
            m["decode_error"] = f"subscription: {exc}"
        try:
            m["assignment"] = decode_assignment(m["assignment"]).to_dict()
        except DecodeError as exc:
            m["decode_error"] = f"assignment: {exc}"
