"""Harness for the CLI's own argument handling: random argv into groupctl.cli.app.invoke,
in process, the way the console script runs (global options hoisted, typer/click parsing,
the one place exceptions become exit codes).

Input: argv tokens separated by NUL bytes (argv cannot hold NUL). A two-byte token
starting with 0xff is a word of the CLI's vocabulary (commands and every option, read
from the click tree, and values the options take), so mutations can splice real options;
any other token is decoded as the OS decodes argv (UTF-8, surrogateescape).

Network: every broker address is 127.0.0.1:1 (refused) and a command runs with
`--timeout 0.01` at most: a command that talks to a broker ends with exit 3 (or 6) at
once. Commands that start processes or Spark (lab, demo, analyze) are not run. Files are
written only under a private directory (the contexts file, --record, analyze's --out).

A crash: an exception out of invoke, exit 1 (docs/reference/exit-codes.md: unexpected internal error), an
exit code docs/reference/exit-codes.md does not list, or a traceback on stderr without --debug.
"""
from __future__ import annotations

import contextlib
import io
import math
import os

from .registry import Crash, harness
from .targets_config import _workdir

CLOSED = "127.0.0.1:1"
MAX_TIMEOUT = 0.01
ALLOWED_EXITS = {0, 2, 3, 4, 5, 6, 7, 8}
BLOCKED = {"lab", "demo", "analyze"}        # start JVMs, consumers, Spark
SECONDS = {"--timeout", "--duration", "--interval", "--settled", "--session-timeout",
           "--rebalance-timeout", "--watch-seconds", "--churn", "--grace", "--storm-window"}
BOOTSTRAP = {"-b", "--bootstrap-server"}
VALUES = ("json", "yaml", "ndjson", "wide", "table", "Stable", "Empty", "Dead",
          "PreparingRebalance", "classic", "consumer", "share", "streams", "range",
          "roundrobin", "sticky", "cooperative-sticky", "-", "0", "1", "-1", "nan", "inf",
          "1e400", "g", "t1,t2", ".*", "(", "SASL_SSL", "SCRAM-SHA-512", "PLAIN",
          "0003000000010002743100000000ffffffff", "AAMAAAABAAJ0MQAAAAD/////", "ctx",
          "REBALANCE_IN_PROGRESS", "27", "ea", "--", "=", "a=b", "²", "١٢", "127.0.0.1:9092")
VOCAB: list[str] = []


def _vocabulary() -> None:
    """Every command path word and option of the CLI (from typer's click tree)."""
    import typer.main

    from groupctl.cli import app as cli_app

    cli_app._register_commands(None)
    words: set[str] = set()

    def walk(cmd) -> None:
        for p in cmd.params:
            words.update(o for o in p.opts if o.startswith("-"))
        for name, sub in getattr(cmd, "commands", {}).items():
            if name not in BLOCKED:
                words.add(name)
                walk(sub)

    command = typer.main.get_command(cli_app.app)
    walk(command)
    words.update(("--help", "-h", "--version"))
    VOCAB[:] = sorted(words) + list(VALUES)
    CLICK_TREE[:] = [command]


# Typer.__call__ rebuilds the click tree on every call (~50 ms, most of a run that fails
# parsing); run_argv calls the tree built once (the same run, 10-100x more of them).
CLICK_TREE: list = []


def _token(raw: bytes) -> str:
    if len(raw) == 2 and raw[0] == 0xFF:
        return VOCAB[raw[1] % len(VOCAB)]
    return raw.decode("utf-8", "surrogateescape")


def _safe_path(value: str) -> str:
    """Keep a file argument inside the private directory (never /, ~ or ..)."""
    if value.startswith(("/", "~")) or ".." in value:
        return "f-" + value.replace("/", "_").replace("~", "_").replace(".", "_")
    return value


def _safe_seconds(value: str) -> str:
    try:
        seconds = float(value)
    except ValueError:
        return value  # the CLI must reject it
    return str(MAX_TIMEOUT) if math.isinf(seconds) or seconds > MAX_TIMEOUT else value


def _safe_bootstrap(value: str) -> str:
    """A well-formed address becomes the closed port; a malformed one stays, for the
    parser to reject (or to crash on: that is what we look for)."""
    from groupctl.config import parse_bootstrap

    try:
        parse_bootstrap(value)
    except Exception:  # noqa: BLE001 - UsageError or a crash: let the real run show which
        return value
    return CLOSED


def sanitize(argv: list[str]) -> list[str] | None:
    """argv made safe to run here, or None when it names a blocked command."""
    out: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        i += 1
        if arg in BLOCKED:
            return None
        name, eq, attached = arg.partition("=")
        if name.startswith("-b") and not name.startswith("--") and len(name) > 2 and not eq:
            out.append("-b" + _safe_bootstrap(arg[2:]))  # -bHOST:PORT
            continue
        fix = (_safe_bootstrap if name in BOOTSTRAP else _safe_seconds if name in SECONDS
               else _safe_path if name in ("--record", "--command-config", "--out",
                                           "--password-file", "--ca-file", "--cert-file",
                                           "--key-file") else None)
        if fix is None:
            out.append(_safe_path(arg) if arg.startswith(("/", "~")) else arg)
        elif eq:
            out.append(f"{name}={fix(attached)}")
        elif i < len(argv):
            out.extend((arg, fix(argv[i])))
            i += 1
        else:
            out.append(arg)
    return out


def run_argv(argv: list[str], stdin: str = "") -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of one in-process run with the harness's Env."""
    from groupctl.cli.app import invoke
    from groupctl.cli.env import Env

    home = _workdir()
    config = home / "config.yaml"
    if config.exists():
        config.unlink()  # each run starts without contexts (a set-context cannot leak)
    out, err = io.StringIO(), io.StringIO()
    env = Env(stdout=out, stderr=err, stdin=io.StringIO(stdin),
              environ={"GROUPCTL_CONFIG": str(config), "HOME": str(home),
                       "GROUPCTL_BOOTSTRAP_SERVERS": CLOSED, "PATH": os.environ.get("PATH", "")})
    from groupctl.cli import app as cli_app

    if not CLICK_TREE:
        _vocabulary()
    cwd, typer_app = os.getcwd(), cli_app.app
    os.chdir(home)  # relative paths (--record FILE) land in the private directory
    cli_app.app = CLICK_TREE[0]  # only for this run: other code needs the Typer app
    try:  # click writes --help and --version to sys.stdout, not to the Env's stream
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = invoke(["--timeout", str(MAX_TIMEOUT), *argv], env)
    finally:
        cli_app.app = typer_app
        os.chdir(cwd)
    return code, out.getvalue(), err.getvalue()


@harness("cli", documented=(), setup=_vocabulary, max_len=512, smoke_runs=150, timeout=20)
def cli_argv(data: bytes) -> None:
    """Random argv into the CLI (see the module doc)."""
    if not VOCAB:
        _vocabulary()
    tokens = [_token(t) for t in data.split(b"\x00")] if data else []
    argv = sanitize(tokens)
    if argv is None:
        return
    stdin = tokens[-1] if tokens else ""
    code, _, err = run_argv(argv, stdin)
    if code not in ALLOWED_EXITS or ("Traceback" in err and "--debug" not in argv):
        raise Crash(f"argv {argv!r}: exit {code}: {err.strip()[-600:]}")
