"""The environment a command runs in: streams, terminal detection, the environment
variables, the clock, settings. Injected (httpie-style) so tests can run commands
in-process and record their output. Commands get it one way: `env_of(ctx)`."""
from __future__ import annotations

import os
import sys
import traceback
from pathlib import Path
from typing import Any, Mapping, TextIO, cast

from ..clock import SYSTEM_CLOCK, Clock
from ..records import Record

BOOTSTRAP_ENV = "GROUPCTL_BOOTSTRAP_SERVERS"
CONFIG_ENV = "GROUPCTL_CONFIG"


class Settings(Record):
    """The global options, as parsed."""

    _fields = ("bootstrap_server", "context", "command_config", "output", "timeout",
               "no_color", "debug")

    def __init__(self, bootstrap_server: str | None = None, context: str | None = None,
                 command_config: str | None = None, output: str = "table",
                 timeout: float = 10.0, no_color: bool = False, debug: bool = False):
        self.bootstrap_server = bootstrap_server  # -b/--bootstrap-server as given (not the env var)
        self.context = context
        self.command_config = command_config
        self.output = output
        self.timeout = timeout
        self.no_color = no_color
        self.debug = debug


class Env(Record):
    """Streams, terminal flags, environment variables, the clock and settings of one
    command run."""

    _fields = ("stdout", "stderr", "stdout_is_terminal", "stderr_is_terminal", "stdin",
               "stdin_is_terminal", "no_color_env", "clock", "settings", "environ", "tracer",
               "said_unverified_tls")
    _hidden = frozenset({"tracer"})

    def __init__(self, stdout: TextIO, stderr: TextIO, stdout_is_terminal: bool = False,
                 stderr_is_terminal: bool = False, stdin: TextIO | None = None,
                 stdin_is_terminal: bool = False, no_color_env: bool = False,
                 clock: Clock = SYSTEM_CLOCK, settings: Settings | None = None,
                 environ: Mapping[str, str] | None = None, tracer: Any = None,
                 said_unverified_tls: bool = False):
        self.stdout = stdout
        self.stderr = stderr
        self.stdout_is_terminal = stdout_is_terminal
        self.stderr_is_terminal = stderr_is_terminal
        self.stdin = stdin
        self.stdin_is_terminal = stdin_is_terminal
        self.no_color_env = no_color_env
        self.clock = clock
        self.settings = Settings() if settings is None else settings
        self.environ: Mapping[str, str] = dict(os.environ) if environ is None else environ
        self.tracer = tracer   # the --debug protocol tracer, made once
        self.said_unverified_tls = said_unverified_tls   # the warning is given once a run

    def monotonic(self) -> float:
        return self.clock.monotonic()

    @property
    def config_path(self) -> Path:
        """The contexts file: $GROUPCTL_CONFIG, else ~/.config/groupctl/config.yaml."""
        from ..config import config_path

        return config_path(self.environ.get(CONFIG_ENV))

    @property
    def bootstrap_env(self) -> str | None:
        """$GROUPCTL_BOOTSTRAP_SERVERS, when set."""
        return self.environ.get(BOOTSTRAP_ENV) or None

    @classmethod
    def from_system(cls) -> "Env":
        return cls(
            stdout=sys.stdout, stderr=sys.stderr,
            stdout_is_terminal=sys.stdout.isatty(), stderr_is_terminal=sys.stderr.isatty(),
            stdin=sys.stdin, stdin_is_terminal=bool(sys.stdin and sys.stdin.isatty()),
            no_color_env=bool(os.environ.get("NO_COLOR")), environ=os.environ,
        )

    def console(self, stderr: bool = False):
        """A rich Console on stdout (or stderr); colour only on a terminal; every string
        it is given shown, never obeyed (render/visible.py)."""
        terminal = self.stderr_is_terminal if stderr else self.stdout_is_terminal
        file = self.stderr if stderr else self.stdout
        return _console_class()(file=file if terminal else cast(TextIO, NoTrailingSpaces(file)),
                       force_terminal=terminal, no_color=self.settings.no_color or not terminal,
                       highlight=False, soft_wrap=not terminal)

    def view_console(self):
        """The console a table view is drawn on: console() on a terminal; into a pipe or
        a file, render/plain.py's, which writes console()'s bytes and imports rich only
        for what it cannot write itself."""
        if self.stdout_is_terminal:
            return self.console()
        from ..render.plain import PlainConsole

        return PlainConsole(self.stdout, self.console)

    def fail(self, message: str, code: int, debug: bool = False) -> int:
        if debug:
            traceback.print_exc(file=self.stderr)
        from ..render.visible import visible

        self.stderr.write(f"groupctl: error: {visible(str(message))}\n")
        self.stderr.flush()
        return int(code)

    def note(self, text: str, end: str = "\n") -> None:
        """`text` on stderr, made visible (a name from the cluster cannot write to the
        terminal: render/visible.py), then `end`."""
        from ..render.visible import visible

        self.stderr.write(visible(text) + end)
        self.stderr.flush()

    def warn(self, message: str) -> None:
        from ..render.visible import visible

        self.stderr.write(f"groupctl: warning: {visible(str(message))}\n")

    def silence_broken_pipe(self) -> None:
        # stdout is gone (`| head`): point it at devnull so the interpreter's final flush
        # does not print a BrokenPipeError of its own.
        try:
            fd = self.stdout.fileno()
        except (AttributeError, OSError, ValueError):   # no descriptor (a StringIO in tests)
            return
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, fd)
        except OSError:
            pass
        finally:
            os.close(devnull)


class ReaderGone(BrokenPipeError):
    """stdout's reader went away (`| head -1` done). Raised by ReaderGuard in place of
    the EPIPE OSError: click's main() turns that one into a silent exit 1 before cli/app.py
    sees it; this one (no errno) it lets through, to end the command with exit 0."""


class ReaderGuard:
    """stdout as a command writes it: every write and flush that meets a closed reader
    raises ReaderGone, whichever command and output format wrote it (a table through
    rich, json, yaml, ndjson). Anything else is the stream's own."""

    def __init__(self, stream: TextIO):
        self.stream = stream

    def write(self, text: str) -> int:
        try:
            return self.stream.write(text)
        except ReaderGone:
            raise
        except BrokenPipeError as exc:
            raise ReaderGone("stdout's reader went away") from exc

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        try:
            self.stream.flush()
        except ReaderGone:
            raise
        except BrokenPipeError as exc:
            raise ReaderGone("stdout's reader went away") from exc

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


class NoTrailingSpaces:
    """A console's file into a pipe or file: lines without the spaces rich pads a table's
    last column with (a terminal keeps them: a redrawn live view clears old text so)."""

    def __init__(self, stream: TextIO):
        self.stream = stream
        self._spaces = ""   # spaces at the end of the last write: kept unless a line ends

    def write(self, text: str) -> int:
        text = self._spaces + text
        body = text.rstrip(" ")
        self._spaces = text[len(body):]
        if "\n" in body:
            body = "\n".join(line.rstrip(" ") for line in body.split("\n"))
        self.stream.write(body)
        return len(text)

    def flush(self) -> None:
        if self._spaces:
            self.stream.write(self._spaces)
            self._spaces = ""
        self.stream.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


_CONSOLE: Any = None


def _console_class() -> Any:
    """render/visible.py's Console (names shown, never obeyed), and a closed reader
    raises ReaderGone: rich's own answer to a broken pipe is SystemExit(1), exit 1 as for
    a bug."""
    global _CONSOLE
    if _CONSOLE is None:
        from ..render.visible import console_class

        class GroupctlConsole(console_class()):  # type: ignore[misc]
            def on_broken_pipe(self) -> None:
                self.quiet = True
                raise ReaderGone("stdout's reader went away")

        _CONSOLE = GroupctlConsole
    return _CONSOLE


def guard_reader(stream: TextIO) -> TextIO:
    """`stream` wrapped in a ReaderGuard (once)."""
    if isinstance(stream, ReaderGuard):
        return stream
    return cast(TextIO, ReaderGuard(stream))


def env_of(ctx) -> Env:
    """The Env of the command run `ctx` belongs to (set on the root context by cli/app.py)."""
    return ctx.find_root().obj
