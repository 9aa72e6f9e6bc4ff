"""Helpers of the `lab up --tls --sasl` tests (the session's `secure_lab`): each listener's
bootstrap and client properties file, the CLI in-process, a group of real consumers."""
from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from cli_runner import run_cli
from groupctl.lab.consumer import wait_balanced

LISTENERS = ("PLAINTEXT", "SSL", "SASL_SSL", "SASL_PLAINTEXT")
LIBRDKAFKA_UNKNOWN = {"sasl.jaas.config", "ssl.truststore.type", "ssl.truststore.location"}


def endpoint(lab, listener: str) -> tuple[str, str | None]:
    """(bootstrap, client properties file) of a listener of the lab."""
    return {
        "PLAINTEXT": (lab.bootstrap, None),
        "SSL": (lab.ssl_bootstrap, lab.tls["command_config"]),
        "SASL_SSL": (lab.sasl_ssl_bootstrap, lab.sasl["ssl_command_configs"]["SCRAM-SHA-512"]),
        "SASL_PLAINTEXT": (lab.sasl_bootstrap, lab.sasl["command_configs"]["PLAIN"]),
    }[listener]


def cli(*args: str) -> tuple[int, str, str]:
    return run_cli(*args, timeout=20)


def via(lab, listener: str, *args: str, props: str | None = None) -> tuple[int, str, str]:
    bootstrap, default_props = endpoint(lab, listener)
    props = props or default_props
    return cli("-b", bootstrap, *(["--command-config", props] if props else []), *args)


def guest(lab, *args: str) -> tuple[int, str, str]:
    return via(lab, "SASL_PLAINTEXT", *args, props=lab.sasl["guest_command_configs"]["PLAIN"])


@pytest.fixture(scope="module")
def group(secure_lab):
    """A classic group of two real librdkafka consumers (range) on a 4-partition topic,
    joined over PLAINTEXT."""
    from groupctl.lab.consumer import LabConsumer
    from groupctl.lab.workload import create_topic

    topic, name = f"t-tls-{uuid.uuid4().hex[:8]}", f"g-tls-{uuid.uuid4().hex[:8]}"
    create_topic(secure_lab.bootstrap, topic, 4, 1, None)
    consumers = [LabConsumer(secure_lab.bootstrap, name, [topic], assignor="range")
                 for _ in range(2)]
    try:
        for c in consumers:
            c.start()
        wait_balanced(consumers, [(topic, p) for p in range(4)], timeout=60)
        yield name, consumers
    finally:
        for c in consumers:
            c.begin_close()
        for c in consumers:
            c.close(timeout=30)


def read_props(path: str) -> dict[str, str]:
    """A lab client properties file as plain key=value lines (ours: no escapes)."""
    out = {}
    for line in Path(path).read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            key, _, value = line.partition("=")
            out[key] = value
    return out
