"""Exit codes (docs/reference/exit-codes.md). The CLI maps exceptions to these in exactly one place.

MEANINGS is the one description of each code: the man page's EXIT STATUS and the docs site's
exit-code table are generated from it (groupctl.cli.docs), so they cannot drift apart."""
from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    INTERNAL = 1
    USAGE = 2
    UNREACHABLE = 3
    AUTH = 4
    NOT_FOUND = 5
    TIMEOUT = 6
    KAFKA_ERROR = 7
    CONDITION_VIOLATED = 8  # a watched condition was violated (watch --max-rebalances)
    INTERRUPTED = 130


# Markdown (`code` spans); the man page drops the backticks.
MEANINGS = {
    ExitCode.OK: "success (for `watch` and `join --watch` also a clean stop: Ctrl-C, SIGTERM "
                 "or the end of `--duration`; for every command also stdout's reader going "
                 "away, `| head -1`: quietly, nothing more is written)",
    ExitCode.INTERNAL: "unexpected internal error (a bug: `--debug` shows the traceback)",
    ExitCode.USAGE: "usage error: a bad option or argument, bad `--bootstrap-server` syntax, "
                    "no brokers given, a path that cannot be written, a lab that already runs "
                    "(found before any work starts); also a file that cannot be written "
                    "later, e.g. a full disk (`--record`, `--out`, the config file: the old "
                    "file stays, nothing half-written); a group id longer than Kafka's "
                    "32,767 bytes; out of file descriptors (`ulimit -n`)",
    ExitCode.UNREACHABLE: "no broker reachable (refused, DNS, TLS handshake, not a Kafka "
                          "broker, an answer that does not decode or is over what groupctl "
                          "reads)",
    ExitCode.AUTH: "authentication or authorization failed",
    ExitCode.NOT_FOUND: "group not found (or Empty where a live group is required)",
    ExitCode.TIMEOUT: "timeout: the condition was not reached in time",
    ExitCode.KAFKA_ERROR: "the broker refused the action with a Kafka error (the message names "
                          "code and name)",
    ExitCode.CONDITION_VIOLATED: "a watched condition was violated (`watch --max-rebalances`)",
    ExitCode.INTERRUPTED: "interrupted (also: a confirmation answered no)",
}
