"""What `groupctl config set-context` writes into a context, checked before anything is.

Options map onto the context's keys (contexts.py) and Kafka's property names, so a context
made here reads like one written by hand:

    -b/--bootstrap-server  bootstrap_servers          --username       sasl.username
    --command-config       command_config (absolute)  --ca-file        ssl.ca.location
    --security-protocol    security.protocol          --cert-file      ssl.certificate.location
    --sasl-mechanism       sasl.mechanism             --key-file       ssl.key.location
    --password-env VAR     password_env               --password-file  password_file

A value of "" removes the setting. Files are stored as absolute paths (a relative one would
be read against the config file's directory) and must exist; a password variable must be
set now, so a typo is found at once and not at the next connect.
"""
from __future__ import annotations

import os
from pathlib import Path

from ..errors import UsageError
from .bootstrap import parse_bootstrap
from .security import SASL_MECHANISMS, SECURITY_PROTOCOLS

UNSET = ""
_FILE_PROPERTIES = (("ca_file", "ssl.ca.location", "--ca-file"),
                    ("cert_file", "ssl.certificate.location", "--cert-file"),
                    ("key_file", "ssl.key.location", "--key-file"))


def context_values(*, bootstrap=None, command_config=None, security_protocol=None,
                   sasl_mechanism=None, username=None, password_env=None, password_file=None,
                   ca_file=None, cert_file=None, key_file=None) -> tuple[dict, dict]:
    """({context key: value}, {property: value}) of the options given (None: not given,
    "": remove). UsageError (exit 2) for a value that is wrong, before anything is written."""
    values: dict = {}
    properties: dict = {}
    if bootstrap is not None:
        values["bootstrap_servers"] = (",".join(parse_bootstrap(bootstrap, "--bootstrap-server"))
                                       if bootstrap else UNSET)
    if command_config is not None:
        values["command_config"] = _existing_file(command_config, "--command-config")
    if security_protocol is not None:
        properties["security.protocol"] = _choice(security_protocol, SECURITY_PROTOCOLS,
                                                  "--security-protocol")
    if sasl_mechanism is not None:
        properties["sasl.mechanism"] = _choice(sasl_mechanism, SASL_MECHANISMS, "--sasl-mechanism")
    if username is not None:
        properties["sasl.username"] = username
    if password_env is not None:
        if password_env and password_env not in os.environ:
            raise UsageError(f"--password-env {password_env}: the variable is not set (set it "
                             "first; the password is read from it whenever the context is used)")
        values["password_env"] = password_env
    if password_file is not None:
        values["password_file"] = _existing_file(password_file, "--password-file")
    local = {"ca_file": ca_file, "cert_file": cert_file, "key_file": key_file}
    for arg, prop, option in _FILE_PROPERTIES:
        if local[arg] is not None:
            properties[prop] = _existing_file(local[arg], option)
    return values, properties


def _choice(value: str, known: tuple[str, ...], option: str) -> str:
    if value == UNSET:
        return UNSET
    if value.strip().upper() not in known:
        raise UsageError(f"{option} {value!r} is not one of {', '.join(known)}")
    return value.strip().upper()


def _existing_file(path: str, option: str) -> str:
    if path == UNSET:
        return UNSET
    p = Path(path).expanduser()
    if not p.is_file():
        raise UsageError(f"{option} {path}: " + ("is a directory" if p.is_dir()
                                                 else "the file does not exist"))
    return str(p.resolve())
