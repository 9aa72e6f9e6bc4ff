"""The Kafka error table: every code Kafka defines (Errors.java), with our name, whether a
retry can succeed, and a one-line meaning. `action` says what groupctl does on it where
that is more than "report it"."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class KafkaErrorInfo:
    code: int
    name: str
    retriable: bool
    meaning: str
    action: str = ""


_TABLE = [
    KafkaErrorInfo(-1, "UNKNOWN_SERVER_ERROR", False, "The server hit an unexpected error."),
    KafkaErrorInfo(0, "NONE", False, "Success."),
    # (the full table is filled in by the protocol work)
]

ERRORS: dict[int, KafkaErrorInfo] = {e.code: e for e in _TABLE}
_BY_NAME = {e.name: e for e in _TABLE}


def error_for(code: int) -> KafkaErrorInfo:
    """The entry for a code; codes newer than this table still get a usable entry."""
    return ERRORS.get(code) or KafkaErrorInfo(code, f"UNKNOWN_ERROR_{code}", False,
                                              "An error code this groupctl does not know.")


def error_by_name(name: str) -> KafkaErrorInfo | None:
    return _BY_NAME.get(name.upper())
