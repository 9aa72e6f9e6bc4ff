"""Errors of the observe layer."""
from __future__ import annotations

from ..errors import GroupctlError, NotFoundError
from ..exitcodes import ExitCode


class PartialFailure(GroupctlError):
    """Some of the work succeeded (and was printed), some failed: exit 7 (DESIGN §5)."""

    exit_code = ExitCode.KAFKA_ERROR

    def __init__(self, message: str, failures: dict):
        super().__init__(message)
        self.failures = failures


def group_not_found(group: str) -> NotFoundError:
    return NotFoundError(f"group {group!r} not found")
