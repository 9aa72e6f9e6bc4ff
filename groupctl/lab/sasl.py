"""`lab up --sasl`: a SASL_PLAINTEXT listener next to the PLAINTEXT one.

One user, ``admin`` (also the broker's super user), with a fresh random password per lab,
for SCRAM-SHA-256, SCRAM-SHA-512 and PLAIN. The SCRAM credentials are bootstrapped into
the cluster metadata at format time (``kafka-storage format --add-scram``), so they work
from the first second, before any controller could take an AlterUserScramCredentials.
PLAIN users live in the listener's JAAS config. Inter-broker and controller traffic stay
on PLAINTEXT; the PLAINTEXT client listener stays too (readiness, tools).

For each mechanism a client properties file (``client-<mechanism>.properties`` in the lab
directory, mode 0600) holds what both groupctl's `--command-config` and Kafka's own tools
read: security.protocol, sasl.mechanism, sasl.jaas.config, and librdkafka's spellings
sasl.username / sasl.password.
"""
from __future__ import annotations

import os
import secrets
from pathlib import Path

USERNAME = "admin"
MECHANISMS = ("SCRAM-SHA-256", "SCRAM-SHA-512", "PLAIN")
DEFAULT_MECHANISM = "SCRAM-SHA-256"
LISTENER = "SASL_PLAINTEXT"

_SCRAM_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"
_PLAIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"


def new_settings(lab_dir: Path) -> dict:
    """The lab's SASL settings as state.json keeps them (the password included)."""
    return {
        "username": USERNAME,
        "password": secrets.token_hex(12),
        "mechanisms": list(MECHANISMS),
        "command_configs": {m: str(lab_dir / f"client-{m.lower()}.properties")
                            for m in MECHANISMS},
    }


def broker_settings(sasl: dict) -> dict[str, str]:
    """server.properties entries for the SASL listener (the listener itself: config.py)."""
    user, password = sasl["username"], sasl["password"]
    prefix = f"listener.name.{LISTENER.lower()}"
    props = {
        "sasl.enabled.mechanisms": ",".join(sasl["mechanisms"]),
        "super.users": f"User:{user}",
    }
    for mech in sasl["mechanisms"]:
        if mech == "PLAIN":
            jaas = (f'{_PLAIN_MODULE} required username="{user}" password="{password}" '
                    f'user_{user}="{password}";')
        else:
            jaas = f"{_SCRAM_MODULE} required;"
        props[f"{prefix}.{mech.lower()}.sasl.jaas.config"] = jaas
    return props


def format_args(sasl: dict | None) -> list[str]:
    """StorageTool format arguments that create the SCRAM users."""
    if not sasl:
        return []
    out = []
    for mech in sasl["mechanisms"]:
        if mech.startswith("SCRAM-"):
            out += ["--add-scram",
                    f"{mech}=[name={sasl['username']},password={sasl['password']}]"]
    return out


def client_properties(sasl: dict, mechanism: str, password: str | None = None) -> str:
    """A client properties file for `mechanism` (`password` overrides the real one)."""
    user = sasl["username"]
    password = sasl["password"] if password is None else password
    module = _PLAIN_MODULE if mechanism == "PLAIN" else _SCRAM_MODULE
    return "\n".join([
        f"# groupctl lab: {LISTENER} with {mechanism}, for --command-config",
        f"security.protocol={LISTENER}",
        f"sasl.mechanism={mechanism}",
        f'sasl.jaas.config={module} required username="{user}" password="{password}";',
        f"sasl.username={user}",
        f"sasl.password={password}",
    ]) + "\n"


def write_client_configs(sasl: dict) -> None:
    for mech, path in sasl["command_configs"].items():
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(client_properties(sasl, mech))


def security(sasl: dict, mechanism: str = DEFAULT_MECHANISM):
    """groupctl's SecurityConfig for the lab's SASL listener."""
    from ..config import SecurityConfig

    return SecurityConfig(protocol=LISTENER, sasl_mechanism=mechanism,
                          sasl_username=sasl["username"], sasl_password=sasl["password"])


def status(sasl: dict | None, bootstrap: str) -> dict | None:
    """The `sasl` part of `lab status` (no password: it is in the command-config files)."""
    if not sasl:
        return None
    return {"bootstrap": bootstrap, "security_protocol": LISTENER,
            "username": sasl["username"], "mechanisms": list(sasl["mechanisms"]),
            "command_config": sasl["command_configs"][DEFAULT_MECHANISM],
            "command_configs": dict(sasl["command_configs"])}
