"""`watch --web-config FILE`: TLS and basic authentication of the metrics server, in the
Prometheus ecosystem's web configuration file (the format of prometheus/exporter-toolkit,
which node_exporter, Prometheus itself and most exporters read):

    tls_server_config:
      cert_file: server.crt          # paths relative to the file's directory
      key_file: server.key
      client_ca_file: ca.crt         # optional: with client_auth_type
      client_auth_type: RequireAndVerifyClientCert   # or VerifyClientCertIfGiven, NoClientCert
      min_version: TLS12             # TLS12 (default) or TLS13
    basic_auth_users:
      prometheus: $2y$10$...         # bcrypt hashes (htpasswd -nBC 10 "" | tr -d ':\\n')

A key groupctl does not support is refused by name (the toolkit refuses unknown keys too),
so a file written for another exporter never quietly loses a protection.
"""
from __future__ import annotations

import hashlib
import ssl
import threading
from dataclasses import dataclass, field
from pathlib import Path

from ...errors import UsageError

_TLS_KEYS = {"cert_file", "key_file", "client_ca_file", "client_auth_type", "min_version",
             "max_version"}
_VERSIONS = {"TLS12": ssl.TLSVersion.TLSv1_2, "TLS13": ssl.TLSVersion.TLSv1_3}
_CLIENT_AUTH = {"NoClientCert": ssl.CERT_NONE, "VerifyClientCertIfGiven": ssl.CERT_OPTIONAL,
                "RequireAndVerifyClientCert": ssl.CERT_REQUIRED}


@dataclass
class WebConfig:
    tls: ssl.SSLContext | None = None
    users: dict[str, bytes] = field(default_factory=dict)   # name -> bcrypt hash
    _good: set[tuple[str, bytes]] = field(default_factory=set)   # checked once, kept
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def authorized(self, user: str, password: str) -> bool:
        """The password matches the user's bcrypt hash (a match is kept: bcrypt is slow
        on purpose, and a scraper sends the same pair every scrape)."""
        hashed = self.users.get(user)
        if hashed is None:
            return False
        key = (user, hashlib.sha256(password.encode()).digest())
        with self._lock:
            if key in self._good:
                return True
        import bcrypt

        try:
            ok = bcrypt.checkpw(password.encode(), hashed)
        except ValueError:   # not a bcrypt hash: refused at load, never matches
            return False
        if ok:
            with self._lock:
                self._good.add(key)
        return ok


def load(path: str) -> WebConfig:
    """The web configuration file at `path`, or UsageError naming it and what is wrong."""
    import yaml

    where = f"--web-config {path}"
    try:
        with open(path, encoding="utf-8") as f:
            data = yaml.safe_load(f) or {}
    except OSError as exc:
        raise UsageError(f"{where}: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        raise UsageError(f"{where}: not YAML ({str(exc).splitlines()[0]})") from None
    if not isinstance(data, dict):
        raise UsageError(f"{where}: expected a mapping (tls_server_config, basic_auth_users)")
    _only(data, {"tls_server_config", "basic_auth_users"}, where)
    base = Path(path).expanduser().resolve().parent
    config = WebConfig()
    if data.get("tls_server_config"):
        config.tls = _tls(data["tls_server_config"], base, where)
    users = data.get("basic_auth_users") or {}
    if not isinstance(users, dict):
        raise UsageError(f"{where}: basic_auth_users must map user names to bcrypt hashes")
    for user, hashed in users.items():
        if not isinstance(hashed, str) or not hashed.startswith(("$2a$", "$2b$", "$2y$")):
            raise UsageError(f"{where}: basic_auth_users {user}: not a bcrypt hash ($2y$...)")
        config.users[str(user)] = hashed.encode()
    return config


def _only(mapping: dict, known: set[str], where: str, section: str = "") -> None:
    unknown = sorted(str(k) for k in mapping if k not in known)
    if unknown:
        raise UsageError(f"{where}: {section}{', '.join(unknown)}: not supported by groupctl "
                         f"(it reads {', '.join(sorted(known))})")


def _tls(section, base: Path, where: str) -> ssl.SSLContext:
    if not isinstance(section, dict):
        raise UsageError(f"{where}: tls_server_config must be a mapping")
    _only(section, _TLS_KEYS, where, "tls_server_config: ")
    if not section.get("cert_file") or not section.get("key_file"):
        raise UsageError(f"{where}: tls_server_config needs cert_file and key_file")
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    for key, attr in (("min_version", "minimum_version"), ("max_version", "maximum_version")):
        name = section.get(key, "TLS12" if key == "min_version" else None)
        if name is not None:
            if name not in _VERSIONS:
                raise UsageError(f"{where}: tls_server_config {key} {name}: TLS12 or TLS13")
            setattr(ctx, attr, _VERSIONS[name])
    try:
        ctx.load_cert_chain(base / section["cert_file"], base / section["key_file"])
        if section.get("client_ca_file"):
            ctx.load_verify_locations(base / section["client_ca_file"])
    except (OSError, ssl.SSLError) as exc:
        raise UsageError(f"{where}: tls_server_config: {getattr(exc, 'strerror', None) or exc}"
                         ) from None
    auth = section.get("client_auth_type", "NoClientCert")
    if auth not in _CLIENT_AUTH:
        raise UsageError(f"{where}: tls_server_config client_auth_type {auth}: one of "
                         f"{', '.join(_CLIENT_AUTH)}")
    if auth != "NoClientCert" and not section.get("client_ca_file"):
        raise UsageError(f"{where}: tls_server_config client_auth_type {auth} needs "
                         f"client_ca_file")
    ctx.verify_mode = _CLIENT_AUTH[auth]
    return ctx
