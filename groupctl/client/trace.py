"""The protocol trace (`--debug`): one stderr line per request, written when its response
arrives (or when it fails), e.g.

    groupctl: trace: Metadata v12 #3 node 1 127.0.0.1:9092 1.8 ms ok
    groupctl: trace: DescribeGroups v6 #7 node 1 127.0.0.1:9092 0.9 ms groups[0].error_code=GROUP_ID_NOT_FOUND(69)
    groupctl: trace: JoinGroup v9 #8 node 2 127.0.0.1:9093 30001.2 ms failed: timeout

Error codes are found anywhere in the response: every key ending in `error_code` whose
value is non-zero, named from groupctl.protocol.errors. SASL tokens are never printed.

A Tracer is given to Cluster/BrokerConnection explicitly, or set for the current task
and its children with `use_tracer()` (cli.common.run_async does this under --debug); a
connection without one asks `current_tracer()` when it is created.
"""
from __future__ import annotations

import contextvars
from typing import Any, Callable, TextIO

from ..protocol.errors import error_for

_CURRENT: contextvars.ContextVar[Tracer | None] = contextvars.ContextVar("groupctl_tracer",
                                                                          default=None)
MAX_SHOWN = 6  # error codes listed per line; the rest are counted


def error_codes(body: Any, path: str = "") -> list[tuple[str, int]]:
    """(path, code) for every non-zero `*error_code` in a decoded response, depth first."""
    found: list[tuple[str, int]] = []
    _walk(body, path, found)
    return found


def _walk(value: Any, path: str, found: list) -> None:
    if isinstance(value, dict):
        for key, v in value.items():
            if not isinstance(key, str) or key.startswith("_"):
                continue
            sub = f"{path}.{key}" if path else key
            if key.endswith("error_code") and isinstance(v, int) and not isinstance(v, bool):
                if v != 0:
                    found.append((sub, v))
            elif isinstance(v, (dict, list)):
                _walk(v, sub, found)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            if isinstance(v, (dict, list)):
                _walk(v, f"{path}[{i}]", found)


def describe_errors(body: Any) -> str:
    codes = error_codes(body)
    if not codes:
        return "ok"
    shown = [f"{p}={error_for(c).name}({c})" for p, c in codes[:MAX_SHOWN]]
    if len(codes) > MAX_SHOWN:
        shown.append(f"+{len(codes) - MAX_SHOWN} more")
    return " ".join(shown)


class Tracer:
    """Writes trace lines to a text stream (stderr). `prefix` starts every line; `shown`
    makes a line fit for a terminal (the CLI's: broker error messages and names escaped)."""

    def __init__(self, stream: TextIO, prefix: str = "groupctl: trace: ",
                 shown: Callable[[str], str] = str):
        self.stream = stream
        self.prefix = prefix
        self.shown = shown

    def _write(self, line: str) -> None:
        try:
            self.stream.write(self.prefix + self.shown(line) + "\n")
            self.stream.flush()
        except (OSError, ValueError):  # stderr closed: tracing must never break a command
            pass

    def exchange(self, *, api: str, version: int, correlation_id: int, broker: str,
                 latency_ms: float, body: dict | None = None,
                 failure: str | None = None) -> None:
        """One finished request: its response `body`, or the `failure` that ended it."""
        outcome = f"failed: {failure}" if failure is not None else describe_errors(body)
        self._write(f"{api} v{version} #{correlation_id} {broker} {latency_ms:.1f} ms {outcome}")

    def note(self, broker: str, text: str) -> None:
        """A connection event: connected, negotiated, authenticated, closed."""
        self._write(f"{broker} {text}")


def current_tracer() -> Tracer | None:
    return _CURRENT.get()


def use_tracer(tracer: Tracer | None) -> contextvars.Token:
    """Make `tracer` the default for connections created in this context from now on."""
    return _CURRENT.set(tracer)
