"""groupctl's exception hierarchy. Each kind carries the exit code it ends a command with;
the CLI turns them into one stderr line and that code (groupctl.cli.app.run)."""
from __future__ import annotations

from .exitcodes import ExitCode


class GroupctlError(Exception):
    exit_code = ExitCode.INTERNAL
    permanent = False   # True: retrying the same address will not fix it (not Kafka, TLS)
    last_error: BaseException | None = None   # a DeadlineError's last failure
    group: str | None = None   # the group a failure of a many-group request is about


class UsageError(GroupctlError):
    exit_code = ExitCode.USAGE


class UnreachableError(GroupctlError):
    """No broker answered: refused, DNS, TLS handshake, or not a Kafka broker."""
    exit_code = ExitCode.UNREACHABLE


class AuthError(GroupctlError):
    exit_code = ExitCode.AUTH


class NotFoundError(GroupctlError):
    exit_code = ExitCode.NOT_FOUND


class Interrupted(GroupctlError):
    """Ctrl-C, where click would turn a KeyboardInterrupt into a silent exit 130: the CLI
    says "interrupted" in one line."""
    exit_code = ExitCode.INTERRUPTED


class DeadlineError(GroupctlError):
    exit_code = ExitCode.TIMEOUT


class BrokerErrorCode(Exception):
    """Mixin for errors that carry the broker's error code: api, code, the error-table
    entry, and the message `API failed: NAME (code)[: message]`."""

    def __init__(self, api: str, code: int, message: str | None = None):
        from .protocol.errors import error_for

        self.api = api
        self.code = code
        self.error = error_for(code)
        text = f"{api} failed: {self.error.name} ({code})"
        if message:
            text += f": {message}"
        super().__init__(text)


class KafkaError(BrokerErrorCode, GroupctlError):
    """The broker answered with a Kafka error code that ends the action."""
    exit_code = ExitCode.KAFKA_ERROR

    @property
    def retriable(self) -> bool:
        return self.error.retriable


class LabError(GroupctlError):
    """The local lab could not do what was asked (Java/Maven missing, port taken...)."""
    exit_code = ExitCode.INTERNAL


class OutOfDescriptors(UsageError):
    """The process may open no more files or sockets (EMFILE, ENFILE): the machine's
    limit, not the cluster's fault nor groupctl's bug (exit 2, one line)."""

    @classmethod
    def from_os_error(cls, exc: OSError) -> "OutOfDescriptors":
        import errno

        try:   # an extension module: loading it needs a descriptor too
            import resource

            soft = f": {resource.getrlimit(resource.RLIMIT_NOFILE)[0]}"
        except ImportError:
            soft = ""
        which = ("the system's" if exc.errno == errno.ENFILE
                 else f"this process's (ulimit -n{soft})")
        return cls(f"out of file descriptors: {which} limit is reached; raise it, or watch "
                   f"fewer groups at once")


DESCRIPTORS_ERRNOS = (24, 23)   # EMFILE, ENFILE
