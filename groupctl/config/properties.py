"""Client properties files (`--command-config`): java.util.Properties syntax, JAAS
options, and the SecurityConfig they describe (see groupctl.config for the keys)."""
from __future__ import annotations

import os
import re
from pathlib import Path

from ..errors import UsageError
from .security import SASL_MECHANISMS, SECURITY_PROTOCOLS, SecurityConfig
from .jaas import parse_jaas

_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def parse_properties(text: str, source: str = "properties") -> dict[str, tuple[str, int]]:
    """java.util.Properties syntax -> {key: (value, line number of the key)}; last wins."""
    out: dict[str, tuple[str, int]] = {}
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        start = i + 1
        line = lines[i].lstrip(" \t\f")
        i += 1
        if not line or line[0] in "#!":
            continue
        # a logical line: join continuations (odd number of trailing backslashes)
        while _continues(line) and i < len(lines):
            line = line[:-1] + lines[i].lstrip(" \t\f")
            i += 1
        if _continues(line):
            line = line[:-1]
        key, value = _split_entry(line)
        key, value = _unescape(key, source, start), _unescape(value, source, start)
        if not key:
            raise UsageError(f"{source}, line {start}: a property without a name: {line.strip()!r}")
        out[key] = (value, start)
    return out


def _continues(line: str) -> bool:
    n = len(line) - len(line.rstrip("\\"))
    return n % 2 == 1


def _split_entry(line: str) -> tuple[str, str]:
    i, n = 0, len(line)
    while i < n:
        c = line[i]
        if c == "\\":
            i += 2
            continue
        if c in "=: \t\f":
            break
        i += 1
    key = line[:i]
    rest = line[i:].lstrip(" \t\f")
    if rest[:1] in ("=", ":"):
        rest = rest[1:].lstrip(" \t\f")
    return key, rest


def _unescape(s: str, source: str, line: int) -> str:
    if "\\" not in s:
        return s
    out, i = [], 0
    while i < len(s):
        c = s[i]
        if c != "\\" or i + 1 >= len(s):
            out.append(c)
            i += 1
            continue
        e = s[i + 1]
        if e == "u":
            digits = s[i + 2:i + 6]
            if not re.fullmatch(r"[0-9A-Fa-f]{4}", digits):
                raise UsageError(f"{source}, line {line}: malformed \\uXXXX escape "
                                 f"{s[i:i + 6]!r}")
            out.append(chr(int(digits, 16)))
            i += 6
        else:
            out.append(_ESCAPES.get(e, e))
            i += 2
    return "".join(out)


def load_properties(path: str | os.PathLike) -> dict[str, tuple[str, int]]:
    p = Path(path).expanduser()
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file (--command-config)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read it: {exc}") from None
    return parse_properties(text, str(path))


def security_from_properties(props: dict, source: str = "properties") -> SecurityConfig:
    """A SecurityConfig from parsed properties ({key: value} or {key: (value, line)})."""

    def get(key: str) -> str | None:
        v = props.get(key)
        return v[0] if isinstance(v, tuple) else v

    def where(key: str) -> str:
        v = props.get(key)
        if isinstance(v, tuple):  # (value, line in `source`) or (value, "file, line N")
            return v[1] if isinstance(v[1], str) else f"{source}, line {v[1]}"
        return source

    def bad(key: str, message: str) -> UsageError:
        return UsageError(f"{where(key)}: {key}: {message}")

    protocol = (get("security.protocol") or "PLAINTEXT").strip().upper()
    if protocol not in SECURITY_PROTOCOLS:
        raise bad("security.protocol", f"{get('security.protocol')!r} is not one of "
                                        f"{', '.join(SECURITY_PROTOCOLS)}")
    kw: dict = {"protocol": protocol, "source": source}
    if protocol.startswith("SASL_"):
        mkey = "sasl.mechanism" if get("sasl.mechanism") is not None else "sasl.mechanisms"
        mech = (get(mkey) or "").strip().upper()
        if not mech:
            raise UsageError(f"{source}: security.protocol={protocol} needs sasl.mechanism "
                             f"({', '.join(SASL_MECHANISMS)})")
        if mech not in SASL_MECHANISMS:
            raise bad(mkey, f"{mech} is not supported by groupctl (it speaks "
                            f"{', '.join(SASL_MECHANISMS)})")
        user, password = get("sasl.username"), get("sasl.password")
        jaas = get("sasl.jaas.config")
        if jaas is not None and (user is None or password is None):
            try:
                module, options = parse_jaas(jaas)
            except ValueError as exc:
                raise bad("sasl.jaas.config", str(exc)) from None
            if "username" not in options or "password" not in options:
                raise bad("sasl.jaas.config", f"{module.rsplit('.', 1)[-1]} has no "
                                              "username and password options")
            user = options["username"] if user is None else user
            password = options["password"] if password is None else password
        if user is None or password is None:
            raise UsageError(f"{source}: SASL {mech} needs a username and password: "
                             "sasl.jaas.config, or sasl.username and sasl.password")
        kw.update(sasl_mechanism=mech, sasl_username=user, sasl_password=password)
    if protocol in ("SSL", "SASL_SSL"):
        kw.update(_ssl_settings(get, bad))
    return SecurityConfig(**kw)


# Store types other than PEM, and what to do instead.
_NOT_PEM = {
    "ssl.truststore": "trust stores are not supported: convert to PEM (keytool -exportcert "
                      "-rfc) and set ssl.truststore.type=PEM, or use ssl.ca.location",
    "ssl.keystore": "key stores are not supported: use a PEM file with the key and "
                    "certificate chain (ssl.keystore.type=PEM), or ssl.certificate.location "
                    "and ssl.key.location",
}
# property -> SecurityConfig field; a later property wins (librdkafka's over Java's)
_SSL_SOURCES = (
    ("ssl.truststore.location", "ssl_cafile"), ("ssl.ca.location", "ssl_cafile"),
    ("ssl.truststore.certificates", "ssl_cadata"),
    ("ssl.keystore.location", "ssl_certfile"), ("ssl.certificate.location", "ssl_certfile"),
    ("ssl.key.location", "ssl_keyfile"),
    ("ssl.keystore.certificate.chain", "ssl_cert_pem"), ("ssl.keystore.key", "ssl_key_pem"),
)


def _ssl_settings(get, bad) -> dict:
    for store, hint in _NOT_PEM.items():
        stype = (get(f"{store}.type") or "").strip().upper()
        if get(f"{store}.location") and stype not in ("", "PEM"):
            raise bad(f"{store}.type", f"{stype} {hint}")
    kw: dict = {attr: get(key) for key, attr in _SSL_SOURCES if get(key)}
    if kw.get("ssl_key_pem") and not kw.get("ssl_cert_pem"):
        raise bad("ssl.keystore.key", "needs ssl.keystore.certificate.chain too")
    password = get("ssl.key.password") or get("ssl.keystore.password")
    if password:
        kw["ssl_key_password"] = password
    algo = get("ssl.endpoint.identification.algorithm")
    if algo is not None:
        algo = algo.strip().lower()
        if algo in ("", "none"):
            kw["ssl_check_hostname"] = False
        elif algo != "https":
            raise bad("ssl.endpoint.identification.algorithm", f"{algo!r}: expected https or "
                                                               "an empty value")
    verify = get("enable.ssl.certificate.verification")
    if verify is not None:
        if verify.strip().lower() not in ("true", "false"):
            raise bad("enable.ssl.certificate.verification", "expected true or false")
        if verify.strip().lower() == "false":
            kw.update(ssl_verify=False, ssl_check_hostname=False)
    return kw


def load_command_config(path: str | os.PathLike) -> SecurityConfig:
    return security_from_properties(load_properties(path), str(path))
