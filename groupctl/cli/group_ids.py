"""Group ids as typed: checked before anything is sent (exit 2)."""
from __future__ import annotations

from ..errors import UsageError

MAX_BYTES = 32767   # Kafka's STRING: an int16 length


def check(value):
    """A typer callback for a GROUP argument (one id or a list of them): none empty and
    none longer than Kafka's strings may be (the broker would close the connection on
    such a request; it was told as 'a SASL listener?', exit 3)."""
    for group in [value] if isinstance(value, str) else value or ():
        if not group:
            raise UsageError("a group id cannot be empty")
        size = len(group.encode("utf-8", "surrogateescape"))
        if size > MAX_BYTES:
            raise UsageError(f"a group id cannot be longer than {MAX_BYTES:,} bytes (Kafka's "
                             f"string limit); this one is {size:,}")
    return value
