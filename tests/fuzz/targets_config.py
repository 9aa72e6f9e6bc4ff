"""Harnesses for the config parsers: the contexts file (YAML) and Kafka client properties
files (`--command-config`). Documented error: UsageError (exit 2, one line naming the
file and line).
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

from groupctl.errors import UsageError

from .registry import Crash, harness

_DIR: list[Path] = []


def _workdir() -> Path:
    """A private directory for the files the loaders read (tmpfs when there is one)."""
    if not _DIR:
        base = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
        _DIR.append(Path(tempfile.mkdtemp(prefix="groupctl-fuzz-", dir=base)))
    return _DIR[0]


def _reads_files(ctx) -> bool:
    """Whether using the context reads a file the fuzzer named (it could name /dev/zero or
    a FIFO: that is the user's file, not a parser fault, so the harness stays out)."""
    return bool(ctx.command_config or ctx.password_file)


# Odd characters a user may type: non-ASCII digits and spaces, a BOM, a surrogate's bytes.
_ODD = ("²", "١٢", "９", "\u00a0", "\u2028", "\ufeff", "\x00", "\\ud800")
YAML_TOKENS = ("current_context:", "contexts:", "bootstrap_servers:", "command_config:",
               "properties:", "password_env:", "password_file:", "security.protocol:",
               "sasl.mechanism:", "sasl.jaas.config:", "SASL_SSL", "SCRAM-SHA-512", "PLAIN",
               "127.0.0.1:9092", "[::1]:9092", "h:65536", "- ", "? ", ": ", "[", "]", "{", "}",
               "&a ", "*a", "!!str ", "!!binary ", "!!python/name:", "null", "~", "---",
               "...", "%YAML 1.1", "|-", ">", "'", '"', "#", *_ODD)
PROPERTY_TOKENS = ("security.protocol=", "sasl.mechanism=", "sasl.mechanisms=",
                   "sasl.jaas.config=", "sasl.username=", "sasl.password=",
                   "ssl.truststore.type=", "ssl.truststore.location=", "ssl.keystore.type=",
                   "ssl.keystore.location=", "ssl.keystore.key=",
                   "ssl.keystore.certificate.chain=", "ssl.endpoint.identification.algorithm=",
                   "enable.ssl.certificate.verification=", "SASL_SSL", "SASL_PLAINTEXT", "SSL",
                   "SCRAM-SHA-256", "PLAIN", "GSSAPI", "PEM", "JKS",
                   "org.apache.kafka.common.security.scram.ScramLoginModule required ",
                   'username="', 'password="', '";', "\\u", "\\\n", "\\", "=", ":", "!",
                   "#", *_ODD)


@harness("contexts", documented=(UsageError,), setup=_workdir, dictionary=YAML_TOKENS,
         smoke_runs=500)
def contexts_file(data: bytes) -> None:
    """The contexts file as every command reads it (config.load_contexts), each context's
    security settings, `config view`/`get-contexts` (masked_data, summaries), the
    round-trip editor's load (ruamel), and save -> load giving the same contexts."""
    from groupctl.config import load_contexts
    from groupctl.config.edit import ContextsDocument, masked_data, summaries

    path = _workdir() / "config.yaml"
    path.write_bytes(data)
    ctxs = load_contexts(path)
    reads_files = any(_reads_files(c) for c in ctxs.contexts.values())
    for ctx in ctxs.contexts.values():
        ctx.to_dict()
        if not _reads_files(ctx):
            try:
                ctx.security()
            except UsageError:
                pass
    masked_data(path)
    if not reads_files:
        summaries(path)
    ContextsDocument.load(path)
    # what `save` writes, the loader must read back as the same contexts
    copy = ctxs.__class__(_workdir() / "saved.yaml", ctxs.contexts, ctxs.current_context)
    copy.save()
    again = load_contexts(copy.path)
    if again.to_dict() != ctxs.to_dict():
        raise Crash(f"save -> load differs: {ctxs.to_dict()!r} -> {again.to_dict()!r}")


@harness("properties", documented=(UsageError,), dictionary=PROPERTY_TOKENS)
def properties_file(data: bytes) -> None:
    """A --command-config file: java.util.Properties syntax (parse_properties), the
    SecurityConfig it describes (security_from_properties, sasl.jaas.config included), and
    `config view`'s masking of every value."""
    from groupctl.config.credentials import mask_value
    from groupctl.config.properties import parse_jaas, parse_properties, security_from_properties

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return  # load_properties: UsageError "cannot read it" (tested in the unit suite)
    props = parse_properties(text, "fuzz.properties")
    for key, (value, line) in props.items():
        if not isinstance(key, str) or not isinstance(value, str) or line < 1:
            raise Crash(f"property {key!r}: {value!r} at line {line}")
        mask_value(key, value)
    jaas = props.get("sasl.jaas.config")
    if jaas is not None:
        try:
            parse_jaas(jaas[0])
        except ValueError:
            pass  # documented: "ValueError if bad"
    security_from_properties(props, "fuzz.properties")
