"""Offline commands: `decode` (consumer-protocol bytes) and `errors` (the Kafka error
table). Neither opens a connection; both ignore -b/--bootstrap-server."""
from __future__ import annotations

from typing import Optional

import typer

from ..errors import UsageError
from .app import app
from .env import env_of

from .decode import decode_app

_INPUT_HELP = ("The bytes as hex (spaces and a 0x prefix are fine), or base64 with --base64. "
               "'-' or nothing reads them from stdin.")
_BASE64_HELP = "The input is base64 (standard or url-safe), not hex."
_SHOWN = 40  # characters of a bad input quoted back in an error


# ---- input -------------------------------------------------------------------------------

def _read_text(env, value: str | None) -> str:
    if value is not None and value != "-":
        return value
    if env.stdin is None or (value is None and env.stdin_is_terminal):
        raise UsageError("no input: give the bytes as an argument (hex, or base64 with --base64),"
                         " or pipe them on stdin")
    return env.stdin.read()


def _quote(text: str) -> str:
    return repr(text if len(text) <= _SHOWN else text[:_SHOWN] + "...")


def parse_bytes(text: str, base64: bool = False) -> bytes:
    """Hex or base64 text to bytes; UsageError (exit 2) on anything else."""
    compact = "".join(text.split())
    if not compact:
        raise UsageError("no bytes to decode: the input is empty")
    if base64:
        import base64 as b64
        import binascii

        urlsafe = "-" in compact or "_" in compact
        padded = compact + "=" * (-len(compact) % 4)
        try:
            if urlsafe:
                data = b64.urlsafe_b64decode(padded.encode("ascii"))
            else:
                data = b64.b64decode(padded.encode("ascii"), validate=True)
        except (binascii.Error, ValueError, UnicodeEncodeError):
            raise UsageError(f"not base64: {_quote(text.strip())}") from None
    else:
        if compact[:2] in ("0x", "0X"):
            compact = compact[2:]
        bad = next((c for c in compact if c not in "0123456789abcdefABCDEF"), None)
        if bad is not None:
            raise UsageError(f"not hex: {_quote(text.strip())} (contains {bad!r}; "
                             "use --base64 for base64 input)")
        if len(compact) % 2:
            raise UsageError(f"not hex: odd number of hex digits ({len(compact)})")
        data = bytes.fromhex(compact)
    if not data:
        raise UsageError("no bytes to decode: the input is empty")
    return data


def _warn_extras(env, what: str, version: int | None, trailing: bytes) -> None:
    from ..protocol.consumer import LATEST

    if version is not None and version > LATEST:
        env.warn(f"{what} version {version} is newer than groupctl knows; "
                 f"read with the v{LATEST} layout")
    if trailing:
        n = len(trailing)
        env.warn(f"{n} byte{'' if n == 1 else 's'} after the end of the {what}, kept as 'trailing'")


def _undecodable(what: str, exc: Exception) -> UsageError:
    return UsageError(f"cannot decode {what}: {exc}")


# ---- decode ------------------------------------------------------------------------------

@decode_app.command("subscription")
def decode_subscription_cmd(
    ctx: typer.Context,
    data: Optional[str] = typer.Argument(None, metavar="HEX|-", help=_INPUT_HELP),
    base64: bool = typer.Option(False, "--base64", help=_BASE64_HELP),
    assignor: Optional[str] = typer.Option(
        None, "--assignor", metavar="NAME",
        help="The group's assignor (protocol name): 'sticky' and 'cooperative-sticky' user "
             "data is decoded; other user data is shown as hex."),
):
    """Decode a Subscription: the JoinGroup metadata of a consumer (versions 0-3)."""
    from ..protocol.consumer import decode_subscription
    from ..protocol.types import DecodeError
    from ..render.offline import subscription_view
    from ..render.output import emit

    env = env_of(ctx)
    raw = parse_bytes(_read_text(env, data), base64)
    try:
        sub = decode_subscription(raw)
    except DecodeError as exc:
        raise _undecodable("subscription", exc) from None
    _warn_extras(env, "subscription", sub.version, sub.trailing)
    emit(env, sub.to_dict(assignor=assignor), subscription_view)


@decode_app.command("assignment")
def decode_assignment_cmd(
    ctx: typer.Context,
    data: Optional[str] = typer.Argument(None, metavar="HEX|-", help=_INPUT_HELP),
    base64: bool = typer.Option(False, "--base64", help=_BASE64_HELP),
    assignor: Optional[str] = typer.Option(
        None, "--assignor", metavar="NAME",
        help="Accepted for symmetry; assignment user data has no standard format and is "
             "always shown as hex."),
):
    """Decode an Assignment: the SyncGroup assignment of a consumer (versions 0-3)."""
    from ..protocol.consumer import decode_assignment
    from ..protocol.types import DecodeError
    from ..render.offline import assignment_view
    from ..render.output import emit

    env = env_of(ctx)
    raw = parse_bytes(_read_text(env, data), base64)
    try:
        asg = decode_assignment(raw)
    except DecodeError as exc:
        raise _undecodable("assignment", exc) from None
    if assignor and asg.user_data:
        env.warn("--assignor does not change how an assignment decodes; user data shown as hex")
    _warn_extras(env, "assignment", asg.version, asg.trailing)
    emit(env, asg.to_dict(), assignment_view)


@decode_app.command("sticky-userdata")
def decode_sticky_cmd(
    ctx: typer.Context,
    data: Optional[str] = typer.Argument(None, metavar="HEX|-", help=_INPUT_HELP),
    base64: bool = typer.Option(False, "--base64", help=_BASE64_HELP),
    assignor: str = typer.Option(
        "sticky", "--assignor", metavar="NAME",
        help="'sticky' (previous assignment + generation, v1 or v0) or 'cooperative-sticky' "
             "(generation only)."),
):
    """Decode the user data of the sticky or cooperative-sticky assignor (the bytes inside a
    subscription's user_data; no version prefix)."""
    from ..protocol.consumer import COOPERATIVE_STICKY, STICKY, decode_user_data
    from ..protocol.types import DecodeError
    from ..render.offline import user_data_view
    from ..render.output import emit

    env = env_of(ctx)
    name = assignor.strip().lower()
    if name not in (STICKY, COOPERATIVE_STICKY):
        raise UsageError(f"--assignor must be {STICKY} or {COOPERATIVE_STICKY}, not {assignor!r}")
    raw = parse_bytes(_read_text(env, data), base64)
    try:
        decoded = decode_user_data(name, raw)
    except DecodeError as exc:
        raise _undecodable(f"{name} user data", exc) from None
    assert decoded is not None  # a known assignor (checked above), bytes (parse_bytes)
    _warn_extras(env, f"{name} user data", None, decoded.trailing)
    emit(env, {"assignor": name, **decoded.to_dict()}, user_data_view)


# ---- errors ------------------------------------------------------------------------------

def lookup_error(text: str):
    """The table entry for a code ("27", "-1") or a name ("REBALANCE_IN_PROGRESS",
    "rebalance-in-progress"); UsageError when there is none."""
    from ..protocol.errors import ERRORS, error_by_name

    text = text.strip()
    try:
        code = int(text)
    except ValueError:
        code = None
    if code is not None:
        info = ERRORS.get(code)
        if info is None:
            raise UsageError(f"unknown Kafka error code {code} (groupctl knows "
                             f"{min(ERRORS)} to {max(ERRORS)}; run 'groupctl errors' for the list)")
        return info
    info = error_by_name(text)
    if info is None:
        import difflib

        names = [e.name for e in ERRORS.values()]
        close = difflib.get_close_matches(text.upper().replace("-", "_"), names, n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else "; run 'groupctl errors' for the list"
        raise UsageError(f"unknown Kafka error name {text!r}{hint}")
    return info


@app.command("errors", context_settings={"ignore_unknown_options": True})
def errors_cmd(
    ctx: typer.Context,
    code_or_name: Optional[str] = typer.Argument(
        None, metavar="CODE|NAME",
        help="One error by code (27, -1) or name (REBALANCE_IN_PROGRESS); all when omitted."),
):
    """The Kafka error table: code, name, whether a retry can succeed, what it means, and
    what groupctl does on it. JSON/YAML output is always a list."""
    from ..protocol.errors import ERRORS
    from ..render.offline import errors_table
    from ..render.output import emit

    env = env_of(ctx)
    if code_or_name is None:
        entries = sorted(ERRORS.values(), key=lambda e: e.code)
    else:
        entries = [lookup_error(code_or_name)]
    emit(env, [e.to_dict() for e in entries], errors_table)


# `decode records` lives with `history` (the coordinator's records); registered with the
# other decode commands.
from . import records as _records  # noqa: E402,F401
