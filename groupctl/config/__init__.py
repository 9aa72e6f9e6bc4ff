"""Client properties (`--command-config`) and contexts (`~/.config/groupctl/config.yaml`).

Properties files are read as java.util.Properties reads them (`key=value`, `key: value`
or `key value`; `#`/`!` comments; a line ending in an odd number of backslashes continues
on the next; \\t \\n \\uXXXX escapes), so the file given to Kafka's own tools works here.
What groupctl takes from them (everything else is ignored):

    security.protocol      PLAINTEXT (default), SSL, SASL_PLAINTEXT, SASL_SSL
    sasl.mechanism         PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 (librdkafka: sasl.mechanisms)
    sasl.jaas.config       username="..." password="..." of PlainLoginModule/ScramLoginModule
    sasl.username, sasl.password          librdkafka's spelling (win over sasl.jaas.config)
    ssl.truststore.location + ssl.truststore.type=PEM, or ssl.ca.location (librdkafka),
    ssl.truststore.certificates           inline PEM
    ssl.keystore.location (type PEM: key and certificate chain in one file),
    ssl.keystore.certificate.chain + ssl.keystore.key (inline PEM),
    ssl.certificate.location + ssl.key.location (librdkafka), ssl.key.password
    ssl.endpoint.identification.algorithm  "" or none: no host name check (default https)
    enable.ssl.certificate.verification    false: no certificate check at all (librdkafka)

Contexts file (path from $GROUPCTL_CONFIG, else ~/.config/groupctl/config.yaml):

    current_context: prod
    contexts:
      prod:
        bootstrap_servers: kafka1:9093,kafka2:9093     # or a YAML list
        command_config: prod.properties                # relative to this file's directory
      lab:
        bootstrap_servers: 127.0.0.1:9092
        properties: {security.protocol: SASL_PLAINTEXT, sasl.mechanism: SCRAM-SHA-256,
                     sasl.username: alice, sasl.password: alice-secret}

`properties` override what `command_config` sets. Every problem in either file is a
UsageError (exit 2) naming the file and line.
"""
from __future__ import annotations

from .bootstrap import parse_bootstrap, split_host_port
from .security import PLAINTEXT, SASL_MECHANISMS, SECURITY_PROTOCOLS, SecurityConfig

# The contexts file and properties parsers are only needed with --context, --command-config
# or without -b: imported on first use (PEP 562), not on every command's start.
_LAZY = {
    "CONTEXT_KEYS": "contexts", "Context": "contexts", "ContextsFile": "contexts",
    "config_path": "contexts", "load_contexts": "contexts",
    "load_command_config": "properties", "load_properties": "properties",
    "parse_jaas": "properties", "parse_properties": "properties",
    "security_from_properties": "properties",
}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value

__all__ = [
    "CONTEXT_KEYS", "PLAINTEXT", "SASL_MECHANISMS", "SECURITY_PROTOCOLS", "Context",
    "ContextsFile", "SecurityConfig", "config_path", "load_command_config", "load_contexts",
    "load_properties", "parse_bootstrap", "parse_jaas", "parse_properties",
    "security_from_properties", "split_host_port",
]
