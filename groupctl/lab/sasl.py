"""`lab up --sasl`: a SASL_PLAINTEXT listener next to the PLAINTEXT one (and with `--tls`
a SASL_SSL listener too), two users, and the standard authorizer.

Users, each with a fresh random password per lab, for SCRAM-SHA-256, SCRAM-SHA-512 and PLAIN:

    admin   the broker's super user: may do anything
    guest   has no ACLs at all: what a user without permissions sees (authorization is
            enforced by StandardAuthorizer, KRaft's built-in ACL authorizer)

The SCRAM credentials are bootstrapped into the cluster metadata at format time
(``kafka-storage format --add-scram``, its arguments in a 0600 java argument file that is
removed after: never on a command line), so they work from the first second, before any
controller could take an AlterUserScramCredentials. PLAIN users live in the listener's
JAAS config. Inter-broker and controller traffic stay on PLAINTEXT, as the anonymous
principal, which is therefore a super user too (so the brokers and the controller may
talk to each other); so is every client of the PLAINTEXT and SSL listeners, which carry no
identity. Authorization is what the SASL listeners show.

The lab directory is 0700 and every file in it holding a password (state.json, each
node's server.properties, the client configs) 0600; `lab down` removes those files.
For each user, listener and mechanism a client properties file (mode 0600) in the lab
directory holds what both groupctl's `--command-config` and Kafka's own tools read:
security.protocol, sasl.mechanism, sasl.jaas.config, librdkafka's spellings sasl.username /
sasl.password, and for SASL_SSL the lab CA (see tls.py):

    client-<mechanism>.properties                admin, SASL_PLAINTEXT
    client-guest-<mechanism>.properties          guest, SASL_PLAINTEXT
    client-sasl-ssl-<mechanism>.properties       admin, SASL_SSL (--tls)
    client-guest-sasl-ssl-<mechanism>.properties guest, SASL_SSL (--tls)
"""
from __future__ import annotations

import secrets
from pathlib import Path

USERNAME = "admin"
GUEST = "guest"
MECHANISMS = ("SCRAM-SHA-256", "SCRAM-SHA-512", "PLAIN")
DEFAULT_MECHANISM = "SCRAM-SHA-256"
LISTENER = "SASL_PLAINTEXT"
SSL_LISTENER = "SASL_SSL"
AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"

_SCRAM_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"
_PLAIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"


def _config_file(lab_dir: Path, user: str, listener: str, mech: str) -> str:
    parts = ["client"] + ([user] if user != USERNAME else []) + (
        ["sasl-ssl"] if listener == SSL_LISTENER else []) + [mech.lower()]
    return str(lab_dir / ("-".join(parts) + ".properties"))


def new_settings(lab_dir: Path, tls: bool = False) -> dict:
    """The lab's SASL settings as state.json keeps them (the passwords included)."""
    listeners = [LISTENER] + ([SSL_LISTENER] if tls else [])

    def files(user: str, listener: str) -> dict:
        return {m: _config_file(lab_dir, user, listener, m) for m in MECHANISMS}

    out = {
        "username": USERNAME,
        "password": secrets.token_hex(12),
        "guest_username": GUEST,
        "guest_password": secrets.token_hex(12),
        "mechanisms": list(MECHANISMS),
        "listeners": listeners,
        "command_configs": files(USERNAME, LISTENER),
        "guest_command_configs": files(GUEST, LISTENER),
    }
    if tls:
        out["ssl_command_configs"] = files(USERNAME, SSL_LISTENER)
        out["guest_ssl_command_configs"] = files(GUEST, SSL_LISTENER)
    return out


def _users(sasl: dict) -> dict[str, str]:
    users = {sasl["username"]: sasl["password"]}
    if sasl.get("guest_username"):
        users[sasl["guest_username"]] = sasl["guest_password"]
    return users


def broker_settings(sasl: dict) -> dict[str, str]:
    """server.properties entries for the SASL listeners (the listeners themselves:
    config.py) and the authorizer."""
    user, password = sasl["username"], sasl["password"]
    props = {
        "sasl.enabled.mechanisms": ",".join(sasl["mechanisms"]),
        # the admin, and the anonymous principal of the PLAINTEXT inter-broker and
        # controller listeners (without it the brokers could not talk to each other)
        "super.users": f"User:{user};User:ANONYMOUS",
    }
    if sasl.get("guest_username"):
        props["authorizer.class.name"] = AUTHORIZER
    plain_users = " ".join(f'user_{u}="{p}"' for u, p in _users(sasl).items())
    for listener in sasl.get("listeners") or [LISTENER]:
        prefix = f"listener.name.{listener.lower()}"
        for mech in sasl["mechanisms"]:
            if mech == "PLAIN":
                jaas = (f'{_PLAIN_MODULE} required username="{user}" password="{password}" '
                        f'{plain_users};')
            else:
                jaas = f"{_SCRAM_MODULE} required;"
            props[f"{prefix}.{mech.lower()}.sasl.jaas.config"] = jaas
    return props


def secret_files(sasl: dict | None) -> list[str]:
    """The client properties files holding a password (removed by `lab down`)."""
    keys = ("command_configs", "guest_command_configs", "ssl_command_configs",
            "guest_ssl_command_configs")
    return [path for key in keys for path in ((sasl or {}).get(key) or {}).values()]


def format_args(sasl: dict | None) -> list[str]:
    """StorageTool format arguments that create the SCRAM users."""
    if not sasl:
        return []
    out = []
    for mech in sasl["mechanisms"]:
        if mech.startswith("SCRAM-"):
            for user, password in _users(sasl).items():
                out += ["--add-scram", f"{mech}=[name={user},password={password}]"]
    return out


def client_properties(sasl: dict, mechanism: str, password: str | None = None, *,
                      user: str | None = None, listener: str = LISTENER,
                      tls: dict | None = None) -> str:
    """A client properties file for `mechanism` as `user` (default admin) on `listener`
    (`password` overrides the real one; `tls`: the lab's TLS settings, for SASL_SSL)."""
    user = user or sasl["username"]
    if password is None:
        password = _users(sasl)[user]
    module = _PLAIN_MODULE if mechanism == "PLAIN" else _SCRAM_MODULE
    lines = [
        f"# groupctl lab: {listener} with {mechanism} as {user}, for --command-config",
        f"security.protocol={listener}",
        f"sasl.mechanism={mechanism}",
        f'sasl.jaas.config={module} required username="{user}" password="{password}";',
        f"sasl.username={user}",
        f"sasl.password={password}",
    ]
    if listener == SSL_LISTENER and tls:
        from .tls import trust_lines

        lines += trust_lines(tls)
    return "\n".join(lines) + "\n"


def write_client_configs(sasl: dict, tls: dict | None = None) -> None:
    from .tls import write_private

    sets = [("command_configs", sasl["username"], LISTENER),
            ("guest_command_configs", sasl.get("guest_username"), LISTENER),
            ("ssl_command_configs", sasl["username"], SSL_LISTENER),
            ("guest_ssl_command_configs", sasl.get("guest_username"), SSL_LISTENER)]
    for key, user, listener in sets:
        for mech, path in (sasl.get(key) or {}).items():
            write_private(path, client_properties(sasl, mech, user=user, listener=listener,
                                                  tls=tls))


def security(sasl: dict, mechanism: str = DEFAULT_MECHANISM, *, user: str | None = None,
             tls: dict | None = None):
    """groupctl's SecurityConfig for the lab's SASL_PLAINTEXT listener (SASL_SSL with `tls`)."""
    from ..config import SecurityConfig

    user = user or sasl["username"]
    return SecurityConfig(protocol=SSL_LISTENER if tls else LISTENER, sasl_mechanism=mechanism,
                          sasl_username=user, sasl_password=_users(sasl)[user],
                          ssl_cafile=tls["ca_file"] if tls else None)


def status(sasl: dict | None, bootstrap: str | None, ssl_bootstrap: str | None = None
           ) -> dict | None:
    """The `sasl` part of `lab status` (no password: it is in the command-config files)."""
    if not sasl:
        return None
    out = {"bootstrap": bootstrap, "security_protocol": LISTENER,
           "username": sasl["username"], "mechanisms": list(sasl["mechanisms"]),
           "command_config": sasl["command_configs"][DEFAULT_MECHANISM],
           "command_configs": dict(sasl["command_configs"])}
    if sasl.get("guest_username"):
        out["guest"] = {"username": sasl["guest_username"], "acls": "none",
                        "command_config": sasl["guest_command_configs"][DEFAULT_MECHANISM],
                        "command_configs": dict(sasl["guest_command_configs"])}
    if sasl.get("ssl_command_configs"):
        out["sasl_ssl"] = {"bootstrap": ssl_bootstrap, "security_protocol": SSL_LISTENER,
                           "command_configs": dict(sasl["ssl_command_configs"]),
                           "guest_command_configs": dict(sasl["guest_ssl_command_configs"])}
    return out
