"""The typer app, global options, and the one place exceptions become exit codes.

Global options may stand before or after the command (`groupctl describe g -o json`):
run() moves them in front before typer parses, since click only knows them there.
Command modules import their heavy dependencies inside the command so `--help` stays fast.
"""
from __future__ import annotations

import os
import sys
from typing import Optional

import typer

from typer._click import exceptions as click_exc  # typer 0.26-0.28 vendor click (pyproject)

from .. import __version__, startup
from ..errors import DESCRIPTORS_ERRNOS, GroupctlError, Interrupted, OutOfDescriptors, UsageError
from ..exitcodes import ExitCode
from .env import Env, Settings, guard_reader


class _Commands(typer.core.TyperGroup):
    """The command tree, with Ctrl-C kept as what it is: typer (standalone or not) turns a
    KeyboardInterrupt into a silent exit 130, so a second Ctrl-C (run_async: stop at once)
    and Ctrl-C in a command that talks to no cluster (decode, errors) said nothing."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            raise Interrupted("interrupted") from None


app = typer.Typer(
    name="groupctl",
    cls=_Commands,
    help="See and steer Kafka consumer-group rebalances.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)

OUTPUTS = ("table", "wide", "json", "yaml", "ndjson")

# Commands that import what they need and then call common.run_async, which ends the
# console script's start-up (groupctl.startup); any other command's start-up ends in main().
STARTUP_ENDS_IN_RUN_ASYNC = frozenset({"list", "describe", "join"})

# option -> takes a value; used to move global options in front of the command
GLOBAL_OPTIONS = {
    "-b": True, "--bootstrap-server": True, "--context": True, "--command-config": True,
    "-o": True, "--output": True, "--timeout": True, "--no-color": False, "--debug": False,
}


def _version(value: bool):
    if value:
        typer.echo(f"groupctl {__version__}")
        raise typer.Exit()


def _complete_outputs(incomplete: str) -> list[str]:
    return [o for o in OUTPUTS if o.startswith(incomplete)]


@app.callback()
def main(
    ctx: typer.Context,
    bootstrap_server: Optional[str] = typer.Option(
        None, "-b", "--bootstrap-server", envvar="GROUPCTL_BOOTSTRAP_SERVERS",
        help="HOST:PORT[,HOST:PORT...] of brokers to bootstrap from."),
    context: Optional[str] = typer.Option(None, "--context", help="Use this context from the config file."),
    command_config: Optional[str] = typer.Option(
        None, "--command-config", help="Kafka client properties file (security.protocol, sasl.*, ssl.*)."),
    output: str = typer.Option("table", "-o", "--output", help="table, wide, json, yaml or ndjson.",
                               autocompletion=_complete_outputs),
    timeout: float = typer.Option(10.0, "--timeout", show_default=False,  # not one default
                                  help="Seconds before a command gives up (default 10; 60 for "
                                       "force-rebalance and wait)."),
    no_color: bool = typer.Option(False, "--no-color", envvar="NO_COLOR", help="No colour, even on a terminal."),
    debug: bool = typer.Option(False, "--debug", help="Tracebacks and a protocol trace on stderr."),
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version."),
):
    if output not in OUTPUTS:
        raise UsageError(f"--output must be one of {', '.join(OUTPUTS)}, not {output!r}")
    if not timeout > 0:  # nan too
        raise UsageError("--timeout must be positive")
    if command_config is not None:
        _check_command_config(command_config)
    _check_cache()
    env = ctx.obj if isinstance(ctx.obj, Env) else Env.from_system()
    if _from_environment(ctx, "bootstrap_server"):  # Env reads the variable itself
        bootstrap_server = None
    env.settings = Settings(bootstrap_server, context, command_config, output, timeout,
                            no_color or env.no_color_env, debug)
    ctx.obj = env
    if ctx.invoked_subcommand not in STARTUP_ENDS_IN_RUN_ASYNC:
        startup.release()


def _check_cache() -> None:
    """groupctl runs code from its cache (decoders, Kafka's jars, JVM archives): a cache
    another local user could write to is refused before any command starts."""
    from ..safe_files import UnsafePath, check_cache

    try:
        check_cache()
    except UnsafePath as exc:
        raise UsageError(f"cache {exc}; set GROUPCTL_CACHE to a directory of your own") \
            from None


def _from_environment(ctx: typer.Context, param: str) -> bool:
    """Whether click filled `param` from its environment variable (not the command line)."""
    source = ctx.get_parameter_source(param)
    return source is not None and source.name == "ENVIRONMENT"


def _check_command_config(path: str) -> None:
    """A missing --command-config file is the error to report, before any other (no
    brokers given, a bad context): it is what the user typed wrong."""
    full = os.path.expanduser(path)
    if not os.path.exists(full):
        raise UsageError(f"--command-config {path}: the file does not exist")
    if os.path.isdir(full):
        raise UsageError(f"--command-config {path}: is a directory, not a properties file")


def hoist_global_options(argv: list[str]) -> list[str]:
    """Move global options (with their values) in front of the command name."""
    front, rest = [], []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            rest.extend(argv[i:])
            break
        name = arg.split("=", 1)[0]
        if name in GLOBAL_OPTIONS:
            takes_value = GLOBAL_OPTIONS[name] and "=" not in arg
            front.extend(argv[i:i + 2] if takes_value else [arg])
            i += 2 if takes_value else 1
            continue
        rest.append(arg)
        i += 1
    return front + rest


# The module that adds each top-level command to `app` (on import). A run that names one
# of them imports only that module: building the click commands of all of them is ~5 ms
# of a `describe`. Help, completion and anything else (a typo gets "No such command")
# register every module.
COMMAND_MODULES = {"list": "groups", "describe": "groups", "join": "join", "demo": "demo",
                   "lab": "lab", "decode": "offline", "errors": "offline",
                   "config": "config_cmd",
                   "force-rebalance": "steer", "wait": "steer", "remove-member": "steer",
                   "analyze": "analyze", "history": "records",
                   "watch": "watch", "canary": "canary"}


def command_name(argv: list[str]) -> str | None:
    """The command word of a hoisted argv (global options first), if any."""
    i = 0
    while i < len(argv):
        name = argv[i].split("=", 1)[0]
        if name not in GLOBAL_OPTIONS:
            return argv[i]
        i += 2 if GLOBAL_OPTIONS[name] and "=" not in argv[i] else 1
    return None


def _register_commands(command: str | None = None) -> None:
    """Register the module of `command`, or every module (None, or not a command)."""
    module = COMMAND_MODULES.get(command or "")
    if module is not None and not os.environ.get("_GROUPCTL_COMPLETE"):
        modules = {module}
    else:
        modules = set(COMMAND_MODULES.values())
    from importlib import import_module

    for name in sorted(modules):
        import_module(f"{__package__}.{name}")


def run(argv: list[str] | None = None, env: Env | None = None) -> int:
    """Run groupctl; returns the exit code (and exits with it when called as a script)."""
    code = invoke(sys.argv[1:] if argv is None else argv, env)
    if argv is None:
        if startup.ends_at_once():
            _exit_at_once(code)
        sys.exit(code)
    return code


def _exit_at_once(code: int) -> None:
    """End a one-shot command's process without the interpreter's teardown (startup.py),
    once stdout and stderr are flushed; if a flush fails, return: sys.exit says it as
    always."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:  # noqa: BLE001 - the interpreter's own exit reports it
        return
    os._exit(code)


# click's words for a value of the wrong type, in the words groupctl's own errors use
_CLICK_TYPES = {"float": "a number", "integer": "a whole number", "int": "a whole number",
                "boolean": "true or false",
                "float range": "in range", "integer range": "in range"}


def house_style(message: str) -> str:
    """A click usage message as groupctl's own are written (`--timeout 'abc' is not a
    number`, lower case, no closing full stop), not `Invalid value for '--timeout': 'abc'
    is not a valid float.`"""
    import re

    text = " ".join(message.split()).rstrip(".")
    m = re.fullmatch(r"Invalid value for '([^']+)': '(.*)' is not a valid ([\w ]+?)", text)
    if m:
        return f"{m[1]} '{m[2]}' is not {_CLICK_TYPES.get(m[3], 'a valid ' + m[3])}"
    m = re.fullmatch(r"Invalid value for '([^']+)': (.*)", text)
    if m:
        text = f"{m[1]}: {m[2]}"
    text = text.replace("(Possible options:", "(possible options:").replace(
        " Did you mean", "; did you mean")
    return text[:1].lower() + text[1:]


def invoke(argv: list[str], env: Env | None = None) -> int:
    env = env or Env.from_system()
    env.stdout = guard_reader(env.stdout)   # a closed reader: exit 0, whatever wrote
    argv = hoist_global_options(argv)
    debug = "--debug" in argv
    try:
        _register_commands(command_name(argv))   # imports: Ctrl-C may come here too
        result = app(args=argv, prog_name="groupctl", standalone_mode=False, obj=env)
        return int(result or 0) if isinstance(result, int) else 0
    except typer.Exit as exc:
        return exc.exit_code
    except click_exc.UsageError as exc:
        if type(exc).__name__ == "NoArgsIsHelpError" and exc.ctx is not None:
            env.stdout.write(exc.ctx.get_help() + "\n")
            return ExitCode.USAGE
        return env.fail(house_style(exc.format_message()), ExitCode.USAGE, debug)
    except (typer.Abort, KeyboardInterrupt, Interrupted):
        env.stderr.write("\ngroupctl: interrupted\n")
        return ExitCode.INTERRUPTED
    except GroupctlError as exc:
        return env.fail(str(exc), exc.exit_code, debug)
    except BrokenPipeError:   # stdout's reader went away (`| head -1`): done, quietly
        env.silence_broken_pipe()
        return ExitCode.OK
    except OSError as exc:
        if exc.errno not in DESCRIPTORS_ERRNOS:
            return env.fail(f"internal error: {type(exc).__name__}: {exc}", ExitCode.INTERNAL,
                            debug)
        err = OutOfDescriptors.from_os_error(exc)   # e.g. while importing a module
        return env.fail(str(err), err.exit_code, debug)
    except Exception as exc:  # the one place an unexpected error becomes exit 1
        return env.fail(f"internal error: {type(exc).__name__}: {exc}", ExitCode.INTERNAL, debug)
