"""Contexts made with `groupctl config` reach the `lab up --tls --sasl` lab (the session's
`secure_lab`), comments of a hand-written file survive an update, and no lab password ever
shows up in what groupctl writes: output, --debug traces, error messages, --record files."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from tls_support import cli, group

from groupctl.exitcodes import ExitCode

pytestmark = pytest.mark.broker
__all__ = ["group"]  # the module's fixture, from tls_support


# ---- contexts on the lab ---------------------------------------------------------------------------

def test_config_round_trip_reaches_the_lab(secure_lab, group, tmp_path, monkeypatch):
    name, _ = group
    path = tmp_path / "groupctl" / "config.yaml"
    monkeypatch.setenv("GROUPCTL_CONFIG", str(path))
    monkeypatch.delenv("GROUPCTL_BOOTSTRAP_SERVERS", raising=False)
    monkeypatch.setenv("LAB_PASSWORD", secure_lab.sasl["password"])
    code, out, err = cli("config", "set-context", "lab-tls", "-b", secure_lab.sasl_ssl_bootstrap,
                         "--security-protocol", "SASL_SSL", "--sasl-mechanism", "SCRAM-SHA-512",
                         "--username", "admin", "--password-env", "LAB_PASSWORD",
                         "--ca-file", secure_lab.tls["ca_file"])
    assert (code, out, err) == (0, "", "groupctl: context 'lab-tls' created\n")
    assert os.stat(path).st_mode & 0o777 == 0o600
    assert secure_lab.sasl["password"] not in path.read_text()
    assert cli("config", "set-context", "plain", "-b", secure_lab.bootstrap)[0] == 0
    assert cli("config", "use-context", "lab-tls")[0] == 0
    code, out, _ = cli("-o", "json", "config", "get-contexts")
    assert json.loads(out) == [
        {"current": True, "name": "lab-tls", "bootstrap_servers": secure_lab.sasl_ssl_bootstrap,
         "security_protocol": "SASL_SSL", "sasl_mechanism": "SCRAM-SHA-512", "username": "admin"},
        {"current": False, "name": "plain", "bootstrap_servers": secure_lab.bootstrap,
         "security_protocol": "PLAINTEXT", "sasl_mechanism": None, "username": None}]
    expected = [{"group": name, "state": "Stable", "type": "classic", "protocol_type": "consumer"}]
    for args in ([], ["--context", "lab-tls"], ["--context", "plain"]):  # current, then named
        code, out, err = cli(*args, "-o", "json", "list", "--regex", f"^{name}$")
        assert (code, err) == (0, ""), args
        assert json.loads(out) == expected
    monkeypatch.delenv("LAB_PASSWORD")
    code, out, err = cli("list")
    assert (code, err) == (2, "groupctl: error: context 'lab-tls': the password variable "
                              "$LAB_PASSWORD is not set\n")
    assert cli("config", "delete-context", "lab-tls")[0] == 0
    code, out, _ = cli("config", "current-context")
    assert code == 2
    assert [c["name"] for c in json.loads(cli("-o", "json", "config", "get-contexts")[1])] == ["plain"]


def test_comments_in_a_hand_written_file_survive_an_update(secure_lab, group, tmp_path,
                                                             monkeypatch):
    name, _ = group
    path = tmp_path / "config.yaml"
    monkeypatch.setenv("GROUPCTL_CONFIG", str(path))
    monkeypatch.delenv("GROUPCTL_BOOTSTRAP_SERVERS", raising=False)
    path.write_text("# my clusters\n"
                    "current_context: lab   # the one I use\n"
                    "contexts:\n"
                    "  # the local lab, over SSL\n"
                    "  lab:\n"
                    f"    bootstrap_servers: ['{secure_lab.bootstrap}']  # plain, for now\n"
                    "    properties: {client.id: mine}   # flow style stays\n")
    os.chmod(path, 0o600)
    code, _, err = cli("config", "set-context", "lab", "-b", secure_lab.ssl_bootstrap,
                       "--security-protocol", "SSL", "--ca-file", secure_lab.tls["ca_file"])
    assert (code, err) == (0, "groupctl: context 'lab' modified\n")
    text = path.read_text()
    for kept in ("# my clusters\n", "current_context: lab   # the one I use\n",
                 "  # the local lab, over SSL\n", "client.id: mine", "# flow style stays"):
        assert kept in text, (kept, text)
    code, out, err = cli("-o", "json", "list", "--regex", f"^{name}$")
    assert (code, err) == (0, "")
    assert [g["group"] for g in json.loads(out)] == [name]


# ---- secrets never leave ---------------------------------------------------------------------------

def test_no_password_in_output_traces_errors_or_records(secure_lab, group, tmp_path, monkeypatch):
    name, _ = group
    passwords = [secure_lab.sasl["password"], secure_lab.sasl["guest_password"]]
    path = tmp_path / "config.yaml"
    monkeypatch.setenv("GROUPCTL_CONFIG", str(path))
    monkeypatch.delenv("GROUPCTL_BOOTSTRAP_SERVERS", raising=False)
    jaas = ("org.apache.kafka.common.security.plain.PlainLoginModule required "
            f'username="admin" password="{passwords[0]}";')
    path.write_text("contexts:\n  hand:\n"
                    f"    bootstrap_servers: {secure_lab.sasl_bootstrap}\n"
                    "    properties:\n      security.protocol: SASL_PLAINTEXT\n"
                    "      sasl.mechanism: PLAIN\n"
                    f"      sasl.jaas.config: '{jaas}'\n"
                    f"      sasl.password: '{passwords[0]}'\n"
                    f"      ssl.key.password: '{passwords[1]}'\n")
    os.chmod(path, 0o600)
    broken = tmp_path / "broken.properties"
    broken.write_text("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"
                      "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule "
                      f'required username="admin" password={passwords[0]}"oops;\n')
    record = tmp_path / "events.ndjson"
    written = []
    runs = [
        ("config", "view"), ("-o", "json", "config", "view"), ("-o", "yaml", "config", "view"),
        ("config", "get-contexts"),
        ("--context", "hand", "--debug", "list"),
        ("--context", "hand", "--debug", "describe", name),
        ("--context", "hand", "--debug", "-o", "ndjson", "join", name, "--watch", "--duration",
         "1", "--record", str(record)),
        ("--debug", "-b", secure_lab.sasl_bootstrap, "--command-config",
         secure_lab.sasl["guest_command_configs"]["SCRAM-SHA-512"], "describe", name + "-x"),
        ("--debug", "-b", secure_lab.sasl_ssl_bootstrap, "--command-config",
         secure_lab.sasl["ssl_command_configs"]["SCRAM-SHA-256"], "join", name),
        ("--debug", "-b", secure_lab.sasl_bootstrap, "--command-config", str(broken), "list"),
        ("-o", "json", "lab", "status", "--name", secure_lab.name),
        ("-o", "wide", "lab", "status", "--name", secure_lab.name),
    ]
    monkeypatch.setenv("GROUPCTL_LAB_HOME", str(Path(secure_lab.lab_dir).parent))
    codes = []
    for args in runs:
        code, out, err = cli(*args)
        codes.append(code)
        written += [out, err]
    assert codes == [0, 0, 0, 0, 0, 0, 0, ExitCode.AUTH, 0, ExitCode.USAGE, 0, 0], (codes, written)
    assert "REDACTED" in written[0] and "groupctl: trace: " in written[9]
    written.append(record.read_text())
    assert record.read_text().strip()
    for text in written:
        for pw in passwords:
            assert pw not in text
