"""Errors of the observe layer."""
from __future__ import annotations

from ...errors import AuthError, GroupctlError, NotFoundError
from ...exitcodes import ExitCode
from ...protocol.errors import ErrorCode


class PartialFailure(GroupctlError):
    """Some of the work succeeded (and was printed), some failed: exit 7 (docs/reference/exit-codes.md)."""

    exit_code = ExitCode.KAFKA_ERROR

    def __init__(self, message: str, failures: dict):
        super().__init__(message)
        self.failures = failures


def group_not_found(group: str) -> NotFoundError:
    return NotFoundError(f"group {group!r} not found")


def not_authorized(exc: GroupctlError, action: str, group: str) -> GroupctlError:
    """GROUP_AUTHORIZATION_FAILED from any API, said as the user meant it (exit 4):
    `not authorized to describe group 'G' (GROUP_AUTHORIZATION_FAILED)`; other errors as
    they are."""
    if getattr(exc, "code", None) != ErrorCode.GROUP_AUTHORIZATION_FAILED:
        return exc
    return AuthError(f"not authorized to {action} group {group!r} "
                     f"({ErrorCode.GROUP_AUTHORIZATION_FAILED.name})")
