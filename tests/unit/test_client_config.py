"""Client configuration: bootstrap syntax, properties files (--command-config), the
contexts file, and how cli.common resolves -b / $GROUPCTL_BOOTSTRAP_SERVERS / contexts."""
from __future__ import annotations

import io
import os
import stat

import pytest

from groupctl.cli.common import connection_settings, parse_bootstrap
from groupctl.cli.env import Env, Settings
from groupctl.config import (
    PLAINTEXT,
    Context,
    ContextsFile,
    SecurityConfig,
    load_contexts,
    parse_jaas,
    parse_properties,
    security_from_properties,
)
from groupctl.errors import UsageError
from groupctl.exitcodes import ExitCode

# ---- bootstrap syntax ----------------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("localhost:9092", ["localhost:9092"]),
    ("a:1,b:2", ["a:1", "b:2"]),
    (" a:1 , b:65535 ,", ["a:1", "b:65535"]),
    ("a:1,a:1", ["a:1"]),
    ("[::1]:9092", ["[::1]:9092"]),
    ("10.0.0.1:9092,[fe80::1%eth0]:9093", ["10.0.0.1:9092", "[fe80::1%eth0]:9093"]),
])
def test_parse_bootstrap(text, expected):
    assert parse_bootstrap(text) == expected


@pytest.mark.parametrize("text, words", [
    ("", "is empty"),
    (" , ", "is empty"),
    ("localhost", "a port is missing"),
    ("localhost:", "1 to 65535"),
    ("localhost:0", "1 to 65535"),
    ("localhost:65536", "1 to 65535"),
    ("localhost:abc", "1 to 65535"),
    ("localhost:-1", "1 to 65535"),
    ("::1:9092", "brackets"),
    (":9092", "HOST:PORT"),
    ("a:1,b", "a port is missing"),
    ("http://a:1", "HOST:PORT"),
])
def test_parse_bootstrap_rejects_bad_syntax(text, words):
    with pytest.raises(UsageError, match=words) as info:
        parse_bootstrap(text)
    assert info.value.exit_code == ExitCode.USAGE


# ---- properties files ------------------------------------------------------------------------

def test_properties_syntax_as_java_reads_it():
    text = ("# comment\n"
            "! another comment\n"
            "\n"
            "a=1\n"
            "b: 2\n"
            "c 3\n"
            "  d  =  spaced value  \n"
            "e=first \\\n"
            "    second\n"
            "f=tab\\there\\u0041\n"
            "g\\=key=v\n"
            "empty=\n"
            "a=last wins\n")
    props = parse_properties(text, "x.properties")
    values = {k: v for k, (v, _) in props.items()}
    assert values == {"a": "last wins", "b": "2", "c": "3", "d": "spaced value  ",
                      "e": "first second", "f": "tab\thereA", "g=key": "v", "empty": ""}
    assert props["b"][1] == 5 and props["e"][1] == 8 and props["a"][1] == 13


def test_properties_bad_unicode_escape_names_the_line():
    with pytest.raises(UsageError, match=r"x.properties, line 2: malformed \\uXXXX"):
        parse_properties("a=1\nb=\\u12G4\n", "x.properties")


def test_properties_key_without_name():
    with pytest.raises(UsageError, match="line 1: a property without a name"):
        parse_properties("=value\n", "x.properties")


def _sec(text: str) -> SecurityConfig:
    return security_from_properties(parse_properties(text, "c.properties"), "c.properties")


def test_plaintext_by_default():
    assert _sec("client.id=x\n") == SecurityConfig(source="c.properties")
    assert not _sec("").tls and not _sec("").sasl


@pytest.mark.parametrize("module", [
    "org.apache.kafka.common.security.plain.PlainLoginModule",
    "org.apache.kafka.common.security.scram.ScramLoginModule",
])
def test_sasl_jaas_config(module):
    sec = _sec("security.protocol=SASL_SSL\n"
               "sasl.mechanism=SCRAM-SHA-512\n"
               f'sasl.jaas.config={module} required \\\n'
               '    username="alice" \\\n'
               '    password="p@ss \\\\"quoted\\\\" w=rd";\n'  # \\" in the file
               "ssl.truststore.location=/etc/ca.pem\n"
               "ssl.truststore.type=PEM\n")
    assert sec.protocol == "SASL_SSL" and sec.tls and sec.sasl
    assert (sec.sasl_mechanism, sec.sasl_username, sec.sasl_password) == (
        "SCRAM-SHA-512", "alice", 'p@ss "quoted" w=rd')
    assert sec.ssl_cafile == "/etc/ca.pem"
    assert "p@ss" not in repr(sec)  # secrets stay out of reprs and tracebacks


def test_librdkafka_spellings():
    sec = _sec("security.protocol=sasl_ssl\n"
               "sasl.mechanisms=PLAIN\n"
               "sasl.username=bob\n"
               "sasl.password=secret\n"
               "ssl.ca.location=/ca.pem\n"
               "ssl.certificate.location=/client.pem\n"
               "ssl.key.location=/client.key\n"
               "ssl.key.password=kp\n"
               "enable.ssl.certificate.verification=false\n")
    assert (sec.protocol, sec.sasl_mechanism, sec.sasl_username, sec.sasl_password) == (
        "SASL_SSL", "PLAIN", "bob", "secret")
    assert (sec.ssl_cafile, sec.ssl_certfile, sec.ssl_keyfile, sec.ssl_key_password) == (
        "/ca.pem", "/client.pem", "/client.key", "kp")
    assert not sec.ssl_verify and not sec.ssl_check_hostname


def test_endpoint_identification_off():
    assert not _sec("security.protocol=SSL\nssl.endpoint.identification.algorithm=\n").ssl_check_hostname
    assert _sec("security.protocol=SSL\n").ssl_check_hostname


@pytest.mark.parametrize("text, words", [
    ("a=1\nsecurity.protocol=TLS\n", "line 2: security.protocol: 'TLS' is not one of"),
    ("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=GSSAPI\n",
     "line 2: sasl.mechanism: GSSAPI is not supported"),
    ("security.protocol=SASL_PLAINTEXT\n", "needs sasl.mechanism"),
    ("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n", "needs a username and password"),
    ("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.jaas.config=nonsense\n",
     "line 3: sasl.jaas.config: expected"),
    (("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"
      "sasl.jaas.config=x.PlainLoginModule required username=\"a\";\n"),
     "line 3: sasl.jaas.config: PlainLoginModule has no username and password"),
    ("security.protocol=SSL\nssl.truststore.location=/t.jks\nssl.truststore.type=JKS\n",
     "line 3: ssl.truststore.type: JKS trust stores are not supported"),
    ("security.protocol=SSL\nssl.keystore.location=/k.p12\nssl.keystore.type=PKCS12\n",
     "line 3: ssl.keystore.type: PKCS12 key stores are not supported"),
    ("security.protocol=SSL\nssl.endpoint.identification.algorithm=ldap\n",
     "line 2: ssl.endpoint.identification.algorithm"),
])
def test_bad_properties_are_usage_errors_with_line_numbers(text, words):
    with pytest.raises(UsageError, match=words) as info:
        _sec(text)
    assert "c.properties" in str(info.value)
    assert info.value.exit_code == ExitCode.USAGE


def test_parse_jaas_unquoted_and_flags():
    module, opts = parse_jaas("a.B optional username=u password=p serviceName=\"kafka\";")
    assert module == "a.B" and opts == {"username": "u", "password": "p", "serviceName": "kafka"}


# ---- contexts file --------------------------------------------------------------------------

def test_contexts_file(tmp_path):
    (tmp_path / "prod.properties").write_text(
        "security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\n"
        "sasl.username=u\nsasl.password=p\n")
    path = tmp_path / "config.yaml"
    path.write_text("current_context: prod\n"
                    "contexts:\n"
                    "  prod:\n"
                    "    bootstrap_servers: k1:9093,k2:9093\n"
                    "    command_config: prod.properties\n"
                    "  lab:\n"
                    "    bootstrap_servers: [127.0.0.1:9092]\n"
                    "    properties:\n"
                    "      security.protocol: SASL_PLAINTEXT\n"
                    "      sasl.mechanism: SCRAM-SHA-256\n"
                    "      sasl.username: alice\n"
                    "      sasl.password: alice-secret\n"
                    "  empty:\n")
    cf = load_contexts(path)
    assert cf.current_context == "prod" and list(cf.contexts) == ["prod", "lab", "empty"]
    prod = cf.get("prod")
    assert prod.bootstrap_servers == ["k1:9093", "k2:9093"]
    assert prod.command_config_path() == tmp_path / "prod.properties"  # relative to the file
    assert prod.security().protocol == "SASL_SSL"
    lab = cf.get("lab").security()
    assert (lab.sasl_mechanism, lab.sasl_username) == ("SCRAM-SHA-256", "alice")
    assert cf.get("empty").bootstrap_servers is None
    with pytest.raises(UsageError, match="no context 'nope'.*empty, lab, prod"):
        cf.get("nope")


def test_missing_contexts_file_is_empty(tmp_path):
    cf = load_contexts(tmp_path / "absent.yaml")
    assert cf.contexts == {} and cf.current_context is None


@pytest.mark.parametrize("text, words", [
    ("contexts:\n  a:\n    bootstrap_servers: [x\n", "line 4: not valid YAML"),
    ("contexts:\n  a:\n    bootstrap_server: x:1\n", "line 3: unknown key 'bootstrap_server'"),
    ("contexts:\n  a:\n    bootstrap_servers: x\n", "line 3: context 'a'.*a port is missing"),
    ("contexts:\n  - a\n", "line 2: contexts must be a mapping"),
    ("current_contex: a\n", "line 1: unknown key 'current_contex'"),
    ("- a\n", "line 1: the file must be a mapping"),
    ("contexts:\n  a:\n    properties:\n      security.protocol: NOPE\n",
     "line 4: security.protocol"),
])
def test_bad_contexts_file_names_the_line(tmp_path, text, words):
    path = tmp_path / "config.yaml"
    path.write_text(text)
    with pytest.raises(UsageError, match=words) as info:
        cf = load_contexts(path)
        for ctx in cf.contexts.values():
            ctx.security()
    assert str(path) in str(info.value) and info.value.exit_code == ExitCode.USAGE


def test_contexts_file_save_round_trip_is_private(tmp_path):
    path = tmp_path / "sub" / "config.yaml"
    cf = ContextsFile(path, {"lab": Context("lab", ["127.0.0.1:9092"], None,
                                            {"security.protocol": "PLAINTEXT"})}, "lab")
    cf.save()
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    again = load_contexts(path)
    assert again.current_context == "lab"
    assert again.get("lab").bootstrap_servers == ["127.0.0.1:9092"]
    assert again.get("lab").properties == {"security.protocol": "PLAINTEXT"}


# ---- cli.common.connection_settings ---------------------------------------------------------

@pytest.fixture
def contexts(tmp_path, monkeypatch):
    path = tmp_path / "config.yaml"
    monkeypatch.setenv("GROUPCTL_CONFIG", str(path))
    monkeypatch.delenv("GROUPCTL_BOOTSTRAP_SERVERS", raising=False)
    (tmp_path / "sasl.properties").write_text(
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"
        "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
        "username=\"ctx\" password=\"pw\";\n")
    path.write_text("current_context: cur\n"
                    "contexts:\n"
                    "  cur: {bootstrap_servers: 'cur:1', command_config: sasl.properties}\n"
                    "  other: {bootstrap_servers: 'other:2'}\n"
                    "  nobrokers: {command_config: sasl.properties}\n")
    return tmp_path


def env_with(**settings) -> Env:
    return Env(stdout=io.StringIO(), stderr=io.StringIO(), settings=Settings(**settings))


def test_flag_wins_and_never_borrows_current_context_credentials(contexts):
    boot, sec = connection_settings(env_with(bootstrap_server="b:1,c:2"))
    assert boot == ["b:1", "c:2"] and sec == PLAINTEXT


def test_current_context_when_nothing_else(contexts):
    boot, sec = connection_settings(env_with())
    assert boot == ["cur:1"] and sec.sasl_username == "ctx"


def test_explicit_context(contexts):
    boot, sec = connection_settings(env_with(context="other"))
    assert boot == ["other:2"] and sec.protocol == "PLAINTEXT"


def test_explicit_context_beats_the_environment_variable(contexts, monkeypatch):
    monkeypatch.setenv("GROUPCTL_BOOTSTRAP_SERVERS", "env:3")
    # Env carries the environment variable; Settings.bootstrap_server is -b only
    boot, _ = connection_settings(env_with(context="other"))
    assert boot == ["other:2"]
    boot, sec = connection_settings(env_with())
    assert boot == ["env:3"] and sec == PLAINTEXT


def test_flag_with_context_takes_the_context_credentials(contexts):
    boot, sec = connection_settings(env_with(bootstrap_server="x:9", context="cur"))
    assert boot == ["x:9"] and sec.sasl_username == "ctx"


def test_command_config_overrides_context_security(contexts):
    props = contexts / "plain.properties"
    props.write_text("security.protocol=PLAINTEXT\n")
    boot, sec = connection_settings(env_with(context="cur", command_config=str(props)))
    assert boot == ["cur:1"] and sec.protocol == "PLAINTEXT"


def test_context_without_brokers(contexts):
    with pytest.raises(UsageError, match="context 'nobrokers' has no bootstrap_servers"):
        connection_settings(env_with(context="nobrokers"))


def test_nothing_given_names_every_way(tmp_path, monkeypatch):
    monkeypatch.setenv("GROUPCTL_CONFIG", str(tmp_path / "none.yaml"))
    monkeypatch.delenv("GROUPCTL_BOOTSTRAP_SERVERS", raising=False)
    with pytest.raises(UsageError) as info:
        connection_settings(env_with())
    text = str(info.value)
    assert "-b/--bootstrap-server" in text and "GROUPCTL_BOOTSTRAP_SERVERS" in text
    assert "--context" in text and info.value.exit_code == ExitCode.USAGE


def test_bad_bootstrap_flag_and_missing_command_config(contexts, monkeypatch):
    with pytest.raises(UsageError, match="--bootstrap-server: bad server 'b'"):
        connection_settings(env_with(bootstrap_server="b"))
    monkeypatch.setenv("GROUPCTL_BOOTSTRAP_SERVERS", "e")
    with pytest.raises(UsageError, match="GROUPCTL_BOOTSTRAP_SERVERS: bad server 'e'"):
        connection_settings(env_with())
    with pytest.raises(UsageError, match="no such file"):
        connection_settings(env_with(bootstrap_server="b:1", command_config="/nonexistent"))


def test_the_cli_tells_the_flag_from_the_environment_variable(contexts, monkeypatch):
    """-b given on the command line is the flag even when it equals the variable's value;
    the variable reaches connection_settings through Env only."""
    from groupctl.cli import common
    from groupctl.cli.app import invoke

    seen = []

    def stop(env, **kwargs):
        seen.append((env.settings.bootstrap_server, connection_settings(env)[0]))
        raise UsageError("stop here")

    monkeypatch.setattr(common, "make_cluster", stop)
    monkeypatch.setenv("GROUPCTL_BOOTSTRAP_SERVERS", "env:3")
    for argv in (["--context", "other", "list"], ["list"],
                 ["-b", "env:3", "--context", "other", "list"]):
        env = Env(stdout=io.StringIO(), stderr=io.StringIO())
        assert invoke(argv, env) == ExitCode.USAGE and "stop here" in env.stderr.getvalue()
    assert seen == [(None, ["other:2"]), (None, ["env:3"]), ("env:3", ["env:3"])]
    env = Env(stdout=io.StringIO(), stderr=io.StringIO(),
              environ={"GROUPCTL_CONFIG": str(contexts / "config.yaml")})
    assert env.bootstrap_env is None and connection_settings(env)[0] == ["cur:1"]


def test_one_tracer_per_command():
    from groupctl.cli.common import tracer_for

    env = env_with(debug=True)
    assert tracer_for(env) is not None and tracer_for(env) is tracer_for(env)
    assert tracer_for(env_with()) is None
