"""Equal response bytes, one decode: the group describe APIs polled every round.

A `watch --all` (or a metrics exporter) describes every group every second, and most
groups look the same round after round: the coordinator answers a batch with the same
bytes. Decoding is a function of the bytes, so a connection keeps the last decoded bodies
of DescribeGroups, ConsumerGroupDescribe, ShareGroupDescribe and StreamsGroupDescribe by
their bytes (the correlation id left out) and hands out the same body again when equal
bytes come back; observe/reads/describe.py then sees the same group entries (`is`) and reuses what
it built from them. Those bodies are shared: nothing may change them (no caller does).
"""
from __future__ import annotations

from typing import Any, Callable

from ..protocol.messages import (
    CONSUMER_GROUP_DESCRIBE, DESCRIBE_GROUPS, SHARE_GROUP_DESCRIBE, STREAMS_GROUP_DESCRIBE,
)
from ..protocol.spec import Api

MEMO_KEYS = frozenset(api.key for api in (DESCRIBE_GROUPS, CONSUMER_GROUP_DESCRIBE,
                                          SHARE_GROUP_DESCRIBE, STREAMS_GROUP_DESCRIBE))
KEEP = 256  # bodies kept per connection: a batch of 200 groups each, 50,000 groups


class ResponseMemo:
    def __init__(self, keep: int = KEEP):
        self.keep = keep
        self._bodies: dict[tuple[int, int, bytes], Any] = {}

    def decode(self, api: Api, version: int, data: bytes,
               decode: Callable[[Api, int, bytes], Any]) -> Any:
        """decode(api, version, data), or the body decoded from equal bytes before."""
        key = (api.key, version, data[4:])   # after the correlation id
        body = self._bodies.pop(key, None)
        if body is None:
            body = decode(api, version, data)
            if len(self._bodies) >= self.keep:
                del self._bodies[next(iter(self._bodies))]   # the least recently seen
        self._bodies[key] = body
        return body
