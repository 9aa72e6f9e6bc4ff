"""`groupctl config ...` on files (no broker): kubectl's verbs, atomic 0600 writes that keep
comments and untouched keys, masked secrets, and one-line exit-2 errors that leave the
file as it was. (Against the lab broker: tests/integration/test_lab_tls.py.)"""
from __future__ import annotations

import json
import os
import stat

import pytest

from cli_runner import run_cli
from groupctl.config.credentials import MASK, mask_value
from groupctl.config.properties import parse_jaas

SECRET = "s3cr3t-Pa55"


@pytest.fixture
def cfg(tmp_path, monkeypatch):
    path = tmp_path / "home" / "groupctl" / "config.yaml"
    monkeypatch.setenv("GROUPCTL_CONFIG", str(path))
    monkeypatch.delenv("GROUPCTL_BOOTSTRAP_SERVERS", raising=False)
    return path


def cli(*args: str) -> tuple[int, str, str]:
    return run_cli(*args)


def contexts_json() -> list[dict]:
    code, out, err = cli("-o", "json", "config", "get-contexts")
    assert code == 0, err
    return json.loads(out)


def test_set_context_creates_a_private_file(cfg, monkeypatch):
    monkeypatch.setenv("KAFKA_PW", SECRET)
    code, out, err = cli("config", "set-context", "prod", "-b", "k1:9093,k2:9093",
                         "--security-protocol", "sasl_ssl", "--sasl-mechanism", "scram-sha-512",
                         "--username", "alice", "--password-env", "KAFKA_PW", "--current")
    assert (code, out, err) == (0, "", "groupctl: context 'prod' created (current)\n")
    assert stat.S_IMODE(os.stat(cfg).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(cfg.parent).st_mode) == 0o700
    assert cfg.read_text() == (
        "current_context: prod\n"
        "contexts:\n"
        "  prod:\n"
        "    bootstrap_servers: k1:9093,k2:9093\n"
        "    password_env: KAFKA_PW\n"
        "    properties:\n"
        "      security.protocol: SASL_SSL\n"
        "      sasl.mechanism: SCRAM-SHA-512\n"
        "      sasl.username: alice\n")
    assert [p.name for p in cfg.parent.iterdir()] == ["config.yaml"]  # no temp file left
    assert contexts_json() == [{"current": True, "name": "prod",
                                "bootstrap_servers": "k1:9093,k2:9093",
                                "security_protocol": "SASL_SSL",
                                "sasl_mechanism": "SCRAM-SHA-512", "username": "alice"}]
    assert cli("config", "current-context") == (0, "prod\n", "")


def test_the_password_is_read_when_connecting(cfg, monkeypatch):
    from groupctl.config import load_contexts

    monkeypatch.setenv("KAFKA_PW", SECRET)
    assert cli("config", "set-context", "p", "-b", "k:1", "--security-protocol", "SASL_PLAINTEXT",
               "--sasl-mechanism", "PLAIN", "--username", "u", "--password-env", "KAFKA_PW")[0] == 0
    sec = load_contexts(cfg).get("p").security()
    assert (sec.sasl_username, sec.sasl_password) == ("u", SECRET)
    pw_file = cfg.parent / "pw.txt"
    pw_file.write_text("from-file\n")
    assert cli("config", "set-context", "p", "--password-file", str(pw_file))[0] == 0
    ctx = load_contexts(cfg).get("p")
    assert (ctx.password_env, ctx.password_file) == (None, str(pw_file))  # one source at a time
    assert ctx.security().sasl_password == "from-file"
    assert SECRET not in cfg.read_text() and "from-file" not in cfg.read_text()


def test_update_keeps_comments_order_and_untouched_keys(cfg):
    cfg.parent.mkdir(parents=True)
    original = ("# my clusters\n"
                "current_context: b   # default\n"
                "contexts:\n"
                "  a:\n"
                "    bootstrap_servers: [a1:9092, a2:9092]  # list form\n"
                "    properties: {client.id: 'x', security.protocol: PLAINTEXT}\n"
                "  # b is staging\n"
                "  b:\n"
                "    command_config: b.properties   # relative to this file\n")
    cfg.write_text(original)
    os.chmod(cfg, 0o600)
    code, _, err = cli("config", "set-context", "a", "--username", "bob",
                       "--security-protocol", "SASL_PLAINTEXT")
    assert (code, err) == (0, "groupctl: context 'a' modified\n")
    assert cfg.read_text() == original.replace(
        "{client.id: 'x', security.protocol: PLAINTEXT}",
        "{client.id: 'x', security.protocol: SASL_PLAINTEXT, sasl.username: bob}")
    code, _, _ = cli("config", "rename-context", "b", "staging")
    assert code == 0
    text = cfg.read_text()
    assert "current_context: staging # default\n" in text  # ruamel: one space before it
    assert "  # b is staging\n  staging:\n    command_config: b.properties   # relative" in text
    assert cli("config", "set-context", "a", "--username", "")[0] == 0  # "" removes it
    assert "sasl.username" not in cfg.read_text() and "client.id: 'x'" in cfg.read_text()


def test_delete_the_current_context_warns(cfg):
    assert cli("config", "set-context", "x", "-b", "h:1", "--current")[0] == 0
    assert cli("config", "set-context", "y", "-b", "h:2")[0] == 0
    code, out, err = cli("config", "delete-context", "x")
    assert code == 0 and out == ""
    assert "'x' was the current context; now none is" in err
    assert [c["name"] for c in contexts_json()] == ["y"]
    code, _, err = cli("config", "current-context")
    assert code == 2 and err.startswith("groupctl: error: no current context in ")
    assert cli("config", "use-context", "y")[0] == 0
    assert cli("config", "current-context")[1] == "y\n"


def test_a_file_others_can_read_draws_a_warning_and_keeps_its_mode(cfg):
    assert cli("config", "set-context", "x", "-b", "h:1")[0] == 0
    os.chmod(cfg, 0o644)
    code, _, err = cli("config", "set-context", "x", "-b", "h:2")
    assert code == 0
    assert f"groupctl: warning: {cfg} is readable by others (mode 0644)" in err
    assert stat.S_IMODE(os.stat(cfg).st_mode) == 0o644


@pytest.mark.parametrize("args, message", [
    (("config", "use-context", "nope"), "no context 'nope' in {path} (a)"),
    (("config", "delete-context", "nope"), "no context 'nope' in {path} (a)"),
    (("config", "rename-context", "a", "a"), "context 'a' already exists in {path}"),
    (("config", "set-context", "a", "--password-env", "GROUPCTL_TEST_UNSET_VAR"),
     "--password-env GROUPCTL_TEST_UNSET_VAR: the variable is not set (set it first; the "
     "password is read from it whenever the context is used)"),
    (("config", "set-context", "a", "--password-env", "X", "--password-file", "f"),
     "--password-env and --password-file exclude each other"),
    (("config", "set-context", "a", "--security-protocol", "TLS"),
     "--security-protocol 'TLS' is not one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL"),
    (("config", "set-context", "a", "--sasl-mechanism", "GSSAPI"),
     "--sasl-mechanism 'GSSAPI' is not one of PLAIN, SCRAM-SHA-256, SCRAM-SHA-512"),
    (("config", "set-context", "a", "--ca-file", "/nonexistent/ca.pem"),
     "--ca-file /nonexistent/ca.pem: the file does not exist"),
    (("config", "set-context", "a", "-b", "nohostport"),
     "--bootstrap-server: bad server 'nohostport'"),
])
def test_errors_are_one_line_exit_2_and_the_file_stays(cfg, monkeypatch, args, message):
    monkeypatch.delenv("GROUPCTL_TEST_UNSET_VAR", raising=False)
    assert cli("config", "set-context", "a", "-b", "h:1")[0] == 0
    before, mtime = cfg.read_bytes(), os.stat(cfg).st_mtime_ns
    code, out, err = cli(*args)
    assert (code, out) == (2, "")
    assert err.startswith("groupctl: error: " + message.format(path=cfg)), err
    assert err.count("\n") == 1
    assert (cfg.read_bytes(), os.stat(cfg).st_mtime_ns) == (before, mtime)


def test_malformed_yaml_is_exit_2_and_untouched(cfg):
    cfg.parent.mkdir(parents=True)
    cfg.write_text("contexts:\n  a: {bootstrap_servers: [unclosed\n")
    before = cfg.read_bytes()
    for args in (("config", "view"), ("config", "set-context", "a", "-b", "h:1"),
                 ("config", "use-context", "a"), ("config", "get-contexts")):
        code, out, err = cli(*args)
        assert (code, out) == (2, ""), args
        assert err.startswith(f"groupctl: error: {cfg}, line ") and "not valid YAML" in err
        assert err.count("\n") == 1
    assert cfg.read_bytes() == before
    assert [p.name for p in cfg.parent.iterdir()] == ["config.yaml"]


def test_view_masks_every_secret(cfg):
    cfg.parent.mkdir(parents=True)
    cfg.write_text("contexts:\n"
                   "  a:  # hand-written\n"
                   "    bootstrap_servers: h:1\n"
                   "    properties:\n"
                   "      security.protocol: SASL_SSL\n"
                   "      sasl.mechanism: PLAIN\n"
                   "      sasl.jaas.config: 'org.apache.kafka.common.security.plain.PlainLoginModule"
                   f" required username=\"u\" password=\"{SECRET}\";'\n"
                   f"      sasl.password: {SECRET}\n"
                   f"      ssl.key.password: {SECRET}\n"
                   f"      ssl.keystore.key: {SECRET}\n")
    os.chmod(cfg, 0o600)
    code, out, err = cli("config", "view")
    assert (code, err) == (0, "")
    assert SECRET not in out and out.count(MASK) == 4
    assert "  a:\n" in out and 'username="u" password="REDACTED";' in out
    assert "hand-written" not in out   # comments are left out: one may hold a password
    for fmt in ("json", "yaml"):
        code, out, err = cli("-o", fmt, "config", "view")
        assert code == 0 and SECRET not in out and MASK in out
    data = json.loads(cli("-o", "json", "config", "view")[1])
    assert data["contexts"]["a"]["properties"]["sasl.password"] == MASK
    assert contexts_json()[0]["username"] == "u"  # from sasl.jaas.config


def test_bootstrap_from_the_environment_variable_is_not_stored(cfg, monkeypatch):
    monkeypatch.setenv("GROUPCTL_BOOTSTRAP_SERVERS", "env:1")
    assert cli("config", "set-context", "a", "--username", "u")[0] == 0
    assert "bootstrap_servers" not in cfg.read_text()


def test_masking_and_jaas_errors_never_echo_a_password():
    assert mask_value("sasl.password", "x") == MASK
    assert mask_value("SSL.TRUSTSTORE.PASSWORD", "x") == MASK
    assert mask_value("sasl.username", "u") == "u"
    assert mask_value("sasl.jaas.config", 'M required username="u" password="p w";') == (
        'M required username="u" password="REDACTED";')
    with pytest.raises(ValueError) as info:
        parse_jaas(f'M required username="u" password={SECRET}"x;')
    assert SECRET not in str(info.value) and "after option 'password'" in str(info.value)


# ---- bad input a new user finds (issue 14) ------------------------------------------------------

def test_command_config_that_does_not_exist_is_named_first(cfg):
    code, out, err = cli("--command-config", "/nonexistent", "list")
    assert (code, out, err) == (2, "", "groupctl: error: --command-config /nonexistent: the "
                                       "file does not exist\n")
    code, _, err = cli("list", "--context", "nope", "--command-config", "/nonexistent")
    assert code == 2 and "/nonexistent: the file does not exist" in err


@pytest.mark.parametrize("args, message", [
    (("list", "--state", "Stable,Bogus"), "--state 'Bogus' is not one of Empty, Stable, "
                                          "PreparingRebalance, CompletingRebalance"),
    (("list", "--type", "bogus"), "--type 'bogus' is not one of classic, consumer, share, "
                                  "streams"),
    (("join", "g", "--assignor", "nonsense"), "--assignor 'nonsense': groupctl runs only "
                                              "range, roundrobin, sticky, cooperative-sticky"),
])
def test_bad_values_are_usage_errors_before_anything_is_sent(cfg, args, message):
    # port 1 on 127.0.0.1: nothing listens; had groupctl tried to connect, it would exit 3
    code, out, err = cli("-b", "127.0.0.1:1", "--timeout", "2", *args)
    assert (code, out) == (2, "")
    assert err.startswith("groupctl: error: " + message), err


def test_filter_values_any_case_are_accepted(cfg):
    from groupctl.cli.groups import check_choices
    from groupctl.observe.reads.listing import STATES, TYPES

    assert check_choices(["stable", "EMPTY"], STATES, "--state") == ["Stable", "Empty"]
    assert check_choices(["Share", "streams"], TYPES, "--type") == ["share", "streams"]


def test_view_without_a_file_says_where_it_would_be(cfg):
    assert not cfg.exists()
    code, out, err = cli("config", "view")
    assert (code, out) == (0, "")
    assert err == (f"groupctl: no config file at {cfg} (create it with `groupctl config "
                   "set-context NAME -b HOST:PORT`; $GROUPCTL_CONFIG names another)\n")
    assert not cfg.exists()
