"""TLS contexts and SASL authentication (PLAIN, SCRAM-SHA-256/512) for a BrokerConnection.

SASL follows the Java client: ApiVersions first (allowed before authentication), then
SaslHandshake v1 naming the mechanism, then SaslAuthenticate rounds carrying the tokens.
SCRAM's tokens come from the `scramp` library. Any failure is an AuthError (exit 4):
wrong credentials, a mechanism the listener does not enable, a listener without SASL.
"""
from __future__ import annotations

import os
import ssl
from typing import Any, Protocol

from ..config import SecurityConfig
from ..errors import AuthError, UsageError
from ..protocol.errors import ErrorCode
from ..protocol.messages import SASL_AUTHENTICATE, SASL_HANDSHAKE
from .errors import KafkaAuthError, kafka_error



class Authenticating(Protocol):
    """What SASL needs of a connection (connection.BrokerConnection): its address for the
    messages, and requests sent on it before it is ready."""
    address: str

    async def request(self, api: Any, body: dict, version: int | None = None, *,
                      min_version: int = 0, timeout: float | None = None) -> Any: ...



# ---- TLS --------------------------------------------------------------------------------

def ssl_context(sec: SecurityConfig) -> ssl.SSLContext:
    """An SSLContext for `sec` (TLS 1.2+). Files that are missing or not PEM: UsageError."""
    try:
        ctx = ssl.create_default_context()
        if sec.ssl_cafile or sec.ssl_cadata:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # only the CAs given, as Java does
            if sec.ssl_cafile:
                _check_pem(sec.ssl_cafile, "trusted certificates (ssl.truststore.location / "
                                           "ssl.ca.location)")
                ctx.load_verify_locations(cafile=os.path.expanduser(sec.ssl_cafile))
            if sec.ssl_cadata:
                ctx.load_verify_locations(cadata=sec.ssl_cadata)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        ctx.check_hostname = sec.ssl_check_hostname and sec.ssl_verify
        if not sec.ssl_verify:
            ctx.verify_mode = ssl.CERT_NONE
        if sec.ssl_certfile:
            _check_pem(sec.ssl_certfile, "the client certificate")
            ctx.load_cert_chain(os.path.expanduser(sec.ssl_certfile),
                                os.path.expanduser(sec.ssl_keyfile) if sec.ssl_keyfile else None,
                                password=sec.ssl_key_password)
        elif sec.ssl_cert_pem:
            _load_inline_chain(ctx, sec)
    except ssl.SSLError as exc:
        raise UsageError(f"TLS settings{_from(sec)}: cannot load the certificates or key: "
                         f"{exc.reason or exc}") from None
    except OSError as exc:
        raise UsageError(f"TLS settings{_from(sec)}: {exc.filename or ''}: "
                         f"{exc.strerror or exc}") from None
    return ctx


def verify_hint(why: str | None) -> str:
    """What to check for a certificate the client refused (OpenSSL's words in `why`)."""
    text = (why or "").lower()
    if "hostname mismatch" in text or "ip address mismatch" in text:
        return (" (connect with a name in the broker certificate, or set "
                "ssl.endpoint.identification.algorithm= to skip the host name check)")
    if "issuer" in text or "self-signed" in text or "self signed" in text:
        return (" (the broker's certificate is not signed by a CA in ssl.truststore.location "
                "/ ssl.ca.location)")
    if "expired" in text or "not yet valid" in text:
        return " (the broker's certificate is outside its validity period)"
    return ""


def _from(sec: SecurityConfig) -> str:
    return f" in {sec.source}" if sec.source else ""


def _check_pem(path: str, what: str) -> None:
    p = os.path.expanduser(path)
    try:
        with open(p, "rb") as f:
            head = f.read(65536)
    except OSError as exc:
        raise UsageError(f"{what}: {path}: {exc.strerror or exc}") from None
    if b"-----BEGIN" not in head:
        raise UsageError(f"{what}: {path} is not a PEM file (a JKS or PKCS12 store? convert it "
                         "to PEM, e.g. with keytool -exportcert -rfc or openssl pkcs12)")


def _load_inline_chain(ctx: ssl.SSLContext, sec: SecurityConfig) -> None:
    # Python's ssl loads a certificate chain from files only: write a private temp file
    # (mode 0600), load it, remove it at once.
    import tempfile   # here: only an inline chain needs it (~1.3 ms to import)

    fd, path = tempfile.mkstemp(prefix="groupctl-", suffix=".pem")
    try:
        with os.fdopen(fd, "w") as f:
            f.write((sec.ssl_key_pem or "").strip() + "\n"
                    + (sec.ssl_cert_pem or "").strip() + "\n")
        ctx.load_cert_chain(path, password=sec.ssl_key_password)
    finally:
        os.unlink(path)


# ---- SASL -------------------------------------------------------------------------------

async def authenticate(conn: Authenticating, sec: SecurityConfig, timeout: float) -> int:
    """Run SASL on a connection whose ApiVersions is done. Returns the session lifetime in
    ms (0: none). Raises AuthError (exit 4) on any failure."""
    mech = sec.sasl_mechanism or "PLAIN"
    hs = await conn.request(SASL_HANDSHAKE, {"mechanism": mech}, min_version=1, timeout=timeout)
    code = hs["error_code"]
    if code == ErrorCode.UNSUPPORTED_SASL_MECHANISM:
        offered = ", ".join(hs["mechanisms"] or []) or "none"
        raise KafkaAuthError("SaslHandshake", code, f"{conn.address} does not enable {mech} "
                                                    f"(it enables: {offered})")
    if code == ErrorCode.ILLEGAL_SASL_STATE:
        raise KafkaAuthError("SaslHandshake", code, f"{conn.address} does not expect SASL: "
                                                    "is it a listener without SASL? check "
                                                    "security.protocol")
    if code:
        raise kafka_error("SaslHandshake", code)
    if mech == "PLAIN":
        token = b"\0" + (sec.sasl_username or "").encode() + b"\0" + (sec.sasl_password or "").encode()
        resp = await _round(conn, token, mech, sec, timeout)
    elif mech.startswith("SCRAM-"):
        resp = await _scram(conn, mech, sec, timeout)
    else:  # config.py refuses other mechanisms; a SecurityConfig built by hand might not
        raise AuthError(f"SASL mechanism {mech} is not supported by groupctl")
    return int(resp.get("session_lifetime_ms") or 0)


async def _round(conn, token: bytes, mech: str, sec: SecurityConfig, timeout: float) -> dict:
    resp = await conn.request(SASL_AUTHENTICATE, {"auth_bytes": token}, timeout=timeout)
    code = resp["error_code"]
    if code:
        message = resp.get("error_message") or ""
        raise KafkaAuthError("SaslAuthenticate", code,
                             f"{mech} as {sec.sasl_username!r} at {conn.address}"
                             + (f": {message}" if message else ""))
    return resp


async def _scram(conn, mech: str, sec: SecurityConfig, timeout: float) -> dict:
    try:
        from scramp import ScramClient, ScramException
    except ImportError:  # pragma: no cover - a declared dependency
        raise AuthError("SCRAM needs the 'scramp' package (pip install scramp)") from None
    try:
        client = ScramClient([mech], sec.sasl_username or "", sec.sasl_password or "")
        first = await _round(conn, client.get_client_first().encode(), mech, sec, timeout)
        client.set_server_first((first["auth_bytes"] or b"").decode("utf-8", "replace"))
        final = await _round(conn, client.get_client_final().encode(), mech, sec, timeout)
        client.set_server_final((final["auth_bytes"] or b"").decode("utf-8", "replace"))
    except ScramException as exc:
        raise AuthError(f"{mech} exchange with {conn.address} failed: {exc}") from None
    return final
