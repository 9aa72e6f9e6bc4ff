"""`groupctl config ...`: the contexts file, with kubectl's verbs.

The file is $GROUPCTL_CONFIG, else ~/.config/groupctl/config.yaml (groupctl.config.contexts).
Reads and edits live in groupctl.config.edit; this module parses options and prints.
`set-context` takes the global -b/--bootstrap-server and --command-config as the values to
store (global options may stand anywhere on the command line).
"""
from __future__ import annotations

import os
from typing import Optional

import typer

from ..errors import UsageError
from .app import app
from .env import env_of

config_app = typer.Typer(
    name="config", no_args_is_help=True, add_completion=False, rich_markup_mode=None,
    help="Contexts in the config file ($GROUPCTL_CONFIG, else ~/.config/groupctl/config.yaml), "
         "with kubectl's verbs. Passwords are never taken as arguments and never printed.")
app.add_typer(config_app, name="config")

_CHANGES = "Changes only the config file (atomically; comments and other keys stay)."


def _env(ctx: typer.Context):
    return env_of(ctx)


def _load(env, need_file: bool = False):
    from ..config.edit import ContextsDocument, permission_warning

    doc = ContextsDocument.load(env.config_path)
    warning = permission_warning(doc.path)
    if warning:
        env.warn(warning)
    if need_file and not doc.existed:
        raise UsageError(f"{doc.path} does not exist (create a context with "
                         "`groupctl config set-context NAME ...`)")
    return doc


@config_app.command("view")
def view(ctx: typer.Context):
    """Print the config file with every secret masked (sasl.password, the option values
    of sasl.jaas.config but username, ssl.key.password, ...) and its comments left out
    (they may hold secrets). -o json/yaml: as data. No file: says so on stderr, with its
    path (exit 0)."""
    env = _env(ctx)
    doc = _load(env)
    if env.settings.output in ("json", "yaml", "ndjson"):
        from ..config.edit import masked_data
        from ..render.output import emit

        emit(env, masked_data(doc.path))
        return
    if not doc.existed:  # say so (on stderr: stdout stays the file's text, here none)
        env.stderr.write(f"groupctl: no config file at {doc.path} (create it with "
                         "`groupctl config set-context NAME -b HOST:PORT`; "
                         "$GROUPCTL_CONFIG names another)\n")
        return
    env.stdout.write(doc.masked_text())
    env.stdout.flush()


@config_app.command("get-contexts")
def get_contexts(ctx: typer.Context):
    """Every context: current marker, name, bootstrap servers, security protocol, SASL
    mechanism and user."""
    from ..config.edit import summaries
    from ..render.output import emit

    env = _env(ctx)
    doc = _load(env)
    _, rows = summaries(doc.path)
    emit(env, rows, _contexts_table)


def _contexts_table(console, data, wide):
    from rich.table import Table

    if not data:
        console.print("no contexts")
        return
    t = Table(box=None, pad_edge=False)
    for col in ("CURRENT", "NAME", "BOOTSTRAP", "PROTOCOL", "MECHANISM", "USER"):
        t.add_column(col)
    for r in data:
        t.add_row("*" if r["current"] else "", r["name"], r["bootstrap_servers"] or "-",
                  r["security_protocol"], r["sasl_mechanism"] or "-", r["username"] or "-")
    console.print(t)


@config_app.command("current-context")
def current_context(ctx: typer.Context):
    """Print the name of the current context (exit 2 when none is set)."""
    env = _env(ctx)
    doc = _load(env)
    if doc.current is None:
        raise UsageError(f"no current context in {doc.path} "
                         "(`groupctl config use-context NAME` sets one)")
    if env.settings.output in ("json", "yaml"):
        from ..render.output import emit

        emit(env, {"current_context": doc.current})
        return
    env.stdout.write(doc.current + "\n")


@config_app.command("use-context", help="Make NAME the current context. " + _CHANGES)
def use_context(ctx: typer.Context, name: str = typer.Argument(..., metavar="NAME")):
    env = _env(ctx)
    doc = _load(env, need_file=True)
    doc.use(name)
    doc.save()
    env.stderr.write(f"groupctl: switched to context {name!r}\n")


_SET_HELP = (
    "Create context NAME, or update the settings given (others stay). The brokers come from "
    "the global -b/--bootstrap-server, a properties file from the global --command-config "
    "(stored as an absolute path). An empty value (\"\") removes a setting. There is no "
    "password option: a password given as an argument lands in shell history and process "
    "lists; --password-env and --password-file name where to read it when connecting. ")


@config_app.command("set-context", help=_SET_HELP + _CHANGES)
def set_context(
    ctx: typer.Context,
    name: str = typer.Argument(..., metavar="NAME"),
    security_protocol: Optional[str] = typer.Option(
        None, "--security-protocol", metavar="P", help="PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL."),
    sasl_mechanism: Optional[str] = typer.Option(
        None, "--sasl-mechanism", metavar="M", help="PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512."),
    username: Optional[str] = typer.Option(None, "--username", metavar="USER", help="SASL user."),
    password_env: Optional[str] = typer.Option(
        None, "--password-env", metavar="VAR",
        help="Read the SASL password from environment variable VAR when connecting (it must "
             "be set now too). The file stores the name, never the password."),
    password_file: Optional[str] = typer.Option(
        None, "--password-file", metavar="FILE",
        help="Read the SASL password from FILE's first line when connecting."),
    ca_file: Optional[str] = typer.Option(None, "--ca-file", metavar="FILE",
                                          help="PEM file of the CAs to trust (ssl.ca.location)."),
    cert_file: Optional[str] = typer.Option(None, "--cert-file", metavar="FILE",
                                            help="Client certificate, PEM (ssl.certificate.location)."),
    key_file: Optional[str] = typer.Option(None, "--key-file", metavar="FILE",
                                           help="Its private key, PEM (ssl.key.location)."),
    current: bool = typer.Option(False, "--current", help="Also make it the current context."),
):
    from ..config.edit import UNSET
    from ..config.context_values import context_values

    env = _env(ctx)
    if not name:
        raise UsageError("a context name cannot be empty")
    if password_env is not None and password_file is not None:
        raise UsageError("--password-env and --password-file exclude each other")
    values, properties = context_values(
        bootstrap=_given_bootstrap(env), command_config=env.settings.command_config,
        security_protocol=security_protocol, sasl_mechanism=sasl_mechanism, username=username,
        password_env=password_env, password_file=password_file, ca_file=ca_file,
        cert_file=cert_file, key_file=key_file)
    doc = _load(env)
    if password_env not in (None, UNSET):
        values["password_file"] = UNSET  # one source of the password at a time
    if password_file not in (None, UNSET):
        values["password_env"] = UNSET
    created = doc.set_context(name, values, properties)
    if current:
        doc.use(name)
    doc.save()
    env.stderr.write(f"groupctl: context {name!r} {'created' if created else 'modified'}"
                     f"{' (current)' if current else ''}\n")


def _given_bootstrap(env) -> str | None:
    """-b as typed: not the value typer filled in from $GROUPCTL_BOOTSTRAP_SERVERS."""
    flag = env.settings.bootstrap_server
    if flag is not None and flag == os.environ.get("GROUPCTL_BOOTSTRAP_SERVERS"):
        return None
    return flag


@config_app.command("delete-context", help='Remove context NAME (when it was current, no context is current afterwards). ' + _CHANGES)
def delete_context(ctx: typer.Context, name: str = typer.Argument(..., metavar="NAME")):
    env = _env(ctx)
    doc = _load(env, need_file=True)
    was_current = doc.delete(name)
    doc.save()
    env.stderr.write(f"groupctl: context {name!r} deleted\n")
    if was_current:
        env.warn(f"{name!r} was the current context; now none is "
                 "(`groupctl config use-context NAME`)")


@config_app.command("rename-context", help='Rename context OLD to NEW (current_context follows). ' + _CHANGES)
def rename_context(ctx: typer.Context, old: str = typer.Argument(..., metavar="OLD"),
                   new: str = typer.Argument(..., metavar="NEW")):
    env = _env(ctx)
    doc = _load(env, need_file=True)
    doc.rename(old, new)
    doc.save()
    env.stderr.write(f"groupctl: context {old!r} renamed to {new!r}\n")
