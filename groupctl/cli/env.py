"""The environment a command runs in: streams, terminal detection, the environment
variables, the clock, settings. Injected (httpie-style) so tests can run commands
in-process and record their output. Commands get it one way: `env_of(ctx)`."""
from __future__ import annotations

import os
import sys
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, TextIO

from ..clock import SYSTEM_CLOCK, Clock

BOOTSTRAP_ENV = "GROUPCTL_BOOTSTRAP_SERVERS"
CONFIG_ENV = "GROUPCTL_CONFIG"


@dataclass
class Settings:
    """The global options, as parsed."""

    bootstrap_server: str | None = None    # -b/--bootstrap-server as given (not the env var)
    context: str | None = None
    command_config: str | None = None
    output: str = "table"
    timeout: float = 10.0
    no_color: bool = False
    debug: bool = False


@dataclass
class Env:
    """Streams, terminal flags, environment variables, the clock and settings of one
    command run."""

    stdout: TextIO
    stderr: TextIO
    stdout_is_terminal: bool = False
    stderr_is_terminal: bool = False
    stdin: TextIO | None = None
    stdin_is_terminal: bool = False
    no_color_env: bool = False
    clock: Clock = SYSTEM_CLOCK
    settings: Settings = field(default_factory=Settings)
    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    tracer: Any = field(default=None, repr=False)   # the --debug protocol tracer, made once
    said_unverified_tls: bool = False   # the unverified-TLS warning is given once a run

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
        from ..render.visible import visible_console

        terminal = self.stderr_is_terminal if stderr else self.stdout_is_terminal
        return visible_console(file=self.stderr if stderr else self.stdout,
                       force_terminal=terminal, no_color=self.settings.no_color or not terminal,
                       highlight=False, soft_wrap=not terminal)

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
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass


def env_of(ctx) -> Env:
    """The Env of the command run `ctx` belongs to (set on the root context by cli/app.py)."""
    return ctx.find_root().obj
