"""Write the seed corpora that do not come from broker traffic (capture.py writes those):

    PYTHONPATH=. python -m tests.fuzz.seeds [--out tests/fuzz/corpus]

  properties/  the lab's own client properties files (lab/sasl.py, lab/tls.py writers:
               SASL_PLAINTEXT, SASL_SSL, SSL) and java.util.Properties syntax corners
  contexts/    the README's contexts file and variants (lists, flow style, nulls, ...)
  patterns/    real log lines from tests/fixtures/analyze (broker 4.3 and 3.x, Java
               classic and KIP-848 consumers, librdkafka): a few per line kind
  cli/         command lines from the README / docs/commands (argv joined by NUL bytes)
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "analyze"
PER_KIND = 3


def _put(directory: Path, data: bytes, prefix: str = "seed") -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"{prefix}-{hashlib.sha1(data).hexdigest()[:10]}").write_bytes(data)


def properties(out: Path) -> None:
    from groupctl.lab import sasl, tls

    t = {"ca_file": "/tmp/lab/ca.pem", "command_config": "/tmp/lab/client-ssl.properties"}
    s = {"username": "admin", "password": "s3cr\\et\"x", "mechanisms": ["SCRAM-SHA-256"],
         "users": {"admin": "s3cr\\et\"x"}}
    texts = [tls.client_properties(t)]
    for mech in ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"):
        for listener in (sasl.LISTENER, sasl.SSL_LISTENER):
            try:
                texts.append(sasl.client_properties(s, mech, "pw", user="admin",
                                                    listener=listener, tls=t))
            except Exception:  # noqa: BLE001 - a lab-layout change: keep the other seeds
                pass
    texts += [
        "# comment\n! bang comment\nkey = value\nkey2:value2\nkey3 value3\n",
        "multi = one \\\n    two \\\n    three\nescaped\\ key\\=x = \\u0041\\t\\n\n",
        "security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-512\nsasl.jaas.config="
        "org.apache.kafka.common.security.scram.ScramLoginModule required "
        "username=\"alice\" password=\"a\\\"b\";\nssl.endpoint.identification.algorithm=\n",
        "security.protocol=SSL\nssl.keystore.type=PEM\nssl.keystore.location=/k.pem\n"
        "ssl.keystore.key=-----BEGIN PRIVATE KEY-----\nssl.keystore.certificate.chain=x\n"
        "enable.ssl.certificate.verification=false\nssl.key.password=p\n",
        "security.protocol=sasl_plaintext\nsasl.mechanisms=plain\nsasl.username=u\n"
        "sasl.password=p\n",
        "security.protocol=SSL\nssl.truststore.type=JKS\nssl.truststore.location=t.jks\n",
    ]
    for text in texts:
        _put(out / "properties", text.encode())


def contexts(out: Path) -> None:
    texts = [
        "current_context: prod\ncontexts:\n  prod:\n    bootstrap_servers: kafka1:9093,"
        "kafka2:9093     # or a YAML list\n    command_config: prod.properties\n  lab:\n"
        "    bootstrap_servers: 127.0.0.1:9092\n    properties: {security.protocol: "
        "SASL_PLAINTEXT, sasl.mechanism: SCRAM-SHA-256,\n                 sasl.username: alice,"
        " sasl.password: alice-secret}\n",
        "contexts:\n  a:\n    bootstrap_servers:\n      - '[::1]:9092'\n      - h:1\n"
        "    password_env: KAFKA_PASSWORD\n    properties:\n      security.protocol: "
        "SASL_SSL\n      sasl.mechanism: PLAIN\n      sasl.username: u\n",
        "current_context: x\ncontexts:\n  x: null\n  y: {}\n",
        "contexts: {a: {bootstrap_servers: 'h:1', properties: {sasl.jaas.config: "
        "'org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\" "
        "password=\"p\";', security.protocol: SASL_PLAINTEXT, sasl.mechanism: PLAIN}}}\n",
        "current_context: &c prod\ncontexts:\n  ? prod\n  : bootstrap_servers: !!str h:9\n",
        "",
        "# only a comment\n",
    ]
    for text in texts:
        _put(out / "contexts", text.encode())


def patterns(out: Path) -> None:
    from groupctl.analytics import patterns as P

    pats = [*P.BROKER_PATTERNS, *P.JAVA_PATTERNS, *P.RDKAFKA_PATTERNS]
    seen: dict[str, int] = {}
    for path in sorted(FIXTURES.iterdir()):
        if path.suffix not in (".log", ".gz"):
            continue
        raw = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
        for line in raw.decode("utf-8", "replace").splitlines():
            kind = next((p.kind for p in pats if p.prefix in line and re.search(
                p.regex.lstrip("^"), line)), None) or ("other" if line.startswith("[")
                                                       else "continuation")
            key = f"{path.name}:{kind}"
            if seen.get(key, 0) < PER_KIND and len(line) < 4096:
                seen[key] = seen.get(key, 0) + 1
                _put(out / "patterns", line.encode())


CLI = [
    "list", "list --state Stable,Empty --type classic,consumer --regex ^fz",
    "-o json describe g1 g2", "describe --all --regex .* -o wide", "describe g --type share",
    "join g --topics t1,t2 --protocol classic --assignor cooperative-sticky --instance-id i "
    "--session-timeout 10 --rebalance-timeout 30",
    "join g --protocol consumer --watch --duration 0.01 --record ev.ndjson",
    "watch g --interval 0.01 --duration 0.01 --max-rebalances 2 -o ndjson",
    "force-rebalance g --yes --reason fuzz", "wait g --state Stable --members 3 "
    "--generation-gt 4 --max-lag 10 --settled 0.01 --must-exist",
    "remove-member g --instance-id a --instance-id b --yes", "errors", "errors 27",
    "errors REBALANCE_IN_PROGRESS -o yaml",
    "decode subscription 0003000000010002743100000000ffffffff",
    "decode assignment --base64 AAMAAAABAAJ0MQAAAAEAAAAA/////w==",
    "decode sticky-userdata --assignor cooperative-sticky 00000005",
    "decode subscription -",
    "config set-context prod --security-protocol SASL_SSL --sasl-mechanism SCRAM-SHA-512 "
    "--username alice --password-env HOME --current",
    "config view", "config get-contexts", "config current-context", "config use-context lab",
    "config rename-context a b", "config delete-context a", "--version", "--help",
    "describe --help", "-b h:1 --timeout 0.01 --no-color --debug list",
]


def cli(out: Path) -> None:
    for line in CLI:
        _put(out / "cli", "\x00".join(line.split()).encode())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent / "corpus"))
    out = Path(ap.parse_args().out)
    for write in (properties, contexts, patterns, cli):
        write(out)


if __name__ == "__main__":
    main()
