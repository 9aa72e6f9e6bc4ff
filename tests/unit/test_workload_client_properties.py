"""`lab workload`'s librdkafka clients get the security settings groupctl's own client uses
(a context's or --command-config's SecurityConfig), in librdkafka's property names."""
from __future__ import annotations

from groupctl.config.security import PLAINTEXT, SecurityConfig
from groupctl.lab.workload import client_properties


def test_plaintext_adds_nothing():
    assert client_properties(PLAINTEXT) == {} and client_properties(None) == {}


def test_sasl_ssl_with_files_and_no_host_check():
    sec = SecurityConfig(protocol="SASL_SSL", sasl_mechanism="SCRAM-SHA-256",
                         sasl_username="alice", sasl_password="pw", ssl_cafile="/ca.pem",
                         ssl_certfile="/c.pem", ssl_keyfile="/k.pem", ssl_key_password="kp",
                         ssl_check_hostname=False)
    assert client_properties(sec) == {
        "security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-256",
        "sasl.username": "alice", "sasl.password": "pw", "ssl.ca.location": "/ca.pem",
        "ssl.certificate.location": "/c.pem", "ssl.key.location": "/k.pem",
        "ssl.key.password": "kp", "ssl.endpoint.identification.algorithm": "none"}


def test_inline_pem_and_no_verification():
    sec = SecurityConfig(protocol="SSL", ssl_cadata="CA", ssl_cert_pem="CERT", ssl_key_pem="KEY",
                         ssl_verify=False)
    assert client_properties(sec) == {
        "security.protocol": "SSL", "ssl.ca.pem": "CA", "ssl.certificate.pem": "CERT",
        "ssl.key.pem": "KEY", "enable.ssl.certificate.verification": "false"}
