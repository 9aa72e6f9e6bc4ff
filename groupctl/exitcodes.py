"""Exit codes (DESIGN §5). The CLI maps exceptions to these in exactly one place."""
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
