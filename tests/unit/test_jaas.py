"""sasl.jaas.config read as Kafka's JaasConfig reads it (java.io.StreamTokenizer: single
and double quotes, Java escapes, `//` and `/* */` comments, an unterminated quote ending at
the line's end), and `config view` masking what Kafka would take as a secret (issue 36):
an unterminated quote, single quotes and comments never show a password, in the table
(the file's text) or as data (-o json / yaml)."""
from __future__ import annotations

import io
import json

import pytest

from groupctl.cli.app import invoke
from groupctl.cli.env import Env
from groupctl.config.jaas import JaasError, masked_jaas, parse_jaas

SECRET = "s3cr3t-Pa55"
PLAIN = "org.apache.kafka.common.security.plain.PlainLoginModule"


@pytest.mark.parametrize("text, options", [
    (f"{PLAIN} required username='admin' password='{SECRET}';",
     {"username": "admin", "password": SECRET}),
    (f'{PLAIN} REQUIRED username="a\\"b" password="x\\ty\\101";',
     {"username": 'a"b', "password": "x\tyA"}),
    (f"{PLAIN} required /* old: password=old */ username=u // note\n password={SECRET};",
     {"username": "u", "password": SECRET}),
    (f"{PLAIN} optional username=u password=\"{SECRET}\n;",   # a quote ends at the line end
     {"username": "u", "password": SECRET}),
    (f"{PLAIN} required username=u password=a/b\n;", {"username": "u", "password": "a"}),
])
def test_parsed_as_kafka_parses_it(text, options):
    assert parse_jaas(text) == (PLAIN, options)


@pytest.mark.parametrize("text", [
    f'{PLAIN} required username="u" password="{SECRET}',      # unterminated: no `;`
    f"{PLAIN} required username=u password={SECRET}",         # no `;`
    f"{PLAIN} required username=u password=;",
    f"{PLAIN} bogus username=u;",
    "",
])
def test_what_kafka_refuses_is_an_error_that_never_quotes_a_value(text):
    with pytest.raises(JaasError) as info:
        parse_jaas(text)
    assert SECRET not in str(info.value)


@pytest.mark.parametrize("text, shown", [
    (f"{PLAIN} required username='admin' password='{SECRET}';",
     f"{PLAIN} required username='admin' password=\"REDACTED\";"),
    (f'{PLAIN} required username="u" password="{SECRET}',
     "REDACTED (not a JAAS configuration Kafka can read)"),
    (f"{PLAIN} required username=u /* was password={SECRET} */ password=x;",
     f"{PLAIN} required username=u  password=\"REDACTED\";"),
    (f"{PLAIN} required user_alice={SECRET} clientSecret='{SECRET}';",
     f"{PLAIN} required user_alice=\"REDACTED\" clientSecret=\"REDACTED\";"),
])
def test_masked_as_kafka_reads_it(text, shown):
    assert masked_jaas(text) == shown


def test_config_view_never_shows_a_password(tmp_path, monkeypatch):
    path = tmp_path / "config.yaml"
    path.write_text(
        f"# the old password was {SECRET}-old\n"
        "current_context: a\n"
        "contexts:\n"
        "  a:\n"
        "    bootstrap_servers: k:9092  # ask ops for the password\n"
        "    properties:\n"
        "      security.protocol: SASL_SSL\n"
        f"      sasl.jaas.config: '{PLAIN} required username=\"u\" password=\"{SECRET}'\n"
        "  b:\n"
        "    bootstrap_servers: k:9092\n"
        "    properties:\n"
        f"      sasl.jaas.config: \"{PLAIN} required username='admin' password='{SECRET}';\"\n"
        f"      # {SECRET}-comment\n")
    monkeypatch.setenv("GROUPCTL_CONFIG", str(path))
    for fmt in ("table", "json", "yaml"):
        env = Env(stdout=io.StringIO(), stderr=io.StringIO())
        assert invoke(["-o", fmt, "config", "view"], env) == 0, env.stderr.getvalue()
        out = env.stdout.getvalue()
        assert SECRET not in out and "ask ops" not in out, (fmt, out)
        if fmt == "json":
            out = json.loads(out)["contexts"]["b"]["properties"]["sasl.jaas.config"]
        assert "username='admin' password=\"REDACTED\"" in out.replace("\\", ""), (fmt, out)
