"""What librdkafka itself says of its group, read beside its rebalance callbacks
(consumer.LabConsumer): the classic generation it is in, from its consumer group metadata,
and each JoinGroup answer's generation or, with group.protocol=consumer, each heartbeat
answer's member epoch, from its own debug log lines.
"""
from __future__ import annotations

import logging
import re
import struct

def group_generation(consumer) -> int | None:
    """The classic generation a librdkafka consumer is in, from its consumer group
    metadata (the "CGMDv2:" blob librdkafka serialises for transactions: the generation
    id, native int32, right after the tag); None when unknown (not yet joined, or another
    layout)."""
    try:
        blob = consumer.consumer_group_metadata()
    except Exception:   # no group yet, or closed
        return None
    tag = b"CGMDv2:"
    if not isinstance(blob, bytes) or not blob.startswith(tag) or len(blob) < len(tag) + 4:
        return None
    generation = struct.unpack_from("=i", blob, len(tag))[0]
    return generation if generation >= 0 else None


JOIN_ANSWER = re.compile(r"JoinGroup response: GenerationId (\d+),.* my MemberId ([^\s,]+)")
# KIP-848: every ConsumerGroupHeartbeat answer's member epoch (librdkafka 2.16's debug=cgrp)
HEARTBEAT_ANSWER = re.compile(
    r"ConsumerGroupHeartbeat response received for member id \"([^\"]*)\" with epoch (-?\d+)")


class JoinAnswers(logging.Handler):
    """librdkafka's log lines of one LabConsumer: each JoinGroup answer's generation, or
    (consumer protocol) heartbeat answer's member epoch, goes to its on_generation (not
    an error's -1, nor a leave's or fenced member's epoch)."""

    def __init__(self, consumer):
        super().__init__(logging.DEBUG)
        self.consumer = consumer
        self.answer = JOIN_ANSWER if consumer.protocol == "classic" else HEARTBEAT_ANSWER

    def emit(self, record: logging.LogRecord) -> None:
        m = self.answer.search(record.getMessage())
        if not m or self.consumer.on_generation is None:
            return
        member, number = (m[2], int(m[1])) if self.answer is JOIN_ANSWER else (m[1], int(m[2]))
        if number > 0:
            self.consumer.on_generation(record.created, member or None, number)
