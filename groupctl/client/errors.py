"""Exceptions of the client layer. Each extends one of groupctl.errors' kinds, so the CLI
maps it to the right exit code without knowing this module:

    NotKafkaError          UnreachableError (3)  the peer does not speak Kafka
    ConnectionLostError    UnreachableError (3)  an established connection closed
    RequestTimeoutError    DeadlineError    (6)  one request got no answer in time
    UnsupportedVersionError KafkaError      (7)  no API version both sides speak
    KafkaAuthError         AuthError        (4)  an auth error code from the broker
    ProtocolError          GroupctlError    (3)  a response that does not decode

`kind` is the short word the sans-IO state machines take in `on_failure(api, kind, ...)`:
"disconnected", "timeout", or the class's own.
"""
from __future__ import annotations

from ..errors import (
    AuthError,
    BrokerErrorCode,
    DeadlineError,
    GroupctlError,
    KafkaError,
    UnreachableError,
)
from ..exitcodes import ExitCode
from ..protocol.errors import ErrorCode

# Error codes that mean "you may not" or "you are not who you say": exit 4, not 7.
AUTH_CODES = frozenset({
    ErrorCode.TOPIC_AUTHORIZATION_FAILED,
    ErrorCode.GROUP_AUTHORIZATION_FAILED,
    ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
    ErrorCode.UNSUPPORTED_SASL_MECHANISM,
    ErrorCode.ILLEGAL_SASL_STATE,
    ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
    ErrorCode.SASL_AUTHENTICATION_FAILED,
    ErrorCode.DELEGATION_TOKEN_AUTHORIZATION_FAILED,
})


class NotKafkaError(UnreachableError):
    """Something answered on the port, but not as a Kafka broker would."""

    kind = "not_kafka"


class ConnectionLostError(UnreachableError):
    """An established connection closed (by the peer, by us, or after a failure)."""

    kind = "disconnected"


class RequestTimeoutError(DeadlineError):
    """A request got no response within its timeout; the connection is closed (as the
    Java client does: a broker answers in order, so nothing behind it would come)."""

    kind = "timeout"


class ProtocolError(GroupctlError):
    """A response that groupctl cannot decode, or one over what it decodes (a hostile
    or broken peer, a broker it does not know): exit 3, as for a peer that is not Kafka
    (a broker's bytes are input, not groupctl's bug)."""

    kind = "protocol"
    exit_code = ExitCode.UNREACHABLE


class UnsupportedVersionError(KafkaError):
    """The broker and groupctl have no version of an API in common (or none at least
    `min_version`)."""

    kind = "unsupported_version"

    def __init__(self, api: str, message: str):
        super().__init__(api, ErrorCode.UNSUPPORTED_VERSION, message)


class KafkaAuthError(BrokerErrorCode, AuthError):
    """An authentication or authorization error code from the broker (exit 4)."""

    kind = "auth"

    retriable = False


def kafka_error(api: str, code: int, message: str | None = None) -> GroupctlError:
    """The exception for a non-zero error code: KafkaAuthError for auth codes (exit 4),
    otherwise KafkaError (exit 7). Raise it: `raise kafka_error("Metadata", code)`."""
    if code in AUTH_CODES:
        return KafkaAuthError(api, code, message)
    return KafkaError(api, code, message)


def failure_kind(exc: BaseException) -> str:
    """The `kind` word for a failed request: "timeout", "disconnected", ..."""
    return getattr(exc, "kind", None) or type(exc).__name__
