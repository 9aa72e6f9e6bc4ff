"""`lab up --tls`: an SSL listener (and with `--sasl` a SASL_SSL one) next to PLAINTEXT.

The lab makes its own small PKI with the `cryptography` library, fresh for every `lab up`,
in the lab directory:

    ca.pem                   the lab CA's certificate (the trust anchor clients use)
    ca.key                   its private key (0600; only needed to sign more certificates)
    broker-keystore.pem      the broker's PKCS#8 key, its certificate and the CA (0600),
                             loaded by the broker as a PEM key store
    client-ssl.properties    SSL client settings for --command-config and Kafka's tools

The broker certificate is valid for DNS:localhost and IP:127.0.0.1 (the advertised
listeners), so host name verification passes with the default
ssl.endpoint.identification.algorithm=https. Clients present no certificate
(ssl.client.auth=none): on SSL they are the anonymous principal.
"""
from __future__ import annotations

import datetime as _dt
import ipaddress
from pathlib import Path

LISTENER = "SSL"
SAN_DNS = ("localhost",)
SAN_IPS = ("127.0.0.1",)
VALID_DAYS = 30  # a lab lives for hours; long enough for a forgotten one, short enough to notice


def new_settings(lab_dir: Path) -> dict:
    """The lab's TLS settings as state.json keeps them (paths only, no key material)."""
    return {
        "ca_file": str(lab_dir / "ca.pem"),
        "ca_key": str(lab_dir / "ca.key"),
        "keystore": str(lab_dir / "broker-keystore.pem"),
        "command_config": str(lab_dir / "client-ssl.properties"),
    }


def write_files(tls: dict) -> None:
    """Generate the CA and the broker certificate; write them and client-ssl.properties."""
    ca_key, ca_cert = make_ca("groupctl lab CA")
    key, cert = make_server_cert(ca_key, ca_cert, "localhost", SAN_DNS, SAN_IPS)
    write_private(tls["ca_key"], pem_key(ca_key))
    write_private(tls["ca_file"], pem_cert(ca_cert))
    write_private(tls["keystore"], pem_key(key) + pem_cert(cert) + pem_cert(ca_cert))
    write_private(tls["command_config"], client_properties(tls))


def make_ca(common_name: str):
    """(private key, self-signed CA certificate)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.x509.oid import NameOID

    key = _new_key()
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    start, end = _validity()
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(start).not_valid_after(end)
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True,
                                         crl_sign=True, content_commitment=False,
                                         key_encipherment=False, data_encipherment=False,
                                         key_agreement=False, encipher_only=False,
                                         decipher_only=False), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()),
                           critical=False)
            .sign(key, hashes.SHA256()))
    return key, cert


def make_server_cert(ca_key, ca_cert, common_name: str, dns_names=(), ips=()):
    """(private key, server certificate signed by the CA) for these names."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    key = _new_key()
    start, end = _validity()
    alt = [x509.DNSName(d) for d in dns_names] + [x509.IPAddress(ipaddress.ip_address(i))
                                                  for i in ips]
    cert = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)]))
            .issuer_name(ca_cert.subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(start).not_valid_after(end)
            .add_extension(x509.SubjectAlternativeName(alt), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]),
                           critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(
                ca_key.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256()))
    return key, cert


def _new_key():
    from cryptography.hazmat.primitives.asymmetric import rsa

    # RSA 2048: what every TLS stack involved (JSSE, OpenSSL in Python and librdkafka) takes
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def _validity():
    now = _dt.datetime.now(_dt.timezone.utc)
    return now - _dt.timedelta(hours=1), now + _dt.timedelta(days=VALID_DAYS)


def pem_key(key) -> bytes:
    from cryptography.hazmat.primitives import serialization

    # unencrypted PKCS#8: the form Kafka's PEM key store reads without ssl.key.password
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def pem_cert(cert) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return cert.public_bytes(serialization.Encoding.PEM)


def write_private(path, data: str | bytes) -> None:
    """Write a file readable by its owner only (0600), replacing what was there."""
    from ..safe_files import write_atomic

    write_atomic(path, data)


def broker_settings(tls: dict) -> dict[str, str]:
    """server.properties entries for the SSL and SASL_SSL listeners (the listeners
    themselves: config.py)."""
    return {"ssl.keystore.type": "PEM", "ssl.keystore.location": tls["keystore"],
            "ssl.client.auth": "none"}


def trust_lines(tls: dict) -> list[str]:
    """Client properties that trust the lab CA: Java's spelling and librdkafka's."""
    return ["ssl.truststore.type=PEM", f"ssl.truststore.location={tls['ca_file']}",
            f"ssl.ca.location={tls['ca_file']}"]


def client_properties(tls: dict) -> str:
    return "\n".join([f"# groupctl lab: {LISTENER} (server certificate signed by ca.pem), "
                      "for --command-config", f"security.protocol={LISTENER}",
                      *trust_lines(tls)]) + "\n"


def security(tls: dict):
    """groupctl's SecurityConfig for the lab's SSL listener."""
    from ..config import SecurityConfig

    return SecurityConfig(protocol=LISTENER, ssl_cafile=tls["ca_file"])


def status(tls: dict | None, bootstrap: str | None) -> dict | None:
    """The `tls` part of `lab status`."""
    if not tls:
        return None
    return {"bootstrap": bootstrap, "security_protocol": LISTENER, "ca_file": tls["ca_file"],
            "command_config": tls["command_config"]}
