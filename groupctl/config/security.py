"""SecurityConfig: how to reach the brokers (TLS and SASL settings)."""
from __future__ import annotations

from ..records import Frozen

SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")


class SecurityConfig(Frozen):
    """How to reach the brokers: TLS and SASL settings (PLAINTEXT when all None)."""

    protocol: str
    sasl_mechanism: str | None
    sasl_username: str | None
    sasl_password: str | None
    ssl_cafile: str | None        # PEM file of trusted CAs (None: the system's)
    ssl_cadata: str | None        # the same, inline
    ssl_certfile: str | None      # client certificate chain (PEM; may hold the key)
    ssl_keyfile: str | None       # its private key (PEM)
    ssl_cert_pem: str | None      # inline chain
    ssl_key_pem: str | None       # inline key
    ssl_key_password: str | None
    ssl_check_hostname: bool
    ssl_verify: bool
    source: str | None            # the file it came from, for messages
    _fields = ("protocol", "sasl_mechanism", "sasl_username", "sasl_password", "ssl_cafile",
               "ssl_cadata", "ssl_certfile", "ssl_keyfile", "ssl_cert_pem", "ssl_key_pem",
               "ssl_key_password", "ssl_check_hostname", "ssl_verify", "source")
    _hidden = frozenset({"sasl_password", "ssl_cert_pem", "ssl_key_pem", "ssl_key_password"})

    def __init__(self, protocol: str = "PLAINTEXT", sasl_mechanism: str | None = None,
                 sasl_username: str | None = None, sasl_password: str | None = None,
                 ssl_cafile: str | None = None, ssl_cadata: str | None = None,
                 ssl_certfile: str | None = None, ssl_keyfile: str | None = None,
                 ssl_cert_pem: str | None = None, ssl_key_pem: str | None = None,
                 ssl_key_password: str | None = None, ssl_check_hostname: bool = True,
                 ssl_verify: bool = True, source: str | None = None):
        self._init(protocol=protocol, sasl_mechanism=sasl_mechanism,
                   sasl_username=sasl_username, sasl_password=sasl_password,
                   ssl_cafile=ssl_cafile, ssl_cadata=ssl_cadata, ssl_certfile=ssl_certfile,
                   ssl_keyfile=ssl_keyfile, ssl_cert_pem=ssl_cert_pem,
                   ssl_key_pem=ssl_key_pem, ssl_key_password=ssl_key_password,
                   ssl_check_hostname=ssl_check_hostname, ssl_verify=ssl_verify,
                   source=source)

    @property
    def tls(self) -> bool:
        return self.protocol in ("SSL", "SASL_SSL")

    @property
    def sasl(self) -> bool:
        return self.protocol in ("SASL_PLAINTEXT", "SASL_SSL")


PLAINTEXT = SecurityConfig()
