"""Secrets in contexts and properties: where a context's password comes from, and masking.

A context made with `groupctl config set-context` never holds a password: it names where
to read one when a command connects,

    password_env: KAFKA_PASSWORD       an environment variable
    password_file: /run/secrets/kafka  a file (its first line; relative to the config file)

so the contexts file can be shared, and rotating a password changes no config. A
hand-written context may still carry `sasl.password` / `sasl.jaas.config` in its
`properties`; `groupctl config view` masks them (and every other secret property).
"""
from __future__ import annotations

import os
from pathlib import Path

from ..errors import UsageError

MASK = "REDACTED"
# property names (lower case) whose values are secrets, besides any "*password*"/"*secret*"
SECRET_PROPERTIES = frozenset({"ssl.keystore.key", "sasl.oauthbearer.assertion.private.key"})


def is_secret(key: str) -> bool:
    k = key.lower()
    return "password" in k or "secret" in k or k in SECRET_PROPERTIES


def mask_value(key: str, value):
    """The value to show for property `key`: secrets masked, JAAS passwords masked."""
    if value is None:
        return value
    if key.lower() == "sasl.jaas.config":
        from .jaas import masked_jaas   # read as Kafka reads it: what it takes is masked

        return masked_jaas(str(value))
    return MASK if is_secret(key) and str(value) != "" else value


def context_password(name: str, password_env: str | None, password_file: str | None,
                     base_dir: Path | None) -> str | None:
    """The password a context names (None when it names none). A variable that is not set
    or a file that cannot be read: UsageError (exit 2) saying which, never the value."""
    if password_env:
        value = os.environ.get(password_env)
        if value is None:
            raise UsageError(f"context {name!r}: the password variable ${password_env} is "
                             "not set")
        return value
    if password_file:
        path = Path(password_file).expanduser()
        if not path.is_absolute() and base_dir is not None:
            path = base_dir / path
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            why = getattr(exc, "strerror", None) or type(exc).__name__
            raise UsageError(f"context {name!r}: password_file {path}: {why}") from None
        return text.splitlines()[0] if text else ""
    return None
