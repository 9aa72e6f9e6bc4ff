"""SecurityConfig: how to reach the brokers (TLS and SASL settings)."""
from __future__ import annotations

from dataclasses import dataclass, field

SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")


@dataclass(frozen=True)
class SecurityConfig:
    """How to reach the brokers: TLS and SASL settings (PLAINTEXT when all None)."""

    protocol: str = "PLAINTEXT"
    sasl_mechanism: str | None = None
    sasl_username: str | None = None
    sasl_password: str | None = field(default=None, repr=False)
    ssl_cafile: str | None = None        # PEM file of trusted CAs (None: the system's)
    ssl_cadata: str | None = None        # the same, inline
    ssl_certfile: str | None = None      # client certificate chain (PEM; may hold the key)
    ssl_keyfile: str | None = None       # its private key (PEM)
    ssl_cert_pem: str | None = field(default=None, repr=False)  # inline chain
    ssl_key_pem: str | None = field(default=None, repr=False)   # inline key
    ssl_key_password: str | None = field(default=None, repr=False)
    ssl_check_hostname: bool = True
    ssl_verify: bool = True
    source: str | None = None            # the file it came from, for messages

    @property
    def tls(self) -> bool:
        return self.protocol in ("SSL", "SASL_SSL")

    @property
    def sasl(self) -> bool:
        return self.protocol in ("SASL_PLAINTEXT", "SASL_SSL")


PLAINTEXT = SecurityConfig()
