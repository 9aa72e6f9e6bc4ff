"""Consumer-protocol payloads: what a classic consumer puts in JoinGroup metadata
(Subscription) and what the leader hands back through SyncGroup (Assignment), plus the
user data of the sticky and cooperative-sticky assignors.

Wire format (Kafka's ConsumerProtocolSubscription/Assignment.json, validVersions 0-3): an
int16 version, then a non-flexible struct (INT16-length strings, INT32-length arrays and
bytes, -1 = null). The specs and their codecs are generated (consumer_codecs.py, by
tools/gen_codecs.py).

Reading is lenient where that loses nothing, strict where the bytes are garbage:
- a version newer than LATEST is read with our newest layout (Kafka promises new versions
  only append fields), and `version` keeps the number that was on the wire;
- bytes left after the struct are kept in `trailing` (Java ignores them; we report them);
- anything else that does not parse (truncated, negative lengths, null where Kafka forbids
  it, bad UTF-8) raises DecodeError; callers catch it and show the raw hex.

Sticky user data has no version prefix: v1 = previous_assignment + generation, v0 lacks
the generation; like the Java StickyAssignor we try v1, then v0.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from .consumer_codecs import (  # noqa: F401 - the specs, for their users and tests
    ASSIGNMENT, ASSIGNMENT_DECODERS, ASSIGNMENT_ENCODERS, COOPERATIVE_STICKY_USER_DATA,
    COOPERATIVE_STICKY_USER_DATA_DECODERS, COOPERATIVE_STICKY_USER_DATA_ENCODERS, STICKY_USER_DATA,
    STICKY_USER_DATA_DECODERS, STICKY_USER_DATA_ENCODERS, SUBSCRIPTION, SUBSCRIPTION_DECODERS,
    SUBSCRIPTION_ENCODERS,
)
from .types import DecodeError, Reader, Writer
from .wire import guarded

# newest Subscription / Assignment version we know (the Java client writes it)
LATEST = max(SUBSCRIPTION_DECODERS)

STICKY = "sticky"
COOPERATIVE_STICKY = "cooperative-sticky"


def _decoder(read) -> Callable[[Reader], dict]:
    """A generated decoder as a reader of `r` (advancing it); raises DecodeError."""

    def decode(r: Reader) -> dict:
        out, r.pos = guarded(read, r.buf, r.pos)
        return out

    return decode


_SUB_DECODE = {v: _decoder(read) for v, read in SUBSCRIPTION_DECODERS.items()}
_SUB_ENCODE = SUBSCRIPTION_ENCODERS
_ASG_DECODE = {v: _decoder(read) for v, read in ASSIGNMENT_DECODERS.items()}
_ASG_ENCODE = ASSIGNMENT_ENCODERS
_STICKY_DECODE = {v: _decoder(read) for v, read in STICKY_USER_DATA_DECODERS.items()}
_STICKY_ENCODE = STICKY_USER_DATA_ENCODERS
_COOP_DECODE = _decoder(COOPERATIVE_STICKY_USER_DATA_DECODERS[0])
_COOP_ENCODE = COOPERATIVE_STICKY_USER_DATA_ENCODERS[0]


# ---- data ------------------------------------------------------------------------------

@dataclass(slots=True)
class TopicPartitions:
    """Partitions of one topic, as the consumer protocol carries them."""

    topic: str
    partitions: list[int]

    def to_dict(self) -> dict:
        return {"topic": self.topic, "partitions": list(self.partitions)}


@dataclass
class StickyUserData:
    """StickyAssignor user data. `generation` is None for v0 (no generation field)."""

    previous_assignment: list[TopicPartitions] = field(default_factory=list)
    generation: int | None = None
    trailing: bytes = b""

    @property
    def version(self) -> int:
        return 0 if self.generation is None else 1

    def to_dict(self) -> dict:
        out = {"version": self.version,
               "previous_assignment": [tp.to_dict() for tp in self.previous_assignment],
               "generation": _generation(self.generation)}
        if self.trailing:
            out["trailing"] = self.trailing.hex()
        return out


@dataclass
class CooperativeStickyUserData:
    """The cooperative-sticky assignor's user data: the member's generation."""

    generation: int = -1
    trailing: bytes = b""

    def to_dict(self) -> dict:
        out: dict[str, object] = {"generation": _generation(self.generation)}
        if self.trailing:
            out["trailing"] = self.trailing.hex()
        return out


@dataclass
class Subscription:
    """JoinGroup member metadata of protocol type "consumer". `version` is the version on
    the wire (it may be newer than LATEST); fields absent in that version hold defaults."""

    version: int = LATEST
    topics: list[str] = field(default_factory=list)
    user_data: bytes | None = None
    owned_partitions: list[TopicPartitions] = field(default_factory=list)
    generation_id: int = -1
    rack_id: str | None = None
    trailing: bytes = b""

    def to_dict(self, assignor: str | None = None) -> dict:
        """The subscription object of docs/reference/json-fields.md. `assignor` (the group's protocol name) picks how
        user data is decoded; unknown assignors and undecodable bytes give hex."""
        out = {
            "version": self.version,
            "topics": list(self.topics),
            "owned_partitions": None if self.version < 1
            else [tp.to_dict() for tp in self.owned_partitions],
            "generation": _generation(self.generation_id),
            "rack": self.rack_id or None,
            "user_data": user_data_to_plain(assignor, self.user_data),
        }
        if self.trailing:
            out["trailing"] = self.trailing.hex()
        return out


@dataclass
class Assignment:
    """SyncGroup member assignment of protocol type "consumer"."""

    version: int = LATEST
    assigned_partitions: list[TopicPartitions] = field(default_factory=list)
    user_data: bytes | None = None
    trailing: bytes = b""

    def to_dict(self) -> dict:
        """User data of an assignment has no standard format (the built-in assignors leave
        it empty), so it is always shown as hex."""
        out = {
            "version": self.version,
            "assigned_partitions": [tp.to_dict() for tp in self.assigned_partitions],
            "user_data": self.user_data.hex() if self.user_data else None,
        }
        if self.trailing:
            out["trailing"] = self.trailing.hex()
        return out


def _generation(value: int | None) -> int | None:
    return None if value is None or value < 0 else value


# ---- helpers -----------------------------------------------------------------------------

def _reader(data) -> Reader:
    if data is None:
        raise DecodeError("no bytes to decode")
    if not isinstance(data, bytes):
        data = bytes(data)
    return Reader(data)


def _read_version(r: Reader, what: str) -> int:
    version = r.int16()
    if version < 0:
        raise DecodeError(f"{what} version {version} is negative")
    return version


def _trailing(r: Reader) -> bytes:
    return r.raw(r.remaining()) if r.remaining() else b""


def _topic_partitions(items: list | None, what: str) -> list[TopicPartitions]:
    if items is None:
        raise DecodeError(f"{what} is null")
    out = []
    for tp in items:
        topic, partitions = tp["topic"], tp["partitions"]
        if topic is None or partitions is None:
            raise DecodeError(f"null {'topic' if topic is None else 'partitions'} in {what}")
        out.append(TopicPartitions(topic, partitions))
    return out


def _tp_dicts(items) -> list[dict]:
    return [{"topic": tp.topic, "partitions": tp.partitions} for tp in items]


def _write_version(version: int | None, default: int) -> int:
    version = default if version is None else version
    if version < 0:
        raise ValueError(f"version {version} is negative")
    return min(version, LATEST)


# ---- Subscription ------------------------------------------------------------------------

def encode_subscription(sub: Subscription, version: int | None = None) -> bytes:
    """Bytes as the Java ConsumerProtocol writes them: `version` (default sub.version)
    above LATEST is written as LATEST."""
    v = _write_version(version, sub.version)
    w = Writer()
    w.int16(v)
    _SUB_ENCODE[v](w, {"topics": sub.topics, "user_data": sub.user_data,
                       "owned_partitions": _tp_dicts(sub.owned_partitions),
                       "generation_id": sub.generation_id, "rack_id": sub.rack_id})
    return w.getvalue()


def decode_subscription(data: bytes) -> Subscription:
    r = _reader(data)
    version = _read_version(r, "subscription")
    d = _SUB_DECODE[min(version, LATEST)](r)
    topics = d["topics"]
    if topics is None:
        raise DecodeError("subscription topics is null")
    if None in topics:
        raise DecodeError("null topic name in subscription topics")
    return Subscription(version=version, topics=topics, user_data=d["user_data"],
                        owned_partitions=_topic_partitions(d["owned_partitions"], "owned_partitions"),
                        generation_id=d["generation_id"], rack_id=d["rack_id"],
                        trailing=_trailing(r))


# ---- Assignment --------------------------------------------------------------------------

def encode_assignment(asg: Assignment, version: int | None = None) -> bytes:
    v = _write_version(version, asg.version)
    w = Writer()
    w.int16(v)
    _ASG_ENCODE[v](w, {"assigned_partitions": _tp_dicts(asg.assigned_partitions),
                       "user_data": asg.user_data})
    return w.getvalue()


def decode_assignment(data: bytes) -> Assignment:
    r = _reader(data)
    version = _read_version(r, "assignment")
    d = _ASG_DECODE[min(version, LATEST)](r)
    return Assignment(version=version,
                      assigned_partitions=_topic_partitions(d["assigned_partitions"],
                                                            "assigned_partitions"),
                      user_data=d["user_data"], trailing=_trailing(r))


# ---- assignor user data ------------------------------------------------------------------

def encode_sticky_user_data(data: StickyUserData) -> bytes:
    """v1 when `generation` is set, v0 otherwise (no version prefix either way)."""
    w = Writer()
    _STICKY_ENCODE[data.version](w, {"previous_assignment": _tp_dicts(data.previous_assignment),
                                     "generation": data.generation})
    return w.getvalue()


def decode_sticky_user_data(data: bytes) -> StickyUserData:
    """Try v1, then v0, as the Java StickyAssignor does."""
    r = _reader(data)
    try:
        d = _STICKY_DECODE[1](r)
    except DecodeError as v1_error:
        r = _reader(data)
        try:
            d = _STICKY_DECODE[0](r)
        except DecodeError:
            raise DecodeError(f"not sticky assignor user data: {v1_error}") from None
    return StickyUserData(_topic_partitions(d["previous_assignment"], "previous_assignment"),
                          d["generation"], _trailing(r))


def encode_cooperative_user_data(data: CooperativeStickyUserData) -> bytes:
    w = Writer()
    _COOP_ENCODE(w, {"generation": data.generation})
    return w.getvalue()


def decode_cooperative_user_data(data: bytes) -> CooperativeStickyUserData:
    r = _reader(data)
    d = _COOP_DECODE(r)
    return CooperativeStickyUserData(d["generation"], _trailing(r))


_USER_DATA_DECODERS: dict[str, Callable[[bytes], StickyUserData | CooperativeStickyUserData]] = {
    STICKY: decode_sticky_user_data,
    COOPERATIVE_STICKY: decode_cooperative_user_data,
}


def decode_user_data(assignor_name: str | None, data: bytes | None
                     ) -> StickyUserData | CooperativeStickyUserData | None:
    """Decoded user data of a known assignor ("sticky", "cooperative-sticky"); None for
    other assignors and for empty data (the caller keeps the raw bytes). Raises
    DecodeError when a known assignor's bytes do not parse."""
    decoder = _USER_DATA_DECODERS.get(assignor_name or "")
    if decoder is None or not data:
        return None
    return decoder(data)


def user_data_to_plain(assignor_name: str | None, data: bytes | None) -> dict | str | None:
    """The JSON form of user data: a dict for a known assignor, else lowercase hex (also
    when a known assignor's bytes do not parse), None when empty."""
    if not data:
        return None
    try:
        decoded = decode_user_data(assignor_name, data)
    except DecodeError:
        decoded = None
    return decoded.to_dict() if decoded is not None else bytes(data).hex()
