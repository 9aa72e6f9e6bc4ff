"""The sticky assignors' subscription user data (no version prefix).

sticky v1: previous_assignment [topic STRING(int16 len), partitions [INT32]] + generation INT32;
sticky v0: the same without the generation.  cooperative-sticky: generation INT32.
Decoding mirrors Kafka's ``Schema.read``: trailing bytes are ignored, negative or
oversized lengths fail, strings decode as UTF-8 with replacement.
"""
from __future__ import annotations

import struct

from ._java import JavaHashSet, string_hash

TP = tuple[str, int]


class _Reader:
    def __init__(self, data: bytes):
        self.data, self.pos = data, 0

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise ValueError("buffer underflow")
        chunk = self.data[self.pos:self.pos + n]
        self.pos += n
        return chunk

    def int16(self) -> int:
        return struct.unpack(">h", self.take(2))[0]

    def int32(self) -> int:
        return struct.unpack(">i", self.take(4))[0]

    def array_size(self) -> int:
        size = self.int32()
        if size < 0 or size > len(self.data) - self.pos:
            raise ValueError(f"bad array size {size}")
        return size

    def string(self) -> str:
        length = self.int16()
        if length < 0 or length > len(self.data) - self.pos:
            raise ValueError(f"bad string length {length}")
        return self.take(length).decode("utf-8", "replace")


def _read_sticky(data: bytes, with_generation: bool) -> tuple[list[TP], int | None]:
    reader = _Reader(data)
    partitions: list[TP] = []
    for _ in range(reader.array_size()):
        topic = reader.string()
        partitions.extend((topic, reader.int32()) for _ in range(reader.array_size()))
    generation = reader.int32() if with_generation else None
    return partitions, generation


def decode_sticky(data: bytes | None) -> tuple[list[TP], int | None]:
    """StickyAssignor.memberData: (previous partitions, generation or None)."""
    if not data:
        return [], None
    for with_generation in (True, False):
        try:
            return _read_sticky(data, with_generation)
        except (ValueError, struct.error):
            continue
    return [], -1


def encode_sticky(partitions: list[TP], generation: int | None) -> bytes:
    """StickyAssignor.serializeTopicPartitionAssignment (topics in Java HashMap order)."""
    by_topic: dict[str, list[int]] = {}
    order: JavaHashSet[str] = JavaHashSet(string_hash)
    for topic, partition in partitions:
        by_topic.setdefault(topic, []).append(partition)
        order.add(topic)
    out = [struct.pack(">i", len(by_topic))]
    for topic in order:
        name = topic.encode("utf-8")
        out.append(struct.pack(">h", len(name)) + name)
        out.append(struct.pack(f">i{len(by_topic[topic])}i", len(by_topic[topic]), *by_topic[topic]))
    if generation is not None:
        out.append(struct.pack(">i", generation))
    return b"".join(out)


def decode_cooperative(data: bytes | None) -> int | None:
    """CooperativeStickyAssignor user data: the generation, -1 if unreadable, None if absent."""
    if data is None:
        return None
    if len(data) < 4:
        return -1
    return struct.unpack(">i", data[:4])[0]


def encode_cooperative(generation: int) -> bytes:
    return struct.pack(">i", generation)
